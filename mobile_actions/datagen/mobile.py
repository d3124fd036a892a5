"""Phrasing grammars for the 7 Mobile Actions tools.

Each tool has a dozen *families*: one sentence structure each, with word-level alternatives inside.
Families are the unit of the train/held-out split (see `mobile_actions.datagen.generate.heldout_ids`), so two
families must differ in structure, not just in a synonym. Mode "imp" is an imperative verb phrase
that takes any opener ("can you ...", "please ..."); "free" is a complete utterance of its own.

Slots are the tool's argument names; optional arguments appear only inside `<arg:...>` guards so a
family can be expanded with or without them. Slots starting with "_" are context (e.g. the
recipient's first name), not arguments. Syntax: `mobile_actions.datagen.templates`.
"""
from __future__ import annotations

from random import Random

from mobile_actions.datagen import values as V
from mobile_actions.datagen.dates import sample_when
from mobile_actions.datagen.templates import LITERAL, SURFACE, Value

# (family name, mode, template)
FamilySpec = tuple[str, str, str]

_BODY_INTRO = "(saying|that says|and say|with the message|and write|telling them|with the text|and tell them)"
_SUBJ_INTRO = "(with the subject|with subject|titled|with the subject line|subject|under the subject|with the title)"
_EMAIL_NOUN = "(an email|an e-mail|a mail|a quick email|a short email|a message by email|an email message)"

SEND_EMAIL: list[FamilySpec] = [
    ("send_to_subject", "imp", f"(send|shoot|fire off|write) {_EMAIL_NOUN} to {{to}} {_SUBJ_INTRO} {{subject!q}}<body: {_BODY_INTRO} {{body!q}}>"),
    ("email_verb_about", "imp", "(email|e-mail|mail) {to} (about|regarding|re:|re|on) {subject!q}<body: and (tell them|say|write|let them know|mention) {body!q}>"),
    ("named_recipient", "imp", "(email|send an email to|write to|message) {_first} (at|on|via) {to}(,|) (subject|the subject is|subject line) {subject!q}<body:(,|;| and) (body|message|text|the message is|content) {body!q}>"),
    ("subject_first", "free", "(Subject|Title|Subject line) {subject!q}(,|;| -) (send|email|mail) (it|this|that) to {to}<body:(,|.) (the body is|body:|the message:|write) {body!q}>"),
    ("need_to_send", "free", "I (need|want|have|gotta) to (send|write|get off) (an email|a mail|an e-mail) to {to}. (The subject is|Subject should be|Subject:|Make the subject|Call it) {subject!q}<body:(.|,) (The body should say|It should say|In the body write|Body:|Message:|Say) {body!q}>"),
    ("compose_for", "imp", "(compose|draft and send|put together|write up and send) an email for {to} (with the subject|titled|headed|called) {subject!q}<body: (and the text|containing|with the body|that reads) {body!q}>"),
    ("body_first", "imp", "(send|email|write) {body!q} to {to} (with the subject|under the subject|subject line|as an email titled) {subject!q}"),
    ("terse_email", "free", "(email|mail|e-mail) {to} (subj|subject|re:|re) {subject!q}<body: (msg|body|text|message) {body!q}>"),
    ("drop_a_line", "imp", "(drop|send) {_first} a (line|quick email|note|short email) at {to} (about|on the subject of|re|regarding) {subject!q}<body:(:| -|,) {body!q}>"),
    ("fields", "free", "(new email|new mail|email|compose) (to|for) {to}(,|;|.) (subject|subj|title) {subject!q}<body:(,|;|.) (body|text|message) {body!q}>"),
    ("ask_send", "free", "(can|could|would) you (send|email|write) {to} (a message|an email|a note) (about|titled|with the subject) {subject!q}<body: (saying|that says|telling them) {body!q}>?"),
    ("reply_to", "imp", "(reply to|get back to|answer|respond to) {to} (with|using) the subject {subject!q}<body: and (say|write|tell them) {body!q}>"),
    ("let_know", "imp", "let {_first} know by email at {to}<body: that {body!q}>(,|.|) (use the subject|subject|with the subject line|title it) {subject!q}"),
    ("email_that", "imp", "(email|e-mail|mail|send an email to|write to|drop a line to) {to} (that|to say|saying|to tell them|and tell (him|her|them)|and say|to let them know) {subject}<body:(.|,|;) (add|also say|and add|in the body put|body:) {body!q}>"),
    ("tell_by_email", "imp", "tell {_first} (by email|in an email|over email|via email) at {to} that {subject}"),
    ("subject_as", "imp", "(email|send|mail) {subject!q} to {to} as the (subject|subject line|title)<body:(,|;| and) (with the body|body|the message) {body!q}>"),
    ("remind_someone", "free", "(Remind|Ping|Nudge) {to} (by email|via email|over email) (about|regarding) {subject!q}<body:(,|.) (tell them|just write|say) {body!q}>"),
]

_CONTACT_NOUN = "(my contacts|my contact list|contacts|my address book|the phone|my phone)"
_PHONE_TAIL = "<phone_number:(,| -|;|) (with the number|number|phone|mobile|cell|their number is|tel.|phone number) {phone_number}>"
_EMAIL_TAIL = "<email:(,| and|;) (email|e-mail|their email is|with the email address|email address|mail) {email}>"

CREATE_CONTACT: list[FamilySpec] = [
    ("add_to_contacts", "imp", f"(add|save|put|store) {{first_name}} {{last_name}} (to|in|into|on) {_CONTACT_NOUN}{_PHONE_TAIL}{_EMAIL_TAIL}"),
    ("create_contact_for", "imp", f"(create|make|set up|add) a (new |)contact (for|named|called) {{first_name}} {{last_name}}{_PHONE_TAIL}{_EMAIL_TAIL}"),
    ("field_list", "free", "(New contact|new contact|Contact|Add contact)(:| -|,) (first name|first|given name) {first_name}, (last name|surname|last|family name) {last_name}<phone_number:, (phone|tel|number|mobile) {phone_number}><email:, (email|mail|e-mail) {email}>"),
    ("surname_first", "free", "(Surname|Last name|Family name) {last_name}, (first name|given name|first) {first_name}<phone_number:, (number|phone) {phone_number}><email:, (email|e-mail) {email}>(. Save (it|them) as a contact| - add to contacts|, please save the contact|. Add to contacts.)"),
    ("just_met", "free", "I (just met|met|just talked to|had coffee with) {first_name} {last_name}<phone_number:(, their number is|, number's| and the number is|, phone) {phone_number}><email:(, email is| and their email is|, mail:) {email}>(. Save them|, add them to my contacts|, please save the contact|. Add to contacts|, can you save that as a contact)"),
    ("save_number_as", "imp", "(save|store|add) {phone_number} (as|under) {first_name} {last_name}<email: (with|and) (email|the email|email address) {email}>"),
    ("remember", "imp", "(remember|keep) {first_name} {last_name} (as a contact|in my contacts|in the address book){_PHONE}{_EMAIL}".replace("{_PHONE}", _PHONE_TAIL).replace("{_EMAIL}", _EMAIL_TAIL)),
    ("ask_add", "free", f"(can|could|would) you (add|save|create) {{first_name}} {{last_name}} (as a contact|to my contacts|as a new contact){_PHONE_TAIL}{_EMAIL_TAIL}?"),
    ("terse_contact", "free", "(contact|new contact|add) {first_name} {last_name}<phone_number: {phone_number}><email: {email}>"),
    ("store_details", "imp", "(keep|store|save) (the details|the contact details|the info) (for|of) {first_name} {last_name}<phone_number:(:| -|,) (phone|number) {phone_number}><email:(,| and) (email|mail) {email}>"),
    ("save_email_as", "imp", "(add|save) {email} (as|under the name|as a contact for) {first_name} {last_name}<phone_number: (and the number|, phone|with phone) {phone_number}>"),
    ("name_is", "free", "(Their|Her|His|The) name is {first_name} {last_name}<phone_number: and the number is {phone_number}><email: and the email is {email}>(, create a contact| - add them to my contacts|. make a new contact)"),
    ("colleague", "free", "(my new colleague|my new neighbour|my new neighbor|the plumber|my kid's teacher|the new client) is {first_name} {last_name}<phone_number:(,| -) {phone_number}><email:(,| -) {email}>(, add (her|him|them) to my contacts|. save as contact|, save the contact please)"),
]

SHOW_MAP: list[FamilySpec] = [
    ("show_on_map", "imp", "(show|display|pull up|bring up|show me) {query} on (the|a) map"),
    ("where_is", "free", "(where is|where's|wheres|where exactly is) {query}(?|)"),
    ("find_on_maps", "imp", "(find|locate|look up|search for|search) {query} (on the map|on maps|in maps|on google maps|on the map app)"),
    ("open_map_for", "imp", "(open|pull up|show) (the map|maps|a map) (for|of|at|around) {query}"),
    ("need_to_get", "free", "I need to (find|get to|go to|figure out where) {query}(, (can you|could you|) show me on the map|. map please|, show me where it is|, pull it up on the map)"),
    ("ask_show", "free", "(can|could|would) you (show me|tell me) where {query} is(?| on the map?|, on a map?)"),
    ("terse_map", "free", "(map|maps|map:|location:|directions:) {query}"),
    ("location_of", "imp", "(show me|what is|give me|get me) the (location|map location|position) of {query}"),
    ("drop_pin", "imp", "(drop a pin on|put a pin on|mark|pin) {query} (on the map|)"),
    ("meeting_at", "free", "I'm (meeting|seeing|picking up) (someone|a friend|{_first}|my date|a client) at {query}(, show it on the map|, where is that|, can you map it|. show me on the map)"),
    ("how_get", "free", "(how do I get to|how far is|what's the way to) {query}(? show me on the map|, show me the map|? pull it up on the map)"),
    ("navigate_look", "imp", "(take a look at|zoom in on|center the map on|go to) {query} (on the map|in maps)"),
    # Directions with no map word: show_map is the only way the phone can answer them.
    ("directions_to", "free", "(how do I get to|directions to|get me directions to|what's the way to|navigate to|route to) {query}(?|)"),
    ("take_me_to", "imp", "(take me to|get me to|guide me to|find the way to|find) {query}"),
    # Searches around the user: the query is the search as said ("nearest pharmacy", "ATMs near me").
    ("nearest", "free", "(where's|where is|show me|find|find me|how far is|take me to|I need) the {query}(?|)"),
    ("near_me", "imp", "(find|show me|search for|look for|pull up|find me) {query}"),
    ("query_first", "free", "{query}(, on the map please| - where is it?| - show me on the map|: can you map it)"),
]

_WIFI = "(wi-fi|wifi|Wi-Fi|WiFi|wireless|WLAN)"
OPEN_WIFI_SETTINGS: list[FamilySpec] = [
    ("open_settings", "imp", f"(open|go to|take me to|bring up|show|launch) (the |my |){_WIFI} settings"),
    ("problem", "free", "(my|the) (wifi|internet|wi-fi|connection) (isn't working|keeps dropping|is acting up|is so slow|won't connect|is down)(,|.) (open|show me|take me to|pull up) the (wifi|wi-fi|network|wireless) settings"),
    ("join_network", "free", f"I (need|want|have) to (connect to|join|log into|switch to) (a|the|a new|the hotel|the office|the airport|my home) {_WIFI} network"),
    ("terse_wifi", "free", f"{_WIFI} (settings|config|setup|options)"),
    ("change_network", "imp", f"(change|switch|pick) (my |the |a different |){_WIFI} network"),
    ("password", "free", f"I (need|have|want) to (enter|type in|put in|change) the {_WIFI} password"),
    ("ask_open", "free", f"(can|could|would) you open (the|my) {_WIFI} (settings|network settings|page)?"),
    ("manage", "imp", f"(manage|check|see|review) (my|the|available) {_WIFI} (connections|networks|settings)"),
    ("settings_for", "imp", f"(get|bring) me (to|into) the (settings|network settings) (for|of) {_WIFI}"),
    ("why_offline", "free", "(why am I offline|no internet again|I have no signal|the network is down)(,|.|?) (let me see the|open the|show the) (wifi|wi-fi|network) settings"),
]

_TORCH = "(flashlight|torch|flash light|flashlight|phone light)"
TURN_ON_FLASHLIGHT: list[FamilySpec] = [
    ("turn_on", "imp", f"(turn on|switch on|put on|enable|activate|start) the {_TORCH}"),
    ("turn_x_on", "imp", f"(turn|switch|flick|put) the {_TORCH} on"),
    ("dark", "free", f"(it's|its|it is) (so |really |pitch |too |super |)dark (in here|out here|here)(,|.|) (I need the|give me the|turn on the|I need a|some) {_TORCH}"),
    ("terse_on", "free", f"{_TORCH} (on|please|now|on please)"),
    ("need_light", "free", "I (need|could use) (a|the|some) (flashlight|torch|light from the phone)( to find my keys| to see| right now| to read this| for a sec|)"),
    ("ask_on", "free", f"(can|could|would) you (turn on|switch on|light up|put on) the {_TORCH}?"),
    ("cant_see", "free", f"I can't see (anything|a thing|where I'm going|the keyhole)(,|.|) (turn on|switch on|put on) the {_TORCH}"),
    ("use_as", "imp", "(use|turn) the (phone|camera flash|flash) (as a|into a) (flashlight|torch)"),
    ("light_up", "imp", f"(light up|illuminate) (the way|this place|the room|the path|under the bed) with the {_TORCH}"),
    ("lights_on", "free", "(lights on|light me up|let there be light|need some light)(!|,|) (flashlight|torch) (please|now|on)"),
]

TURN_OFF_FLASHLIGHT: list[FamilySpec] = [
    ("turn_off", "imp", f"(turn off|switch off|shut off|disable|kill|deactivate) the {_TORCH}"),
    ("turn_x_off", "imp", f"(turn|switch|shut|flick) the {_TORCH} off"),
    ("done", "free", f"(ok |okay |alright |)(I'm done|I found it|I can see now|got it|found my keys)(,|.) (turn off|switch off|kill|shut off) the {_TORCH}"),
    ("terse_off", "free", f"{_TORCH} off( please| now|)"),
    ("battery", "free", f"(the {_TORCH} is draining my battery|that light is too bright|my battery is dying)(,|.) (turn|switch|shut) the {_TORCH} off"),
    ("ask_off", "free", f"(can|could|would) you (turn off|switch off|shut off) the {_TORCH}?"),
    ("no_longer", "free", f"I don't need the {_TORCH} (anymore|any more|now)(, turn it off|. Turn it off|, switch it off)"),
    ("stop", "imp", f"(stop|end|close) the {_TORCH}"),
    ("lights_out", "free", f"(lights out|{_TORCH} off|no more light)( please| now|, thanks|)"),
    ("too_bright", "free", f"(ugh |ouch |argh |)(that's|it's) (too bright|blinding me|blinding)(,|.|!) (kill|turn off|switch off) the {_TORCH}"),
]

_CAL = "(my calendar|the calendar|my schedule|my agenda|calendar|my Google calendar)"
CREATE_CALENDAR_EVENT: list[FamilySpec] = [
    ("add_to_calendar", "imp", f"(add|put|schedule|create|set up|book|pop) {{title!q}} (in|on|to|into) {_CAL} {{datetime}}"),
    ("create_event_called", "imp", "(create|make|add|set up) (an event|a calendar event|an appointment|a calendar entry|an entry) (called|named|titled|for) {title!q} {datetime}"),
    ("when_first", "free", "{datetime}(,|) (I have|there's|I've got|we have) {title!q}(,|.|) (add it to|put it in|save it in|put it on) (my|the) calendar"),
    ("remind_calendar", "free", "(remind me|I need a reminder) (about|of) {title!q} {datetime}(, put it in my calendar|, add it to the calendar| - calendar please|, make it a calendar event)"),
    ("block_time", "imp", "(block|reserve|block off|hold) {datetime} (for|on my calendar for|in my calendar for) {title!q}"),
    ("terse_event", "free", "(calendar|cal|event|new event)(:| -|) {title!q} {datetime}"),
    ("ask_add_event", "free", "(can|could|would) you (add|put|schedule) {title!q} (in|on) (my|the) calendar {datetime}?"),
    ("schedule_titled", "imp", "schedule (a|an) (event|appointment|meeting|calendar event) {datetime} (called|titled|named) {title!q}"),
    ("i_have", "free", "I (have|'ve got|need to go to) {title!q} {datetime}(, can you add it to my calendar|. please add it to my calendar|, put it in the calendar|. calendar it)"),
    ("dont_forget", "free", "(don't let me forget|I don't want to forget|make sure I remember) {title!q} {datetime}(, add it to the calendar|. calendar please|, save it as an event)"),
    ("save_the_date", "imp", "(save the date|mark my calendar|mark the calendar) (for|with) {title!q} {datetime}"),
    ("event_fields", "free", "(New event|Event|Calendar entry)(:|,| -) (title|name) {title!q}(,|;) (when|time|date) {datetime}"),
    # No calendar word at all: people say what and when, and the time makes it an event.
    ("remind_me", "free", "((remind me|I need a reminder) (about|of)|(set a reminder|reminder|add a reminder) (for|:)|don't let me miss) {title!q} {datetime}"),
    ("plan_at", "imp", "(schedule|book|organise|organize|put|add) {title!q} {datetime}"),
    ("bare_event", "free", "{title!q} {datetime}"),
    ("meeting_called", "imp", "(set up|schedule|create|add|organise|organize|book) (a meeting|a call|a session|an appointment|a reminder) (called|named|titled|about|for) {title!q} {datetime}"),
    ("set_up_at", "imp", "(set up|arrange|plan|note down) {title!q} {datetime} (in|on) {_CAL}".replace("{_CAL}", _CAL)),
]

# Routing (hybrid runs): a step no tool covers becomes operate_screen(goal) with the goal in the user's words.
OPERATE_SCREEN: list[FamilySpec] = [
    ("do_it", "imp", "{goal}"),
    ("help_me", "free", "(help me|I want to|I need to|show me how to|I'd like to) {goal}( on my phone| on the phone|)"),
    ("phone_please", "free", "{goal}( please| for me| now| real quick|)"),
    ("could_you", "free", "(can|could|would) you {goal}( for me|)?"),
    ("cant_figure", "free", "I can't figure out how to {goal}(, can you do it|, do it for me|. Do it please)"),
    ("on_the_phone", "imp", "(on my phone|on the phone|using the screen|through the settings)(,|) {goal}"),
]

# One verb for a tool call and a GUI goal: "turn on the flashlight and Bluetooth" is turn_on_flashlight()
# and operate_screen(goal="turn on Bluetooth"), the goal put together from the user's words. A family
# whose name starts with "thing" names the screen's part first (and its call comes first).
# Slots: {verb} ("turn on" ...), {thing} (a setting), {light} (flashlight, torch ...).
SHARED_SWITCH: list[FamilySpec] = [
    ("light_and_thing", "imp", "{verb} the {light} and {thing}"),
    ("light_and_thing_too", "imp", "{verb} the {light}(,|) and {thing} (too|as well)"),
    ("both", "imp", "{verb} both the {light} and {thing}"),
    ("light_plus_thing", "imp", "{verb} the {light} plus {thing}"),
    ("thing_and_light", "imp", "{verb} {thing} and the {light}"),
    ("thing_and_light_too", "imp", "{verb} {thing}(,|) and the {light} (too|as well)"),
]
SHARED_SWITCH_TOOLS = ("operate_screen", "turn_on_flashlight", "turn_off_flashlight")


def shared_switch(rng: Random, thing_first: bool) -> tuple[dict[str, Value], list[dict]]:
    """(slot fillings, the calls in the order said) for a `SHARED_SWITCH` request."""
    on = rng.random() < 0.5
    verb, thing = V.switch_goal(rng, on)
    slots = {"verb": Value(verb, LITERAL), "thing": Value(thing, LITERAL),
             "light": Value(rng.choice(("flashlight", "torch", "flash light", "flashlight", "light")), LITERAL)}
    light = {"function": {"name": "turn_on_flashlight" if on else "turn_off_flashlight", "arguments": {}}}
    gui = {"function": {"name": "operate_screen", "arguments": {"goal": f"{verb} {thing}"}}}
    return slots, [gui, light] if thing_first else [light, gui]


FAMILIES: dict[str, list[FamilySpec]] = {
    "operate_screen": OPERATE_SCREEN,
    "send_email": SEND_EMAIL,
    "create_contact": CREATE_CONTACT,
    "show_map": SHOW_MAP,
    "open_wifi_settings": OPEN_WIFI_SETTINGS,
    "turn_on_flashlight": TURN_ON_FLASHLIGHT,
    "turn_off_flashlight": TURN_OFF_FLASHLIGHT,
    "create_calendar_event": CREATE_CALENDAR_EVENT,
}
# The argument names each grammar fills; a user tool with the same name but other arguments gets
# the generic grammar instead.
ARGUMENTS: dict[str, frozenset[str]] = {
    "operate_screen": frozenset({"goal"}),
    "send_email": frozenset({"to", "subject", "body"}),
    "create_contact": frozenset({"first_name", "last_name", "phone_number", "email"}),
    "show_map": frozenset({"query"}),
    "open_wifi_settings": frozenset(),
    "turn_on_flashlight": frozenset(),
    "turn_off_flashlight": frozenset(),
    "create_calendar_event": frozenset({"title", "datetime"}),
}


# ------------------------------------------------------------------------------------------ chains
# A request whose second call needs the first call's *result*: "email the address of the Louvre to
# ana@example.com" is show_map(query) now, then, once the caller sees the map's answer in a tool
# response, send_email(to, subject="Address of <place as said>", body="<name>, <address>").
# Slots: {place} (as the user says it), {to}, {_first}.
CHAIN_EMAIL_ADDRESS: list[FamilySpec] = [
    ("email_address_of", "imp", "(email|send|mail|e-mail|forward) the (address|location|street address) of {place} to {to}"),
    ("send_them_address", "imp", "(send|email|mail) {to} the (address|location|exact address) (of|for) {place}"),
    ("look_up_then_email", "imp", "(look up|find|search for|check) {place} on the map (and|then|, then) (email|send|mail) (the|its) address to {to}"),
    ("where_then_send", "free", "(where is|where's) {place}? (email|send|mail) the address to {to}"),
    ("share_with", "imp", "(share|forward|pass on) the address of {place} with {to} (by email|via email|over email)"),
    ("someone_needs", "free", "{_first} (needs|wants|asked for|is asking for) the address of {place}(,|.) (email|send|mail) it to {to}"),
    ("get_and_mail", "imp", "(get|find|grab) (me |)the address (of|for) {place} and (mail|email|send) it to {to}"),
    ("terse_chain", "free", "(email|mail) {to}(:| -|,) (address of|the address for|location of) {place}"),
    ("let_know_where", "imp", "let {to} know (where|the address where) {place} is (by email|in an email|via email)"),
    ("map_and_email", "imp", "(show|pull up|bring up) {place} on the map and (email|send|mail) (the|its) address to {to}"),
]


def sample_chain_slots(rng: Random) -> tuple[str, str, dict[str, Value]]:
    """(the map query, the place as the user says it, slot fillings) for an address chain."""
    said = rng.choice(V.LANDMARKS) if rng.random() < 0.5 else V.map_query(rng)
    query = said.removeprefix("the ")
    to, who = V.any_email(rng)
    first = who.first if who else rng.choice(("my friend", "my boss", "the client", "my sister"))
    return query, to, {"place": Value(said, LITERAL), "to": Value(to, LITERAL), "_first": Value(first, LITERAL)}


# Families whose subject is news told in a clause ("email ana that I'm running late"), not a title.
STATEMENT_SUBJECT = frozenset({"email_that", "tell_by_email"})
# Families whose query is a search around the user ("the nearest pharmacy"), not a place's name.
NEARBY_QUERY = frozenset({"nearest", "near_me"})


def sample_slots(tool: str, rng: Random, now, family: str = "") -> tuple[dict, dict[str, Value]]:
    """Consistent values for one call: (gold arguments for all the tool's arguments, slot fillings incl. context).

    `family` is the family's name within its tool, for the few families whose values have another shape.
    """
    if tool == "send_email":
        to, who = V.any_email(rng)
        first = who.first if who else rng.choice(("the team", "support", "the office", "them"))
        subject = V.statement(rng) if family in STATEMENT_SUBJECT else V.subject(rng)
        args = {"to": to, "subject": subject, "body": V.body(rng)}
        return args, {**_literal(args), "_first": Value(first, LITERAL)}
    if tool == "create_contact":
        p = V.person(rng)
        args = {"first_name": p.first, "last_name": p.last, "phone_number": V.phone(rng), "email": V.email_for(rng, p)}
        return args, _literal(args)
    if tool == "show_map":
        args = {"query": V.nearby_query(rng, family == "nearest") if family in NEARBY_QUERY else V.map_query(rng)}
        return args, {**_literal(args), "_first": Value(V.person(rng).first, LITERAL)}
    if tool == "operate_screen":
        args = {"goal": V.gui_goal(rng)}
        return args, _literal(args)
    if tool == "create_calendar_event":
        when = sample_when(rng, now)
        args = {"title": V.event_title(rng), "datetime": when.iso}
        return args, {"title": Value(args["title"]), "datetime": Value(when.text, SURFACE)}
    return {}, {}


def _literal(args: dict) -> dict[str, Value]:
    return {k: Value(str(v), LITERAL) for k, v in args.items()}
