"""The clock_messages example catalogue: its bindings load against it, and each tool, dispatched through adb to
the virtual phone, leaves the state a check would look for."""

import pytest

from mobile_actions.android.bindings import load_bindings
from mobile_actions.android.dispatch import ArgumentError, ConfirmationRequired, calendar_days, dispatch, plan, was_done
from mobile_actions.calls import ToolCall
from mobile_actions.catalog import load_catalogue
from tests.adb_fixtures import fresh, rig  # noqa: F401

CATALOGUE = load_catalogue("clock_messages")
BINDINGS = load_bindings("clock_messages")


def go(rig, name, **arguments):
    return dispatch(ToolCall(name, arguments), rig.device, bindings=BINDINGS, catalogue=CATALOGUE,
                    confirm=lambda p: True)


def test_bindings_match_the_catalogue_and_days_become_calendar_numbers():
    BINDINGS.check_against(CATALOGUE)
    assert set(BINDINGS) == set(CATALOGUE.names) and BINDINGS["send_text_message"].confirm
    assert calendar_days(["Monday", "fri", "Sunday", "monday"]) == "2,6,1"
    with pytest.raises(ArgumentError, match="not a day"):
        calendar_days(["Someday"])
    argv = plan(ToolCall("set_alarm", {"hour": 7, "minute": 0, "days": []}), BINDINGS).commands[0]
    assert "--eia" not in argv and argv[-3:] == ["--ez", "android.intent.extra.alarm.SKIP_UI", "true"]


def test_each_tool_changes_the_phone(fresh):
    s = fresh.phone.state
    go(fresh, "set_alarm", hour=6, minute=30, days=["Monday", "Wednesday", "Friday"], label="Run")
    go(fresh, "set_alarm", hour=21, minute=5)
    assert s.alarms == [{"time": "06:30", "days": "Mon,Wed,Fri", "label": "Run", "enabled": True},
                        {"time": "21:05", "days": "", "label": "", "enabled": True}]
    go(fresh, "set_timer", seconds=600, label="Pasta")
    assert s.timers == [{"seconds": 600, "label": "Pasta", "running": True}]
    s.contacts.append({"name": "Ana Lima", "phone": "555-0100", "email": ""})
    call = ToolCall("send_text_message", {"to": "Ana Lima", "body": "Dinner at 8?"})
    assert was_done(call, fresh.device, BINDINGS["send_text_message"]) is False
    with pytest.raises(ConfirmationRequired):
        dispatch(call, fresh.device, bindings=BINDINGS, catalogue=CATALOGUE)
    go(fresh, "send_text_message", to="Ana Lima", body="Dinner at 8?")
    go(fresh, "send_text_message", to="+1 555 0199", body="Hi & bye")
    assert s.messages == [{"to": "Ana Lima", "number": "555-0100", "text": "Dinner at 8?", "direction": "sent"},
                          {"to": "+1 555 0199", "number": "+1 555 0199", "text": "Hi & bye", "direction": "sent"}]
    assert was_done(call, fresh.device, BINDINGS["send_text_message"]) is True
    assert s.top.kind == "message_thread"
