"""The action codec: raw GUI Odyssey labels ↔ command-style actions (the official decode_action)."""
import pytest

from mobile_actions.navigator.actions import Action, from_raw, parse_command, scroll_direction, to_raw
from mobile_actions.errors import ActionParseError, RawActionError


@pytest.mark.parametrize(
    "action, info, command",
    [
        ("CLICK", [[500, 300]], "CLICK: (500, 300)"),
        ("LONG_PRESS", [[12, 990]], "LONG_PRESS: (12, 990)"),
        ("CLICK", "KEY_HOME", "PRESS_HOME"),
        ("CLICK", "KEY_BACK", "PRESS_BACK"),
        ("LONG_PRESS", "KEY_APPSELECT", "PRESS_RECENT"),
        ("SCROLL", [[500, 800], [500, 200]], "SCROLL: UP"),
        ("SCROLL", [[500, 200], [500, 800]], "SCROLL: DOWN"),
        ("SCROLL", [[800, 500], [200, 450]], "SCROLL: LEFT"),
        ("SCROLL", [[200, 500], [800, 550]], "SCROLL: RIGHT"),
        ("SCROLL", [[500, 500], [600, 600]], "SCROLL: DOWN"),  # |dx| == |dy|: vertical wins
        ("SCROLL", [[500, 500], [400, 400]], "SCROLL: UP"),
        ("TEXT", "time: 10:30", "TYPE: time: 10:30"),
        ("COMPLETE", "", "COMPLETE"),
        ("INCOMPLETE", "", "IMPOSSIBLE"),
    ],
)
def test_decode_matches_official(action, info, command):
    assert from_raw(action, info).to_command() == command


@pytest.mark.parametrize(
    "command",
    ["CLICK: (500, 300)", "LONG_PRESS: (1, 2)", "PRESS_BACK", "PRESS_HOME", "PRESS_RECENT", "SCROLL: LEFT",
     "TYPE: a: b: c", "TYPE: ", "COMPLETE", "IMPOSSIBLE"],
)
def test_round_trip_through_raw(command):
    act = parse_command(command)
    assert from_raw(*to_raw(act)) == act
    assert parse_command(act.to_command()) == act


def test_parse_keeps_colons_and_normalises_direction():
    assert parse_command("TYPE: meet at 10:30").text == "meet at 10:30"
    assert parse_command("SCROLL: up").direction == "UP"
    assert parse_command("CLICK: [10, 20]").point == (10, 20)
    assert parse_command("CLICK: (10.5, 20)").point == (10.5, 20)


@pytest.mark.parametrize("bad", ["", "CLICK", "CLICK: (1, 2", "CLICK: here", "SCROLL: SIDEWAYS", "TYPE", "tap: (1, 2)",
                                 "PRESS_BACK: now", "click: (1, 2)"])
def test_parse_rejects(bad):
    with pytest.raises(ActionParseError):
        parse_command(bad)


def test_raw_errors_name_the_problem():
    with pytest.raises(RawActionError, match="KEY_POWER"):
        from_raw("CLICK", "KEY_POWER")
    with pytest.raises(RawActionError, match="DRAG"):
        from_raw("DRAG", "")
    with pytest.raises(ActionParseError):
        Action("CLICK")  # a click needs a point


def test_scroll_direction_is_the_fingers():
    assert scroll_direction((0, 0), (0, -1)) == "UP"
    assert scroll_direction((0, 0), (-2, 1)) == "LEFT"


def test_action_json():
    assert parse_command("CLICK: (1, 2)").to_json() == {"kind": "CLICK", "command": "CLICK: (1, 2)", "point": [1, 2]}
