"""Coverage: a turn does not end while a clause of the request has no call, and nothing else is forced."""
from __future__ import annotations

import numpy as np
import pytest

from mobile_actions import wire
from mobile_actions.calls import ToolCall, validate_call
from mobile_actions.catalog import Catalogue, load_catalogue
from mobile_actions.decoding import coverage
from mobile_actions.decoding.tokens import allowed_mask, pick
from mobile_actions.decoding.turn import Constraints
from tests.test_grammar import STOP, table, tok  # noqa: F401  (fixtures: the tiny tokenizer and its table)
from tests.test_grounding import DEV, POLICIES

TOOLS = load_catalogue("mobile_actions")
ROUTING = load_catalogue("mobile_actions+operate_screen")


def parts(request: str, cat=TOOLS) -> list[tuple[str, set]]:
    return [(c.text, set(c.tools)) for c in coverage.clauses(request, cat)]


def test_clauses_are_the_verb_first_parts_of_a_request():
    assert parts("Hey, could you please turn off the flashlight, then show me Union Station on the map?") == [
        ("turn off the flashlight", {"turn_on_flashlight", "turn_off_flashlight"}),
        ("show me Union Station on the map", {"show_map"})]
    assert parts("Put Book club on my calendar for Friday at 7pm and email ana@example.com about it") == [
        ("Put Book club on my calendar for Friday at 7pm", {"create_calendar_event"}),
        ("email ana@example.com about it", {"send_email"})]
    # a new sentence; the words before the verb are not a request
    assert [t for t, _ in parts('Then tomorrow at 7 there\'s "Dentist". put it on the calendar. Thanks!')] == [
        "put it on the calendar"]


@pytest.mark.parametrize("request_, texts", [
    ('Write a note saying "call mom and email dad" and turn on the torch',       # quotes are never split
     ['Write a note saying "call mom and email dad"', "turn on the torch"]),
    ("Create a contact for Ana Ruiz, email ana@x.com, phone 555 1234",            # comma fields stay together
     ["Create a contact for Ana Ruiz, email ana@x.com, phone 555 1234"]),
    ("I need you to write up and send an email for a@b.co headed Hi",            # a verb sharing its object
     ["send an email for a@b.co headed Hi"]),
    ("I'm at the Louvre and it's dark, delete my notes and turn on the flashlight",  # mentions; nothing destructive
     ["turn on the flashlight"]),
    ("let's flip on the torch and then let me know", ["flip on the torch"]),       # talk to the assistant
])
def test_what_is_not_a_clause(request_, texts):
    assert [t for t, _ in parts(request_)] == texts


def test_a_dated_reminder_names_the_tools_that_take_a_datetime():
    assert parts("Turn on the torch and remind me to pay rent on the 1st at 9") == [
        ("Turn on the torch", {"turn_on_flashlight", "turn_off_flashlight"}),
        ("remind me to pay rent on the 1st at 9", {"create_calendar_event"})]
    assert parts("set a reminder for the dentist tomorrow 3pm") == [
        ("set a reminder for the dentist tomorrow 3pm", {"create_calendar_event"})]
    # no date or time: no tool can hold it; someone else to remind, by email: that tool
    assert parts("Turn on the torch and remind me to call mom")[1] == ("remind me to call mom", set())
    assert parts("remind Ana by email about the rent tomorrow") == [
        ("remind Ana by email about the rent tomorrow", {"send_email"})]
    assert owed("Turn on the torch and remind me to pay rent on the 1st at 9",
                [ToolCall("turn_on_flashlight", {})]) == ("create_calendar_event",)


def test_a_quoted_tool_word_names_no_tool():
    assert parts('Write a note saying "email dad"', ROUTING) == [('Write a note saying "email dad"', set())]


def owed(request: str, calls: list[ToolCall], cat=TOOLS, after_results: bool = False):
    found = coverage.owed(coverage.clauses(request, cat), calls, {t.name for t in cat}, coverage.fallback_tool(cat),
                          after_results)
    return None if found is None else found[1]


def test_owed_is_the_first_clause_no_call_answers():
    flash = ToolCall("turn_off_flashlight", {})
    assert owed("Turn off the flashlight and show me Union Station on the map", [flash]) == ("show_map",)
    assert owed("Turn off the flashlight and show me Union Station on the map",
                [flash, ToolCall("show_map", {"query": "Union Station"})]) is None
    # a value written in a later clause does not cover it: the map call belongs to the clause naming the map
    req = "Show Harbour Cafe on the map and write a note saying meet at Harbour Cafe"
    assert owed(req, [ToolCall("show_map", {"query": "Harbour Cafe"})]) is None          # no tool for notes
    assert owed(req, [ToolCall("show_map", {"query": "Harbour Cafe"})], ROUTING) == ("operate_screen",)
    # "show me" a place is the map's, when the map is not named ("..., and show me Sukiyabashi Jiro")
    contact = ToolCall("create_contact", {"first_name": "Hiroshi", "last_name": "Sato", "phone_number": "090-1234-5678"})
    assert owed("Save Hiroshi Sato 090-1234-5678 and show me Sukiyabashi Jiro", [contact]) == ("show_map",)
    assert owed("Turn off the flashlight and show me the wifi settings",
                [flash, ToolCall("open_wifi_settings", {})]) is None
    # something saved with an address or number is for the tools that keep one; a sentence after a comma is none
    req = "add Jae-won Park jaewon.park@naver.com and Seo-yeon Lee 010-2345-6789"
    assert parts(req) == [("add Jae-won Park jaewon.park@naver.com", {"create_contact"}),
                          ("Seo-yeon Lee 010-2345-6789", {"create_contact"})]
    assert len(parts("save Yusuf Demir 0532 123 45 67, Elif Şahin 0533 765 43 21 and Can Öztürk 0541 111 22 33")) == 3
    assert parts("save Chloé Lefèvre 06 12 34 56 78, she lives near Place Bellecour, show me that on the map") == [
        ("save Chloé Lefèvre 06 12 34 56 78", {"create_contact"}), ("show me that on the map", {"show_map"})]
    # a call for the clause with no tool word covers it through its values
    assert owed("Store Ana Lima and turn on the torch", [ToolCall("create_contact", {"first_name": "Ana",
                "last_name": "Lima"}), ToolCall("turn_on_flashlight", {})]) is None


def test_a_list_item_after_one_verb_is_owed_its_own_call():
    contact = ToolCall("create_contact", {"first_name": "Hana", "last_name": "Kobayashi", "email": "hana@x.jp"})
    req = "add Hana Kobayashi hana@x.jp and Yuki Mori yuki.mori@sony.com to contacts"
    assert parts(req)[1] == ("Yuki Mori yuki.mori@sony.com to contacts", {"create_contact"})
    assert owed(req, [contact]) == ("create_contact",)
    assert owed(req, [contact, ToolCall("create_contact", {"first_name": "Yuki", "last_name": "Mori",
                                                            "email": "yuki.mori@sony.com"})]) is None
    standup = ToolCall("create_calendar_event", {"title": "standup", "datetime": "2025-09-01T09:00:00"})
    assert owed("put standup mon 9am and retro fri 4pm on my calendar", [standup]) == ("create_calendar_event",)
    # its values in a call named elsewhere answer it; an email or phone label is no request for that tool
    req = "stop the flash light, and surname MacLeod, given name Thiago, email t.macleod@x.com. Add to contacts."
    assert not any(c.listed and c.tools for c in coverage.clauses(req, TOOLS))
    macleod = ToolCall("create_contact", {"first_name": "Thiago", "last_name": "MacLeod", "email": "t.macleod@x.com"})
    assert owed(req, [ToolCall("turn_off_flashlight", {}), macleod]) is None


def test_an_entry_added_at_a_time_and_the_items_after_it_name_the_calendar():
    assert parts("add Gym tomorrow at 7am and Dentist on Monday at 3:30pm") == [
        ("add Gym tomorrow at 7am", {"create_calendar_event"}),
        ("Dentist on Monday at 3:30pm", {"create_calendar_event"})]
    assert parts("set an alarm for 7am and turn on the torch")[0] == ("set an alarm for 7am", set())
    assert parts("add contacts: Wei Chen (wei.chen@tencent.com) and Na Li (na.li@alibaba-inc.com)")[1] == (
        "Na Li (na.li@alibaba-inc.com)", {"create_contact"})


def test_a_comma_list_of_dated_items_or_addresses_is_a_list():
    """Commas part a list when both sides write a value of one kind: an address, a number, or a date after the
    item's own name. A date's parts, an item's fields and an address's parts are one item."""
    assert parts("add Standup Mon 9:15am, Retro Wed 4pm, Demo Fri 11:30am") == [
        ("add Standup Mon 9:15am", {"create_calendar_event"}), ("Retro Wed 4pm", {"create_calendar_event"}),
        ("Demo Fri 11:30am", {"create_calendar_event"})]
    assert [t for t, _ in parts("add 'Board meeting' to my calendar for Monday at 9am, 'Client dinner' for "
                                "Wednesday at 7pm, and 'Flight to Lima' for Friday at 6am")] == [
        "add 'Board meeting' to my calendar for Monday at 9am", "'Client dinner' for Wednesday at 7pm",
        "'Flight to Lima' for Friday at 6am"]
    req = "Email sales@ecopack.co.uk, hello@beanroute.com and info@milkmanjoe.co.uk, subject Christmas opening hours"
    assert [t for t, _ in parts(req)] == ["Email sales@ecopack.co.uk", "hello@beanroute.com",
                                          "info@milkmanjoe.co.uk, subject Christmas opening hours"]
    for one in ("add Dentist on Friday, 3pm", "add lunch tomorrow, 1pm at Nando's", "add Ana Ruiz, ana@x.com, 555 0100",
                'Plan "Pottery class" August 17, 2025 at 8:45 pm in my calendar',
                "store Megan Johnson +44 20 7946 0958, mail me.johnson@x.com"):
        assert len(parts(one)) == 1, one


def test_a_request_without_a_verb_is_a_clause():
    """"open wifi settings, flashlight on, and show me X": the torch is owed between the two; "the torch", "wifi's
    dead" and "Flashlight still on??" ask nothing, and a second clause for a torch already on owes nothing."""
    assert [t for t, _ in parts("open wifi settings, flashlight on, and show me Skukuza Rest Camp")] == [
        "open wifi settings", "flashlight on", "show me Skukuza Rest Camp"]
    assert [t for t, _ in parts("need to read the router: torch on, open the wifi settings")] == [
        "torch on", "open the wifi settings"]
    for none in ("it is dark in here, the torch", "wifi's dead, sigh", "Flashlight still on??"):
        assert parts(none) == [], none
    wifi, on = ToolCall("open_wifi_settings", {}), ToolCall("turn_on_flashlight", {})
    assert owed("open wifi settings, flashlight on, and show me Skukuza Rest Camp", [wifi]) == (
        "turn_off_flashlight", "turn_on_flashlight")
    assert owed("let there be light, torch now", [on]) is None
    assert owed("torch on, open the wifi settings, and then turn the torch off", [on, wifi]) == (
        "turn_off_flashlight", "turn_on_flashlight")


def test_a_list_item_with_an_address_is_answered_only_by_a_call_to_it():
    """"email olga@x.pl and tomasz@x.pl, both with subject 'Thesis defense'": the mail to olga has the item's
    subject but not its address, so the item is still owed."""
    req = "email olga@pwr.edu.pl and tomasz@pwr.edu.pl, both with subject 'Thesis defense', and add Thesis defense on June 30th at 10am"
    olga = ToolCall("send_email", {"to": "olga@pwr.edu.pl", "subject": "Thesis defense"})
    assert owed(req, [olga]) == ("send_email",)
    assert owed(req, [olga, ToolCall("send_email", {"to": "tomasz@pwr.edu.pl", "subject": "Thesis defense"})]) == (
        "create_calendar_event",)


@pytest.mark.parametrize("request_, said", [
    ("Flashlight still on?? switch it off pls", "off"), ("kill the torch and show Kyoto Station on the map", "off"),
    ("turn the phone light on, then put Dentist on my calendar on Friday", "on"),
    ("Please open torch and also wifi settings", "on"), ("open the wifi settings and turn off the torch", "off"),
    ("turn on the torch and stop the flash", None), ("show Kyoto Station on the map", None)])
def test_which_way_a_request_switches_things(request_, said):
    assert coverage.switched(coverage.clauses(request_, TOOLS)) == said


def test_a_request_that_switches_things_off_turns_nothing_on():
    from mobile_actions.decoding.grounding import Grounding

    g = Grounding.from_messages([DEV, {"role": "user", "content": "Flashlight still on?? switch it off pls"}], POLICIES)
    parts = coverage.clauses(g.request, TOOLS)
    assert g.tool_schema(TOOLS["turn_on_flashlight"], parts)["x-callable"] is False
    assert "x-callable" not in g.tool_schema(TOOLS["turn_off_flashlight"], parts)


@pytest.mark.parametrize("request_", [
    "turn on the flashlight and my meeting is at 3pm",          # a sentence of its own says something
    "turn on the flashlight and the Louvre on the map",         # no value of its own: one query or two?
    "Turn on the torch. Meeting with Ana tomorrow at 9",        # a new sentence, not a list after a verb
])
def test_what_is_not_a_list_item(request_):
    assert not any(c.listed for c in coverage.clauses(request_, TOOLS))


def test_a_clause_that_needs_a_result_waits_for_it():
    req = "Find the City Museum on the map and email its name to kira@example.com"
    first = [ToolCall("show_map", {"query": "City Museum"})]
    assert owed(req, first) is None
    assert owed(req, first, after_results=True) == ("send_email",)


def test_a_user_catalogue_names_its_tools_by_their_words_and_x_keywords():
    cat = Catalogue.from_json([
        {"name": "set_alarm", "description": "d", "parameters": {"type": "object", "properties": {}}},
        {"name": "get_battery", "description": "d", "parameters": {"type": "object", "properties": {},
                                                                   "x-keywords": ["charge"]}}])
    assert owed("Set an alarm for 7 and check the charge", [ToolCall("set_alarm", {})], cat) == ("get_battery",)


def decode(constraint, tok, bias: dict[int, float], max_tokens: int = 600, calls: int = 1) -> list[ToolCall]:
    """A model that starts `calls` calls by itself, then wants to stop (stop tokens far ahead); otherwise random."""
    rng = np.random.default_rng(0)
    start, esc = wire.CONTROL_TOKEN_IDS[wire.START_CALL], wire.CONTROL_TOKEN_IDS[wire.ESCAPE]
    out = []
    for _ in range(max_tokens):
        logits = rng.normal(size=constraint.t.size).astype(np.float32)
        begun = out.count(start)
        for i, b in {**bias, **{s: 80.0 for s in STOP}, start: 100.0 if begun < calls else 0.0, esc: 3.0}.items():
            logits[i] += b
        tid = constraint.settle(pick(logits, constraint.allowed()))
        if tid in STOP:
            break
        out.append(tid)
        constraint.advance(tid)
        if constraint.state is None:
            break
    return wire.parse(tok.decode(out, skip_special_tokens=False)).calls


def test_the_grammar_makes_the_owed_call_that_changes_nothing(tok, table):
    request_ = "Turn off the flashlight and show me Union Station on the map"
    con = Constraints(table, policies=POLICIES).for_tools(TOOLS, [DEV, {"role": "user", "content": request_}])
    calls = decode(con, tok, {i: 20.0 for i in tok.encode("turn_off_flashlight", add_special_tokens=False).ids})
    assert [c.name for c in calls] == ["turn_off_flashlight", "show_map"], calls
    assert all(not validate_call(c, TOOLS) for c in calls) and calls[1].arguments["query"] in request_
    assert any(r.startswith("owed-call: clause 1") and "show_map" in r for r in con.rules), con.rules


def test_a_rule_switched_off_changes_nothing_and_says_nothing(tok, table):
    """`off` is how `mobile-actions rules --data` measures a rule: without owed-call the model may stop."""
    request_ = "Turn off the flashlight and show me Union Station on the map"
    con = Constraints(table, policies=POLICIES, off=frozenset({"owed-call"})).for_tools(
        TOOLS, [DEV, {"role": "user", "content": request_}])
    calls = decode(con, tok, {i: 20.0 for i in tok.encode("turn_off_flashlight", add_special_tokens=False).ids})
    assert [c.name for c in calls] == ["turn_off_flashlight"] and not con.rules


@pytest.mark.parametrize("request_, first", [
    ("Show the Louvre on the map and switch on the torch", "show_map"),                 # a switch changes state
    ("turn on the flashlight. Send no email to carla@example.com.", "turn_on_flashlight"),   # and it is refused
    ("Turn off the flashlight and don't show me Union Station on the map", "turn_off_flashlight"),   # not asked
])
def test_a_call_that_changes_state_or_is_not_asked_is_never_forced(tok, table, request_, first):
    con = Constraints(table, policies=POLICIES).for_tools(TOOLS, [DEV, {"role": "user", "content": request_}])
    calls = decode(con, tok, {i: 20.0 for i in tok.encode(first, add_special_tokens=False).ids})
    assert [c.name for c in calls] == [first], calls


def test_without_grounding_or_a_clause_the_model_may_stop(tok, table):
    request_ = "Turn off the flashlight and show me Union Station on the map"
    for cons, text in [(Constraints(table), request_), (Constraints(table, policies=POLICIES), "it is dark in here, the torch")]:
        con = cons.for_tools(TOOLS, [DEV, {"role": "user", "content": text}])
        assert len(decode(con, tok, {})) == 1


def test_a_gui_step_the_model_starts_says_its_clause_and_is_never_forced(tok, table):
    """A GUI step changes the phone, so it is not forced; when the model goes on to it by itself, the routing
    tool's goal is the clause no tool names, word for word."""
    request_ = "Add a contact Omar Said 555-0142 and write a note saying call Omar"
    msgs = [DEV, {"role": "user", "content": request_}]
    con = Constraints(table, policies=POLICIES).for_tools(ROUTING, msgs)
    calls = decode(con, tok, {i: 20.0 for i in tok.encode("create_contact", add_special_tokens=False).ids})
    assert [c.name for c in calls] == ["create_contact"], calls
    con = Constraints(table, policies=POLICIES).for_tools(ROUTING, msgs)
    calls = decode(con, tok, {i: 20.0 for i in tok.encode("create_contact", add_special_tokens=False).ids}, calls=2)
    assert [c.name for c in calls] == ["create_contact", "operate_screen"], calls
    assert calls[1].arguments == {"goal": "write a note saying call Omar"}


@pytest.mark.parametrize("seed", range(6))
def test_a_goal_starts_with_one_of_the_requests_verbs(tok, table, seed):
    request_ = "Note down pay rent"
    con = Constraints(table, policies=POLICIES).for_tools(load_catalogue("operate_screen"),
                                                          [DEV, {"role": "user", "content": request_}])
    from tests.test_grounding import decode as random_decode

    start, esc = wire.CONTROL_TOKEN_IDS[wire.START_CALL], wire.CONTROL_TOKEN_IDS[wire.ESCAPE]
    (call, *_) = wire.parse(random_decode(con, tok, seed, bias={start: 50.0, esc: 3.0}, calls=1)).calls
    assert call.arguments["goal"].split()[0].lower() == "note", call


def test_an_address_said_for_another_tool_is_not_a_contacts_email():
    from mobile_actions.decoding.grounding import Grounding

    request_ = "family name Pham, first name Rohan. add to contacts. plus let the team know by email at careers@nova.ca"
    g = Grounding.from_messages([DEV, {"role": "user", "content": request_}], POLICIES)
    parts = coverage.clauses(request_, TOOLS)
    assert "email" not in g.tool_schema(TOOLS["create_contact"], parts)["properties"]       # optional: dropped
    assert g.tool_schema(TOOLS["send_email"], parts)["properties"]["to"]["enum"] == ["careers@nova.ca"]
    # written in the contact's own clause, it is the contact's
    request_ = "Create a contact for Ana Ruiz, email ana@x.com, and email her hi"
    g = Grounding.from_messages([DEV, {"role": "user", "content": request_}], POLICIES)
    parts = coverage.clauses(request_, TOOLS)
    assert g.tool_schema(TOOLS["create_contact"], parts)["properties"]["email"]["enum"] == ["ana@x.com"]
    # no other clause asks for a contact: "email" here labels the contact's field
    request_ = "Just store the details for Xiaoling Khalil - number 666 39 16 87, mail xkhalil@btinternet.com."
    g = Grounding.from_messages([DEV, {"role": "user", "content": request_}], POLICIES)
    parts = coverage.clauses(request_, TOOLS)
    assert g.tool_schema(TOOLS["create_contact"], parts)["properties"]["email"]["enum"] == ["xkhalil@btinternet.com"]


def test_fields_and_result_chains_are_not_owed():
    contact = ToolCall("create_contact", {"first_name": "Hoa", "last_name": "Suzuki", "email": "h.suzuki@gmail.com"})
    assert owed("save the contact details for Hoa Suzuki - phone +64 21 182 8903 and mail h.suzuki@gmail.com",
                [contact]) is None
    assert owed("Where's Museo del Prado? mail address to yasmin@pinecrest.co",
                [ToolCall("show_map", {"query": "Museo del Prado"})]) is None


def test_a_call_the_model_goes_on_to_answers_the_next_clause(tok, table):
    """Calls come in the user's order: "flashlight on, open wifi settings, and show me Hotel Adlon on the
    map" does not get the map before the Wi-Fi settings."""
    request_ = "flashlight on, open wifi settings, and show me Hotel Adlon on the map"
    con = Constraints(table, policies=POLICIES).for_tools(TOOLS, [DEV, {"role": "user", "content": request_}])
    for tid in tok.encode(wire.render_call(ToolCall("turn_on_flashlight", {})), add_special_tokens=False).ids:
        con.advance(tid)
    start = wire.CONTROL_TOKEN_IDS[wire.START_CALL]
    assert con.settle(start) == start
    con.advance(start)
    assert set(con.state.cont.g.tools) == {"open_wifi_settings"}


def test_a_call_goes_on_in_order_only_when_nothing_said_before_is_left(tok, table):
    """"save Kofi ... 024 123 4567 and Abena Asante 020 987 6543, and turn off the flashlight": Abena's number
    has no call yet, so the model's next call is hers (a list of contacts), not the flashlight; where no list is
    read ("... Abena 020 987 6543 too"), the model's next call may be any tool's."""
    start = wire.CONTROL_TOKEN_IDS[wire.START_CALL]
    kofi = ToolCall("create_contact", {"first_name": "Kofi", "last_name": "Boateng", "phone_number": "024 123 4567"})
    for request_, tools in (
            ("save Kofi Boateng 024 123 4567 and Abena Asante 020 987 6543, and turn off the flashlight",
             {"create_contact"}),
            ("save Kofi Boateng 024 123 4567, I'll send you Abena 020 987 6543 too, and turn off the flashlight",
             None)):
        con = Constraints(table, policies=POLICIES).for_tools(TOOLS, [DEV, {"role": "user", "content": request_}])
        for tid in tok.encode(wire.render_call(kofi), add_special_tokens=False).ids:
            con.advance(tid)
        con.advance(start)
        assert set(con.state.cont.g.tools) == (tools or set(con.g.tools)), request_


def test_a_call_owed_for_a_clause_takes_the_datetime_it_says(tok, table):
    request_ = "put standup mon 9am and retro fri 4pm on my calendar"
    dev = {"role": "developer", "content": DEV["content"].replace("2025-06-02T10:00:00", "2025-08-28T18:00:00")
           .replace("Monday", "Thursday")}
    con = Constraints(table, policies={**POLICIES, "create_calendar_event.title": "span"}).for_tools(
        TOOLS, [dev, {"role": "user", "content": request_}])
    standup = ToolCall("create_calendar_event", {"title": "standup", "datetime": "2025-09-01T09:00:00"})
    for tid in tok.encode(wire.render_call(standup), add_special_tokens=False).ids:
        con.advance(tid)
    start = wire.CONTROL_TOKEN_IDS[wire.START_CALL]
    assert con.settle(STOP[0]) == STOP[0]     # an event changes the phone: never forced
    con.advance(start)                        # the model goes on by itself: the call is the clause's
    grammar = con.state.cont.g
    assert set(grammar.tools) == {"create_calendar_event"}
    assert grammar.tools["create_calendar_event"].props["datetime"]["enum"] == ["2025-08-29T16:00:00"]


def test_the_first_call_takes_the_first_list_items_datetime(tok, table):
    """"add Dentist Monday 9am, Haircut Wed 4pm": the call the model starts by itself is the first item's, as the
    one owed after it is the second's; its title stays free, and a tool outside the list is not narrowed."""
    request_ = "add Dentist Monday 9am, Haircut Wed 4pm"
    con = Constraints(table, policies={**POLICIES, "create_calendar_event.title": "span"}).for_tools(
        TOOLS, [DEV, {"role": "user", "content": request_}])
    start = wire.CONTROL_TOKEN_IDS[wire.START_CALL]
    assert con.settle(start) == start
    con.advance(start)
    grammar = con.state.cont.g
    assert set(grammar.tools) == set(con.g.tools)
    assert grammar.tools["create_calendar_event"].props["datetime"]["enum"] == ["2025-06-09T09:00:00"]
    assert "enum" not in grammar.tools["create_calendar_event"].props["title"]
    # nor a later item's number: Ingrid has none
    con = Constraints(table, policies=POLICIES).for_tools(
        TOOLS, [DEV, {"role": "user", "content": "save Ingrid Solberg ingrid.solberg@nrk.no and Ole Hansen +47 912 34 567"}])
    con.advance(start)
    contact = con.state.cont.g.tools["create_contact"].props
    assert contact["email"]["enum"] == ["ingrid.solberg@nrk.no"] and "phone_number" not in contact
    # no list: the first call is the model's to make, from the whole request
    con = Constraints(table, policies=POLICIES).for_tools(
        TOOLS, [DEV, {"role": "user", "content": "add Dentist Monday 9am and show me the Louvre on the map"}])
    con.advance(start)
    assert con.state.cont.g is con.g


def test_a_call_owed_for_a_list_item_takes_its_address_and_its_words(tok, table):
    """The mail the model goes on to after the first of "Email a, b and c" goes to b; the event after the first
    of a comma list is titled from the second item."""
    from mobile_actions.decoding.grammar import span_spec
    from mobile_actions.decoding.spans import READING

    def owed_grammar(request_: str, first: ToolCall):
        con = Constraints(table, policies={**POLICIES, "create_calendar_event.title": "span",
                                           "send_email.subject": "span"}).for_tools(
            TOOLS, [DEV, {"role": "user", "content": request_}])
        for tid in tok.encode(wire.render_call(first), add_special_tokens=False).ids:
            con.advance(tid)
        start = wire.CONTROL_TOKEN_IDS[wire.START_CALL]
        assert con.settle(STOP[0]) == STOP[0]     # never forced: these calls change or send something
        con.advance(start)                        # the model's own next call takes the item's values
        return con.state.cont.g

    g = owed_grammar("Email sales@eco.co.uk, hello@bean.com and info@milk.co.uk, subject Opening hours",
                     ToolCall("send_email", {"to": "sales@eco.co.uk", "subject": "Opening hours"}))
    assert g.tools["send_email"].props["to"]["enum"] == ["hello@bean.com"]
    g = owed_grammar("Put School photos on Wednesday, Parents' evening at Oakwood on Thursday at 5:45pm and Swimming "
                     "gala on the 21st at 9am in my calendar",
                     ToolCall("create_calendar_event", {"title": "School photos", "datetime": "2025-06-04T00:00:00"}))
    title = g.tools["create_calendar_event"].props["title"]
    spec = span_spec(title["x-span"], bounds=READING)
    assert spec.whole_span("Parents' evening at Oakwood") and not spec.continuations("Sw")


def test_a_model_that_goes_on_by_itself_chooses_its_own_tool(tok, table):
    """After a clause no tool names, a call the model makes by itself may be for that clause: any tool."""
    request_ = "see the wifi settings. next, hold tomorrow at 8 for Grocery run, then show Lyon on the map"
    con = Constraints(table, policies=POLICIES).for_tools(TOOLS, [DEV, {"role": "user", "content": request_}])
    for tid in tok.encode(wire.render_call(ToolCall("open_wifi_settings", {})), add_special_tokens=False).ids:
        con.advance(tid)
    start, stop = wire.CONTROL_TOKEN_IDS[wire.START_CALL], STOP[0]
    assert con.settle(start) == start
    con.advance(start)
    assert con.state.cont.g.tools == con.g.tools      # every callable tool
    # had it stopped, the map clause would have been owed: the call is forced, and only show_map
    con = Constraints(table, policies=POLICIES).for_tools(TOOLS, [DEV, {"role": "user", "content": request_}])
    for tid in tok.encode(wire.render_call(ToolCall("open_wifi_settings", {})), add_special_tokens=False).ids:
        con.advance(tid)
    assert con.settle(stop) == start
    con.advance(start)
    assert set(con.state.cont.g.tools) == {"show_map"}


def test_a_span_is_not_taken_from_a_clause_that_asks_another_tool():
    from mobile_actions.decoding.grounding import Grounding

    request_ = "Schedule lunch with Ana tomorrow at noon and then show me Cafe Central on the map"
    g = Grounding.from_messages([DEV, {"role": "user", "content": request_}], {**POLICIES, "create_calendar_event.title": "span"})
    parts = coverage.clauses(request_, TOOLS)
    title = g.tool_schema(TOOLS["create_calendar_event"], parts)["properties"]["title"]["x-span"]
    assert any("lunch with Ana" in s for s in title) and not any("Cafe Central" in s for s in title)
    query = g.tool_schema(TOOLS["show_map"], parts)["properties"]["query"]["x-span"]
    assert any("Cafe Central" in s for s in query) and not any("lunch" in s for s in query)
    # a tool with no clause of its own keeps the whole request ("email the address of the Louvre to ...")
    request_ = "email the address of the Louvre to ana@example.com"
    g = Grounding.from_messages([DEV, {"role": "user", "content": request_}], POLICIES)
    assert g.tool_schema(TOOLS["show_map"], coverage.clauses(request_, TOOLS))["properties"]["query"]["x-span"] == [
        request_]


def _spread(allowed: np.ndarray, start: int, start_logit: float, n_text: int = 100) -> np.ndarray:
    """Logits whose single likeliest token is a call's start, beside `n_text` allowed text tokens a little
    below it."""
    logits = np.full(len(allowed), -30.0, dtype=np.float32)
    text = [i for i in np.flatnonzero(allowed) if i != start][:n_text]
    assert len(text) == n_text
    logits[text] = 4.5
    logits[start] = start_logit
    return logits


@pytest.mark.parametrize("start_logit, calls", [(5.0, False), (30.0, True)])
def test_the_first_choice_goes_to_a_call_or_words_by_mass(tok, table, start_logit, calls):
    """A call's start that is the likeliest token but has less probability than all the text tokens together
    gives way to a reply in words; a call the model is sure of is kept. The sparse head's rows decide alike."""
    start = wire.CONTROL_TOKEN_IDS[wire.START_CALL]
    first = Constraints(table).for_tools(TOOLS).allowed()
    logits = _spread(allowed_mask(first, table.size), start, start_logit)
    assert pick(logits, first) == start
    msgs = [DEV, {"role": "user", "content": "Can you send emails with attachments, like a PDF to ana@x.com?"}]
    for sparse in (False, True):
        con = Constraints(table, policies=POLICIES).for_tools(TOOLS, msgs)
        allowed = con.allowed()
        ids = np.flatnonzero(allowed) if allowed.dtype == bool else allowed
        tid = con.settle(start, logits[ids], ids) if sparse else con.settle(start, logits)
        assert (tid == start) is calls, (sparse, tid)
        assert any(r.startswith("call-by-mass:") for r in con.rules) is not calls
    off = Constraints(table, policies=POLICIES, off=frozenset({"call-by-mass"})).for_tools(TOOLS, msgs)
    assert off.settle(start, logits) == start and not off.rules
    assert Constraints(table).for_tools(TOOLS, msgs).settle(start, logits) == start   # grammar only: the model's
