"""The gate between a caller's calls and the phone (`mobile_actions.acting`), and what a tool's effect means."""
import json

import pytest

from mobile_actions import acting, lexicon
from mobile_actions.acting import Polarity, read
from mobile_actions.calls import ToolCall
from mobile_actions.catalog import Catalogue, load_catalogue, name_effect
from mobile_actions.errors import CatalogueError

CAT = load_catalogue("mobile_actions")


def T(name: str, **arguments) -> ToolCall:
    return ToolCall(name, arguments)


# Requests that ask for nothing (or for less than the calls), with the calls a 270M caller made for them.
REFUSED = [
    ("please don't switch the torch on", T("turn_on_flashlight"), "says not to"),
    ("hypothetically, turn on the flashlight", T("turn_on_flashlight"), "supposes"),
    ("don't email bob@example.com, I already did", T("send_email", to="bob@example.com", subject="I already did"),
     "says not to"),
    ("should I save Marta Ruiz 555 0142 or not?",
     T("create_contact", first_name="Marta", last_name="Ruiz", phone_number="555 0142"), "question"),
    ("what happens if I email boss@work.com that I quit", T("send_email", to="boss@work.com", subject="I quit"),
     "supposes"),
    ("turn on the flashlight. Send no email to carla@example.com.",
     T("send_email", to="carla@example.com", subject="no email"), "says not to"),
    ("open a new contact form and type Lena Fischer 555 0161 but don't save it",
     T("create_contact", first_name="Lena", last_name="Fischer", phone_number="555 0161"), "says not to"),
    ("whatever you do, don't email ana@example.com", T("send_email", to="ana@example.com", subject="hi"), "says not to"),
    ("email ana@x.com the notes... actually never mind", T("send_email", to="ana@x.com", subject="the notes"),
     "takes it back"),
    ("add lunch with Sam friday noon, wait no, scratch that",
     T("create_calendar_event", title="lunch with Sam", datetime="2026-12-04T12:00:00"), "takes it back"),
    ("if it rains, email leo@x.com that the picnic is off", T("send_email", to="leo@x.com", subject="picnic off"),
     "supposes"),
    ("I already emailed dan@x.com the slides, just show me the Louvre",
     T("send_email", to="dan@x.com", subject="slides"), "already done"),
    ("Ana told me to email her the agenda at ana@x.com", T("send_email", to="ana@x.com", subject="agenda"),
     "someone else"),
    ("no map needed, I know where Tesco is", T("show_map", query="Tesco"), "says not to"),
    ("Do not, under any circumstances, email ana@x.com", T("send_email", to="ana@x.com", subject="hi"), "says not to"),
    ("Turn on the wifi settings and the flashlight. Actually, don't turn on the flashlight", T("turn_on_flashlight"),
     "says not to"),
    ("thanks", T("turn_on_flashlight"), "asks for nothing"),
    ("İ" * 42 + " ok. Don't email ana@x.com. turn on the flashlight", T("send_email", to="ana@x.com", subject="x"),
     "says not to"),   # a character whose lower case is longer moves no cue out of its piece
]

# Requests that ask, though they look like the ones above.
KEPT = [
    ("can you turn on the torch?", T("turn_on_flashlight")),
    ("don't forget to email ana@x.com the agenda", T("send_email", to="ana@x.com", subject="the agenda")),
    ("can't see a thing, torch on pls", T("turn_on_flashlight")),
    ("Flashlight still on?? switch it off pls", T("turn_off_flashlight")),
    ("turn on the flashlight and email ana@example.com that I'm not coming",
     T("send_email", to="ana@example.com", subject="I'm not coming")),
    ("I met Inés Pham, her email is ines@kitefly.com. Save them.",
     T("create_contact", first_name="Inés", last_name="Pham", email="ines@kitefly.com")),
    ("I don't need the flashlight anymore, turn it off", T("turn_off_flashlight")),
    ("not sure where Stadtcafé Hietzing is, can you show me on the map", T("show_map", query="Stadtcafé Hietzing")),
    ("i dropped an earring under the bed can you turn on the flashlight", T("turn_on_flashlight")),
    ("save Yusuf Demir 0532 123 45 67 and Can Öztürk 0541 111 22 33",
     T("create_contact", first_name="Can", last_name="Öztürk", phone_number="0541 111 22 33")),
    ("what's the weather in Paris?", T("show_map", query="Paris")),   # a question a read-only tool answers
]


@pytest.mark.parametrize("request_, call, reason", REFUSED)
def test_a_call_the_request_does_not_ask_for_is_refused_with_its_cue(request_, call, reason):
    kept, refused = acting.gate([call], request_, CAT)
    assert kept == [] and len(refused) == 1, refused
    assert reason in refused[0].reason and str(refused[0]).startswith(f"refused {call.name}: ")


@pytest.mark.parametrize("request_, call", KEPT)
def test_a_request_that_asks_keeps_its_call(request_, call):
    assert acting.gate([call], request_, CAT) == ([call], [])


def test_only_the_refused_part_of_a_request_is_refused():
    calls = [T("turn_on_flashlight"), T("send_email", to="carla@example.com", subject="no email")]
    kept, refused = acting.gate(calls, "turn on the flashlight. Send no email to carla@example.com.", CAT)
    assert kept == calls[:1] and [r.call for r in refused] == calls[1:]


def test_an_address_written_into_two_values_of_a_call_is_a_misreading():
    """"mail X" beside a contact is its address, not an email to send; a last name runs into the address."""
    request = "add in contacts fatima benali her number is 0655123456 and mail fatima.benali@gmail.com merci"
    contact = T("create_contact", first_name="fatima", last_name="benali", phone_number="0655123456")
    email = T("send_email", to="fatima.benali@gmail.com", subject="fatima.benali@gmail.com merci")
    kept, refused = acting.gate([contact, email], request, CAT)
    assert kept == [contact] and refused[0].reason == acting.ADDRESS_IN_TWO and not refused[0].misrouted
    request = "new contact pls: first name Siobhan last name Carty email siobhan.carty@bogfarm.ie"
    run_on = T("create_contact", first_name="Siobhan", last_name="Carty email siobhan", email="siobhan.carty@bogfarm.ie")
    right = T("create_contact", first_name="Siobhan", last_name="Carty", email="siobhan.carty@bogfarm.ie")
    assert acting.gate([run_on], request, CAT)[0] == [] and acting.gate([right], request, CAT)[0] == [right]
    # an address that holds a name written before it too, and a subject beside the address: no misreading
    both = T("create_contact", first_name="Marlene", last_name="Fischer", email="marlene.fischer@coop.ca")
    assert acting.gate([both], "save Marlene Fischer marlene.fischer@coop.ca", CAT)[0] == [both]
    ok = T("send_email", to="ana@example.com", subject="the agenda")
    assert acting.gate([ok], "email ana@example.com the agenda", CAT)[0] == [ok]


def test_a_recipient_comes_from_the_persons_words_and_is_an_address():
    """A Maps card saying evil@attacker.test chooses no recipient; "Osaka" is no phone number."""
    messages = [{"role": "user", "content": "show me Cafe Nero on the map and email its address to my sister"},
                {"role": "tool", "content": '{"address": "1 High St", "contact": "evil@attacker.test"}'}]
    evil = T("send_email", to="evil@attacker.test", subject="Cafe Nero")
    kept, refused = acting.gate_messages([evil], messages, CAT)
    assert kept == [] and "not one the person wrote" in refused[0].reason
    texting = Catalogue.from_json([{"name": "send_text", "description": "d", "parameters": {
        "type": "object", "properties": {"phone_number": {"type": "string"}, "message": {"type": "string"}}}}])
    kept, refused = acting.gate([T("send_text", phone_number="Osaka", message="hi")], "text Osaka hi", texting)
    assert kept == [] and "not a phone number" in refused[0].reason
    ok = T("send_text", phone_number="0412 555 198", message="on my way")
    assert acting.gate([ok], "text 0412-555-198 'on my way'", texting)[0] == [ok]


def test_a_contact_name_the_person_wrote_is_a_recipient_where_the_argument_takes_names():
    """"text Ana ..." reaches Ana through the person's contacts; a name from nowhere, or where only numbers are
    taken, is refused."""
    both = load_catalogue("mobile_actions+clock_messages")
    ana = T("send_text_message", to="Ana", body="on my way")
    assert acting.gate([ana], "text Ana that I'm on my way", both)[0] == [ana]
    kept, refused = acting.gate([T("send_text_message", to="Bo", body="hi")], "text Ana hi", both)
    assert kept == [] and "not a phone number" in refused[0].reason
    numbers_only = Catalogue.from_json([{"name": "send_text", "description": "d", "parameters": {
        "type": "object", "properties": {"to": {"type": "string", "description": "The phone number."}}}}])
    assert acting.gate([T("send_text", to="Ana")], "text Ana hi", numbers_only)[0] == []


def test_the_addressee_of_a_message_passed_on_is_no_contact_to_save():
    contact = T("create_contact", first_name="Katarzyna", last_name="Nowak")
    request = "Hi, could you please let Katarzyna Nowak know that I landed safely in Warsaw?"
    kept, refused = acting.gate([contact], request, CAT)
    assert kept == [] and refused[0].for_screen == "message-passed-on" and "let Katarzyna Nowak know" in refused[0].cue
    # a contact the request does ask for, beside the message, is kept
    request = "save Katarzyna Nowak to my contacts and tell her I landed"
    assert acting.gate([contact], request, CAT)[0] == [contact]


def test_values_of_a_text_the_request_asks_to_write_make_nothing_else():
    event = T("create_calendar_event", title="next book", datetime="2025-06-14T00:00:00")
    request = 'Create a note titled "Book club" that says: next book is The Remains of the Day, on the 14th.'
    kept, refused = acting.gate([event], request, CAT)
    assert kept == [] and refused[0].for_screen == "text-to-write" and refused[0].cue == "that says"
    assert refused[0].piece.startswith("Create a note") and refused[0].piece.endswith("on the 14th")
    dentist = T("create_calendar_event", title="dentist", datetime="2025-06-03T15:00:00")
    assert acting.gate([dentist], "add an event that says dentist tomorrow at 3", CAT)[0] == [dentist]
    assert acting.gate([dentist], "make a note to see the dentist tomorrow at 3", CAT)[0] == []


def test_a_state_change_whose_values_belong_to_another_tools_request_is_refused():
    both = load_catalogue("mobile_actions+clock_messages")
    request = "set an alarm for 6:30 on weekdays and text Ana that I'm on my way"
    timer, alarm = T("set_timer", label="Ana", seconds=15), T("set_alarm", hour=6, minute=30)
    kept, refused = acting.gate([timer, alarm], request, both)
    assert kept == [alarm] and refused[0].call == timer
    assert refused[0].cue == "text" and "send_text_message" in refused[0].reason
    # its own tool named beside the values, or named later with a reference back ("them"): asked
    timer = T("set_timer", label="pasta", seconds=600)
    assert acting.gate([timer], "text Ana and set a timer for the pasta, 10 min", both)[0] == [timer]
    contact = T("create_contact", first_name="Ana", last_name="Lopez")
    request = "find the email from Ana Lopez and add them to my contacts"
    assert acting.gate([contact], request, CAT)[0] == [contact]
    mail = T("send_email", to="guest@example.com", subject="wifi")   # the piece writes its address: it is its
    assert acting.gate([mail], "send the wifi password from my notes to guest@example.com, subject wifi", CAT)[0] == [mail]


def test_a_recipient_is_one_the_person_wrote_whole_and_tool_names_in_capitals_still_send():
    kept, refused = acting.gate([T("send_email", to="ob@gmail.com", subject="hi")], "email bob@gmail.com hi", CAT)
    assert kept == [] and "not one the person wrote" in refused[0].reason
    assert name_effect("SEND_EMAIL") == "sends" and name_effect("GET_WEATHER") == "none"
    nothing = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert acting.gate_messages([T("turn_on_flashlight")], nothing, CAT)[0] == []


def test_a_request_that_asks_for_nothing_is_no_goal_for_the_screen():
    assert acting.asks_nothing("whatever you do, don't email ana@example.com").polarity is Polarity.NEGATED
    assert acting.asks_nothing("should I turn on bluetooth?").polarity is Polarity.QUESTION
    assert acting.asks_nothing("turn on bluetooth") is None and acting.asks_nothing("I need the torch") is None
    # a setting's name is no "do not" (lexicon polarity.names); a "don't" before it still is
    assert acting.asks_nothing("turn on do not disturb") is None
    assert acting.asks_nothing("do not turn on do not disturb").polarity is Polarity.NEGATED


def test_unasked_clauses_are_the_ones_in_refused_pieces():
    request = "turn on the flashlight. Send no email to carla@example.com."
    assert acting.unasked(request, ["turn on the flashlight", "Send no email to carla@example.com"]) == {1}


def test_tool_effects_come_from_the_catalogue_else_from_the_name():
    assert {t.name: t.effect for t in CAT} == {
        "turn_on_flashlight": "changes", "turn_off_flashlight": "changes", "open_wifi_settings": "none",
        "send_email": "sends", "create_calendar_event": "changes", "show_map": "none", "create_contact": "changes"}
    assert [name_effect(n) for n in ("get_emails", "emailTeam", "set_alarm", "delete_note", "lookup.weather")] == \
        ["none", "sends", "changes", "changes", "none"]
    with pytest.raises(CatalogueError, match="x-effect"):
        Catalogue.from_json([{"name": "t", "description": "d", "parameters": {
            "type": "object", "properties": {}, "x-effect": "harmless"}}])


def test_the_lexicon_is_checked_when_it_is_loaded(tmp_path, monkeypatch):
    good = json.loads((lexicon.LEXICON_DIR / "en.json").read_text(encoding="utf-8"))
    good["polarity"]["negated"] = "don't"
    (tmp_path / "xx.json").write_text(json.dumps(good), encoding="utf-8")
    monkeypatch.setattr(lexicon, "LEXICON_DIR", tmp_path)
    lexicon.load.cache_clear()
    try:
        with pytest.raises(CatalogueError, match="polarity.negated must be a list"):
            lexicon.load("xx")
        with pytest.raises(CatalogueError, match="no lexicon"):
            lexicon.load("../etc")
    finally:
        lexicon.load.cache_clear()


def test_a_wildcard_stands_for_one_word_other_than_the_speaker():
    reported = lexicon.load().polarity.reported
    assert reported.find("the teacher asked parents to email") and not reported.find("i asked parents to email")


def test_a_clause_left_out_is_asked_about_on_its_own_and_the_model_decides():
    """Decoding never forces "email lee@..." after the contact; the model is asked about that clause alone. A
    clause the person does not ask for, or one a tool that changes nothing answers (decoding forces those), is not."""
    from mobile_actions.runtime import CallResult, with_left_out

    contact = T("create_contact", first_name="Lee", last_name="Chen", phone_number="555-0199")
    mail = T("send_email", to="lee@example.com", subject="hello")
    request = "Add Lee Chen, 555-0199, to my contacts and email lee@example.com saying hello"
    assert acting.left_out([{"role": "user", "content": request}], [contact], CAT) == \
        [acting.LeftOut("email lee@example.com saying hello", ("send_email",))]
    asked = []

    def ask(messages):
        asked.append(messages[-1]["content"])
        return CallResult([mail, T("show_map", query="Lee")], raw="<more>")   # only the clause's tool is taken

    res = with_left_out(CallResult([contact], raw="<first>"), [{"role": "user", "content": request}], CAT, ask)
    assert res.calls == [contact, mail] and res.raw == "<first><more>" and asked == ["email lee@example.com saying hello"]
    assert res.unanswered == []
    silent = with_left_out(CallResult([contact]), [{"role": "user", "content": request}], CAT,
                           lambda m: CallResult([T("show_map", query="Lee")], text="Hello!"))
    assert silent.calls == [contact] and silent.unanswered == ["email lee@example.com saying hello"]
    listed = "add Dentist Monday 9am, Haircut Wed 4pm"
    first = T("create_calendar_event", title="Dentist", datetime="2025-09-01T09:00:00")
    assert [c.text for c in acting.left_out([{"role": "user", "content": listed}], [first], CAT)] == \
        ["add Haircut Wed 4pm"]     # a list item is asked about with the list's verb
    declined = "add Lee Chen 555-0199 to my contacts but don't email lee@example.com"
    assert acting.left_out([{"role": "user", "content": declined}], [contact], CAT) == []
    mapped = "Turn off the flashlight and show me Union Station on the map"
    assert acting.left_out([{"role": "user", "content": mapped}], [T("turn_off_flashlight")], CAT) == []


def test_what_the_person_said_of_a_call_is_its_own_pieces():
    """`clause_of`: the asked pieces of the call's sentences, without those that ask another tool or refuse --
    what the phone is then checked against ("update": not a new contact)."""
    contact = T("create_contact", first_name="Tom", phone_number="555-0188")
    assert "update" in acting.clause_of(contact, "Tom got a new number, it's 555-0188. Can you update his contact?",
                                        CAT)
    mail = T("send_email", to="sam@example.com", subject="the wifi password")
    assert acting.clause_of(mail, "turn on the torch and email sam@example.com the wifi password but don't use "
                                  "gmail for it", CAT) == "email sam@example.com the wifi password"
    assert "torch on" in acting.clause_of(T("turn_on_flashlight"), "torch on, add Ana, email ana@example.com", CAT)
    assert acting.clause_of(T("show_map", query="Paris"), "hello there", CAT) == ""
    # pieces next to each other keep the words the reading split them at: a place is not cut in two
    drinks = T("create_calendar_event", title="Kwame's birthday drinks", datetime="2025-06-07T20:00:00")
    assert acting.clause_of(drinks, "Schedule Kwame's birthday drinks Saturday 8pm at The Crown and Anchor. Probably "
                                    "3 hours or so", CAT) == "Schedule Kwame's birthday drinks Saturday 8pm at The " \
                                                             "Crown and Anchor"


def test_a_call_the_request_never_ties_to_is_refused():
    """No value written and no tool word said: the caller's guess, not a request (a tool that changes nothing may
    still answer). A misspelt tool word still ties the call."""
    kept, refused = acting.gate([T("turn_on_flashlight")], "can u set alarms for every other day?", CAT)
    assert kept == [] and refused[0].reason == acting.UNTIED
    for typed in ("flashlite on plz", "Put the flashligght on."):
        assert acting.gate([T("turn_on_flashlight")], typed, CAT)[0] == [T("turn_on_flashlight")]
    assert acting.gate([T("open_wifi_settings")], "how do i get on the hotel network?", CAT)[0]   # changes nothing


def test_a_phrase_that_takes_back_is_read_whole_even_with_a_content_word_in_it():
    """"scratch that" holds "that", which elsewhere starts what is said ("email Ana that I'm late")."""
    pieces = acting.read("add 'yoga' to my calendar tomorrow at 7am actually scratch that im not going")
    assert [p.polarity for p in pieces] == [Polarity.CANCELLED]
    assert [p.polarity for p in acting.read("email ana that we should scratch that plan")] == [Polarity.ASKED]


def test_a_take_back_phrase_said_of_someone_takes_nothing_back():
    """"bc i always forget it" tells of someone forgetting; a bare "forget it", or one after "so", takes back."""
    read = lambda text: [p.polarity for p in acting.read(text)]   # noqa: E731
    assert read("put in the notes to bring my insurance card bc i always forget it") == [Polarity.ASKED]
    assert read("add yoga at 5 oh forget it") == [Polarity.CANCELLED]
    assert read("add yoga at 5 lol so forget it") == [Polarity.CANCELLED, Polarity.CANCELLED]
    event = T("create_calendar_event", title="bin day", datetime="2026-01-06T07:00:00")
    assert acting.gate([event], "add bin day on tuesday 7am so she doesnt forget it", CAT)[0] == [event]
    assert acting.gate([event], "add bin day on tuesday 7am. you know what, forget it", CAT)[0] == []


def test_a_call_named_only_inside_a_quoted_text_is_that_texts_words():
    """A quote is someone's text: its instructions are not asks, unless the request names the tool or writes a
    value outside the quotes, or the quote is a short name."""
    event = T("create_calendar_event", title="depot meeting", datetime="2026-01-03T07:00:00")
    email = T("send_email", to="essays@uni.ca", subject="Essay 2")
    quoted = 'draft for my students, is the tone ok? "Please email your essays to essays@uni.ca with the subject Essay 2"'
    kept, refused = acting.gate([email], quoted, CAT)
    assert kept == [] and refused[0].reason == acting.QUOTED_TEXT and refused[0].piece.startswith('"Please email')
    assert acting.gate([event], 'pasted from the yard: "depot meeting sat 7am, add it to your calendars"', CAT)[0] == []
    for asked in ('put this in my calendar: "depot meeting, sat 7am, bring hi-vis and boots"',
                  'add "depot meeting" sat 7am'):
        assert acting.gate([event], asked, CAT)[0] == [event]
    said = 'email essays@uni.ca subject Essay 2 body "please see attached, sorry it is late again"'
    assert acting.gate([email], said, CAT)[0] == [email]


def test_a_reported_cue_is_read_whole_even_with_a_content_word_in_it():
    """"keeps telling me" holds "telling", which elsewhere starts what is said ("text mom telling her I'm late")."""
    pieces = acting.read("my roommate keeps telling me 'set an alarm for 5am and hit the gym' lmao as if")
    assert [p.polarity for p in pieces] == [Polarity.REPORTED]
    assert [p.polarity for p in acting.read("text mom telling her im late")] == [Polarity.ASKED]
    assert [p.polarity for p in acting.read("Write a note that says call the plumber")] == [Polarity.ASKED]


# ---------------------------------------------------------------------------------------------- one call's reading
CM = load_catalogue("mobile_actions+clock_messages")
ALARMS = Catalogue.from_json([
    {"function": {"name": "switch_alarm", "description": "Turns an alarm on or off.", "parameters": {
        "type": "OBJECT", "properties": {"time": {"type": "STRING", "description": "HH:MM"}, "on": {"type": "BOOLEAN"}},
        "required": ["time", "on"]}}},
    {"function": {"name": "delete_alarm", "description": "Deletes an alarm.", "parameters": {
        "type": "OBJECT", "properties": {"time": {"type": "STRING", "description": "HH:MM"}}, "required": ["time"]}}},
])


@pytest.mark.parametrize("request_, call", [
    ("text dad yes ill be there around noon", T("send_text_message", to="dad", body="yes ill be there around noon")),
    ("reply to ana yes ill be there around noon", T("send_text_message", to="ana", body="yes ill be there around noon")),
    ("text sam start without me", T("send_text_message", to="sam", body="start without me")),
    ("text dad: don't wait up, i'll be late", T("send_text_message", to="dad", body="don't wait up, i'll be late")),
])
def test_what_a_call_says_is_not_read_as_the_persons_intent(request_, call):
    notes: list[str] = []
    kept, refused = acting.gate([call], request_, CM, notes=notes)
    assert kept == [call] and not refused
    assert notes and any(x in notes[0] for x in ("read as what it says", "passes on a message"))   # the trace shows why


@pytest.mark.parametrize("request_, call, why", [
    ("dont text mom about the party yet", T("send_text_message", to="mom", body="about the party"), "says not to"),
    # a caller that copies the whole request: nothing names the tool before it, so it is no message
    ("dont text mom about the party yet", T("send_text_message", to="mom", body="dont text mom about the party yet"),
     "says not to"),
    ("text ana im on my way, actually don't send it", T("send_text_message", to="ana",
                                                       body="im on my way, actually don't send it"), "says not to"),
    ("text ana im on my way, nvm", T("send_text_message", to="ana", body="im on my way, nvm"), "takes it back"),
    ("email bob@x.com saying hi, never mind the email", T("send_email", to="bob@x.com",
                                                         subject="hi, never mind the email"), "takes it back"),
])
def test_a_message_never_hides_the_person_taking_the_call_back(request_, call, why):
    kept, refused = acting.gate([call], request_, CM)
    assert not kept and why in refused[0].reason


def test_a_refusal_that_refers_back_is_about_the_tool_it_names():
    ask = "switch off my 6am work alarm, but don't delete it"
    switch, delete = T("switch_alarm", time="06:00", on=False), T("delete_alarm", time="06:00")
    notes: list[str] = []
    assert acting.gate([switch, delete], ask, ALARMS, notes=notes)[0] == [switch]
    assert "speaks of another tool" in notes[0]
    # naming no tool, it is about the piece before; a sentence of its own corrects the piece before
    assert acting.gate([switch], "switch off my 6am alarm, but don't do it yet", ALARMS)[0] == []
    assert acting.gate([switch], "switch off my 6am alarm... no actually just delete it", ALARMS)[0] == []


CHAT = Catalogue.from_json([
    {"function": {"name": "send_message", "description": "Sends a message in a chat.", "parameters": {
        "type": "OBJECT", "properties": {"chat": {"type": "STRING"}, "text": {"type": "STRING"}},
        "required": ["chat", "text"], "x-effect": "sends"}}},
    {"function": {"name": "mute_chat", "description": "Mutes a chat.", "parameters": {
        "type": "OBJECT", "properties": {"chat": {"type": "STRING"}}, "required": ["chat"]}}},
    {"function": {"name": "delete_chat", "description": "Deletes a chat.", "parameters": {
        "type": "OBJECT", "properties": {"chat": {"type": "STRING"}}, "required": ["chat"]}}},
])


@pytest.mark.parametrize("request_, call, why", [
    ('my brother keeps saying "delete the chat before mom sees it" lmao', T("delete_chat", chat="the chat"),
     "someone else"),
    ('jo goes "mute the family chat" like its that easy', T("mute_chat", chat="the family chat"), "someone else"),
    ("whats the max number of ppl u can put in a group chat", T("mute_chat", chat="group chat"), "question"),
    ("mute the soccer parents chat for a week. ugh no actually i need to know about pickup, leave it",
     T("mute_chat", chat="the soccer parents chat"), "takes it back"),
    ("don't reply to his message. leave him on read", T("send_message", chat="him", text="leave him on read"),
     "says not to"),
])
def test_reported_speech_questions_and_take_backs_are_read_as_such(request_, call, why):
    kept, refused = acting.gate([call], request_, CHAT)
    assert not kept and why in refused[0].reason


@pytest.mark.parametrize("request_, call", [
    ("turn off the flashlight. we already set the alarm so dont bother with that", T("turn_off_flashlight")),
    ("what I actually need is the torch on", T("turn_on_flashlight")),
    ("turn the flashlight on but dont bother with wifi settings", T("turn_on_flashlight")),
])
def test_a_take_back_or_a_what_that_is_not_about_the_call_keeps_it(request_, call):
    notes: list[str] = []
    assert acting.gate([call], request_, CAT, notes=notes)[0] == [call]
    if "wifi" in request_:   # the trace says why: the take-back names another tool's things
        assert notes == ["turn_on_flashlight kept: 'dont bother with wifi settings' speaks of another tool"]
        assert acting.gate([T("open_wifi_settings")], request_, CAT)[1][0].cue == "dont bother"


def test_a_take_back_of_its_own_words_still_takes_back_the_piece_before():
    """"nvm" with a reason, and "dont bother with that", name no other tool: the piece before is taken back."""
    assert acting.gate([T("turn_on_flashlight")], "turn on the flashlight -- oh nvm the lights came back", CAT)[0] == []
    assert acting.gate([T("turn_on_flashlight")], "turn on the flashlight, actually dont bother with it", CAT)[0] == []


def test_a_tool_that_removes_is_called_only_when_the_request_says_a_removal():
    show, delete = "show me my top 5 unread chats", T("delete_chat", chat="top 5 unread chats")
    kept, refused = acting.gate([delete], show, CHAT)
    assert not kept and refused[0].reason == "the request asks to remove nothing"
    for ask in ("delete the top 5 unread chats", "get rid of the top 5 unread chats",
                "i need the top 5 unread chats deleted"):
        assert acting.gate([delete], ask, CHAT)[0] == [delete], ask
    out = T("delete_chat", chat="the group")
    assert acting.gate([out], "take the group out", CHAT)[0] == [out]


@pytest.mark.parametrize("request_, refused", [
    ("draft an email to my landlord greg.hollis@mailbox.org about the kitchen sink leaking again, dont send it "
     "ill read it over first", True),
    ("write an email to greg.hollis@mailbox.org about the sink but don't send the email yet", True),
    ("email greg.hollis@mailbox.org about the sink, do not send", True),
    ("don't text him, email greg.hollis@mailbox.org about the sink", False),         # not the tool's own verb
    ("email greg.hollis@mailbox.org about the sink, dont send anything to bob", False),   # an object of its own
])
def test_a_send_the_request_says_not_to_make_is_refused_wherever_its_values_are(request_, refused):
    call = ToolCall("send_email", {"to": "greg.hollis@mailbox.org", "subject": "the sink"})
    kept, why = acting.gate([call], request_, CAT)
    assert bool(why) is refused and (not why or why[0].reason == "the request says not to")


@pytest.mark.parametrize("request_, to, refused", [
    ("update aunt carols email to carol.b.finch@outlook.com", "carol.b.finch@outlook.com", True),
    ("pls change jen liu's email to jen.liu@northwind.io", "jen.liu@northwind.io", True),
    ("change of plans, email bob@x.com that the meeting moved", "bob@x.com", False),
    ("email bob@x.com to update him on the roof", "bob@x.com", False),
])
def test_a_request_to_change_a_stored_email_sends_nothing(request_, to, refused):
    kept, why = acting.gate([ToolCall("send_email", {"to": to, "subject": "x"})], request_, CAT)
    assert bool(why) is refused and (not why or "change something" in why[0].reason)


CONTACTS = Catalogue.from_json([
    {"function": {"name": "create_contact", "description": "Creates a contact.", "parameters": {
        "type": "OBJECT", "properties": {"person": {"type": "STRING"}, "email": {"type": "STRING"}},
        "required": ["person"]}}},
    {"function": {"name": "update_contact", "description": "Changes a saved contact.", "parameters": {
        "type": "OBJECT", "properties": {"person": {"type": "STRING"}, "email": {"type": "STRING"}},
        "required": ["person"]}}},
])


@pytest.mark.parametrize("request_, call, refused", [
    ("update Chen Wei's contact with his new email chen.wei@tsinghua.edu.cn",
     T("create_contact", first_name="Chen", last_name="Wei", email="chen.wei@tsinghua.edu.cn"), True),
    ("move my dentist appointment to Friday at 3pm",
     T("create_calendar_event", title="dentist appointment", datetime="2026-12-04T15:00:00"), True),
    ("cancel dinner with Bo friday 8pm", T("create_calendar_event", title="dinner with Bo",
                                           datetime="2026-12-04T20:00:00"), True),
    ("add dinner with Bo friday 8pm", T("create_calendar_event", title="dinner with Bo",
                                        datetime="2026-12-04T20:00:00"), False),
    ("save Mia Chen 555 0101, then update the group chat",
     T("create_contact", first_name="Mia", last_name="Chen", phone_number="555 0101"), False),
])
def test_a_change_to_something_saved_makes_nothing_new(request_, call, refused):
    """A tool that creates is no way to change or remove what exists; a tool whose name changes may be called."""
    kept, why = acting.gate([call], request_, CAT)
    assert bool(why) is refused and (not why or "change something that exists" in why[0].reason)


def test_a_tool_that_changes_may_be_called_for_a_change():
    update = T("update_contact", person="Chen Wei", email="chen.wei@tsinghua.edu.cn")
    create = T("create_contact", person="Chen Wei", email="chen.wei@tsinghua.edu.cn")
    ask = "update Chen Wei's contact with his new email chen.wei@tsinghua.edu.cn"
    assert acting.gate([update], ask, CONTACTS)[0] == [update]
    assert acting.gate([create], ask, CONTACTS)[0] == []


def test_a_name_the_call_copies_is_no_cue():
    """"Said" written as a surname is a value the call copies, not reported speech; said in a sentence, it reports."""
    omar = T("create_contact", first_name="Omar", last_name="Said", phone_number="555-0142")
    assert acting.gate([omar], "Add a contact Omar Said 555-0142 and write a note saying call Omar", CAT) == ([omar], [])
    assert acting.gate([omar], "can you add omar said 555-0142", CAT)[1]          # not written as a name
    mail = T("send_email", to="omar@example.com", subject="the report")
    kept, refused = acting.gate([mail], "my boss Omar said I should email omar@example.com the report", CAT)
    assert kept == [] and refused[0].reason == acting.REASONS[Polarity.REPORTED]


@pytest.mark.parametrize("request_", ["tell mom i landed safe", "text ana ill bring the cake",
                                      "let dad know i passed the exam", "pls tell Omar we already left"])
def test_what_a_speech_opener_passes_on_is_the_messages_not_the_persons_stance(request_):
    pieces = acting.read(request_)
    assert [p.polarity for p in pieces] == [Polarity.ASKED] and pieces[0].passes_on
    assert acting.asks_nothing(request_) is None
    goal = load_catalogue("mobile_actions+operate_screen")
    call, notes = T("operate_screen", goal=request_), []
    assert acting.gate([call], request_, goal, notes=notes) == ([call], [])
    assert "passes on a message after" in notes[0]      # the trace shows the lexicon's speech opener fired


@pytest.mark.parametrize("request_, polarity", [
    ("dont tell mom i landed", Polarity.NEGATED),
    ("text ana dont wait up", Polarity.NEGATED),           # a refusal inside the message: the safe mistake
    ("text ana. nvm", Polarity.CANCELLED),
    ("tell me if the flashlight is on", Polarity.HYPOTHETICAL),   # "me" is no addressee
    ("i told mom i landed", Polarity.PAST),
    ("maybe text ana ill be late", Polarity.HYPOTHETICAL),
    ("text sent already thanks", Polarity.PAST),
])
def test_a_speech_opener_never_hides_the_persons_own_refusal_or_story(request_, polarity):
    assert polarity in {p.polarity for p in acting.read(request_)}


SMS = Catalogue.from_json([{"name": "send_sms", "description": "Sends an SMS to a phone number or a contact.",
                            "parameters": {"type": "object", "properties": {
                                "to": {"type": "string", "description": "The recipient's number or contact name"},
                                "text": {"type": "string", "description": "What the message says"}},
                                "required": ["to", "text"]}}])


@pytest.mark.parametrize("request_, call", [
    ("txt priya we r at the Odeon on Broad St, 8:15", T("show_map", query="the Odeon on Broad St")),
    ("whatsapp to Luca: dinner at Trattoria Sora Lella friday 8pm",
     T("create_calendar_event", title="dinner at Trattoria Sora Lella", datetime="2026-12-11T20:00:00")),
    ("send a text message to Gran saying I'll ring her from Lisbon airport",
     T("show_map", query="Lisbon airport")),
    ("msg dev the flat is at 22 Baker Lane, 2nd floor, ring twice",          # a message goes on past commas
     T("show_map", query="22 Baker Lane, 2nd floor")),
])
def test_values_only_inside_a_message_passed_on_are_its_words_not_an_ask(request_, call):
    kept, refused = acting.gate([call], request_, CAT)
    assert kept == [] and refused[0].reason == "its values are the words of a message the request passes on"
    assert refused[0].cue                     # the opener that started the message is named


def test_a_message_passed_on_keeps_the_calls_that_carry_it():
    """A tool that sends carries the message, whatever its name ("msg the studio" for `message_studio`); a value written outside it is asked; the screen passes
    messages on where no tool does; a piece of its own beside the message is asked."""
    sms = T("send_sms", to="Raul", text="the keys are under the mat")
    assert acting.gate([sms], "sms to Raul: the keys are under the mat", SMS) == ([sms], [])
    studio = Catalogue.from_json([{"name": "message_studio", "description": "Messages the rehearsal studio.",
                                   "parameters": {"type": "object", "properties": {"body": {"type": "string"}},
                                                  "required": ["body"]}}])
    ask = T("message_studio", body="can we leave our amps here overnight?")
    assert acting.gate([ask], "msg the studio: can we leave our amps here overnight?", studio) == ([ask], [])
    mail = T("send_email", to="ana@x.com", subject="I'm at Central Station")
    assert acting.gate([mail], "text ana@x.com that I'm at Central Station", CAT) == ([mail], [])
    screen = load_catalogue("mobile_actions+operate_screen")
    goal = T("operate_screen", goal="dinner at 8 at Nandos")
    assert acting.gate([goal], "whatsapp Ben dinner at 8 at Nandos", screen) == ([goal], [])
    where = T("show_map", query="Nandos")
    assert acting.gate([where], "text Ben I'm late, and show me Nandos on the map", CAT) == ([where], [])


@pytest.mark.parametrize("request_, call", [
    ("open wifi settings - hmm, the router's blinking again. never mind",  T("open_wifi_settings")),
    ("show me Kings Cross on the map. oh the signs are right here, no need", T("show_map", query="Kings Cross")),
    ("add padel thursday 7pm to my calendar. ugh my knee is still sore, forget it",
     T("create_calendar_event", title="padel", datetime="2026-12-10T19:00:00")),
    ("save Ines Duarte 912 345 678. hmm she changed jobs, scratch that",     # named by its values, not a tool word
     T("create_contact", first_name="Ines", last_name="Duarte", phone_number="912 345 678")),
])
def test_a_bare_take_back_reaches_past_the_reason_told_before_it(request_, call):
    kept, refused = acting.gate([call], request_, CAT)
    assert kept == [] and refused and refused[0].piece != ""


@pytest.mark.parametrize("request_, kept", [
    ("email jo@x.com the menu. was gonna add lunch friday noon too but no", "send_email"),   # a plan: its own
    ("turn off the flashlight. if the baby wakes we'll need it back on but not yet", "turn_off_flashlight"),
])
def test_a_bare_take_back_stops_at_an_action_said_since(request_, kept):
    calls = {"send_email": T("send_email", to="jo@x.com", subject="the menu"),
             "turn_off_flashlight": T("turn_off_flashlight")}
    assert acting.gate([calls[kept]], request_, CAT)[0] == [calls[kept]]


def test_a_cancel_verb_takes_back_what_was_said_earlier_only():
    torch = T("turn_on_flashlight")
    mail = T("send_email", to="jo@x.com", subject="running late")
    ask = "email jo@x.com running late and turn on the torch... actually skip the torch"
    assert acting.gate([mail, torch], ask, CAT)[0] == [mail]
    pieces = acting.read("cancel my 3pm")          # said nowhere before: a removal asked, not a take-back
    assert [p.polarity for p in pieces] == [Polarity.ASKED]


def test_a_time_is_never_the_speaker_of_a_cue():
    """"* goes" reports a speaker ("so she goes turn on the flashlight"); "2pm goes in the calendar" asks."""
    assert [p.polarity for p in acting.read("lunch with kai at 1pm goes in the calendar")] == [Polarity.ASKED]
    assert [p.polarity for p in acting.read("so she goes turn on the flashlight")] == [Polarity.REPORTED]
    # a thing that goes on is no speaker: what an entry's length is told with ("probably goes on till 10")
    assert Polarity.REPORTED not in [p.polarity for p in acting.read("dinner at Kenji's saturday. Probably goes on till 10.")]
    assert Polarity.REPORTED not in [p.polarity for p in acting.read("yoga at 8 and it goes for 75 minutes")]


def test_a_dont_with_the_verb_of_an_earlier_ask_refers_to_that_ask():
    """"... he cancelled on me so don't add it": the "add" is the event's, past the story told between; a
    "don't" whose verb nothing before says still refers to the piece before ("... so dont bother with that")."""
    lunch = T("create_calendar_event", title="lunch with Noor", datetime="2026-12-12T13:00:00")
    ask = "add lunch with Noor saturday 1pm. she just texted that shes sick so dont add it"
    assert acting.gate([lunch], ask, CAT)[0] == []
    torch = T("turn_off_flashlight")
    assert acting.gate([torch], "turn off the flashlight. we already set the alarm so dont bother with that",
                       CAT)[0] == [torch]


@pytest.mark.parametrize("part, request_, want", [
    ("and text him welcome to the team!", "add Tomás Ferreira as a contact, his number is 5551234567, and text him "
     "welcome to the team!", "and text Tomás Ferreira welcome to the team!"),
    ("text her hi", "add ana to contacts and text her hi", "text her hi"),          # no name written as one
    ("text him hi", "Bob is late. text him hi", "text him hi"),                      # a sentence's first word
    ("set an alarm", "Call Bob and set an alarm", "set an alarm"),                   # no message, no pronoun
])
def test_a_part_handed_on_alone_names_whom_its_him_or_her_stands_for(part, request_, want):
    from mobile_actions.acting import named_addressee

    assert named_addressee(part, request_) == want


def test_a_call_for_the_wrong_ask_is_misrouted_not_declined():
    from mobile_actions.acting import BORROWED, UNTIED, Refusal

    call = ToolCall("create_contact", {"first_name": "ask about parking"})
    assert Refusal(call, UNTIED).misrouted and Refusal(call, BORROWED + "create_calendar_event").misrouted
    assert not Refusal(call, "the request says not to").misrouted


def test_a_period_after_an_abbreviation_ends_no_sentence():
    """"Dr. Nakamura", "St. Mary's": one sentence each, so what follows them is read with what went before."""
    pieces = read("add Dr. Nakamura on Thursday at 11. It's at St. Mary's Hospital")
    assert [p.sentence for p in pieces] == [0, 1] and pieces[0].text == "add Dr. Nakamura on Thursday at 11"
    assert [p.sentence for p in read("no. turn on the torch")] == [0, 1]


# A tool with no date or time argument acts now: a time the request sets for it is not honoured by doing it now.
LATER = [
    ("email ana@example.com tomorrow morning saying the rent is paid",
     T("send_email", to="ana@example.com", subject="the rent is paid"), "tomorrow morning"),
    ("turn on the flashlight at 9pm", T("turn_on_flashlight"), "at 9pm"),
    ("on friday turn the torch off", T("turn_off_flashlight"), "on friday"),
]


@pytest.mark.parametrize("request_,call,cue", LATER)
def test_a_call_that_acts_now_is_refused_when_the_request_sets_a_later_time(request_, call, cue):
    kept, refused = acting.gate([call], request_, CAT)
    assert kept == [] and refused[0].reason == acting.ACTS_LATER and refused[0].cue == cue


NOW = [
    # the time is what the email says, not when to send it
    ("email bo@x.org subject Meeting tomorrow at 9", T("send_email", to="bo@x.org", subject="Meeting tomorrow at 9")),
    ("email bo@x.org that I'll be late tomorrow", T("send_email", to="bo@x.org", subject="I'll be late")),
    # the tool takes the time
    ("put dentist on my calendar tomorrow at 3pm",
     T("create_calendar_event", title="dentist", datetime="2026-12-07T15:00:00")),
    # a look-up changes nothing
    ("show me the station for tomorrow morning", T("show_map", query="the station")),
]


@pytest.mark.parametrize("request_,call", NOW)
def test_a_time_that_is_a_value_or_taken_by_the_tool_refuses_nothing(request_, call):
    assert acting.gate([call], request_, CAT) == ([call], [])


def test_a_bare_hour_beside_a_number_argument_is_no_time():
    alerts = Catalogue.from_json([{"function": {"name": "set_stock_alert", "description": "Alert when stock is low.",
                                                "parameters": {"type": "OBJECT", "properties": {
                                                    "product": {"type": "STRING"}, "at_units": {"type": "INTEGER"}},
                                                    "required": ["product"], "x-effect": "changes"}}}])
    call = T("set_stock_alert", product="espresso cups")
    assert acting.gate([call], "set a stock alert for espresso cups at 6", alerts) == ([call], [])


def test_a_time_another_call_of_the_turn_took_refuses_nothing():
    from datetime import datetime

    calls = [T("turn_on_flashlight"), T("create_calendar_event", title="camping check-in", datetime="2026-12-07T14:00:00")]
    assert acting.gate(calls, "turn on flashlight n create an event 'camping check-in' tmrw 2pm", CAT,
                       now=datetime(2026, 12, 6, 9, 30)) == (calls, [])


def test_a_day_another_call_took_is_read_on_the_conversations_clock():
    from datetime import datetime

    calls = [T("turn_off_flashlight"), T("create_calendar_event", title="camping", datetime="2026-02-04T00:00:00")]
    request = "torch off n put camping in the calendar for tmrw"
    assert acting.gate(calls, request, CAT, now=datetime(2026, 2, 3, 19, 40)) == (calls, [])
    messages = [{"role": "developer", "content": "Current date and time given in YYYY-MM-DDTHH:MM:SS format: "
                 "2026-02-03T19:40:00\n"}, {"role": "user", "content": request}]
    assert acting.gate_messages(calls, messages, CAT) == (calls, [])


def test_the_screen_takes_the_time_with_its_goal():
    screen = load_catalogue("mobile_actions+operate_screen")
    call = T("operate_screen", goal="set an alarm")
    assert acting.gate([call], "set an alarm for 6:30 and text Ana im on my way", screen) == ([call], [])
