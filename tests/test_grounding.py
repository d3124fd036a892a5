"""Grounded decoding: values come from the conversation, whatever the model's logits say."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from mobile_actions import wire
from mobile_actions.calls import ToolCall, validate_call
from mobile_actions.catalog import Catalogue, load_catalogue
from mobile_actions.decoding.grammar import accepts
from mobile_actions.decoding.tokens import pick
from mobile_actions.decoding.turn import Constraints
from mobile_actions.decoding.grounding import AFTER_RESULTS, Grounding, learn_policies
from tests.test_grammar import STOP, table, tok  # noqa: F401  (fixtures: the tiny tokenizer and its table)

from mobile_actions.caller.model import BUNDLED_ADAPTER as DEFAULT_GROUNDING  # its grounding.json

DEV = {"role": "developer", "content": "Current date and time given in YYYY-MM-DDTHH:MM:SS format: 2025-06-02T10:00:00\n"
                                       "Day of week is Monday\nYou are a model that can do function calling"}


def decode(constraint, tok, seed: int, bias: dict[int, float] | None = None, max_tokens: int = 3000,
           calls: int = 3) -> str:
    """Random logits (a model that would write anything), pushed towards starting a call; stops after
    `calls` whole calls."""
    end = wire.CONTROL_TOKEN_IDS[wire.END_CALL]
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(max_tokens):
        logits = rng.normal(size=table_size(constraint)).astype(np.float32)
        for i, b in (bias or {}).items():
            logits[i] += b
        tid = pick(logits, constraint.allowed())
        if tid in STOP:
            break
        out.append(tid)
        constraint.advance(tid)
        if constraint.state is None or out.count(end) >= calls:
            break
    return tok.decode(out, skip_special_tokens=False)


def table_size(constraint) -> int:
    return constraint.t.size


POLICIES = {"send_email.to": "email", "send_email.subject": "span", "send_email.body": "span",
            "create_contact.first_name": "span", "create_contact.last_name": "span",
            "create_contact.email": "email", "create_contact.phone_number": "phone", "show_map.query": "span"}


@pytest.mark.parametrize("seed", range(12))
def test_grounded_values_are_copied_from_the_request(tok, table, seed):
    cat = load_catalogue("mobile_actions")
    request = "Add Ana Lima as a contact, her number is +1 415-555-0100, and show the Louvre on the map"
    messages = [DEV, {"role": "user", "content": request}]
    con = Constraints(table, policies=POLICIES).for_tools(cat, messages)
    start = wire.CONTROL_TOKEN_IDS[wire.START_CALL]
    esc = wire.CONTROL_TOKEN_IDS[wire.ESCAPE]
    text = decode(con, tok, seed, bias={start: 50.0, esc: 3.0})   # a model that closes its strings, now and then
    parsed = wire.parse(text)
    assert parsed.calls
    for call in parsed.calls:
        assert not validate_call(call, cat)
        for arg, value in call.arguments.items():
            if f"{call.name}.{arg}" not in POLICIES:
                continue   # free
            assert value in request, (call, arg, value)
            assert value == value.strip()
            assert re.search(rf"(?<!\w){re.escape(value)}(?!\w)", request), value   # whole words: never "Ana Lim"
        if call.name == "create_contact":
            assert "email" not in call.arguments          # nobody gave one: it cannot be invented
            if "phone_number" in call.arguments:
                assert call.arguments["phone_number"] == "+1 415-555-0100"   # a whole number, never a piece


def test_a_tool_whose_required_address_nobody_wrote_cannot_be_called(tok, table):
    """No email address in the conversation: `send_email` would go to an invented one, so the grammar does
    not offer it (the prompt still declares it); an optional address is just not offered."""
    cat = load_catalogue("mobile_actions")
    messages = [DEV, {"role": "user", "content": "email my boss that I am late, and turn on the flashlight"}]
    con = Constraints(table, policies=POLICIES).for_tools(cat, messages)
    assert "send_email" not in con.g.tools and "turn_on_flashlight" in con.g.tools
    assert con.g.tools["create_contact"].props.get("email") is None
    assert not accepts(con.g, wire.render_call(ToolCall("send_email", {"to": "boss@example.com", "subject": "late"})))
    written = [DEV, {"role": "user", "content": "email boss@example.com that I am late"}]
    assert Constraints(table, policies=POLICIES).for_tools(cat, written).g.tools["send_email"].props["to"]["enum"] == \
        ["boss@example.com"]


def test_tool_results_are_sources_too(table):
    cat = load_catalogue("mobile_actions")
    messages = [DEV, {"role": "user", "content": "email the address of the Louvre to ana@example.com"},
                {"role": "assistant", "tool_calls": [{"name": "show_map", "arguments": {"query": "Louvre"}}]},
                {"role": "tool", "name": "show_map",
                 "content": '{"response": {"address": "Rue de Rivoli, 75001 Paris, France"}}'}]
    g = Grounding.from_messages(messages, POLICIES)
    assert "Rue de Rivoli, 75001 Paris, France" in g.sources
    assert g.emails == ("ana@example.com",)
    con = Constraints(table, policies=POLICIES).for_tools(cat, messages)
    assert con.g.tools["send_email"].props["to"]["enum"] == ["ana@example.com"]


def test_a_follow_up_that_still_owes_an_address_is_the_models_call_to_make(table):
    """After the map's answer, "email the address of the Louvre to ana@example.com" is not done, but an email is
    never forced: the turn may start the call or reply in text. Once the calls cover the request (the address
    used, or a request that only asked for the map), the follow-up is a text reply and no call; the user's own
    turn is never forced either way."""
    cat = load_catalogue("mobile_actions")
    start = wire.CONTROL_TOKEN_IDS[wire.START_CALL]
    ask = [DEV, {"role": "user", "content": "email the address of the Louvre to ana@example.com"}]
    mapped = ask + [{"role": "assistant", "tool_calls": [{"function": {"name": "show_map", "arguments": {"query": "Louvre"}}}]},
                    {"role": "tool", "name": "show_map", "content": '{"response": {"address": "Rue de Rivoli, Paris"}}'}]
    sent = mapped + [{"role": "assistant", "tool_calls": [{"function": {"name": "send_email", "arguments": {
        "to": "ana@example.com", "subject": "Address of the Louvre"}}}]},
        {"role": "tool", "name": "send_email", "content": '{"response": {"status": "done"}}'}]
    owed = Constraints(table, policies=POLICIES).for_tools(cat, mapped).allowed()
    assert owed.dtype == bool and owed[start] and owed.sum() > 1
    allowed = Constraints(table, policies=POLICIES).for_tools(cat, ask).allowed()
    assert allowed.dtype == bool and allowed[start] and allowed.sum() > 1          # a call or text
    for done in (sent, [DEV, {"role": "user", "content": "show the Louvre"}] + mapped[2:]):
        con = Constraints(table, policies=POLICIES).for_tools(cat, done)
        allowed = con.allowed()
        assert allowed.dtype == bool and not allowed[start] and allowed.sum() > 1  # text only
        con.advance(int(np.flatnonzero(allowed & table.text_ok)[0]))
        assert not con.allowed()[start]                                             # not after a word either
    assert Grounding.from_messages(mapped, POLICIES).owed_emails == ("ana@example.com",)


def test_without_policies_nothing_changes(table):
    cat = load_catalogue("mobile_actions")
    con = Constraints(table).for_tools(cat, [DEV, {"role": "user", "content": "hi"}])
    assert con.turn is None and not con.g.per_request


def test_catalogue_x_grounding_overrides_what_was_learned():
    cat = Catalogue.from_json([{"function": {"name": "note", "description": "Saves a note.", "parameters": {
        "type": "OBJECT", "properties": {"text": {"type": "STRING", "description": "The note.", "x-grounding": "free"}},
        "required": ["text"]}}}])
    g = Grounding.from_messages([{"role": "user", "content": "note milk"}], {"note.text": "span"})
    assert "x-span" not in g.tool_schema(cat["note"])["properties"]["text"]


def test_learn_policies_from_generated_rows():
    from mobile_actions.dataset import parse_row
    from mobile_actions.datagen.generate import generate_rows

    rows = [parse_row(r) for r in generate_rows(load_catalogue("mobile_actions"), 300, seed=3)]
    learned = learn_policies(rows)["arguments"]
    assert learned["send_email.to"]["policy"] == "email"
    assert learned["show_map.query"]["policy"] == "span"
    assert learned["create_calendar_event.datetime"]["policy"] == "datetime"
    for key, v in learned.items():
        assert 0 <= v["verbatim"] <= v["n"]


def test_a_goal_in_the_users_words_may_leave_words_out(tok, table):
    """`words`: "turn on the flashlight and Bluetooth" offers "turn on Bluetooth", never a word nobody said."""
    cat = load_catalogue("mobile_actions+operate_screen")
    request = "turn on the flashlight and Bluetooth"
    con = Constraints(table, policies={}).for_tools(cat, [DEV, {"role": "user", "content": request}])
    words = {"turn", "on", "the", "flashlight", "and", "bluetooth"}
    start, esc = wire.CONTROL_TOKEN_IDS[wire.START_CALL], wire.CONTROL_TOKEN_IDS[wire.ESCAPE]
    goals = []
    for seed in range(20):
        con = Constraints(table, policies={}).for_tools(cat, [DEV, {"role": "user", "content": request}])
        for call in wire.parse(decode(con, tok, seed, bias={start: 50.0, esc: 2.0})).calls:
            if call.name == "operate_screen":
                goals.append(call.arguments["goal"])
    assert goals
    for goal in goals:
        assert set(re.findall(r"[^\W_]+", goal.lower())) <= words, goal
    from mobile_actions.decoding.grammar import S_ESC, Str, value_state
    from mobile_actions.decoding.spans import READING

    def typed(text: str):
        s = value_state(con.g.tools["operate_screen"].props["goal"], None, READING).step(S_ESC)
        for ch in text:
            s = s.step(ch) if s is not None else None
        return s

    assert isinstance(typed("Turn on Bluetooth"), Str) and typed("Turn on Bluetooth")._complete()
    assert not typed("turn on Blue")._complete()          # a word cut short is not a word
    assert typed("turn on WiFi") is None and typed("turn  on") is None


def test_a_goals_words_keep_the_dots_and_at_signs_inside_them(table):
    """"open example.com in Chrome" offers "open example.com", not "open example com"; a dot is only inside."""
    from mobile_actions.decoding.grammar import S_ESC, value_state
    from mobile_actions.decoding.spans import READING

    cat = load_catalogue("mobile_actions+operate_screen")
    request = "Open example.com in Chrome and mail it to ana@x.org."
    con = Constraints(table, policies={}).for_tools(cat, [DEV, {"role": "user", "content": request}])
    goal = con.g.tools["operate_screen"].props["goal"]

    def typed(text: str):
        s = value_state(goal, None, READING).step(S_ESC)
        for ch in text:
            s = s.step(ch) if s is not None else None
        return s

    assert typed("open example.com in Chrome")._complete()
    assert typed("Mail it to ana@x.org")._complete()
    assert not typed("open example.")._complete()                   # a word cut at its dot is not a word
    assert typed("open example com") is None and typed("open .com") is None and typed("open org.") is None


@pytest.mark.parametrize("text, first, last", [
    ("Ok so surname Yılmaz, first name Benoît, number +64 21 763 2419. Save it!", "Benoît", "Yılmaz"),
    ("family name del Río, first name Fatima. Add to contacts.", "Fatima", "del Río"),
    ("new contact: first name Luíza last name Ferrari", "Luíza", "Ferrari"),
    ("Given name: \"Ana\"; surname - Silva", "Ana", "Silva"),
    ("add contact first name Fatima Zahra, last name Benali, email fz@x.com", "Fatima Zahra", "Benali"),
    ("um family name Silva first name Conceição number +54 9 11 3375-2952 Save it as a contact ok?", "Conceição",
     "Silva"),
])
def test_cues_put_each_name_where_the_request_put_it(text, first, last):
    """With cues ("surname", "first name"), a name argument can only be a span of what follows its cue
    (up to punctuation, a joining word or the other argument's cue): the names cannot be swapped. What
    something closes is taken whole: "first name Fatima Zahra, ..." is not "Fatima"."""
    from mobile_actions.decoding.grounding import read_policies

    pol = read_policies(DEFAULT_GROUNDING)
    schema = Grounding.from_messages([{"role": "user", "content": text}], pol).tool_schema(
        load_catalogue("mobile_actions")["create_contact"])
    spans = {a: [*schema["properties"][a].get("x-span", ()), *schema["properties"][a].get("x-span-whole", ())]
             for a in ("first_name", "last_name")}
    assert any(s.startswith(first) for s in spans["first_name"]) and not any(last in s for s in spans["first_name"])
    assert any(s.startswith(last) for s in spans["last_name"]) and not any(first in s for s in spans["last_name"])
    if "," in text.split(first)[1][:2]:
        assert schema["properties"]["first_name"]["x-span-whole"] == [first]
    if text.endswith("ok?"):   # up to the last "?": no value, only a span to take one from
        assert "x-span-whole" not in schema["properties"]["first_name"]


def test_without_a_cue_the_whole_request_is_the_source():
    from mobile_actions.decoding.grounding import read_policies

    text = "Add John Smith to my contacts"
    schema = Grounding.from_messages([{"role": "user", "content": text}], read_policies(DEFAULT_GROUNDING)).tool_schema(
        load_catalogue("mobile_actions")["create_contact"])
    assert schema["properties"]["last_name"]["x-span"] == [text]


def test_catalogue_cues_and_relearning_keeps_set_cues(tmp_path):
    from mobile_actions.decoding.grounding import POLICY_FILE, keep_cues, read_policies

    cat = Catalogue.from_json([{"name": "book", "description": "d", "parameters": {"type": "object", "properties": {
        "guest": {"type": "string", "x-grounding": "span", "x-cues": ["guest"]},
        "host": {"type": "string", "x-grounding": "span", "x-cues": ["host"]}}, "required": ["guest", "host"]}}])
    schema = Grounding.from_messages([{"role": "user", "content": "book it, host Ana and guest Bo"}], {}).tool_schema(cat["book"])
    # "Ana" is closed by "and": taken whole; "Bo" ends the request: a span of it
    assert schema["properties"]["guest"]["x-span"] == ["Bo"] and schema["properties"]["host"]["x-span-whole"] == ["Ana"]

    path = tmp_path / POLICY_FILE
    path.write_text(json.dumps({"arguments": {"t.a": {"policy": "span", "cues": ["alpha"]}}}))
    learned = {"arguments": {"t.a": {"policy": "span"}, "t.b": {"policy": "free"}}}
    keep_cues(learned, path)
    assert learned["arguments"]["t.a"]["cues"] == ["alpha"] and "cues" not in learned["arguments"]["t.b"]
    path.write_text(json.dumps(learned))
    assert read_policies(tmp_path)["cues"] == {"t.a": ["alpha"]}


def test_follow_ups_learn_their_own_policies():
    """A chain's follow-up composes its subject from the map's answer ("Address of the Louvre"); the user's own
    turn copies it. Learned apart, the follow-ups no longer turn copying off for every subject."""
    from mobile_actions.dataset import parse_row
    from mobile_actions.datagen.generate import generate_rows

    rows = [parse_row(r) for r in generate_rows(load_catalogue("mobile_actions"), 400, seed=4, chain_rate=0.5)]
    subject = learn_policies(rows)["arguments"]["send_email.subject"]
    assert subject["policy"] == "span" and subject[AFTER_RESULTS]["policy"] == "free"
    cat = load_catalogue("mobile_actions")
    policies = {"send_email.subject": "span", AFTER_RESULTS: {"send_email.subject": "free"}}
    ask = [DEV, {"role": "user", "content": "email the address of the Louvre to ana@example.com"}]
    mapped = ask + [{"role": "assistant", "tool_calls": [{"function": {"name": "show_map", "arguments": {"query": "Louvre"}}}]},
                    {"role": "tool", "name": "show_map", "content": '{"response": {"address": "Rue de Rivoli, Paris"}}'}]
    assert "x-span" in Grounding.from_messages(ask, policies).tool_schema(cat["send_email"])["properties"]["subject"]
    assert "x-span" not in Grounding.from_messages(mapped, policies).tool_schema(cat["send_email"])["properties"]["subject"]


def test_read_policies_reads_the_follow_up_policies(tmp_path):
    from mobile_actions.decoding.grounding import read_policies, write_policies

    learned = {"threshold": 0.95, "arguments": {"send_email.subject": {
        "n": 9, "verbatim": 9, "share": 1.0, "policy": "span",
        AFTER_RESULTS: {"n": 5, "verbatim": 0, "share": 0.0, "policy": "free"}}}}
    write_policies(tmp_path, learned, "rows.jsonl", 14)
    assert read_policies(tmp_path) == {"send_email.subject": "span", AFTER_RESULTS: {"send_email.subject": "free"}}


@pytest.mark.parametrize("name, description, kind", [
    ("to", "The email address of the recipient.", "email"), ("email", "The email address of the contact.", "email"),
    ("subject", "The subject of the email.", "span"), ("body", "The body of the email.", "span"),
    ("phone_number", "The phone number of the contact.", "phone"), ("number", "The phone number to dial.", "phone"),
    ("title", "The title of the phone call.", "span"), ("email_address", "", "email"), ("emailAddress", "", "email"),
    ("recipient", "The e-mail of the recipient.", "email"), ("headphones", "Which headphones to pair.", "span"),
    ("mobile", "", "phone")])
def test_an_argument_about_an_email_is_not_an_address(name, description, kind):
    from mobile_actions.calls import value_kind

    assert value_kind(name, {"type": "STRING", "description": description}) == kind


def test_an_undated_argument_is_not_taken_from_a_date():
    """Titles never hold a date in the data, so "a job interview on December 3rd at 11" cannot be titled
    "December 3rd"; a subject sometimes does ("Dinner on Friday"), so it keeps the whole request."""
    from mobile_actions.dataset import parse_row
    from mobile_actions.datagen.generate import generate_rows
    from mobile_actions.decoding.grounding import UNDATED

    learned = learn_policies([parse_row(r) for r in generate_rows(load_catalogue("mobile_actions"), 400, seed=3)])
    assert learned["arguments"]["create_calendar_event.title"][UNDATED] is True
    assert learned["arguments"]["send_email.subject"][UNDATED] is False
    cat = load_catalogue("mobile_actions")
    request = "I have a job interview on December 3rd at 11, put it in my calendar"
    g = Grounding.from_messages([DEV, {"role": "user", "content": request}],
                                {"create_calendar_event.title": "span", UNDATED: ["create_calendar_event.title"]})
    spans = g.tool_schema(cat["create_calendar_event"])["properties"]["title"]["x-span"]
    assert spans == ["I have a job interview ", ", put it in my calendar"]
    assert not any("December" in s or "11" in s for s in spans)


def test_a_value_never_runs_over_the_name_of_another_argument():
    """"subject Chaves body deixei as chaves": the subject ends before "body", the body starts after it; a contact's
    first name never runs over "phone number". Short names ("to") are words, not labels."""
    cat = load_catalogue("mobile_actions")
    request = "email rosa@uol.com.br subject Chaves body deixei as chaves embaixo do tapete, to Rosa"
    g = Grounding.from_messages([DEV, {"role": "user", "content": request}], POLICIES)
    props = g.tool_schema(cat["send_email"])["properties"]
    assert props["subject"]["x-span"] == ["email rosa@uol.com.br subject Chaves ",
                                          " deixei as chaves embaixo do tapete, to Rosa"]
    assert props["body"]["x-span"] == ["email rosa@uol.com.br ", " Chaves body deixei as chaves embaixo do tapete, to Rosa"]
    g = Grounding.from_messages([DEV, {"role": "user", "content": "add Ana Lima Phone Number 555 0100"}],
                                {"create_contact.first_name": "span"})
    assert g.tool_schema(cat["create_contact"])["properties"]["first_name"]["x-span"] == ["add Ana Lima ", " 555 0100"]


def test_a_quoted_value_is_taken_whole_or_not_at_all():
    """"subject 'slides v2' body 'attached the updated deck, lmk'": a 270M model cuts a quoted title short
    or starts a body at its opening quote; what the user put in quotes is one value."""
    from mobile_actions.decoding.grammar import S_ESC, value_state
    from mobile_actions.decoding.spans import READING

    cat = load_catalogue("mobile_actions")
    request = "pls send an email to priya@x.com subject 'slides v2' body 'attached the updated deck, lmk'"
    g = Grounding.from_messages([DEV, {"role": "user", "content": request}], POLICIES)
    body = g.tool_schema(cat["send_email"])["properties"]["body"]
    assert body["x-span-whole"] == ["slides v2", "attached the updated deck, lmk"]
    assert not any("'" in s or "slides" in s for s in body["x-span"])

    def takes(value: str) -> bool:
        state = value_state(body, object(), READING).step(S_ESC)
        for c in value:
            state = state.step(c) if state is not None else None
        return state is not None and state.step(S_ESC) is not None

    assert takes("attached the updated deck, lmk") and takes("slides v2") and takes("pls send an email")
    assert not takes("attached the updated deck") and not takes("slides") and not takes("'attached")
    # an apostrophe inside a word opens no quote
    g = Grounding.from_messages([DEV, {"role": "user", "content": "put Ayşe's graduation on my calendar"}],
                                {"create_calendar_event.title": "span"})
    title = g.tool_schema(cat["create_calendar_event"])["properties"]["title"]
    assert "x-span-whole" not in title and title["x-span"] == ["put Ayşe's graduation on my calendar"]


def test_a_title_is_never_cut_short_and_a_surname_may_be():
    """Learned: gold titles never end where a phrase goes on with them ("Catch-up| with Liam"); surnames
    do ("Ana Lima| from work"), so only titles get the rule."""
    from mobile_actions.decoding.grounding import UNBROKEN, read_policies

    pol = read_policies(DEFAULT_GROUNDING)
    assert "create_calendar_event.title" in pol[UNBROKEN] and "create_contact.last_name" not in pol[UNBROKEN]
    g = Grounding.from_messages([DEV, {"role": "user", "content": "put Catch-up with Liam on my calendar at 11am"}], pol)
    cat = load_catalogue("mobile_actions")
    assert g.tool_schema(cat["create_calendar_event"])["properties"]["title"]["x-span-unbroken"] is True
    assert "x-span-unbroken" not in g.tool_schema(cat["create_contact"])["properties"]["last_name"]


def test_what_a_title_ends_before_is_learned_and_a_first_name_is_not_held_to_it():
    """Titles end before a date, "in"/"on" (my calendar) and punctuation; first names end before every surname
    there is, so only titles are held to what they were seen to end before."""
    from mobile_actions.dataset import parse_row
    from mobile_actions.decoding.grounding import ENDS_BEFORE, learn_policies, read_policies

    tools = load_catalogue("mobile_actions").to_mobile_actions()
    names = ["Ana Lima", "Bo Chen", "Cy Diaz", "Di Eze", "Ed Fox", "Flo Gil", "Gus Hu"]
    rows = []
    for i, name in enumerate(names * 8):
        first, last = name.split()
        title = f"Standup {i}"
        request = (f"put {title} in my calendar tomorrow at 9am" if i % 2 else f"add {title} on Friday at 10am, "
                   f"thanks") + f" and save {first} {last}"
        rows.append(parse_row({"tools": tools, "messages": [DEV, {"role": "user", "content": request}, {
            "role": "assistant", "tool_calls": [
                {"function": {"name": "create_calendar_event", "arguments": {"title": title, "datetime": "x"}}},
                {"function": {"name": "create_contact", "arguments": {"first_name": first, "last_name": last}}}]}]}))
    args = learn_policies(rows)["arguments"]
    assert args["create_calendar_event.title"][ENDS_BEFORE] == {"in": 28, "DATE": 28}
    assert ENDS_BEFORE not in args["create_contact.first_name"]
    pol = read_policies(DEFAULT_GROUNDING)
    assert {"DATE", "in", "on"} <= set(pol[ENDS_BEFORE]["create_calendar_event.title"])
    g = Grounding.from_messages([DEV, {"role": "user", "content": "put Dentist apointment for Ruby in my calender"}], pol)
    schema = g.tool_schema(load_catalogue("mobile_actions")["create_calendar_event"])
    assert "in" in schema["properties"]["title"]["x-span-ends-before"]


def test_an_unseen_catalogues_arguments_are_grounded_by_their_schema():
    """No data was learned for these tools: a date, a time and an address still come from the request, and
    a plain string follows the `unseen` policy."""
    from mobile_actions.calls import value_kind

    assert value_kind("day", {"type": "string", "description": "Date, YYYY-MM-DD"}) == "date"
    assert value_kind("start", {"type": "string", "format": "time"}) == "time"
    assert value_kind("when", {"type": "string", "description": "ISO 8601, YYYY-MM-DDTHH:MM:SS"}) == "datetime"
    cat = Catalogue.from_json([{"name": "book_table", "description": "Books a table.", "parameters": {
        "type": "object", "required": ["day"], "properties": {
            "day": {"type": "string", "description": "Date, YYYY-MM-DD"},
            "at": {"type": "string", "description": "Time, HH:MM"},
            "notify": {"type": "string", "description": "Email address for the confirmation"},
            "name": {"type": "string", "description": "Name on the booking"}}}}])
    dev = {"role": "developer", "content": "Current date and time given in YYYY-MM-DDTHH:MM:SS format: "
                                           "2026-03-14T09:26:53\nDay of week is Saturday\n"}
    g = Grounding.from_messages([dev, {"role": "user", "content": "table for Ana tomorrow at 7pm, confirm to a@b.co"}],
                                {})
    props = g.tool_schema(cat["book_table"])["properties"]
    assert props["day"]["enum"] == ["2026-03-15"] and props["at"]["enum"] == ["19:00"]
    assert props["notify"]["enum"] == ["a@b.co"]
    assert g.policy("book_table", "name", props["name"]) == "free" and "x-span" not in props["name"]
    spans = Grounding.from_messages([dev, {"role": "user", "content": "table for Ana tomorrow"}], {"unseen": "span"})
    assert "Ana" in " ".join(spans.tool_schema(cat["book_table"])["properties"]["name"]["x-span"])


@pytest.mark.parametrize("said, times", [
    ("book Max on monday", None),                        # a day said alone: its 00:00 is no time anyone said
    ("cancel the 22nd and book the 29th at 4:30pm", ["16:30"]),
    ("monday at 8:45", ["08:45", "20:45"]),              # either half of the day, the likelier first
    ("tomorrow morning", ["09:00"]),
    ("at midnight on friday", ["00:00"]),
    ("in 2 hours", ["11:26"]),
])
def test_a_time_argument_is_offered_only_the_times_the_request_says(said, times):
    cat = Catalogue.from_json([{"name": "book", "description": "Books a visit.", "parameters": {
        "type": "object", "required": ["day"], "properties": {
            "day": {"type": "string", "description": "Date, YYYY-MM-DD"},
            "at": {"type": "string", "description": "Time, HH:MM"}}}}])
    dev = {"role": "developer", "content": "Current date and time given in YYYY-MM-DDTHH:MM:SS format: "
                                           "2026-03-14T09:26:53\nDay of week is Saturday\n"}
    props = Grounding.from_messages([dev, {"role": "user", "content": said}], {}).tool_schema(cat["book"])["properties"]
    assert (props["at"]["enum"] if "at" in props else None) == times


PRINT_TOOLS = Catalogue.from_json([{"function": {"name": "queue_print", "description": "Queues a print job.", "parameters": {
    "type": "OBJECT", "required": ["file_name", "material"], "properties": {
        "file_name": {"type": "STRING", "description": "The file."},
        "material": {"type": "STRING", "enum": ["PLA", "PETG", "TPU"], "description": "Filament."},
        "priority": {"type": "STRING", "enum": ["low", "normal", "rush"], "description": "Default normal."},
        "notifyWhenDone": {"type": "BOOLEAN", "description": "Default false."},
        "settings": {"type": "OBJECT", "description": "Slicer settings.", "properties": {
            "supports": {"type": "BOOLEAN", "description": "Print supports."},
            "quality": {"type": "STRING", "enum": ["draft", "fine"], "description": "Default draft."}}}}}}}])


@pytest.mark.parametrize("request_, kept", [
    # nothing named: no option can be picked for the person (a required choice still is the model's); an
    # optional object with nothing left in it goes too
    ("queue bracket.stl in petg", {"material": ["PLA", "PETG", "TPU"]}),
    # a value named keeps that value only; a name named ("notify me") keeps the option whole
    ("queue bracket.stl in petg, rush it and notify me when its done, fine quality with supports",
     {"material": ["PLA", "PETG", "TPU"], "priority": ["rush"], "notifyWhenDone": None,
      "settings": {"supports": None, "quality": ["fine"]}}),
])
def test_an_option_the_request_names_nothing_of_is_left_out(table, request_, kept):
    messages = [DEV, {"role": "user", "content": request_}]
    con = Constraints(table, policies=POLICIES).for_tools(PRINT_TOOLS, messages)
    props = con.g.tools["queue_print"].props
    got = {arg: (sub.get("enum") if "properties" not in sub else
                 {a: s.get("enum") for a, s in sub["properties"].items()})
           for arg, sub in props.items() if arg != "file_name"}
    assert got == kept
    off = Constraints(table, policies=POLICIES, off=frozenset({"unnamed-choice"})).for_tools(PRINT_TOOLS, messages)
    assert set(off.g.tools["queue_print"].props) == {"file_name", "material", "priority", "notifyWhenDone", "settings"}


def test_the_options_left_out_show_when_their_tool_is_called(table):
    messages = [DEV, {"role": "user", "content": "queue bracket.stl in petg"}]
    con = Constraints(table, policies=POLICIES).for_tools(PRINT_TOOLS, messages)
    assert con.rules == []
    con.syms = list(wire.render_call(ToolCall("queue_print", {"file_name": "bracket.stl", "material": "PETG"})))
    (line,) = con.rules
    assert line.startswith("unnamed-choice: queue_print: priority, notifyWhenDone, settings.supports, settings.quality left out")


def test_a_date_the_resolver_offers_is_no_choice_to_leave_out(table):
    """Grounding offers an optional date as the resolver's values (an enum in the narrowed schema): it is still
    the tool's date, not an option the request must name."""
    tools = Catalogue.from_json([{"function": {"name": "search_classes", "description": "Finds classes.", "parameters": {
        "type": "OBJECT", "properties": {"date": {"type": "STRING", "description": "Day, YYYY-MM-DD."},
                                         "level": {"type": "STRING", "enum": ["easy", "hard"]}}}}}])
    con = Constraints(table, policies=POLICIES).for_tools(tools, [DEV, {"role": "user", "content": "spin classes sunday"}])
    assert set(con.g.tools["search_classes"].props) == {"date"}


def test_a_call_cut_off_at_the_token_limit_still_reports_its_rules(table):
    messages = [DEV, {"role": "user", "content": "queue bracket.stl in petg"}]
    con = Constraints(table, policies=POLICIES).for_tools(PRINT_TOOLS, messages)
    con.syms = list(wire.render_call(ToolCall("queue_print", {"file_name": "bracket.stl", "material": "PETG"}))[:40])
    assert [line.split(":")[0] for line in con.rules] == ["unnamed-choice"]


def test_an_email_address_is_copied_whole_or_not_at_all():
    """"last name Wierzbicki email tomek.wierzbicki@pszczelarz.pl": a copy never ends (or starts) inside an
    address, and an address's dot does not close what a cue ("last name") introduces, so "Wierzbicki email tomek"
    is nobody's last name; a request with no address reads as before."""
    from mobile_actions.decoding.grammar import span_spec
    from mobile_actions.decoding.grounding import read_policies
    from mobile_actions.decoding.spans import READING

    text = "new contact: first name Tomasz last name Wierzbicki email tomek.wierzbicki@pszczelarz.pl, the breeder"
    spec = span_spec([text], bounds=READING)
    assert spec.whole_span("Wierzbicki") and spec.whole_span("tomek.wierzbicki@pszczelarz.pl")
    assert not spec.whole_span("Wierzbicki email tomek") and not spec.whole_span("tomek.wierzbicki")
    assert not spec.whole_span("wierzbicki@pszczelarz.pl") and not spec.continuations("pszczelarz")
    assert READING.source("add Ana Lima 555 0100").ends is None
    contact = load_catalogue("mobile_actions")["create_contact"]
    for request in (text, "new contact: first name Priya last name Raghunathan email priya.r@stmaryspara.org"):
        grounding = Grounding.from_messages([{"role": "user", "content": request}], read_policies(DEFAULT_GROUNDING))
        last = grounding.tool_schema(contact)["properties"]["last_name"]
        assert "x-span-whole" not in last and not any("email" in s for s in last["x-span"])
