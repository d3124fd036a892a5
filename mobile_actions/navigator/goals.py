"""What a GUI goal asks of the screen in front of the navigator: the switches it sets, the values its form
fields take, the button its final verb names, the app it opens, the text it types, whether it ends at home.

These are readings, not rules: the guards (`navigator.guards`) decide what they allow. The words are data: the
language's in the lexicon (``navigator`` in `lexicon/en.json`), the apps' labels in `android/screens.json`.
Here are only the patterns built from them. `done` is the actions so far, as `text.describe_call` writes them
(``tap "Send"``, ``type_text "buy milk"``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from mobile_actions.android.screens import AndroidScreens, load_screens
from mobile_actions.lexicon import NavigatorWords, alternation, normalise, whole_words
from mobile_actions.lexicon import load as load_lexicon
from mobile_actions.navigator.screen import Screen

# A web address in a goal ("go to weather.example.com"): what a browser's address field takes first.
_URL = re.compile(r"(?<![\w@.-])(?:https?://)?[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}(?:/[^\s,;]*)?(?![\w@-])", re.I)
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|“[^”]*”")
_WORD = re.compile(r"[^\W_]+")


def _alt(words: Sequence[str]) -> str:
    return "|".join(map(re.escape, words))


@dataclass(frozen=True)
class GoalWords:
    """The lexicon's navigator words and the apps' labels, with the patterns the readings use."""
    words: NavigatorWords
    screens: AndroidScreens
    request_verbs: frozenset[str]
    switch_goal: re.Pattern
    value_end: str        # where a typed value ends, besides the next field's cue (%s: those cues)
    home_goal: re.Pattern
    open_goal: re.Pattern
    back_goal: re.Pattern
    web: re.Pattern
    remove_goal: re.Pattern    # a goal that starts by removing something
    adds_something: re.Pattern  # a word of a new item or of text to type, anywhere in a goal
    new_item: re.Pattern       # a label that makes a new item ("New note", "+")
    names_new: re.Pattern      # a new item's word anywhere in a goal ("add", "new")
    switch_word: re.Pattern    # a word of switching or of a state, or a switch's other name, anywhere in a goal

    @classmethod
    def build(cls, words: NavigatorWords, screens: AndroidScreens, abbreviations: Sequence[str] = ()) -> "GoalWords":
        """`abbreviations`: words a period after which ends no value ("St. Mary's Hospital")."""
        w = words
        # A switch goal ("turn on Bluetooth", "turn airplane mode off", "disable NFC"): the switch's words run
        # up to the next verb or the end of the sentence.
        ends = _alt([*w.switch_verbs, *w.on_verbs, *w.off_verbs, *w.switch_object_ends])
        things = rf"(?:(?!\b(?:{ends})\b)[^.;!?])*"
        sets, states = _alt(w.switch_verbs), _alt([*w.on_words, *w.off_words])
        state_verbs = _alt([*w.on_verbs, *w.off_verbs])
        switch_goal = re.compile(
            rf"\b(?:(?:{sets})\s+(?P<s1>{states})\b(?P<t1>{things})"
            rf"|(?:{sets})\s+(?P<t2>{things}?)\s+(?P<s2>{states})\b"
            rf"|(?P<s3>{state_verbs})\b(?P<t3>{things}))", re.I)
        # a value ends at a comma, the sentence's end, a place it is said to go, or "and"/"then" before another
        # request's verb ("note down pay rent and email it to ...")
        stops = _alt([*w.value_stops, *screens.app_places]).replace("%", "%%")
        verbs = _alt(sorted(w.request_verbs, key=len, reverse=True)).replace("%", "%%")
        # a value after a colon is a list of its own ("make a note: door code 4471, wifi pinecone88"): commas
        # inside it are part of it (`_LISTED`)
        after_word = "".join(rf"(?<!\b{re.escape(a)})" for a in abbreviations)
        value_end = rf"{_LISTED}{after_word}\.(?:\s|$)|\b(?:%s{stops})\b|\s(?:{_alt(w.value_joins)})\s+(?=(?:{verbs})\b)"
        polite = rf"(?:(?:{_alt(w.politeness)}),?\s+)*"     # "hey can you delete ...", "pls, open ..."
        open_goal = re.compile(rf"^\s*{polite}(?:{_alt(w.open_verbs)})\s+(?:(?:{_alt(w.open_articles)})\s+)?(.+?)"
                               rf"(?:\s+(?:{_alt(w.open_app_words)}))?\s*[.!]?\s*$", re.I)
        back_goal = re.compile(rf"^\s*{polite}(?:{_alt(w.back_verbs)})\b(?!\s+(?:{_alt(w.back_not_before)})\b)", re.I)
        whole = lambda words: re.compile(rf"(?<!\w)(?:{_alt(words)})(?!\w)", re.I)   # noqa: E731
        remove_goal = re.compile(rf"^\s*{polite}(?:{_alt([*w.remove_verbs, *w.goal_remove_verbs])})(?!\w)", re.I)
        new_item = re.compile("|".join(rf"(?<!\w){re.escape(x)}(?!\w)" if x[0].isalnum() else re.escape(x)
                                       for x in w.new_item_words), re.I)
        return cls(words, screens, frozenset(w.request_verbs), switch_goal, value_end,
                   re.compile(rf"\b(?:{_alt(w.home_words)})\b", re.I), open_goal, back_goal,
                   re.compile(rf"\b(?:{_alt(screens.web_words)})\b", re.I), remove_goal,
                   whole([*w.new_item_words, *w.text_cues]), new_item,
                   whole(w.new_item_words),
                   whole([*w.switch_verbs, *w.on_verbs, *w.off_verbs, *w.on_words, *w.off_words,
                          *(a for aliases in screens.switch_aliases.values() for a in aliases)]))


@lru_cache(maxsize=None)
def goal_words(language: str | None = None) -> GoalWords:
    lexicon = load_lexicon(language)
    return GoalWords.build(lexicon.navigator, load_screens(), lexicon.polarity.abbreviations.words)


def typed(done: Sequence[str]) -> list[str]:
    """The texts typed so far, as written."""
    return [d[len('type_text "'):-1] for d in done if d.startswith('type_text "')]


def tapped(done: Sequence[str]) -> list[str]:
    """The labels tapped so far, lower case."""
    return [d[len('tap "'):-1].lower() for d in done if d.startswith('tap "')]


def word_set(text: str) -> set[str]:
    """The words of `text`, lower case (a label's or a goal's, compared whole)."""
    return set(_WORD.findall(text.lower()))


def _unquoted_words(goal: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(_QUOTED.sub(" ", goal))]


def says_switch(goal: str) -> bool:
    """Whether the goal may switch something on or off at all: it says a word of switching or of a state
    ("turn off my 6:30 alarm", "dnd on", "disable NFC"), or a switch's other name ("silence notifications")."""
    return goal_words().switch_word.search(goal) is not None


def switch_states(goal: str, screen: Screen) -> dict[str, bool]:
    """The state the goal asks for, per checkable element of `screen` it names: {"Airplane mode": True}. Whether
    it is already so is read off the hierarchy, not guessed by the model (it said `finish` beside an "off" tile)."""
    gw = goal_words()
    on = {*gw.words.on_words, *gw.words.on_verbs}
    asked: list[tuple[str, bool]] = []
    for m in gw.switch_goal.finditer(goal):
        asked.append((m["t1"] or m["t2"] or m["t3"] or "", (m["s1"] or m["s2"] or m["s3"]).lower() in on))
    out: dict[str, bool] = {}
    for e in screen.elements:
        for things, state in asked if e.checkable else ():
            if names_switch(things, e.label):
                out[e.label] = state
    return out


_NAME_WORD = re.compile(r"[\w'-]+")


def says_word(goal_words: set[str], word: str) -> bool:
    """Whether the goal says `word` (normalised): whole, at the start of a longer goal word ("dads" says "dad"),
    or by a goal word of four letters or more that starts it ("priya" says "priyanka", "pri" does not)."""
    return any(g == word or g.startswith(word) or word.startswith(g) and len(g) >= 4 for g in goal_words)


def name_words(text: str) -> set[str]:
    """The words of an item's name that tell it from others: three letters or more, not a number."""
    return {w for w in (normalise(x) for x in _NAME_WORD.findall(text)) if len(w) >= 3 and not w.isdigit()}


def name_fit(goal_words: set[str], text: str) -> int:
    """How well the goal's words fit `text`: two for each of its words the goal says whole, one for each it says
    the start of, or that starts a word of the goal: "priya" fits Priya Raman better than Priyanka Shah."""
    return sum(2 if w in goal_words else 1 if says_word(goal_words, w) else 0 for w in name_words(text))


def said_balance(goal: str, label: str) -> int:
    """The words and numbers of `label` the goal says, less those it does not: "my groceries note" says all of
    "Groceries" and leaves the "2" of "Groceries 2" unsaid; "groceries 2" says all of that one."""
    said = {normalise(w) for w in _NAME_WORD.findall(goal)}
    return sum(1 if says_word(said, normalise(w)) else -1 for w in _NAME_WORD.findall(label))


def asked_words(goal: str) -> set[str]:
    """The goal's words of three letters or more in the pieces that ask (`acting.read`): not those of "not Mike
    Rossi, he stays"."""
    from mobile_actions.acting import read

    return {w for p in read(goal) if p.asked for w in _NAME_WORD.findall(normalise(p.text)) if len(w) >= 3}


def names_switch(goal: str, label: str) -> bool:
    """Whether the goal names the switch labelled `label`: by one of its names (screens.json `switch_aliases`, else
    the label) or, for a switch that names its item by a time, by that time or that item's name
    (`_names_timed_switch`: "my gym alarm")."""
    names = goal_words().screens.switch_aliases.get(label.lower(), (label.lower(),))
    return any(re.search(rf"(?<!\w){re.escape(n)}(?!\w)", goal, re.I) for n in names) \
        or _names_timed_switch(goal, label)


def _clocks(text: str) -> set[tuple[int, int, str]]:
    """The times of day `text` says, as (hour on a 12-hour dial, minute, "am"/"pm"/"" when not said), read by
    the date reader ("6am", "half past seven", "18:30")."""
    from datetime import datetime

    from mobile_actions.decoding.datementions import mentions
    from mobile_actions.decoding.datewords import normalise as date_normalise

    out = set()
    for m in mentions(date_normalise(text), datetime(2000, 1, 1)):
        if m.kind == "time":
            half = (m.meridiem or "").replace(".", "").lower()[:2] or ("pm" if m.clock[0] > 12 else "")
            out.add((m.clock[0] % 12, m.clock[1], half))
    return out


def _names_timed_switch(things: str, label: str) -> bool:
    """Whether the words a goal switches ("my 6am alarm", "the gym alarm") name a switch that names its item by a
    time ("6:00 AM alarm Gym", an alarm's): they say its time (the same half of the day, where both say one) or
    a capitalised word of its name besides the time ("Gym")."""
    times = _clocks(label)
    if not times:
        return False
    said = _clocks(things)
    if any((h, m) == (h2, m2) and (not a or not b or a == b) for h, m, a in said for h2, m2, b in times):
        return True
    words = word_set(things)
    return any(w[:1].isupper() and w.lower() in words and len(w) > 2 for w in _WORD.findall(label))


def said_level(goal: str, slider: str) -> int | None:
    """The level (0-100) the goal asks of the slider named `slider` ("Brightness", "Media volume"): in the piece
    of the goal that names it (screens.json `slider_aliases`), a number up to 100 ("brightness to 30%", "30%
    brightness"), else 100 for a `level_max_words` phrase ("all the way up") and 0 for a `level_min_words` one
    ("mute media volume"); None when the goal names no such slider or says no level for it."""
    from mobile_actions.acting import read

    gw = goal_words()
    aliases = whole_words(gw.screens.slider_aliases.get(slider.lower(), (slider.lower(),)))
    for piece in read(goal):
        text = normalise(piece.text)
        if not aliases.search(text):
            continue
        number = next((int(n) for n in re.findall(r"(?<![\d:.])(\d{1,3})(?![\d:])", text) if int(n) <= 100), None)
        if number is not None:
            return number
        if whole_words(gw.words.level_max_words).search(text):
            return 100
        if whole_words(gw.words.level_min_words).search(text):
            return 0
    return None


@dataclass(frozen=True)
class Said:
    """A field's value as the goal writes it, and where its cue starts (the earlier cue claims a shared span)."""
    value: str
    cue_at: int
    at: int


def _cue_pattern(cue: str) -> str:
    """A cue as a pattern: its words whole; "…" in it stands for up to five words, as many as can be ("rename …
    to": "rename my groceries note to"; "title of … to": "title of my Books to read note to")."""
    parts = [re.escape(p.strip()) for p in cue.split("…")]
    out = parts[0]
    for part in parts[1:]:   # a mark after the gap sticks to the word before it ("add … :": "add one more:")
        out += (r"(?:\s+[^\s:]+){0,5}\s*" if part[:1] in ":-" else r"(?:\s+\S+){0,5}\s+") + part
    return out


_LISTED = "[,;]|"   # the part of a value's end that a colon after the cue lifts


def _value_after(goal: str, cues: Sequence[str], stops: Sequence[str], listed: bool = False,
                 leads: bool = True) -> Said | None:
    """The words the goal gives after the first of `cues` it says: a quoted text whole, else up to one of
    `stops` (patterns), a comma (unless a colon or a dash follows the cue, or the value is `listed`: a free
    text's, "with passport, charger, sunscreen"), the sentence's end, a place it is said to go or "and"/"then"
    before another request's verb (None if none). With `leads`, a value lead ("rename it to X") is not the value's."""
    pattern = goal_words().value_end % "".join(f"{s}|" for s in stops)
    value_end, listed_end = re.compile(pattern, re.I), re.compile(pattern.replace(_LISTED, "", 1), re.I)
    lead = rf"(?:(?:{_alt(goal_words().words.value_leads)})\s+)?" if leads else ""
    for cue in cues:
        # after a colon or a dash the value is verbatim ("add one more: is it ok to ..."); else "to"/"as" lead it
        tail = r"\s*" if cue.rstrip()[-1:] in ":-" else rf"(?:\s*[:\-\u2013\u2014]+\s*|\s*{lead})"
        m = re.search(rf"(?<![^\W_]){_cue_pattern(cue)}(?![^\W_]){tail}", goal, re.I)
        if not m:
            continue
        rest = goal[m.end():]
        quoted = re.match(r"'([^']+)'|\"([^\"]+)\"|“([^”]+)”|‘([^’]+)’", rest)
        if quoted:
            return Said(next(g for g in quoted.groups() if g), m.start(), m.end())
        marked = re.search(r"[:\-\u2013\u2014]", m.group(0))   # "note - a, b": the whole list
        end = (listed_end if marked or listed else value_end).search(rest)
        value = (rest[:end.start()] if end else rest).strip().strip("'\"“”‘’").rstrip(",;")
        value = _courtesy_trimmed(value.strip())
        if value:
            return Said(value, m.start(), m.end() + rest.index(value))
    return None


def field_value(goal: str, field_name: str) -> str:
    """What `goal` gives after a field's name, as a form's value is read ("put the location as Maple Street
    Library" -> "Maple Street Library"; "the description 'Use the new numbers'" -> the quoted text); '' if none."""
    said = _value_after(goal, (field_name,), ())
    return said.value if said else ""


_PHONE_NUMBER = re.compile(r"\+?\d[\d\s().-]{5,}\d")


def whole_value(value: str, label: str = "") -> bool:
    """An email address, a phone number, or the value of a field whose value has a form of its own (`label`:
    `screens.json` ``field_shapes``, an event's date, time or length): a value a field holds whole, never one
    added to what it holds ("45" typed after the "60" a form starts with is 6045)."""
    return bool(_EMAIL.fullmatch(value) or _PHONE_NUMBER.fullmatch(value)
                or _field_key(label) in goal_words().screens.field_shapes)


def confirm_button(label: str) -> list[str]:
    """The words of `label` that make its button one whose tap sends, stores or destroys something (the lexicon's
    `navigator.confirm_buttons`): a navigator tap on it needs confirmation, and a form is not left that way while
    a field lacks its value."""
    return [m.group(0).lower() for m in _confirm_words(load_lexicon().navigator.confirm_buttons).finditer(label)]


@lru_cache(maxsize=None)
def _confirm_words(words: tuple[str, ...]) -> re.Pattern:
    return re.compile(r"(?<![\w'])(?:" + alternation(words) + r")(?![\w'])", re.I)


def quoted(name: str) -> str:
    """`name` in the quotes a goal names an item with (`_QUOTED`): single ones, or double ones when it holds an
    apostrophe ("Amara's party" in single quotes would read as the name 'Amara')."""
    return f'"{name}"' if "'" in name else f"'{name}'"


def _only_when(value: str) -> bool:
    """Whether `value` is a date or time and nothing else ("3:40pm", "friday at 7"), as the date reader reads it."""
    from mobile_actions.decoding.datetimes import blank_expressions

    rest = blank_expressions(value)
    return rest != value and not re.search(r"[^\W_]", rest)


def _field_key(label: str) -> str:
    """A field's label as the screens' data names it: lower case, without the " (2)" that makes it unique."""
    return re.sub(r"\s*\(\d+\)$", "", label.lower())


def _courtesy_trimmed(value: str) -> str:
    """`value` without the words it ends on that no value ends on ("Harbour Cafe thx", "555 0142 asap"): the
    lexicon's `values.joins`, the words a copied value ends before, which the caller's grounding reads too."""
    joins = load_lexicon().values.joins
    words = value.split()
    while words and normalise(words[-1]).strip(".!?") in joins:
        words.pop()
    return " ".join(words)


_HELD = "\x00"   # stands for the words of what a field already holds, where the goal names the item by them


def _held_masked(goal: str, held: Sequence[str]) -> str:
    """The goal with what the fields already hold blanked out where it first says it, at the same positions: those
    words name the item, so no cue reads across them ("rename the Books to read note to packing list": not "read
    note to packing list"). An item is named once, first: a later "Physio" in "open the event 'physio' and it's
    at Eastside Physio" is part of a value. Short texts (an hour, "AM") are left: they say too little to name
    anything."""
    for text in sorted({t.strip() for t in held if len(t.strip()) >= 3 and re.search(r"[^\W\d_]", t)}, key=len,
                       reverse=True):
        goal = re.sub(rf"(?<![^\W_]){re.escape(text)}(?![^\W_])", lambda m: _HELD * len(m.group(0)), goal,
                      count=1, flags=re.I)
    return goal


def form_values(goal: str, screen: Screen) -> dict[str, str]:
    """What the goal asks each field of this screen to hold: {"Subject": "Invoice", "To": "a@b.com"}. A field
    gets the words after its cue ("about Invoice": Subject) up to the next field's cue; an address field the
    first email address written; the browser's a web address, or a search said to go to the web."""
    sw = goal_words().screens
    out: dict[str, str] = {}
    spans: dict[str, Said] = {}
    fields = [e for e in screen.elements if e.kind == "field"]
    named = _held_masked(goal, [e.text for e in fields])
    reached: list[Said] = []     # every cue the goal says, whether its value is kept or not
    durations = duration_values(goal, [e.label for e in fields])
    for e in fields:
        key = _field_key(e.label)
        if key in sw.duration_fields:
            if e.label in durations:
                out[e.label] = durations[e.label]
            continue
        if key in sw.hour_fields or key in sw.minute_fields:
            said = said_time(goal)
            # a time said without its minutes ("at 6") is on the hour: the minute field takes 00
            value = (said.hour if key in sw.hour_fields else said.minute or "00") if said else ""
            if value:
                out[e.label] = value
            continue
        if key in sw.message_fields and (message := said_message(goal, screen)):
            out[e.label] = message
            continue
        if key in sw.address_fields:
            m = _EMAIL.search(goal)
            if m:
                out[e.label] = m.group(0)
            continue
        if key == sw.web_address_field:
            url = _URL.search(goal)
            if url:
                out[e.label] = url.group(0)
            if url or not goal_words().web.search(goal):
                continue
        # another field's cue ends this value, with the joining word and determiner before it ("555-7468 and
        # the email ...")
        lead_in = (rf"(?:(?:{_alt(goal_words().words.value_joins)})\s+)?"
                   rf"(?:(?:{_alt(load_lexicon().polarity.determiners.words)})\s+)?")
        stops = sorted({lead_in + _cue_pattern(c) for f in fields if f is not e
                        for c in sw.field_cues.get(_field_key(f.label), ())}, key=len, reverse=True)
        cues, listed = sw.field_cues.get(key, ()), key in sw.text_fields
        said = _value_after(goal, cues, stops, listed)
        if said is None or said.value.lower() != e.text.strip().lower():   # a field holding its value keeps it
            said = _value_after(named, cues, stops, listed)
        shape = sw.field_shapes.get(key)
        while said is not None and shape is not None and not shape.fullmatch(said.value):
            # "duration 45 mins, duration 45": a field with a form of its own takes the first value that has it
            later = _value_after(goal[said.at:], cues, stops, listed)
            said = later and Said(later.value, later.cue_at + said.at, later.at + said.at)
        if said is None and shape is not None:
            continue   # "tea time at the Ritz": no time the Time field takes
        if said is not None and shape is None and _only_when(said.value):
            continue   # "on the 12th at 3:40pm": the time the cue "at" reaches is no place
        if listed and e.text.strip() and not (said and said.value.lower() in e.text.lower()):
            # a saved note: what the goal adds to it ("add one more: ...") comes first
            added = _value_after(named, sw.append_cues, stops, listed, leads=False)
            said = added if added is not None and _HELD not in added.value else said
        if said is not None:
            reached.append(said)
        if said is None or _HELD in said.value or any(
                f is not e and f.text.strip().lower() == said.value.lower() for f in fields):
            continue   # "rename my note 'stuff' to ...": what another field already holds names the item
        # one span of the goal is one field's value: "rename my groceries note to Party plan" is the title's
        # ("rename … to"), not the note's ("note ... to Party plan"); the cue said first claims it
        rival = next((label for label, other in spans.items() if other.at == said.at), None)
        if rival is not None and spans[rival].cue_at <= said.cue_at:
            continue
        if rival is not None:
            del spans[rival], out[rival]
        spans[e.label], out[e.label] = said, said.value
    # a span inside another field's cue ("rename my note 'todo' to ...": the gap of "rename … to") names the
    # item that cue changes, not a value of its own
    for label, said in list(spans.items()):
        if any(other.cue_at < said.at < other.at for other in reached if other is not said):
            del out[label]
    _split_title(goal, fields, spans, out)
    return out


_TITLE_END = re.compile(r"\s+[-\u2013\u2014]+\s+|:\s+")


def _split_title(goal: str, fields: Sequence, spans: dict[str, Said], out: dict[str, str]) -> None:
    """A name field's value (`screens.json` ``title_fields``) ends at a dash or a colon, and what follows, to the
    end of its sentence, is the value of the form's text field (``text_fields``) when the goal gives it none:
    "note titled Packing list - passport, charger, adapter plug" is the title "Packing list" and that list."""
    sw = goal_words().screens
    text_field = next((e.label for e in fields if _field_key(e.label) in sw.text_fields), None)
    for label, said in spans.items():
        cut = _TITLE_END.search(said.value) if _field_key(label) in sw.title_fields and label in out else None
        if cut is None:
            continue
        out[label] = said.value[:cut.start()].strip()
        rest = goal[said.at + cut.end():]
        end = re.search(r"[.!?;](?:\s|$)|\n", rest)
        body = _courtesy_trimmed(rest[:end.start() if end else len(rest)].strip())
        if text_field is not None and text_field not in out and body:
            out[text_field] = body


def said_message(goal: str, screen: Screen) -> str:
    """The message the goal passes on, as the request is read for the gate (`acting.read`: what follows a
    speech opener, "tell diego the key is under the mat"), typed whole: without the words before it that name
    its recipient on this screen ("Ramírez" of "tell Diego Ramírez ...", the To field or the conversation's
    title holding "Diego Ramírez"), the marks and content markers that introduce it ("sms to 0791 : ...",
    "... know that ...") and the courtesy the request ends on; a quoted message is the quote. "" when the goal passes
    on none. The model typed "sms" for "send sms to 07912345678 : wait me at the gate"."""
    from mobile_actions.acting import read

    spans = [p.message for p in read(goal) if p.message and p.message[1] > p.message[0]]
    if not spans:
        return ""
    a, b = spans[0]
    polarity = load_lexicon().polarity
    mark = re.match(r"[?!]*", goal[b:]).group(0)
    text, last = goal[a:b], not goal[b + len(mark):].strip()
    fields = goal_words().screens.message_fields
    names = {normalise(w) for e in screen.elements
             if e.kind == "field" and _field_key(e.label) not in fields or e.kind == "text" and _names_someone(e.label)
             for w in _WORD.findall(e.text if e.kind == "field" else e.label)}
    markers = polarity.content_markers
    while True:
        text = text.lstrip(" \t:-\u2013\u2014,")
        first = _WORD.match(text)
        marker = markers.pattern.match(normalise(text))
        if first and normalise(first.group(0)) in names:
            text = text[first.end():]
        elif marker:
            text = text[marker.end():]
        else:
            break
    text = text.strip()
    medium = re.search(rf"\s(?:{_alt(goal_words().words.value_stops)})$", text, re.I)
    text = text[:medium.start()] if medium else text     # "tell chloe happy birthday by text"
    quoted = _QUOTED.fullmatch(text)
    if quoted:
        return quoted.group(0)[1:-1].strip()
    # the mark after it is the message's when it exclaims or asks itself ("did you get home ok?"), not when the
    # person asks ("could you let ana know that I landed?"); a courtesy to the assistant closes the request
    # ("text mum im late pls"), not a sentence inside it
    if "!" in mark or mark and polarity.question_openers.pattern.match(normalise(text)):
        return text + mark
    return _courtesy_trimmed(text) if last else text


def _names_someone(label: str) -> bool:
    """A screen text written as a name ("Diego Ramírez", "Mum"): every word capitalised, or digits (a number)."""
    words = label.split()
    return bool(words) and all(w[:1].isupper() or w.lstrip("+").isdigit() for w in words)


def duration_values(goal: str, labels: Sequence[str]) -> dict[str, str]:
    """What a duration picker's fields (`screens.json` ``duration_fields``) take for the length of time the goal
    says, read as the caller's grounding reads it (`decoding.numbers`: "half an hour", "forty five minutes",
    "1h 20m"): the whole split over the fields among `labels`, largest unit first ("90 seconds": Minutes 1,
    Seconds 30). A field whose share is 0 is given nothing (an empty field counts 0), and so is every field
    when the goal says no length of time, or a time of day only ("6:30" is no timer's length)."""
    from mobile_actions.decoding.numbers import CLOCK_RE, read

    length = next((q.value for q in read(CLOCK_RE.sub(" ", goal)).wholes if q.kind == "time"), None)
    return split_duration(int(length), labels) if length is not None and length == int(length) else {}


def split_duration(seconds: int, labels: Sequence[str]) -> dict[str, str]:
    """`seconds` over the duration picker's fields among `labels`, largest unit first, fields left at 0 out
    (`duration_values`; the recorder types a timer's demonstration with it); {} when they cannot hold it."""
    units = goal_words().screens.duration_fields
    fields = sorted((label for label in labels if _field_key(label) in units),
                    key=lambda label: -units[_field_key(label)])
    if not fields or seconds <= 0:
        return {}
    left, out = seconds, {}
    for label in fields:
        n, left = divmod(left, units[_field_key(label)])
        if n:
            out[label] = str(n)
    return out if left == 0 else {}


_CLOCK_DIGITS = re.compile(r"(?<!\d)(\d{1,2})(?:[:.](\d{2}))?(?!\d)")


@dataclass(frozen=True)
class SaidTime:
    """The time a goal says, as a 12-hour picker takes it: the hour and minutes as written where the goal writes
    them in digits (spans of the goal, as a navigator types them; "" for minutes not written), else the date
    reader's clock ("quarter to seven": 6 and 45) and the half of the day the goal says ("am",
    "pm", or "" when it says none: "6:30"). Read by `decoding.datetimes`: the meridiem, else the part of the day
    said with it ("tonight", "in the evening": the lexicon's `part_hours`)."""
    hour: str
    minute: str
    half: str


@lru_cache(maxsize=256)
def said_time(goal: str) -> SaidTime | None:
    """The goal's time (`SaidTime`): the first one, or the last of a goal that changes something ("move my 6:45
    alarm to 7:15"); None when it says none or an hour past 12 (the picker takes 1-12)."""
    from datetime import datetime

    from mobile_actions.decoding.datementions import Mention, mentions
    from mobile_actions.decoding.datewords import normalise as date_normalise

    text = date_normalise(goal)     # what `mentions` reads: "6:05 PM" as "6:05 pm", "half past seven" as "half past 7"
    # "an alarm for 6 30": for a picker, a number after "for" is a time, as after "at"
    text = re.sub(rf"\b(?:{_alt(goal_words().words.picker_time_words)})(?=\s+\d)", "at", text)
    found = mentions(text, datetime(2000, 1, 1))
    said: list[tuple[Mention, str, str]] = []
    for m in found:
        if m.kind != "time":
            continue
        digits = _CLOCK_DIGITS.search(text[m.start:m.end])
        if digits and (int(digits[1]) % 12, int(digits[2] or 0)) == (m.clock[0] % 12, m.clock[1]):
            said.append((m, digits[1], digits[2] or ""))     # the hour and minutes as written
        else:
            # a time the date reader reads from words ("noon", "quarter to 8"): its clock, on a 12-hour picker
            said.append((m, str(m.clock[0] % 12 or 12), f"{m.clock[1]:02d}" if m.clock[1] else ""))
    if not said:
        return None
    m, hour, minute = said[-1] if edits(goal) else said[0]
    if not 1 <= int(hour) <= 12:
        return None
    part = m.part or next((d.part for d in found if d.kind == "day" and d.part), None)
    half = (m.meridiem or "").replace(".", "").lower()[:2] or (
        ("pm" if load_lexicon().datetimes.part_hours[part] >= 12 else "am") if part else "")
    return SaidTime(hour, minute, half)


def untyped_text(goal: str, done: Sequence[str]) -> str:
    """Text the goal says to type ("a note saying X", "google X") that no `type_text` so far has typed ("" when
    none): a goal is not finished before it is typed."""
    said = _value_after(goal, goal_words().words.text_cues, ())
    value = said.value if said else ""
    done_typed = [t.lower() for t in typed(done)]
    return value if value and not any(value.lower() in t for t in done_typed) else ""


def goal_buttons(goal: str, screen: Screen, done: Sequence[str]) -> list[str]:
    """The buttons on this screen that do what the goal's final verb asks and are not done yet: for each final
    verb in the goal that no tap in `done` has used, the buttons starting with it whose words are all the
    goal's, the most specific ones ("Copy address" before "Copy"). A button is a verb and at most one more
    word: longer labels are content (a saved note reading "send the report"), as are quoted words."""
    words = set(_unquoted_words(goal))
    done_taps = tapped(done)
    out: list[str] = []
    for verb in sorted(words & set(goal_words().words.final_verbs)):
        if any(t.split()[:1] == [verb] for t in done_taps):
            continue
        fits = [(len(lw), e.label) for e in screen.actionable
                if (lw := _WORD.findall(e.label.lower())) and lw[0] == verb and len(lw) <= 2 and set(lw) <= words]
        best = max((n for n, _ in fits), default=0)
        out += [label for n, label in fits if n == best]
    return out


def on_home_screen(screen: Screen) -> bool:
    """Any launcher is home."""
    return goal_words().screens.home_package in screen.package


def made_entry_word(goal: str) -> str | None:
    """The entry word of the runner's hand-over of an entry a call just made (the lexicon's
    `navigator.made_entry_goal`: "event" in "open the event 'Dentist' and ..."), None for any other goal."""
    m = _made_entry_head(load_lexicon().navigator.made_entry_goal[0]).match(goal)
    return m["entry"].lower() if m else None


@lru_cache(maxsize=4)
def _made_entry_head(template: str) -> re.Pattern:
    """The part of the made-entry template before its fields, any entry word and a quoted name in their places."""
    head = re.escape(template.split("{fields}")[0]).replace(re.escape("{entry}"), r"(?P<entry>\w+)").replace(
        re.escape("{name}"), r"(?:'[^']+'|\"[^\"]+\")")
    return re.compile(head, re.I)


def entry_app(goal: str, screen: Screen) -> str | None:
    """On the home screen, for the hand-over of an entry a call just made (`made_entry_word`), the icon of the
    app that keeps such entries: its label is the entry's word or its plural ("Notes" for a note), or a word
    the lexicon gives the entry's word as a name for ("Calendar" for an event: `clauses.synonyms`). None
    elsewhere or when no icon is. The entry's details often say another app's word ("note to self: ask about
    the flea meds"): the model opened Notes and made a note of them."""
    entry = made_entry_word(goal)
    if entry is None or not on_home_screen(screen):
        return None
    words = load_lexicon().clauses
    names = {entry, entry + words.plural_suffix} | {k for k, v in words.synonyms.items() if entry in v}
    return next((e.label for e in screen.actionable if e.label.lower() in names), None)


def app_to_open(goal: str, screen: Screen) -> str | None:
    """The home screen's icon for a goal that only opens that app ("open Notes", "launch the Chrome app"), or None."""
    m = goal_words().open_goal.match(goal)
    if not m or not on_home_screen(screen):
        return None
    return next((e.label for e in screen.actionable if e.label.lower() == m.group(1).lower()), None)


def opens_elsewhere(goal: str, screen: Screen, done: Sequence[str]) -> bool:
    """A goal that only opens an app by its name ("open my contacts"; a name is a word or two, not "Contacts from
    recent apps"), on a screen other than the home screen, before any step: the app is reached from home."""
    m = goal_words().open_goal.match(goal)
    return bool(m) and len(m.group(1).split()) <= 2 and not on_home_screen(screen) and not done


def app_opened(goal: str, screen: Screen, done: Sequence[str]) -> bool:
    """A goal that only opens an app ("open Chrome") whose icon has been tapped, and the home screen left: the
    app is open and nothing is left of the goal."""
    m = goal_words().open_goal.match(goal)
    return bool(m) and not on_home_screen(screen) and m.group(1).lower() in tapped(done)


def says_back(goal: str) -> bool:
    """The goal's action is the Back key ("go back", "back out of this screen"), not a way home."""
    return bool(goal_words().back_goal.search(goal))


def removes_only(goal: str) -> bool:
    """The goal starts by removing something, past what it only tells ("trip to porto is cancelled 😢 delete
    that packing list"), and asks for nothing new ("delete every note"; not "delete the draft and add a new one",
    "clear the field and type X", or "start a contact ... but discard it")."""
    gw = goal_words()
    removes = (*gw.words.remove_verbs, *gw.words.goal_remove_verbs)
    return not gw.adds_something.search(goal) and _first_verb(goal, (*gw.words.request_verbs, *removes)) in removes


def _first_verb(goal: str, verbs: Sequence[str]) -> str:
    """The first of `verbs` in the first piece of the goal that asks with one (`acting.read`), past what the goal
    only tells ("theres a note with the door code in it, rename it to Codes"), else in the first that states one
    ("i need to delete the old note"); "" when none."""
    from mobile_actions.acting import Polarity, read

    pattern, pieces = whole_words(verbs), read(goal)
    for polarity in (Polarity.ASKED, Polarity.STATED):
        for piece in pieces:
            first = pattern.search(normalise(piece.text)) if piece.polarity is polarity else None
            if first is not None:
                return first.group(0)
    return ""


def named_apps(goal: str) -> list[tuple[str, tuple[str, ...]]]:
    """The apps the goal names by name ("whatsapp jen that ..."), each with its packages (`screens.json`'s
    ``app_packages``), in the order of that table. A value the goal writes whole is no app's name: the outlook
    of "update it to wei.chen@outlook.com" names an address, not Outlook."""
    text = normalise(_URL.sub(" ", _EMAIL.sub(" ", goal)))
    return [(name, packages) for name, packages in goal_words().screens.app_packages.items()
            if whole_words((name,)).search(text)]


def removes_every(goal: str) -> bool:
    """The goal only removes, and removes every item of its kind ("delete every note", "clear all my alarms";
    not "delete all the 6:30 alarms", which names its items by a number)."""
    return (removes_only(goal) and not re.search(r"\d", goal)
            and whole_words(goal_words().words.every_words).search(normalise(goal)) is not None)


def edits(goal: str) -> bool:
    """The goal's first verb changes something that exists ("can you change mike torres number to ...", "move
    the dentist to 11"; not "email omar with the subject Project update")."""
    w = goal_words().words
    first = _first_verb(goal, (*w.request_verbs, *w.edit_verbs))
    return first in w.edit_verbs


def edits_only(goal: str) -> bool:
    """The goal changes something that exists and asks for nothing new (not "change the title or make a new
    note"): it edits, or it switches something off ("turn off my 5:30 alarm": no new alarm is switched off)."""
    return (edits(goal) or switches_off(goal)) and not goal_words().names_new.search(goal)


def switches_off(goal: str) -> bool:
    """The goal switches something off ("turn off my 5:30 alarm", "disable the gym alarm"), as `switch_states`
    reads switching, and asks nothing else with a verb of its own (not "set an alarm for 7 and turn off
    bluetooth")."""
    gw = goal_words()
    on = {*gw.words.on_words, *gw.words.on_verbs}
    switched = [m for m in gw.switch_goal.finditer(goal)]
    verbs = whole_words(gw.words.request_verbs).finditer(normalise(goal))
    return any((m["s1"] or m["s2"] or m["s3"]).lower() not in on for m in switched) \
        and all(any(m.start() <= v.start() < m.end() for m in switched) for v in verbs)


def makes_new(label: str) -> bool:
    """An element whose label makes a new item ("New note", "Add contact", "Compose", "+")."""
    return bool(goal_words().new_item.search(label))


def says_remove(goal: str) -> bool:
    """The goal asks to remove something: a verb that removes, outside a part that declines it or takes it
    back, as the gate reads them (`acting.read`: "turn off my 7:10 alarm" says none, "switch off my gym alarm,
    dont delete it tho" declines its "delete")."""
    from mobile_actions.acting import Polarity, read

    w = goal_words().words
    verbs = whole_words((*w.remove_verbs, *w.goal_remove_verbs))
    return any(p.polarity not in (Polarity.NEGATED, Polarity.CANCELLED) and verbs.search(normalise(p.text))
               for p in read(goal))


def removes(label: str) -> bool:
    """An element whose label starts with a verb that removes ("Delete 7:10 AM alarm", "Remove", "Clear all")."""
    words = goal_words().words.remove_verbs
    text = normalise(label)
    return any(text == w or text.startswith(w + " ") for w in words)


def says_home(goal: str) -> bool:
    """The goal ends on the home screen ("... then go to the home screen")."""
    return bool(goal_words().home_goal.search(goal))


def last_step_done(goal: str, done: Sequence[str]) -> bool:
    """The goal ends on a silent verb ("copy its name") and a button of that verb has been tapped: nothing is
    left but to finish. A copy leaves the screen as it was, so a navigator that judges its progress by the
    screen does not see it happened and goes on. A send or a save changes the screen (and an app may ask to
    confirm it), so finishing after those stays the navigator's call."""
    gw = goal_words()
    verbs = [w for w in _unquoted_words(goal) if w in gw.request_verbs]
    if not verbs or verbs[-1] not in gw.words.silent_verbs:
        return False
    return any(t.split()[:1] == [verbs[-1]] for t in tapped(done))
