"""The synthetic data generator: format, validity, determinism, dates, splits, refusals, diversity."""
from __future__ import annotations

import json
import os
import re
from collections import Counter
from datetime import date, datetime, timedelta
from random import Random

import pytest

from mobile_actions.calls import ToolCall, validate_call
from mobile_actions.catalog import Catalogue, load_catalogue
from mobile_actions.datagen import refusals
from mobile_actions.datagen import values as V
from mobile_actions.datagen.generate import (
    catalogue_families, developer_message, diversity, generate_rows, heldout_ids, iter_rows, user_text,
)
from mobile_actions.datagen import mobile
from mobile_actions.datagen.dates import MONTHS, WEEKDAYS, sample_when
from mobile_actions.datagen.templates import Template
from mobile_actions.datagen.refusals import REFUSALS

GENERIC = [
    {"type": "function", "function": {"name": "send_sms", "description": "Sends an SMS text message to a phone number.",
     "parameters": {"type": "object", "properties": {
         "phone_number": {"type": "string", "description": "The recipient's phone number."},
         "message": {"type": "string", "description": "The text of the message."}}, "required": ["phone_number", "message"]}}},
    {"type": "function", "function": {"name": "set_alarm", "description": "Sets an alarm.",
     "parameters": {"type": "object", "properties": {
         "time": {"type": "string", "description": "Alarm time as HH:MM."},
         "label": {"type": "string", "description": "A label for the alarm."},
         "repeat_daily": {"type": "boolean"}}, "required": ["time"]}}},
    {"type": "function", "function": {"name": "set_volume", "description": "Changes the media volume.",
     "parameters": {"type": "object", "properties": {"level": {"type": "integer", "minimum": 0, "maximum": 100}},
                    "required": ["level"]}}},
    {"type": "function", "function": {"name": "book_ride", "description": "Books a ride to a destination.",
     "parameters": {"type": "object", "properties": {
         "destination": {"type": "string", "description": "Where to go."},
         "ride_type": {"type": "string", "enum": ["economy", "comfort", "xl"]},
         "pickup_time": {"type": "string", "description": "Pickup time in YYYY-MM-DDTHH:MM:SS format."},
         "passengers": {"type": "number", "minimum": 1, "maximum": 6}}, "required": ["destination"]}}},
    {"type": "function", "function": {"name": "add_to_shopping_list", "description": "Adds items to the shopping list.",
     "parameters": {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "string"}},
                                                      "due_date": {"type": "string", "format": "date"}},
                    "required": ["items"]}}},
    {"type": "function", "function": {"name": "lock_screen", "description": "Locks the screen."}},
]


@pytest.fixture(scope="module")
def catalogue() -> Catalogue:
    return load_catalogue("mobile_actions")


@pytest.fixture(scope="module")
def rows(catalogue) -> list[dict]:
    return generate_rows(catalogue, 2000, seed=0)


def _calls(row: dict) -> list[ToolCall]:
    """The gold calls: the last message's (a follow-up row has the first turn and its results before it)."""
    return [ToolCall.from_json(c) for c in row["messages"][-1].get("tool_calls", [])]


def _assert_valid(rows: list[dict]) -> None:
    parsed: dict[str, Catalogue] = {}   # rows differ only in order; parse each distinct content once
    for row in rows:
        key = json.dumps(row["tools"], sort_keys=True)
        own = parsed.get(key) or parsed.setdefault(key, Catalogue.from_json(row["tools"]))  # the row's own tools
        for call in _calls(row):
            assert not validate_call(call, own), (user_text(row), call, validate_call(call, own))


# ---------------------------------------------------------------------------------------------- format
def test_row_shape(rows, catalogue):
    for row in rows[:200]:
        assert row["metadata"] in ("train", "eval")
        if row["meta"].get("turn") == "followup":
            continue   # test_chain_rows
        assert [m["role"] for m in row["messages"]] == ["developer", "user", "assistant"]
        assert sorted(t["function"]["name"] for t in row["tools"]) == sorted(catalogue.names)
        for t in row["tools"]:
            assert t["function"]["parameters"]["type"] == "OBJECT"
            assert "type" not in t  # no OpenAI wrapper
            for p in t["function"]["parameters"]["properties"].values():
                assert p["type"].isupper()
        assistant = row["messages"][2]
        if row["meta"]["refusal"]:
            assert "tool_calls" not in assistant and assistant["content"] in REFUSALS
        else:
            assert 1 <= len(assistant["tool_calls"]) <= 3 and "content" not in assistant
        if not any(f.startswith("chain/") for f in row["meta"]["families"]):
            assert len(row["meta"]["families"]) == max(1, len(assistant.get("tool_calls", [])))


def test_tools_and_properties_are_shuffled(rows):
    orders = {tuple(t["function"]["name"] for t in r["tools"]) for r in rows[:200]}
    assert len(orders) > 50
    email_orders = {tuple(t["function"]["parameters"]["properties"]) for r in rows[:200] for t in r["tools"]
                    if t["function"]["name"] == "send_email"}
    assert len(email_orders) == 6


def test_catalogue_order_rows_open_with_the_runtimes_stable_prefix(catalogue):
    """`tool_order="catalogue"`: every prompt starts with the text the runtime caches (and the
    trainer runs once per batch), and the rows are otherwise the shuffled ones."""
    from mobile_actions import wire
    from mobile_actions.dataset import parse_row, prompt_completion

    fixed = generate_rows(catalogue, 20, seed=5, tool_order="catalogue")
    shuffled = generate_rows(catalogue, 20, seed=5)
    prefix = wire.stable_prefix(developer_message(datetime(2025, 1, 1))["content"], catalogue)
    for a, b in zip(fixed, shuffled):
        assert [t["function"]["name"] for t in a["tools"]] == [t.name for t in catalogue]
        assert a["messages"] == b["messages"]
        prompt, _ = prompt_completion(parse_row(a), layout="cache")
        assert prompt.startswith(prefix)
    with pytest.raises(ValueError, match="tool_order"):
        generate_rows(catalogue, 1, tool_order="sorted")


def test_every_row_validates(rows):
    _assert_valid(rows)


@pytest.mark.parametrize("seed", [1, 2])
def test_every_row_validates_other_seeds(catalogue, seed):
    _assert_valid(generate_rows(catalogue, 2000, seed=seed))


def test_required_arguments_always_present_optional_sometimes(rows, catalogue):
    seen_optional = {("send_email", "body"): 0, ("create_contact", "phone_number"): 0, ("create_contact", "email"): 0}
    counts = {"send_email": 0, "create_contact": 0}
    for row in rows:
        for call in _calls(row):
            assert set(catalogue[call.name].required) <= set(call.arguments)
            if call.name in counts:
                counts[call.name] += 1
            for (tool, arg) in seen_optional:
                seen_optional[(tool, arg)] += call.name == tool and arg in call.arguments
    for (tool, arg), k in seen_optional.items():
        assert 0.2 < k / counts[tool] < 0.85, (tool, arg, k, counts[tool])


def test_literal_values_appear_in_the_request(rows):
    for row in rows:
        if row["meta"].get("turn") == "followup":
            continue   # the email's subject and body come from the map's answer: test_chain_rows
        text = user_text(row)
        for call in _calls(row):
            for key, value in call.arguments.items():
                if key != "datetime":
                    assert value in text, (key, value, text)


# ---------------------------------------------------------------------------------------------- determinism
def test_deterministic_per_seed(catalogue):
    a = generate_rows(catalogue, 300, seed=7)
    assert a == generate_rows(catalogue, 300, seed=7)
    assert a != generate_rows(catalogue, 300, seed=8)
    assert generate_rows(catalogue, 100, seed=7) == a[:100]   # row i depends only on (seed, i)
    assert list(iter_rows(catalogue, 50, seed=7)) == a[:50]


def test_same_rows_in_every_process():
    """Set iteration order follows PYTHONHASHSEED; rows must not, or a data file cannot be made again from its command."""
    import subprocess
    import sys
    code = ("import hashlib, json; from mobile_actions.catalog import load_catalogue; "
            "from mobile_actions.datagen.generate import generate_rows; "
            "rows = generate_rows(load_catalogue('mobile_actions'), 400, seed=3, chain_rate=0.3); "
            "print(hashlib.sha256(json.dumps(rows).encode()).hexdigest())")
    digests = {subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONHASHSEED": seed},
                              capture_output=True, text=True, check=True).stdout for seed in ("1", "2", "3", "4")}
    assert len(digests) == 1


def test_no_global_random_state(catalogue):
    import random
    random.seed(123)
    before = random.random()
    random.seed(123)
    generate_rows(catalogue, 50, seed=1)
    assert random.random() == before


# ---------------------------------------------------------------------------------------------- dates
def test_developer_message_weekday(rows):
    pat = re.compile(r"^Current date and time given in YYYY-MM-DDTHH:MM:SS format: (\S+)\nDay of week is (\w+)\n"
                     r"You are a model that can do function calling with the following functions\n$")
    years = set()
    for row in rows:
        m = pat.match(row["messages"][0]["content"])
        assert m, row["messages"][0]["content"]
        now = datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S")
        assert m.group(2) == WEEKDAYS[now.weekday()]
        years.add(now.year)
    assert years == {2024, 2025, 2026}


def test_developer_message_matches_the_real_format():
    msg = developer_message(datetime(2024, 10, 20, 14, 27, 48))
    assert msg["content"] == ("Current date and time given in YYYY-MM-DDTHH:MM:SS format: 2024-10-20T14:27:48\n"
                              "Day of week is Sunday\nYou are a model that can do function calling with the following functions\n")


# A reference reader of the expressions the generator says, written independently of it.
_MONTH = {m.lower(): i + 1 for i, m in enumerate(MONTHS)} | {m[:3].lower(): i + 1 for i, m in enumerate(MONTHS)}
_WD = {w.lower(): i for i, w in enumerate(WEEKDAYS)} | {w[:3].lower(): i for i, w in enumerate(WEEKDAYS)}
_NUM = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}


def _resolve(text: str, now: datetime) -> datetime:
    t = text.lower().replace(",", "")
    today = now.date()
    tm = re.search(r"at (?:(noon|midday|12 noon)|half past (\d+)|quarter past (\d+)|(\d+)(?::(\d\d))?)\s*"
                   r"(am|pm|a\.m\.|p\.m\.)?(?:\s*o'clock)?\s*(?:in the (morning|afternoon|evening))?", t)
    assert tm, text
    if tm.group(1):
        h, m = 12, 0
    else:
        h = int(tm.group(2) or tm.group(3) or tm.group(4))
        m = 30 if tm.group(2) else 15 if tm.group(3) else int(tm.group(5) or 0)
        ampm = (tm.group(6) or "").replace(".", "")
        pm = ampm == "pm" or tm.group(7) in ("afternoon", "evening") or (
            not ampm and h < 12 and re.search(r"tonight|evening|night|afternoon", t))
        if pm and h < 12:
            h += 12
    day_text = (t[:tm.start()] + " " + t[tm.end():]).strip()
    d = _resolve_day(day_text, today)
    return datetime(d.year, d.month, d.day, h, m)


def _resolve_day(t: str, today: date) -> date:
    if re.search(r"the day after tomorrow", t):
        return today + timedelta(days=2)
    if "tomorrow" in t:
        return today + timedelta(days=1)
    if m := re.search(r"(?:in )?(\d+|two|three|four|five|six|seven|eight|nine|ten) (days|weeks)", t):
        n = int(m.group(1)) if m.group(1).isdigit() else _NUM[m.group(1)]
        return today + timedelta(days=n * (7 if m.group(2) == "weeks" else 1))
    if re.search(r"a week|one week", t):
        return today + timedelta(days=7)
    if re.search(r"today|tonight|this (morning|afternoon|evening)", t):
        return today
    if m := re.search(r"(\d{4})-(\d\d)-(\d\d)", t):
        return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    if m := re.search(r"\b(" + "|".join(_WD) + r")\b", t):
        return today + timedelta(days=(_WD[m.group(1)] - today.weekday()) % 7 or 7)
    if m := re.search(r"(?:on )?the (\d+)(?:st|nd|rd|th)$", t):
        day = int(m.group(1))
        y, mo = today.year, today.month + (today.day >= day)
        return date(y + (mo > 12), (mo - 1) % 12 + 1, day)
    month = next(v for k, v in _MONTH.items() if re.search(rf"\b{k}\b", t))
    day = int(re.search(r"\b(\d{1,2})(?:st|nd|rd|th)?\b", t).group(1))
    if y := re.search(r"\b(20\d\d)\b", t):
        return date(int(y.group(1)), month, day)
    for year in (today.year, today.year + 1):
        if date(year, month, day) > today:
            return date(year, month, day)
    raise AssertionError(t)


@pytest.mark.parametrize("text, expected", [
    ("tomorrow at 3pm", "2024-10-21T15:00:00"),
    ("next Friday at 10:30am", "2024-10-25T10:30:00"),
    ("on Friday at 10:30 AM", "2024-10-25T10:30:00"),
    ("on Sunday at 9", "2024-10-27T09:00:00"),          # today is Sunday: the next one
    ("on March 3rd at noon", "2025-03-03T12:00:00"),
    ("in 2 days at 9", "2024-10-22T09:00:00"),
    ("tonight at 8", "2024-10-20T20:00:00"),
    ("the day after tomorrow at half past 4 in the afternoon", "2024-10-22T16:30:00"),
    ("on the 3rd at 17:45", "2024-11-03T17:45:00"),
])
def test_reference_reader_on_hand_checked_cases(text, expected):
    now = datetime(2024, 10, 20, 14, 27, 48)  # a Sunday
    assert _resolve(text, now).strftime("%Y-%m-%dT%H:%M:%S") == expected


def test_relative_dates_resolve_against_now():
    rng = Random(5)
    for _ in range(3000):
        now = datetime(2024, 1, 1) + timedelta(seconds=rng.randrange(3 * 365 * 86400))
        when = sample_when(rng, now)
        assert when.value > now, (when, now)
        assert when.value.second == 0
        assert _resolve(when.text, now) == when.value, (when.text, now, when.value)


def test_calendar_rows_resolve_against_their_own_datetime(rows):
    checked = 0
    for row in rows:
        now = datetime.strptime(row["messages"][0]["content"].split(": ", 1)[1][:19], "%Y-%m-%dT%H:%M:%S")
        for call in _calls(row):
            if call.name == "create_calendar_event":
                assert datetime.strptime(call.arguments["datetime"], "%Y-%m-%dT%H:%M:%S") > now
                checked += 1
    assert checked > 300


# ---------------------------------------------------------------------------------------------- families
def test_family_partition_is_fixed_and_disjoint(catalogue):
    fams = catalogue_families(catalogue)
    assert fams == catalogue_families(catalogue)
    for group in {f.group for f in fams}:
        members = [f for f in fams if f.group == group]
        held = [f for f in members if f.split == "heldout"]
        assert 1 <= len(held) < len(members), group
        assert 0.1 <= len(held) / len(members) <= 0.35, group
    assert heldout_ids(["a"]) == set()


def test_new_families_leave_the_heldout_families_as_they_were(catalogue):
    # Held-out numbers are comparable across versions only while the held-out families stay put.
    held = {f.id for f in catalogue_families(catalogue) if f.split == "heldout"
            and f.group in ("send_email", "create_calendar_event", "show_map")}
    assert held == {"send_email/compose_for", "send_email/let_know", "send_email/email_verb_about",
                    "create_calendar_event/set_up_at", "create_calendar_event/block_time", "create_calendar_event/when_first",
                    "show_map/show_on_map", "show_map/drop_pin", "show_map/need_to_get"}


def test_news_told_in_a_clause_is_the_subject(catalogue):
    rows = generate_rows(catalogue, 400, seed=5, families="train", tool_weights={"send_email": 6.0})
    told = [(user_text(r), c.arguments["subject"]) for r in rows for c in _calls(r)
            if c.name == "send_email" and set(r["meta"]["families"]) & {"send_email/email_that", "send_email/tell_by_email"}]
    assert len(told) > 10
    for text, subject in told:
        assert f" {subject}" in text and not subject.endswith((".", "!")), (subject, text)


def test_heldout_rows_use_only_heldout_families(catalogue):
    fams = {f.id: f.split for f in catalogue_families(catalogue)}
    train = generate_rows(catalogue, 600, seed=1, families="train")
    held = generate_rows(catalogue, 600, seed=2, families="heldout")
    train_ids = {i for r in train for i in r["meta"]["families"]}
    held_ids = {i for r in held for i in r["meta"]["families"]}
    assert not train_ids & held_ids
    assert all(fams[i] == "train" for i in train_ids) and all(fams[i] == "heldout" for i in held_ids)
    assert {r["metadata"] for r in train} == {"train"} and {r["metadata"] for r in held} == {"eval"}
    assert {r["meta"]["split"] for r in held} == {"heldout"}
    assert {c.name for r in held for c in _calls(r)} == set(catalogue.names)   # every tool is still asked for
    _assert_valid(held)


def test_every_mobile_family_can_show_its_arguments(catalogue):
    for tool in catalogue:
        for name, _, source in mobile.FAMILIES[tool.name]:
            t = Template.compile(source)
            args = {s for s in t.mentioned if not s.startswith("_")}
            assert args <= set(tool.properties), (tool.name, name)
            assert set(tool.required) <= t.always, (tool.name, name)
            # an optional argument is either always shown or only under its own guard
            assert args - set(tool.required) <= t.always | t.conditional, (tool.name, name)


# ---------------------------------------------------------------------------------------------- refusals
def test_refusal_share(catalogue, rows):
    share = sum(r["meta"]["refusal"] for r in rows) / len(rows)
    assert 0.08 < share < 0.12
    assert not any(r["meta"]["refusal"] for r in generate_rows(catalogue, 300, seed=3, refusal_rate=0.0))
    many = generate_rows(catalogue, 300, seed=3, refusal_rate=0.5)
    assert 0.4 < sum(r["meta"]["refusal"] for r in many) / 300 < 0.6


def test_refusal_topics_skip_what_the_catalogue_can_do():
    cat = Catalogue.from_json(GENERIC)
    topics = {f.id for f in catalogue_families(cat) if f.group == "refusal"}
    assert "refusal/sms" not in topics and "refusal/timer_alarm" not in topics and "refusal/device_settings" not in topics
    assert "refusal/weather" in topics


def test_changes_to_saved_things_are_refused_by_create_tools_and_routed_to_the_screen():
    """With only create_contact, "ana has a new number" is no tool's job; with operate_screen (whose description
    names alarms, texts and edits of saved contacts) those are screen goals, never refusals."""
    tools_only = {f.id for f in catalogue_families(load_catalogue("mobile_actions")) if f.group == "refusal"}
    routing = {f.id for f in catalogue_families(load_catalogue("mobile_actions+operate_screen")) if f.group == "refusal"}
    assert "refusal/edit_saved" in tools_only
    assert not {"refusal/edit_saved", "refusal/timer_alarm", "refusal/sms", "refusal/delete_contact"} & routing
    rows = generate_rows(load_catalogue("mobile_actions"), 40, seed=5, families="train", refusal_rate=1.0,
                         tool_weights={"refusal/edit_saved": 1.0, **{t: 0.0 for t in tools_only - {"refusal/edit_saved"}}})
    assert all(r["meta"]["families"] == ["refusal/edit_saved"] and "tool_calls" not in r["messages"][-1] for r in rows)
    # slots a template does not name draw nothing, so the older topics' rows stay the same for a seed
    plain, five = Random(9), Random(9)
    refusals.refusal_slots(plain, frozenset({"_first", "_phone"}))
    V.person(five), V.city(five), V.business(five), V.phone(five)
    assert plain.random() == five.random()
    wider = Random(9)
    assert set(refusals.refusal_slots(wider, frozenset({"_email", "_event"}))) >= {"_email", "_event", "_event2"}
    assert wider.random() != Random(9).random()


# ---------------------------------------------------------------------------------------------- generic catalogue
def test_generic_catalogue_rows_validate_and_use_the_schema():
    cat = Catalogue.from_json(GENERIC)
    rows = generate_rows(cat, 1500, seed=11)
    _assert_valid(rows)
    calls = [c for r in rows for c in _calls(r)]
    assert {c.name for c in calls} == set(cat.names)
    for c in calls:
        if c.name == "set_volume":
            assert 0 <= c.arguments["level"] <= 100
        if c.name == "send_sms":
            assert len(re.findall(r"\d", c.arguments["phone_number"])) >= 7
        if c.name == "book_ride" and "pickup_time" in c.arguments:
            datetime.strptime(c.arguments["pickup_time"], "%Y-%m-%dT%H:%M:%S")
        if c.name == "add_to_shopping_list":
            assert isinstance(c.arguments["items"], list) and c.arguments["items"]
    d = diversity(rows)
    assert d.distinct_text_ratio > 0.95
    assert all(f.startswith(("generic/", "refusal/")) for r in rows for f in r["meta"]["families"])


def test_mobile_tool_with_another_schema_falls_back_to_generic():
    cat = Catalogue.from_json([{"function": {"name": "send_email", "description": "Sends an email.", "parameters": {
        "type": "OBJECT", "properties": {"to": {"type": "STRING"}, "cc": {"type": "STRING"}}, "required": ["to", "cc"]}}}])
    rows = generate_rows(cat, 200, seed=0, refusal_rate=0)
    _assert_valid(rows)
    assert all(f.startswith("generic/") for r in rows for f in r["meta"]["families"])


# ---------------------------------------------------------------------------------------------- diversity
def test_diversity_thresholds(rows):
    d = diversity(rows)
    assert d.rows == 2000
    assert d.distinct_text_ratio > 0.98
    assert d.distinct_trigrams > 15000 and d.distinct_trigram_ratio > 0.5
    assert d.families > 90
    assert set(d.per_tool) == {"send_email", "create_contact", "show_map", "open_wifi_settings", "turn_on_flashlight",
                               "turn_off_flashlight", "create_calendar_event"}
    assert d.calls_per_row[2] > 250 and d.calls_per_row[3] > 80
    assert "distinct user texts" in d.summary()


def test_styles_vary(rows):
    texts = [user_text(r) for r in rows]
    assert sum(t == t.lower() for t in texts) > 100          # all-lower-case requests
    assert sum(t.endswith("?") for t in texts) > 150         # questions
    assert sum(bool(re.search(r"[À-ž]", t)) for t in texts) > 300   # accented names and places
    assert {r["meta"]["style"]["register"] for r in rows} == {"plain", "polite", "casual", "terse", "runon"}


# ---------------------------------------------------------------------------------------------- chains
def test_chain_rows(catalogue):
    """Address chains: a first turn that ends in show_map, and a follow-up that emails what the map showed."""
    from mobile_actions.android.phone.places import lookup
    from mobile_actions.dataset import parse_row, prompt_completion

    rows = generate_rows(catalogue, 400, seed=9, chain_rate=0.5, tool_order="catalogue")
    chains = [r for r in rows if any(f.startswith("chain/") for f in r["meta"]["families"])]
    first = [r for r in chains if r["meta"]["turn"] == "first"]
    follow = [r for r in chains if r["meta"]["turn"] == "followup"]
    texts = [r for r in rows if r["meta"].get("turn") == "followup" and r not in follow]
    assert 0.4 < len(chains) / len(rows) < 0.6 and first and follow and texts
    _assert_valid(rows)
    for r in first:
        assert [m["role"] for m in r["messages"]] == ["developer", "user", "assistant"]
        assert "show_map" in [c.name for c in _calls(r)] and "send_email" not in [c.name for c in _calls(r)]
    for r in follow:
        assert [m["role"] for m in r["messages"]] == ["developer", "user", "assistant", "tool", "assistant"]
        asked = [ToolCall.from_json(c) for c in r["messages"][2]["tool_calls"]]
        results = r["messages"][3]["content"]
        assert [x["name"] for x in results] == [c.name for c in asked]
        query = next(c.arguments["query"] for c in asked if c.name == "show_map")
        place = lookup(query)                                 # what the virtual phone's Maps card shows
        (email,) = _calls(r)
        assert email.name == "send_email" and email.arguments["body"] == f"{place.name}, {place.address}"
        assert email.arguments["to"] in user_text(r)
        assert email.arguments["subject"].removeprefix("Address of ") in user_text(r)
        prompt, completion = prompt_completion(parse_row(r))   # the results are in the prompt, the email is not
        assert place.address in prompt and "send_email{" in completion and "show_map" not in completion
    for r in texts:
        assert r["messages"][-1]["content"] and "tool_calls" not in r["messages"][-1]
        assert not r["meta"]["refusal"]


def test_chain_rate_zero_keeps_the_old_rows_and_other_catalogues_have_no_chains(catalogue):
    rows = generate_rows(catalogue, 300, seed=3, chain_rate=0.0)
    assert not any("turn" in r["meta"] for r in rows)
    assert all(len(r["messages"]) == 3 for r in rows)
    generic = Catalogue.from_json(GENERIC)
    assert not [f for f in catalogue_families(generic) if f.group == "chain"]
    assert not any("turn" in r["meta"] for r in generate_rows(generic, 200, seed=1, chain_rate=1.0))
    with pytest.raises(ValueError, match="chain_rate"):
        generate_rows(catalogue, 1, chain_rate=1.5)
    with pytest.raises(ValueError, match="call_count_weights"):
        generate_rows(catalogue, 1, call_count_weights=(0, 0))


def _calls_per_tool(rows) -> Counter:
    return Counter(c["function"]["name"] for r in rows for m in r["messages"] for c in m.get("tool_calls") or [])


def test_tool_weights_shift_the_mix_and_keep_the_split(catalogue):
    base = generate_rows(catalogue, 400, seed=4, chain_rate=0.0, refusal_rate=0.0, families="train")
    drilled = generate_rows(catalogue, 400, seed=4, chain_rate=0.0, refusal_rate=0.0, families="train",
                            tool_weights={"create_calendar_event": 6.0, "show_map": 0})
    before, after = _calls_per_tool(base), _calls_per_tool(drilled)
    assert after["create_calendar_event"] > 2 * before["create_calendar_event"]
    assert before["show_map"] > 0 and after["show_map"] == 0
    assert all(r["meta"]["split"] == "train" for r in drilled)
    # naming a tool with its default weight changes nothing
    assert generate_rows(catalogue, 50, seed=4, tool_weights={"show_map": 1.3}) == generate_rows(catalogue, 50, seed=4)


def test_refusal_topic_weights_drill_one_topic(catalogue):
    def topics(rows):
        return Counter(r["meta"]["families"][0] for r in rows if r["meta"]["refusal"])

    base = generate_rows(catalogue, 600, seed=9, refusal_rate=0.5, families="train")
    drilled = generate_rows(catalogue, 600, seed=9, refusal_rate=0.5, families="train",
                            tool_weights={"refusal/messenger": 8.0, "refusal/weather": 0})
    before, after = topics(base), topics(drilled)
    assert after["refusal/messenger"] > 3 * before["refusal/messenger"] > 0
    assert before["refusal/weather"] > 0 and after["refusal/weather"] == 0


@pytest.mark.parametrize("weights, match", [({"no_such_tool": 1.0}, "no_such_tool"),
                                            ({"refusal/no_such_topic": 2.0}, "refusal/no_such_topic"),
                                            ({"show_map": -1.0}, ">= 0"),
                                            ({t: 0 for t in ("turn_on_flashlight", "turn_off_flashlight",
                                                             "open_wifi_settings", "send_email", "show_map",
                                                             "create_calendar_event", "create_contact")}, "no tool")])
def test_bad_tool_weights_are_named(catalogue, weights, match):
    with pytest.raises(ValueError, match=match):
        generate_rows(catalogue, 1, tool_weights=weights)


def test_cli_tool_weights(tmp_path, capsys):
    from mobile_actions.cli.main import main

    out = tmp_path / "rows.jsonl"
    assert main(["generate", "--n", "30", "--tool-weights", "create_contact=5", "--out", str(out)]) == 0
    assert main(["generate", "--n", "3", "--tool-weights", "create_contact", "--out", str(out)]) == 2
    assert "'create_contact' is not NAME=WEIGHT" in capsys.readouterr().err


def test_weight_zero_on_a_chain_tool_rules_out_chains(catalogue):
    rows = generate_rows(catalogue, 200, seed=5, chain_rate=0.5, tool_weights={"show_map": 0})
    assert not any("turn" in r["meta"] for r in rows)
    assert "show_map" not in _calls_per_tool(rows)


def test_shared_verb_rows_route_the_screen_part_in_the_users_words():
    """"turn on the flashlight and Bluetooth": the tool call and operate_screen(goal="turn on Bluetooth"), in
    the order said; only routing catalogues get these rows."""
    routing = load_catalogue("mobile_actions+operate_screen")
    rows = generate_rows(routing, 600, seed=5, families="train")
    shared = [r for r in rows if any(f.startswith("shared/") for f in r["meta"]["families"])]
    assert 10 <= len(shared) <= 80
    _assert_valid(shared)
    for r in shared:
        calls = _calls(r)
        names = [c.name for c in calls]
        assert sorted(names) in (["operate_screen", "turn_on_flashlight"], ["operate_screen", "turn_off_flashlight"])
        goal = next(c.arguments["goal"] for c in calls if c.name == "operate_screen")
        text = user_text(r).lower()
        assert all(w in text for w in goal.lower().split()), (text, goal)
        on = "turn_on_flashlight" in names
        assert goal.startswith(("turn on", "switch on", "enable", "activate", "put on") if on
                               else ("turn off", "switch off", "disable", "deactivate")), goal
        thing_first = r["meta"]["families"][0].startswith("shared/thing")
        assert (names[0] == "operate_screen") == thing_first
    plain = generate_rows(load_catalogue("mobile_actions"), 300, seed=5)
    assert not any(f.startswith("shared/") for r in plain for f in r["meta"]["families"])


def test_titles_come_as_people_type_them(catalogue):
    rows = generate_rows(catalogue, 600, seed=6, families="train", tool_weights={"create_calendar_event": 6.0})
    titles = [c.arguments["title"] for r in rows for c in _calls(r) if c.name == "create_calendar_event"]
    lower = [t for t in titles if t[0].islower()]
    assert 0.15 < len(lower) / len(titles) < 0.5
    from random import Random

    from mobile_actions.datagen.values import _as_typed

    rng = Random(0)
    assert {_as_typed(rng, "Team standup", share=1.0), _as_typed(rng, "{first}'s birthday", share=1.0),
            _as_typed(rng, "LH123 to Rome", share=1.0)} == {"team standup", "{first}'s birthday", "LH123 to Rome"}


def test_some_requests_open_with_context_that_asks_for_nothing(rows):
    from mobile_actions.datagen.values import _ASIDES

    starts = [re.compile(re.sub(r"\\\{[^}]*\\\}", ".+?", re.escape(a)), re.IGNORECASE) for a in _ASIDES]
    opened = [r for r in rows if any(p.match(user_text(r)) for p in starts)]
    assert 0.02 < len(opened) / len(rows) < 0.12
    assert any(c.name == "create_calendar_event" for r in opened for c in _calls(r))   # with a date of its own
