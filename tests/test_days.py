"""Days of the week a request names, offered whole to a list-of-weekdays argument (`decoding.days`, grounding)."""
from __future__ import annotations

import pytest

from mobile_actions import wire
from mobile_actions.calls import ToolCall
from mobile_actions.catalog import load_catalogue
from mobile_actions.decoding import days
from mobile_actions.decoding.grammar import accepts
from mobile_actions.decoding.turn import Constraints
from tests.test_grammar import table, tok  # noqa: F401  (fixtures)
from tests.test_grounding import DEV

WEEK = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


@pytest.mark.parametrize("text, want", [
    ("set an alarm for 6:30 on weekdays", [{0, 1, 2, 3, 4}]),
    ("gym mon wed fri at 7", [{0, 2, 4}]),
    ("alarm sat n sun 9am", [{5, 6}]),
    ("sun-thurs 10pm bedtime", [{6, 0, 1, 2, 3}]),          # a run wraps past Sunday
    ("mondays and tuesdays", [{0, 1}]),
    ("every sat at 8", [{5}]),
    ("the sun is out, wed be late", []),                   # short forms that are words, alone
    ("daily at 7", [set(range(7))]),
    ("7 on weekdays and 9 on the weekend", [{0, 1, 2, 3, 4}, {5, 6}]),
    ("remind me on tuesday", [{1}]),
    ("remind me tmrw at 9", []),
])
def test_the_lists_of_days_a_request_says(text, want):
    assert [set(d) for d in days.said(text)] == want


def test_a_list_of_weekdays_is_an_array_whose_enum_names_each_day_once():
    def arr(enum):
        return {"type": "array", "items": {"type": "string", "enum": enum}}
    assert days.weekday_items(arr([d.upper()[:3] for d in reversed(WEEK)])) == tuple(d.upper()[:3] for d in WEEK)
    assert days.weekday_items(arr(WEEK[:5])) is None                     # not the seven
    assert days.weekday_items(arr(WEEK[:6] + ["Holiday"])) is None
    assert days.weekday_items({"type": "string", "enum": WEEK}) is None  # one day, not a list


def test_the_grammar_writes_a_said_list_whole_and_leaves_out_one_nobody_said(table):
    cat = load_catalogue("clock_messages")
    for text, ok, wrong in [
        ("alarm 6:30 on weekdays", {"hour": 6, "minute": 30, "days": WEEK[:5]},
         [{"hour": 6, "minute": 30, "days": WEEK[1:6]}, {"hour": 6, "minute": 30, "days": WEEK[:3]}]),
        ("alarm 6:30", {"hour": 6, "minute": 30}, [{"hour": 6, "minute": 30, "days": ["Monday"]}]),
    ]:
        g = Constraints(table, policies={}).for_tools(cat, [DEV, {"role": "user", "content": text}]).g
        assert accepts(g, wire.render_call(ToolCall("set_alarm", ok)))
        for w in wrong:
            assert not accepts(g, wire.render_call(ToolCall("set_alarm", w)))
