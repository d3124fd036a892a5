"""Numbers a request says, offered to integer and number arguments (`decoding.numbers`, grounding)."""
from __future__ import annotations

from datetime import datetime

import pytest

from mobile_actions import wire
from mobile_actions.calls import ToolCall
from mobile_actions.catalog import Catalogue, load_catalogue
from mobile_actions.decoding import numbers
from mobile_actions.decoding.grammar import accepts
from mobile_actions.decoding.turn import Constraints
from tests.test_grammar import table, tok  # noqa: F401  (fixtures)
from tests.test_grounding import DEV

NOW = datetime(2025, 6, 2, 10, 0)
SECONDS = {"type": "integer", "description": "Duration in seconds.", "minimum": 1}
HOUR = {"type": "integer", "description": "The hour of the alarm, 0-23.", "minimum": 0, "maximum": 23}
MINUTE = {"type": "integer", "description": "Minute, 0-59.", "minimum": 0, "maximum": 59}


@pytest.mark.parametrize("text, schema, name, want", [
    ("set a timer for ten minutes", SECONDS, "seconds", ("600",)),
    ("half an hour timer pls", SECONDS, "seconds", ("1800",)),
    ("a timer for three and a half minutes for my tea", SECONDS, "seconds", ("210",)),
    ("timer 1h 20m", SECONDS, "seconds", ("3600", "4800", "1200")),
    ("timer 1h20m", SECONDS, "seconds", ("3600", "4800", "1200")),      # one word: the minutes are the run's
    ("film is 2h50", {"type": "integer"}, "duration_min", ("170", "120", "2", "50")),   # or 2:50
    ("pasta timer, 12 min", {"type": "integer"}, "duration_min", ("12",)),
    ("33cl of water", {"type": "integer", "description": "Volume in millilitres."}, "amount_ml", ("330",)),
    ("find bikes within 1 km", {"type": "integer"}, "radius_meters", ("1000",)),
    ("set my step goal to 10k", {"type": "integer"}, "target", ("10", "10000")),
    ("rowed 2000 meters in 7:32", {"type": "integer"}, "duration_seconds", ("452", "27120", "7", "32", "19")),
    ("set an alarm for 6:30 on weekdays", HOUR, "hour", ("6", "18")),
    ("alarm 9:45pm tonight", HOUR, "hour", ("9", "21")),
    ("set an alarm for 6:30 on weekdays", MINUTE, "minute", ("30",)),
    ("wake me at 7 tmrw", MINUTE, "alarmMinute", ("0",)),
    ("remind me at 6:30, 2 days before", HOUR, "start_hour", ("6", "18")),
    ("text 415-555-0144 running 10 min late", {"type": "integer"}, "count", ("10",)),
    ("send Ahmed 1,200.50", {"type": "number"}, "amount", ("1200.5",)),
    ("send Ahmed 1,200.50", {"type": "integer"}, "amount", ()),
    ("volume to 40% and email bo@x.com on 2025-06-03", {"type": "integer", "maximum": 100}, "level", ("40",)),
])
def test_an_argument_is_offered_the_numbers_the_request_says(text, schema, name, want):
    assert set(numbers.offered(numbers.read(text, NOW), schema, name)) == set(want)


def test_the_unit_of_an_argument_comes_from_its_name_or_description():
    assert numbers.unit_of("seconds", "") == ("time", 1) and numbers.unit_of("durationMin", "") == ("time", 60)
    assert numbers.unit_of("length", "How long, in hours.") == ("time", 3600)
    assert numbers.unit_of("amount", "Volume in millilitres.") == ("volume", 1)
    assert numbers.unit_of("level", "0-100") is None and numbers.unit_of("count", "items, e.g. 3 s") is None
    assert numbers.unit_of("distance_m", "") is None   # minutes or metres: says nothing


def test_an_argument_named_for_a_part_of_a_time_takes_that_part_only():
    assert numbers.clock_part("alarmHour") == "hour" and numbers.clock_part("start_minute") == "minute"
    assert numbers.clock_part("duration_minutes") is None and numbers.clock_part("hours") is None
    assert numbers.clock_part("hour_minute") is None   # says both: no part
    said = numbers.read("alarm at 6:30 and a 45 minute timer", NOW)
    assert set(numbers.offered(said, MINUTE, "minute")) == {"30", "45"}


def test_the_grammar_writes_only_offered_numbers(table):
    cat = load_catalogue("clock_messages")
    messages = [DEV, {"role": "user", "content": "set an alarm for 6:30 and a ten minute timer"}]
    g = Constraints(table, policies={}).for_tools(cat, messages).g
    assert accepts(g, wire.render_call(ToolCall("set_alarm", {"hour": 6, "minute": 30})))
    assert accepts(g, wire.render_call(ToolCall("set_timer", {"seconds": 600})))
    for wrong in ({"hour": 16, "minute": 15}, {"hour": 6, "minute": 3}, {"hour": 61, "minute": 30}):
        assert not accepts(g, wire.render_call(ToolCall("set_alarm", wrong)))


def test_a_required_amount_nobody_said_makes_the_tool_uncallable_and_free_lifts_it(table):
    volume = [{"name": "set_volume", "description": "d", "parameters": {"type": "object", "properties": {
        "level": {"type": "integer", "minimum": 0, "maximum": 100}}, "required": ["level"]}},
              {"name": "mute", "description": "d", "parameters": {"type": "object", "properties": {
                  "minutes": {"type": "integer"}}}}]
    messages = [DEV, {"role": "user", "content": "turn the volume up and mute it"}]
    g = Constraints(table, policies={}).for_tools(Catalogue.from_json(volume), messages).g
    assert "set_volume" not in g.tools and "minutes" not in g.tools["mute"].props
    volume[0]["parameters"]["properties"]["level"]["x-grounding"] = "free"
    g = Constraints(table, policies={}).for_tools(Catalogue.from_json(volume), messages).g
    assert accepts(g, wire.render_call(ToolCall("set_volume", {"level": 70})))
