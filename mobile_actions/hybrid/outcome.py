"""Whether the phone shows a GUI goal met: the check behind a navigator's COMPLETE.

Why: COMPLETE is the model's word, and a small navigator says it where nothing happened ("delete all my
notes": COMPLETE at once, the notes all still there). So a GUI task is reported *done* only when the phone
changed between the task's start and its end in a way that fits the goal; a COMPLETE without such a change is
*unknown*, and *not_done* when the phone plainly shows the goal unmet (it names a part of the phone that did
not change).

The evidence (`PhoneView`): the phone's state where it can be read (the virtual phone,
`DeviceSession.state()`), which is then the only witness, as it holds what a screen merely shows; otherwise
the screen's accessibility tree (`uiautomator dump`, read as the text navigator reads it), whose elements
appeared, disappeared or switched. A change *fits* the goal when a word of the goal names the field that
changed or is in what changed ("write a note saying buy milk": notes gained "buy milk"; "turn on Bluetooth":
bluetooth went from false to true). A goal whose verb adds or removes something ("write", "delete") needs that
kind of change to the part of the phone it names (naming none, to something the phone keeps): opening the
Notes app is not deleting the notes, and a web search for "hello" is not copying it to the clipboard. Something
added that the phone keeps (an email sent, an event, a note) fits only a goal that names that part of the
phone ("order me an uber": an email holding its words is not it); what the phone records as it is used (pages
visited, searches, the clipboard: `trail` in the words file) needs no naming. A clock time the goal writes
("6:45", "7:30 pm") must be in what was added, a message passed on ("text Ana I'm running late") must be
carried by what was added, most of its words at least, and a goal that removes all of something ("delete every
note": `whole` in the words file) is met only when that part of the phone is empty. A call is also judged by what
the person said of it (`judge(..., strict=True)`): "update Tom's number" is not met by a second Tom (`edits`),
nor "for 45 minutes" by an hour-long event.

The check knows no app: the words are data (`goal_words.json`, `decoding.coverage.SYNONYMS`), the fields are
the state's own (`android.phone.state.VIEW_FIELDS` says which ones only describe the screen).
"""
from __future__ import annotations

import json
import re
from collections import Counter
from datetime import datetime
from dataclasses import asdict, dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Sequence

from mobile_actions.android.phone.state import (ENTRY_FIELDS, LENGTH_FIELDS, LOG_FIELDS, VIEW_FIELDS, WEEKDAYS,
                                                WHEN_FIELDS, PhoneState)
from mobile_actions.decoding.coverage import FIELD_LABEL_RE, QUOTED_RE
from mobile_actions.decoding.days import said as days_said

WORDS_FILE = Path(__file__).with_name("goal_words.json")
# the parts of a phone a goal may name, as the virtual phone keeps them (a real phone has the same parts)
PHONE_PARTS = tuple(f.name for f in fields(PhoneState)
                    if f.name not in (*LOG_FIELDS, *VIEW_FIELDS, "files", "serial", "model", "timezone"))
_JOINED = re.compile(r"(?<=[^\W_])[-'’](?=[^\W_])")     # "Wi-Fi" -> "wifi", "don't" -> "dont"
_TOKEN = re.compile(r"[^\W\d_]+|\d+")
_SUFFIX = re.compile(r" \(\d+\)$")                      # "Note (2)": navigator.screen makes labels unique
SHOWN = 3                                               # changes quoted in a verdict's reason
ADDS, REMOVES, EDITS = "adds", "removes", "edits"


@dataclass(frozen=True)
class PhoneView:
    """The phone at one moment, as far as it can be read: its state (None: a real phone) and the labelled
    elements on its screen as (label, switched on?) pairs (None: the screen could not be read). Input fields
    are left out: text typed into a field is not yet kept anywhere."""

    state: dict[str, Any] | None
    package: str = ""
    screen: tuple[tuple[str, bool | None], ...] | None = None

    @classmethod
    def read(cls, state: dict[str, Any] | None, dump: str | None) -> "PhoneView":
        """From `DeviceSession.state()` and a ``uiautomator dump`` (either may be None)."""
        from mobile_actions.errors import JSONTextError, ScreenError
        from mobile_actions.jsontext import check_depth
        from mobile_actions.navigator.screen import parse_hierarchy

        kept = {k: v for k, v in state.items() if k not in LOG_FIELDS} if isinstance(state, dict) else None
        try:
            check_depth(kept)           # device output: a state nested without end is no state
        except JSONTextError:
            kept = None
        try:
            shown = parse_hierarchy(dump) if dump is not None else None
        except ScreenError:
            shown = None
        if shown is None:
            return cls(kept)
        screen = tuple((_SUFFIX.sub("", e.label), e.checked if e.checkable else None)
                       for e in shown.elements if e.kind != "field")
        return cls(kept, shown.package, screen)

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "package": self.package,
                "screen": None if self.screen is None else [list(e) for e in self.screen]}

    @classmethod
    def from_json(cls, data: Any) -> "PhoneView":
        """A view recorded in a trace; ValueError when the record is not one (a run folder can be edited)."""
        from mobile_actions.jsontext import check_depth

        if not isinstance(data, dict):
            raise ValueError("not an object")
        check_depth(data)               # a JSONTextError (a ValueError) when nested without end
        state, package, screen = data.get("state"), data.get("package", ""), data.get("screen")
        if state is not None and not isinstance(state, dict) or not isinstance(package, str):
            raise ValueError("'state' must be an object and 'package' a string")
        if screen is not None:
            if not isinstance(screen, list) or not all(
                    isinstance(e, list) and len(e) == 2 and isinstance(e[0], str) and e[1] in (True, False, None)
                    for e in screen):
                raise ValueError("'screen' must be a list of [label, on] pairs")
            screen = tuple((e[0], e[1]) for e in screen)
        return cls(state, package, screen)


@dataclass(frozen=True)
class Change:
    """One difference between two views: in a state field (``where``) or on the screen (``where`` None)."""

    where: str | None
    kind: str      # added | removed | changed (a switch, a number) | opened (an app came to the front) |
                   # hidden (not shown, as another app is in front)
    text: str      # what was added or removed, or "old -> new"
    kept: bool     # in something the phone keeps (a state field that does not only describe the screen)
    fields: tuple[tuple[str, str], ...] = ()   # an entry added or removed: each of its fields and its text

    def describe(self) -> str:
        text = self.text if len(self.text) <= 80 else self.text[:77] + "..."
        return f"{self.where or 'screen'} {self.kind} {text!r}"


@dataclass(frozen=True)
class Verdict:
    status: str                      # done | not_done | unknown
    reason: str
    evidence: tuple[str, ...] = ()   # the changes it saw (`Change.describe`), the fitting ones first

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class _Goal:
    kinds: frozenset[str]      # ADDS / REMOVES: what its verbs ask of the phone
    keys: frozenset[str]       # its words, with their other names
    named: tuple[str, ...]     # the state fields its words name
    content: frozenset[str]    # the keys of its words that name no field ("buy milk" in "write a note saying buy milk")
    times: tuple[TimeReadings, ...] = ()   # each time of day it says
    whole: bool = False        # it removes all of what it names ("delete every note")
    looks: bool = False        # its first verb looks something up or copies it: pages, searches, the clipboard are evidence
    text: str = ""             # the step as written, for a verdict's reason
    amounts: frozenset[int] = frozenset()   # the numbers it says, in each unit they may be kept in ("12 min": 12, 720)
    measures: tuple[frozenset[int], ...] = ()  # each quantity it says, in those units ("for 45 minutes": 45, 2700)
    quoted: tuple[str, ...] = ()               # what it writes in quotes, lower case
    labelled: tuple[tuple[str, str], ...] = ()  # (an entry's field it names, the first word it gives after it)
    strict: bool = False                       # a request judged for what a call made: details count
    days: tuple[frozenset[int], ...] = ()      # the days of the week it repeats on, each way it says them (0 Monday)
    message: frozenset[str] = frozenset()      # the keys of the message it passes on ("text Ana I'm running late")


@lru_cache(maxsize=64)
def field_words(parts: frozenset[str]) -> re.Pattern:
    """The words that name a field of the entries of `parts` in their forms: each entry field's cues in the
    screens' data (`screens.json` ``field_cues``, keyed by the form's label, which is the field's name)."""
    from mobile_actions.lexicon import alternation
    from mobile_actions.navigator.goals import goal_words

    cues = goal_words().screens.field_cues
    words = sorted({c for p in parts for f in ENTRY_FIELDS.get(p, ()) for c in cues.get(f, ()) if "…" not in c},
                   key=len, reverse=True)
    return re.compile(rf"(?<!\w)(?:{alternation(words)})(?!\w)" if words else r"(?!)", re.I)


LABEL_REACH = 6   # words after a field's name in which a request gives its value ("the description 'Use the new
#                   numbers'"), for a field no argument of the tool takes


class GoalCheck:
    """Judges a navigator's COMPLETE: `judge(goal, before, after)` -> `Verdict`. One instance serves many tasks."""

    def __init__(self, words_file: str | Path = WORDS_FILE, view_fields: Sequence[str] = VIEW_FIELDS) -> None:
        from mobile_actions.decoding.coverage import SYNONYMS

        data = json.loads(Path(words_file).read_text(encoding="utf-8"))
        self.view_fields = frozenset(view_fields)
        self.ignore = frozenset(data["ignore"])
        self.trail = frozenset(data.get("trail", ()))
        self.looks = frozenset(data.get("looks", ()))
        self.whole = frozenset(data.get("whole", ()))
        self.levels = {re.compile(rf"(?<!\w){re.escape(w)}(?!\w)", re.I): int(v)
                       for w, v in data.get("levels", {}).items()}
        self.verbs = {ADDS: frozenset(data["adds"]), REMOVES: frozenset(data["removes"]),
                      EDITS: frozenset(data["edits"])}
        from mobile_actions import lexicon as lexicons

        lex = lexicons.load()            # the lexicon's ways of asking, request verbs and switch words (`actionable`)
        nav, pol = lex.navigator, lex.polarity
        self._request_verbs = frozenset(phrase.split()[0] for phrase in (
            *nav.request_verbs, *nav.switch_verbs, *nav.on_verbs, *nav.off_verbs, *nav.open_verbs) if phrase.split())
        self._states = frozenset((*nav.on_words, *nav.off_words))
        self._not_lead = frozenset(x for phrase in (*pol.interjections.words, *pol.request_openers.words,
                                                    *pol.split.words) for x in phrase.split())
        self._aliases: dict[str, set[str]] = {}
        for key, names in [*SYNONYMS.items(), *data["same"].items()]:
            for name in (key, *names):
                for w in map(singular, _tokens(name)) if " " not in name else ():
                    self._aliases.setdefault(w, set()).add(key)

    # ------------------------------------------------------------------ words
    def words(self, text: str) -> set[str]:
        """The words of `text` that can name something on the phone (no function words, verbs or numbers)."""
        return {s for t in _tokens(text) if t not in self.ignore
                for s in [singular(t)] if s not in self.ignore and len(s) > 1}

    def keys(self, words: Iterable[str]) -> set[str]:
        """Words with their other names ("torch" also keys "flashlight"): two words match when keys meet."""
        return {k for w in words for k in (w, *self._aliases.get(w, ()))}

    def _goal(self, goal: str, state: dict[str, Any], strict: bool = False) -> _Goal:
        tokens = {t.lower() for t in _tokens(goal)}
        whole = bool(self.whole & tokens)
        words = self.words(goal)
        kinds = frozenset(kind for kind, verbs in self.verbs.items() if words & verbs)
        # "text Ana": a verb names too; a field's label before its value does not ("contact ..., email a@b.c")
        said = self.keys(self.words(FIELD_LABEL_RE.sub(" ", goal))) if strict else self.keys(words)
        named = self._named(state, said)
        words -= self.verbs[ADDS] | self.verbs[REMOVES] | self.verbs[EDITS]
        keys = self.keys(words)
        content = self.keys(w for w in words if not any(self.keys([w]) & self._field_keys(f) for f in named))
        quoted = tuple(q.strip("\"'“”‘’ ").lower() for q in QUOTED_RE.findall(goal))
        amounts, measures = numbers_said(goal)
        if any(isinstance(state.get(f), int) and not isinstance(state.get(f), bool) for f in named):
            amounts |= {v for rx, v in self.levels.items() if rx.search(goal)}   # "mute the media volume": 0
        return _Goal(kinds, frozenset(keys), named, frozenset(content), clock_times(goal), whole and REMOVES in kinds,
                     self._lead(goal) in self.looks, goal, amounts, measures, tuple(q for q in quoted if q),
                     self._labelled(goal, state, named), strict, days_said(goal), self._message(goal))

    def _message(self, goal: str) -> frozenset[str]:
        """The keys of the words of the message the goal passes on, after a speech opener ("text Ana", "msg bao
        - ..."), as the gate reads it (`acting.Piece.message`), and on to the end of its sentence: the gate
        stops a message at a joining word, since what follows may ask for something else, but a goal is one
        call's words, so "tell her we sent it friday and it should show up by wednesday" is all the message,
        and a mail carrying half of it is not done."""
        from mobile_actions.acting import read

        pieces = read(goal)
        spans = [(p.message[0], max(p.message[1], *(q.start + len(q.text) for q in pieces
                                                    if q.sentence == p.sentence and q.start >= p.start)))
                 for p in pieces if p.message]
        return frozenset(self.keys(w for a, b in spans for w in self.words(goal[a:b])))

    def _named(self, state: dict[str, Any], said: set[str]) -> tuple[str, ...]:
        """The parts of the phone the words `said` name. A part named only by words that also name a part the
        words name whole is not one: "max out the ring volume" names ring_volume, not media_volume."""
        hits = {f: self._field_keys(f) & said for f in state}
        whole = [f for f, h in hits.items() if h and all(self.keys([w]) & said
                                                           for w in self.words(f.replace("_", " ")))]
        return tuple(f for f, h in hits.items() if h and (f in whole or not any(
            h <= hits[w] and f != w for w in whole)))

    def _labelled(self, goal: str, state: dict[str, Any], named: Sequence[str], reach: int = 3
                  ) -> tuple[tuple[str, str], ...]:
        """The fields of the named parts' entries that the goal names, each with the first word it gives within
        `reach` words after the name ("put the location as Maple Street Library": location, maple). The field
        names are the phone's own (an event's ``location``, an email's ``body``), so no English is added here."""
        entry_fields = {k for f in named if isinstance(state.get(f), list)
                        for e in state[f] if isinstance(e, dict) for k in e}
        tokens = [singular(t) for t in _tokens(goal)]
        out = []
        for i, t in enumerate(tokens):
            if t in entry_fields and t not in {f for f, _ in out}:
                after = next((w for w in tokens[i + 1:i + 1 + reach] if w not in self.ignore
                              and w not in entry_fields), None)
                if after:
                    out.append((t, after))
        return tuple(out)

    def parts_named(self, text: str, entry_of: Iterable[str] = ()) -> tuple[str, ...]:
        """The parts of the phone `text` names (``alarms``, ``messages``, ``wifi``...), with no phone at hand.
        `entry_of`: parts whose entry `text` goes on about, where a word of their entries' form (`field_words`:
        an event's "notes" is its Description) names that field, not another part ("dentist tmrw 9, bring the
        x-rays, add that in the notes" names no Notes app)."""
        named = self._goal(text, dict.fromkeys(PHONE_PARTS)).named
        if not entry_of or not set(named) - set(entry_of):
            return named
        beside = self._goal(field_words(frozenset(entry_of)).sub(" ", text), dict.fromkeys(PHONE_PARTS)).named
        return tuple(p for p in named if p in entry_of or p in beside)

    def actionable(self, text: str) -> bool:
        """Whether `text` asks something a navigator could do, not an aside or a context ("cant find my keys
        lol", "Using Gmail"): it starts with a verb that adds, removes, edits or looks something up ("open
        Messages"), or names a part of the phone (`PHONE_PARTS`) with a state or an amount for it ("bluetooth
        on", "media volume to 70")."""
        if self.leads_with_verb(text):
            return True
        g = self._goal(text, dict.fromkeys(PHONE_PARTS))
        return bool(g.named) and (bool(g.amounts) or self._says_state(text))

    def sets_state(self, text: str) -> bool:
        """Whether `text` names a part of the phone (`PHONE_PARTS`) with a state or an amount in digits for it
        ("wifi on", "media volume to 70"; not "the hotel one"): only a change of that part answers it, no look."""
        g = self._goal(text, dict.fromkeys(PHONE_PARTS))
        return bool(g.named) and (self._says_state(text) or bool(g.amounts) and any(c.isdigit() for c in text))

    def _says_state(self, text: str) -> bool:
        return any(t in self._states for t in _tokens(text))

    def leads_with_verb(self, text: str) -> bool:
        """Whether `text` starts with a verb that asks the phone something ("open Messages", "delete ..."), past
        the ways of asking ("pls", "can u")."""
        lead = self._lead(text)
        return lead in self._request_verbs or lead in self.looks or any(lead in v for v in self.verbs.values())

    def asks_change(self, text: str) -> bool:
        """Whether `text` starts with a verb that adds, removes or edits something ("order me a pizza"; not
        "wheres the closest hardware store", whose "store" is a noun)."""
        lead = self._lead(text)
        return any(lead in verbs for verbs in self.verbs.values())

    def edits_by_adding(self, text: str, tool: str) -> str | None:
        """The verb with which `text` edits an entry ("update", "reschedule"), when the tool named `tool` makes
        new entries (a verb that adds leads its name: ``create_contact``) and `text` asks to add nothing: the
        call would leave a second entry beside the one the person meant ("Tom got a new number, update his
        contact" is not a second Tom). None when the call can be what was asked."""
        words = self.words(text)
        if words & self.verbs[ADDS] or not set(_tokens(tool.replace("_", " "))) & self.verbs[ADDS]:
            return None
        return next((w for w in _tokens(text) if w in self.verbs[EDITS]), None)

    def lacking_fields(self, told: str, tool: str, description: str, arguments: Sequence[str], made: str
                       ) -> tuple[tuple[str, str], ...]:
        """(field, the word given for it) for each field of the entries a tool makes that the person gives a
        value for in `told` (what they said of one call) and that no argument of the tool takes, when what the
        call made (`made`, its values as text) does not hold that value: "dentist thursday 3:30pm at Smile
        Studio, put the location as 14 Park Rd" for an event tool of a title and a datetime. The fields are the
        phone's own (`_labelled`: an event's ``location``), whether or not the phone holds such an entry yet, so
        no English is added; () when every field given is one the tool takes."""
        parts = self.tool_parts(tool, description)
        takes = {k for a in arguments for k in self._field_keys(a)}
        # the fields of the entries the tool makes, whether or not the phone holds one yet (a switch has none)
        shape = {p: [dict.fromkeys(ENTRY_FIELDS[p], "")] for p in parts if p in ENTRY_FIELDS}
        return tuple((f, w) for f, w in self._labelled(told, shape, parts, reach=LABEL_REACH)
                     if not self._field_keys(f) & takes and w not in self.words(made))

    def details_beyond(self, told: str, values: Sequence[str], tool: str, description: str) -> str:
        """What `told` (what the person said of one call that made an entry) says of that entry beyond the call's
        values and its date or time, as the person said it: the pieces between and after them that name
        something, joined by commas ("Could you add Dr. Nakamura on Thursday at 11:00? It's at St. Mary's
        Hospital, 3rd floor, and should take about 45 minutes": the last sentence). People rarely name the field
        ("its at ...", "2 hrs", "bring the x-rays"), so which field a piece fills is the navigator's to read, not
        a rule's. Words before the first value are the request's context, not the entry's ("ugh, the landlord
        again"); a piece that names nothing but the tool's part of the phone ("to my calendar pls") is no detail.
        '' when nothing is left or no value of the call is in `told`."""
        from mobile_actions.decoding.datetimes import expression_spans

        low = told.lower()
        spans = [(i, i + len(v)) for v in values if v.strip() for i in [low.find(v.lower())] if i >= 0]
        if not spans:
            return ""
        spans = sorted(spans + expression_spans(told))
        part = self.keys(singular(p) for p in self.tool_parts(tool, description))
        pieces, end = [], spans[0][1]
        for a, b in [*spans[1:], (len(told), len(told))]:
            piece = told[end:a].strip(" \t\n,;:.!?()-–—")
            if piece and {w for w in self.words(piece) if not self.keys([w]) & part}:
                pieces.append(piece)
            end = max(end, b)
        return ", ".join(pieces)

    def tool_parts(self, tool: str, description: str) -> tuple[str, ...]:
        """The parts of the phone a tool works on, as its name and description name them ("contacts":
        create_contact); () for a tool whose words name none (a catalogue this phone knows nothing of)."""
        return self.parts_named(f"{tool.replace('_', ' ')}. {description}")

    def _lead(self, text: str) -> str:
        """The first word of `text` past interjections and the ways of asking ("pls", "can u")."""
        return next((t for t in _tokens(text) if t not in self._not_lead), "")

    def _field_keys(self, field: str) -> set[str]:
        return self.keys(self.words(field.replace("_", " ")))

    def _change_keys(self, c: Change) -> set[str]:
        """A change's words, and the name of the part of the phone it is in -- not the name of a view field
        ("screen added 'shade'" is no evidence for "turn the screen brightness up")."""
        where = self._field_keys(c.where) if c.where and c.where not in self.view_fields else set()
        return self.keys(self.words(c.text)) | where

    # ------------------------------------------------------------------ changes
    def changes(self, before: PhoneView, after: PhoneView) -> list[Change]:
        """What differs: the state's fields when both states were read, else the screens' elements."""
        if before.state is not None and after.state is not None:
            return self._state_changes(before.state, after.state)
        if before.screen is not None and after.screen is not None:
            return _screen_changes(before, after)
        return []

    def _state_changes(self, a: dict[str, Any], b: dict[str, Any]) -> list[Change]:
        out: list[Change] = []
        for key in sorted(set(a) | set(b)):
            old, new = a.get(key), b.get(key)
            if key in LOG_FIELDS or old == new:
                continue
            kept = key not in self.view_fields
            if key == "files":   # the toolkit's own screen dumps are no change the goal made
                from mobile_actions.android.dispatch import UI_DUMP_PATH

                old, new = ({k: v for k, v in x.items() if k != UI_DUMP_PATH} if isinstance(x, dict) else x
                            for x in (old, new))
                if old == new:
                    continue
            if isinstance(old, list) or isinstance(new, list):
                olds, news = (Counter(json.dumps(x, sort_keys=True) for x in v) if isinstance(v, list) else Counter()
                              for v in (old, new))
                out += [Change(key, "added", _text(e), kept, _fields(e))
                        for e in map(json.loads, (news - olds).elements())]
                out += [Change(key, "removed", _text(e), kept, _fields(e))
                        for e in map(json.loads, (olds - news).elements())]
            elif isinstance(old, dict) or isinstance(new, dict):
                flat_a, flat_b = _flatten(old), _flatten(new)
                out += [Change(key, "changed", f"{p}: {flat_a.get(p)} -> {flat_b.get(p)}", kept)
                        for p in sorted(set(flat_a) | set(flat_b)) if flat_a.get(p) != flat_b.get(p)]
            elif isinstance(old, (str, type(None))) and isinstance(new, (str, type(None))):
                # a text replaced is one text gone and another come ("copy X": the clipboard gained X)
                out += [Change(key, "removed", old, kept)] if old else []
                out += [Change(key, "added", new, kept)] if new else []
            else:
                out.append(Change(key, "changed", f"{old} -> {new}", kept))
        return out

    # ------------------------------------------------------------------ the verdict
    def judge(self, goal: str, before: PhoneView | None, after: PhoneView, strict: bool = False,
              part: str | None = None, pieces: Sequence[str] = ()) -> Verdict:
        """done: a change since `before` fits the goal; not_done: the goal adds to or removes from a part of
        the phone it names and that part did not change; unknown: anything else (no change, or none that fits).
        `strict`: the goal is what the person said about one call (`acting.clause_of`), read whole, and what the
        call made must also carry its details -- every quantity, every quoted text, and the word after the name
        of each of its fields the person names ("... for 45 minutes, location Bright Smile Dental": not an
        hour-long "dentist appointment" with no place); a verb that edits needs the entry replaced. `part`: the
        part of the phone the goal works on, when the caller knows it (an entry a call made, finished on the
        screen): a change anywhere else is no evidence (the entry's title copied to the clipboard is not the entry
        finished), and no change there is not done. `pieces`: the details handed over for that entry ("library 2nd
        floor", "2 hrs"), each of which must show in what the part gained (`_shows`): a length set and the place
        left out is part of it, not done."""
        if before is None:
            return Verdict("unknown", "there is no record of the phone at the task's start to compare with")
        by_state = before.state is not None and after.state is not None
        if not by_state and (before.screen is None or after.screen is None):
            return Verdict("unknown", "the phone's state and its screen could not be read")
        from mobile_actions.decoding.coverage import steps

        # "create an event Yoga and open example.com": each step of the goal is read on its own
        clauses = [self._goal(step, after.state if by_state else {}, strict) for step in
                   ([goal] if strict else steps(goal))]
        found = [c for c in self.changes(before, after) if part is None or c.where == part]
        if part is not None and by_state and not found:
            return Verdict("not_done", f"the goal works on {part}, and the phone's state shows no change there "
                                       f"({_summary(after.state, [part])})")
        # an entry edited is one gone and one come: the words of what each part lost, and the parts that gained
        lost: dict[str | None, str] = {}
        for c in found:
            if c.kind == "removed":
                lost[c.where] = f"{lost.get(c.where, '')} {c.text.lower()}"
        edited = (lost, frozenset(c.where for c in found if c.kind == "added"))
        # the parts of the phone whose entries repeat on days of the week (an alarm's ``days``, the phone's own field)
        dayed = frozenset(f for f, v in (after.state or {}).items() if isinstance(v, list)
                          and any(isinstance(e, dict) and "days" in e for e in v))
        fits = [c for c in found if any(self._fits(c, g, by_state, edited, dayed) for g in clauses)]
        fitting = set(fits)
        seen = tuple(c.describe() for c in fits + [c for c in found if c not in fitting])[:50]
        left = [f for g in clauses if by_state and g.whole for f in g.named if after.state.get(f)]
        if left:       # "delete every note" with a note left is not met, whatever was removed
            return Verdict("not_done", f"the goal asks for all of {left[0]} to go, and the phone's state still "
                                       f"has some ({_summary(after.state, left[:1])})", seen)
        # every step that adds to or removes from a part it names must show there ("set an alarm and text Ana":
        # an alarm alone is not it), whatever another step changed
        unmet = [g for g in clauses if by_state and g.kinds and g.named and not g.strict
                 and self._unchanged(g, found, after.state)]   # (strict: one call, judged by what it made)
        # and every step needs evidence of its own ("turn on wifi then open the clock and start the stopwatch":
        # wifi on is not it), unless what it adds is there already
        bare = [g for g in clauses if not any(self._fits(c, g, by_state, edited, dayed) for c in found)
                and not (by_state and self._already(g, after.state))]
        gained = [c for c in found if c.kind == "added"]
        missing = [p for p in pieces if not self._shows(p, gained, part, after.state or {})]
        if fits and not unmet and not bare and not missing:
            return Verdict("done", "the phone shows it: " + "; ".join(c.describe() for c in fits[:SHOWN]), seen)
        if fits and missing:
            return Verdict("unknown", f"the phone shows part of it ({fits[0].describe()}), nothing for "
                                      f"{missing[0]!r}", seen)
        where = "state" if by_state else "screen"
        if unmet:
            g = unmet[0]
            verb = " and ".join({ADDS: "gain", REMOVES: "lose", EDITS: "change"}[k] + " something"
                                for k in sorted(g.kinds))
            return Verdict("not_done", f"the goal asks {', '.join(g.named)} to {verb}, and the phone's state shows "
                                       f"no change there ({_summary(after.state, g.named)})", seen)
        if fits:   # some steps shown, not all
            return Verdict("unknown", f"the phone shows part of it ({fits[0].describe()}), nothing for "
                                      f"{bare[0].text!r}", seen)
        if not found:
            return Verdict("unknown", f"nothing in the phone's {where} changed since the task began", seen)
        changed = sorted({c.where or "screen" for c in found})
        return Verdict("unknown", f"nothing that changed in the phone's {where} fits the goal (changed: "
                                  f"{', '.join(changed)})", seen)

    def _shows(self, piece: str, gained: Sequence[Change], part: str | None, state: dict[str, Any]) -> bool:
        """Whether a detail handed over for an entry of `part` shows in what the entry now says (`gained`: the
        entries added): a word of it that names something other than a part of the phone or a field of its
        entries, and is no verb of asking ("put that in the event notes": nothing to check), or a number of it in
        a unit the phone keeps ("2 hrs": 120). A detail that names a field of the entry ("description booster
        shots") shows in that field: booster shots typed as the location is not the description."""
        fields = {k for f in ENTRY_FIELDS.get(part or "", ()) for k in self._field_keys(f)}
        verbs = self._request_verbs.union(*self.verbs.values())
        words = {w for w in self.words(piece) if w not in verbs and not self.parts_named(w)
                 and not self.keys([w]) & fields}
        amounts, _ = numbers_said(piece)
        if not words and not amounts:
            return True
        texts = [c.text for c in gained]
        labelled = self._labelled(piece, state, [part] if part else [])
        if labelled and not any(all(w in self.words(dict(c.fields).get(f, "")) for f, w in labelled) for c in gained):
            return False
        have = self.keys(w for t in texts for w in self.words(t))
        return bool(self.keys(words) & have) or bool(amounts & frozenset().union(*map(_numbers_in, texts)))

    def _fits(self, c: Change, g: _Goal, by_state: bool,
              edited: tuple[dict[str | None, str], frozenset[str | None]] = ({}, frozenset()),
              dayed: frozenset[str] = frozenset()) -> bool:
        """Whether one change is evidence for the goal (see the module docstring). `edited`: the text of the
        entries each part of the phone lost, and the parts that gained entries; `dayed`: the parts whose entries
        repeat on days of the week."""
        lost, gained = edited
        was, now = lost.get(c.where, ""), c.text.lower()   # an entry edited: what it said before, and now
        if (by_state and c.kept and c.kind == "added" and c.where not in g.named and c.where not in self.trail
                and not g.strict):   # (what a call made is the call's part of the phone, named or not: "add Ana")
            return False     # "order me an uber": an email that repeats its words is not it (the goal names no mail)
        if c.where in self.trail and c.where not in g.named and not g.looks:
            return False     # "pay my electric bill": a web search for "ConEd" is not it
        if c.kept and c.kind == "added" and not keeps_time(c.text, g.times):
            return False     # "an alarm for 6:45": not an alarm at 07:00
        if c.kept and c.kind == "added" and g.message \
                and MESSAGE_SHARE * len(g.message) > len(self.keys(self.words(c.text)) & g.message):
            return False     # "msg bao - r u home yet? ill swing by w the drill": not "r u home" sent
        if (c.kept and c.kind == "added" and g.days and c.where in dayed
                and not any(_repeats_on(c.text, d) for d in g.days)):
            return False     # "an alarm for 9:30 every Saturday": not one that never repeats
        if c.kept and c.kind != "removed" and g.amounts and not g.amounts & _numbers_in(c.text.split("->")[-1]):
            return False     # "brightness to 80", "a 12 minute timer": not 50, not 600 s
        if g.strict and c.kept and c.kind != "removed" and not self._detailed(c, g):
            return False
        if not g.kinds:                                      # "open my contacts", "turn on Bluetooth"
            if by_state and c.kept and c.kind == "removed":
                return False     # a goal that says no verb of removing is not met by an entry gone ("push my
                                 # dentist appt to 4:30": the event deleted), as the navigator's keep-items reads it
            if by_state and not c.kept and (c.kind == "removed" or not g.looks):
                return False     # what the screen stopped showing (Maps left, not shown); what it shows, for a
                                 # goal that neither looks nor goes anywhere ("get me an uber": a search page)
            return bool(self._change_keys(c) & g.keys)   # a goal of no words of its own ("can u switch it back
            #                                             on") names nothing a change could be evidence of
        # a goal that only removes is met by something gone ("flight got cancelled, delete the airport alarm":
        # airplane mode switched on is not it)
        allowed = ({"changed"} if g.kinds != {REMOVES} else set()) \
            | ({"added"} if ADDS in g.kinds or EDITS in g.kinds else set()) | ({"removed"} if REMOVES in g.kinds else set())
        if c.kind not in allowed:
            return False
        if c.kind == "added" and EDITS in g.kinds and ADDS not in g.kinds and all(
                w in now for w in re.findall(r"\w+", was)):
            return False     # "update Tom's number": a new contact beside the old one, or the new number
                             # typed after the old one (nothing of the entry replaced), is not it
        if c.kind == "removed" and g.kinds == {REMOVES} and c.where in gained:
            return False     # "delete the 5:15 alarm": the alarm switched off (one entry for another) is not it
        if g.named:                                          # "delete all my notes": the notes, and only they
            return c.where in g.named and self._says(c, g, was, now)
        if by_state and not c.kept:                          # an app opened, a form typed: nothing kept yet
            return False
        return not g.keys or bool(self._change_keys(c) & g.keys)

    def _says(self, c: Change, g: _Goal, was: str, now: str) -> bool:
        """A change in a part the goal names carries the goal's words: what it removes, it names ("delete tom
        baker": not Lisa Wong), and what it adds, it says ("write a note saying buy milk"); for an entry edited,
        in what the entry gained ("add oat milk to my grocery note pls": not "pls")."""
        if c.kind == "changed" or not g.content or (c.kind == "removed" and g.whole):
            return True
        if c.kind == "added" and was and ADDS in g.kinds:
            return any(w in now and w not in was for w in g.content)
        return bool(self.keys(self.words(c.text)) & g.content)

    def _detailed(self, c: Change, g: _Goal) -> bool:
        """What a call made carries what the person said of it: each quantity in some unit, each quoted text,
        and what follows the name of each of its fields the person names."""
        made = c.text.split("->")[-1]
        if any(not m & _numbers_in(made) for m in g.measures) or any(q not in made.lower() for q in g.quoted):
            return False
        return all(w in self.words(made) for _, w in g.labelled)

    def _unchanged(self, g: _Goal, found: Sequence[Change], state: dict[str, Any]) -> bool:
        """The parts the goal names did not change, and they do not already look as asked (nothing left to
        remove, or the text it adds already there): the goal is plainly not met."""
        if any(c.where in g.named for c in found):
            return False
        if REMOVES in g.kinds and all(not state.get(f) for f in g.named):
            return False
        return not self._already(g, state)

    def _already(self, g: _Goal, state: dict[str, Any]) -> bool:
        """The step holds on the phone as it is: what it adds is there already (a tool made it before the
        screen's turn), or the screen it goes to is the one showing ("open Notes, then go home")."""
        if not g.kinds:
            return bool(g.keys) and any(self.keys(self.words(_text(state.get(f)))) & g.keys
                                        for f in ("screen", "current"))
        return ADDS in g.kinds and bool(g.content) and any(
            self.keys(self.words(_text(state.get(f)))) & g.content for f in g.named)


MESSAGE_SHARE = 2 / 3   # of a message's words that what was sent must carry (a typo or a dropped "pls" is not a miss)

_KEPT_CLOCK = re.compile(r"(?<![\d:])\d\d:\d\d")   # "07:30", "2025-06-04T08:15:00"
_CLOCK = re.compile(r"(?<![\d:])(\d{1,2}):([0-5]\d)(?![\d:])(?:\s*([ap])\.?m\b\.?)?", re.IGNORECASE)


def numbers_said(text: str) -> tuple[frozenset[int], tuple[frozenset[int], ...]]:
    """The whole numbers `text` says (`decoding.numbers`), each also in the units a phone may keep it in (see
    `_forms`), and each quantity it says with a unit ("for 45 minutes": 45, 2700) on its own. A time of day is
    neither: its hour and minutes are checked as a time (`clock_times`), and "2:30pm" is neither 2 nor 150 s."""
    from mobile_actions.decoding.numbers import read

    said = read(_CLOCK.sub(" ", text))
    measures = tuple(f for f in map(_forms, said.wholes) if f)   # "1 hour and 15 minutes" is 4500 s, not 900
    part_counts = frozenset().union(*map(_forms, said.parts))   # "1" and "15" of "1 hour and 15 minutes"
    plain = frozenset(int(v) for v in (*said.numbers, *said.counts) if v == int(v) and v not in part_counts)
    return plain.union(*measures), measures


def form_part(labels: Sequence[str]) -> str | None:
    """The part of the phone whose entries a form with these field labels makes, when it keeps their day and time
    in fields of their own (`WHEN_FIELDS`, by the labels' first words: "Date (YYYY-MM-DD)", "Time"), else None."""
    firsts = {words[0] for label in labels for words in [re.findall(r"[^\W\d_]+", label.lower())] if words}
    return next((part for part, fields in WHEN_FIELDS.items() if set(fields) <= firsts), None)


def when_and_length(goal: str, part: str | None, now: datetime) -> tuple[str, ...]:
    """("date 2025-06-05", "time 12:30", "duration 60") for a goal that makes an entry of `part` (whose form
    keeps its day and time in fields of their own, `WHEN_FIELDS`): the day and the time the goal says, as the
    toolkit's date reader resolves them against `now`, each only when all its readings agree (the time only when
    said; a time said alone is on the day the reader gives it), and its length (`length_in_minutes`); () when
    it says no day or time, or when the goal changes or removes what exists ("move the dentist to 11" keeps its
    day). The navigator types only words of its goal and cannot count "thursday" into a date: the values go on
    the goal as the fields' own words, which its guards read."""
    from mobile_actions.decoding.datementions import mentions
    from mobile_actions.decoding.datetimes import normalise, start_readings
    from mobile_actions.navigator.goals import edits, removes_only

    if part not in WHEN_FIELDS or edits(goal) or removes_only(goal):
        return ()
    kinds = {m.kind for m in mentions(normalise(goal), now)}
    values = start_readings(goal, now)
    if not values or not kinds:
        return ()
    # only what every reading agrees on: "fri half 7" is 7:30 or 19:30, which a caller's model would choose
    # between; the first reading alone made a dinner at 07:30
    begin = values[0]
    day, clock = WHEN_FIELDS[part]
    one_day = len({v.date() for v in values}) == 1
    one_time = len({v.time() for v in values}) == 1 and bool(kinds & {"time", "exact"})
    said = ([f"{day} {begin:%Y-%m-%d}"] if one_day else []) + ([f"{clock} {begin:%H:%M}"] if one_time else [])
    length = length_in_minutes(goal, part, begin if one_time else None).removeprefix(", ")
    return tuple(s for s in [*said, length] if s and s not in goal.lower())


def length_in_minutes(text: str, part: str, begin: datetime | None = None) -> str:
    """", duration 90" for an entry of `part` whose form keeps its length in minutes (`LENGTH_FIELDS`) when
    `text` (what the person said of the entry) says its length ("takes an hour and a half", "2h50", "45 min")
    or, given the entry's start, the time it ends ("2pm till 4:30"); '' otherwise. The navigator types only
    words of its goal, and its guards hold a field to the value the field's own word introduces: the length is
    a value the toolkit reads, as it reads a date, and is handed over as that field's word and the minutes."""
    from mobile_actions.decoding.datetimes import blank_expressions, minutes_to_end
    from mobile_actions.decoding.numbers import read

    field = LENGTH_FIELDS.get(part)
    if field is None:
        return ""
    plain = blank_expressions(text, frozenset({"exact"}))   # "in 2 hours" says when, not how long
    said = [q.value / 60 for q in read(_CLOCK.sub(" ", plain)).wholes if q.kind == "time"]
    minutes = next((int(m) for m in said if m == int(m) and m > 0), None)
    if minutes is None and begin is not None:
        minutes = minutes_to_end(text, begin)
    # said already as the guards read it ("duration 45", not "duration 45 mins": the field takes digits only)
    held = minutes is not None and re.search(rf"\b{re.escape(field)}\s+{minutes}(?![\w.])(?!\s+[^\W\d_])",
                                             text.lower())
    return "" if minutes is None or held else f", {field} {minutes}"


def _forms(q: Any) -> frozenset[int]:
    """A quantity (`decoding.numbers.Quantity`) in its kind's base unit and in 60ths and 3600ths ("12 minutes":
    12, 720, and 0.2 h is no whole) or 1000ths ("2 litres": 2, 2000), as whole numbers."""
    values = [q.value, q.value / 60, q.value / 3600] if q.kind == "time" else [q.value, q.value / 1000]
    return frozenset(int(v) for v in values if v == int(v))


def _repeats_on(text: str, days: frozenset[int]) -> bool:
    """Whether an entry's text (days kept as the phone writes them, "Mon,Wed") holds exactly these days."""
    words = set(re.findall(r"[A-Za-z]+", text))
    return {i for i, d in enumerate(WEEKDAYS) if d in words} == set(days)


def _numbers_in(text: str) -> frozenset[int]:
    return frozenset(int(t) for t in re.findall(r"\d+", text))


@dataclass(frozen=True)
class TimeReadings:
    """A time of day a goal says, as the 24-hour HH:MM values it can be ("6:45 pm": {18:45}; "7.30 in the
    evening": {19:30}; "6:45": {06:45, 18:45}), and whether it is written with its minutes ("6:45", not "5pm")."""
    readings: frozenset[str]
    minutes: bool


@lru_cache(maxsize=1024)
def clock_times(text: str) -> tuple[TimeReadings, ...]:
    """Each time of day `text` says, read by the toolkit's date reader (`decoding.datementions`), so that the
    outcome holds an entry to every time the reader gives a call or the navigator ("saturday 10.15"). Cached:
    every goal the check reads (and `parts_named`, for each piece of a request) asks for it."""
    from mobile_actions.decoding.datementions import mentions
    from mobile_actions.decoding.datetimes import clock_readings, normalise

    norm = normalise(text)
    found = mentions(norm, datetime(2000, 1, 1))
    day_part = next((m.part for m in found if m.kind == "day" and m.part), None)
    out = []
    for m in found:
        if m.kind != "time" or m.quoted:
            continue
        hour, minute = m.clock
        part = m.part or day_part
        if m.meridiem or m.exact24 or m.midnight or part or not 1 <= hour <= 12:
            said = {(h, mi) for h, mi, _ in clock_readings(m, part)}
        else:   # no half of the day said: either
            said = {(hour % 12, minute), (hour % 12 + 12, minute)}
        written = bool(re.search(r"\d[:.h]\d\d", norm[m.start:m.end]))   # "6:45", "10.15", "14h30"
        out.append(TimeReadings(frozenset(f"{h:02d}:{mi:02d}" for h, mi in said), written))
    return tuple(out)


def keeps_time(text: str, times: Sequence[TimeReadings]) -> bool:
    """Whether an entry's text (the phone writes an entry's clock as HH:MM) keeps the times a goal says. An
    entry that keeps a clock (an alarm, an event) keeps one of the goal's times: "an alarm for 6:45" is not
    one at 07:00, and an event "quarter to 9 till 9.15" keeps its start only. One that keeps none (a note, a
    message) holds each time written with its minutes as a clock: a note "flight sunday 6:50am" is not the
    event, and "5pm" in a message is the message's words."""
    kept = set(_KEPT_CLOCK.findall(text))
    if kept:
        return not times or any(kept & t.readings for t in times)
    return all(any(r in text for r in t.readings) for t in times if t.minutes)


def joined(text: str) -> str:
    """`text` with the words a hyphen or an apostrophe joins written as one ("Wi-Fi" -> "WiFi", "don't" -> "dont")."""
    return _JOINED.sub("", text)


def _tokens(text: str) -> list[str]:
    """Lower-case words and no numbers ("Wi-Fi" is "wifi"; a clock's "10:42" is nothing)."""
    return [t for t in _TOKEN.findall(joined(text.lower())) if not t.isdigit()]


def singular(w: str) -> str:
    """"notes" -> "note", "searches" -> "search", "entries" -> "entry" ("this", "bus", "address" stay)."""
    if len(w) <= 3 or w.endswith(("ss", "us", "is")):
        return w
    if w.endswith("ies"):
        return w[:-3] + "y"
    if w.endswith(("ches", "shes", "sses", "xes")):
        return w[:-2]
    return w[:-1] if w.endswith("s") else w


def _screen_changes(a: PhoneView, b: PhoneView) -> list[Change]:
    """Elements that appeared, went (hidden when another app came to the front) or switched on/off."""
    before, after = Counter(label for label, _ in a.screen or ()), Counter(label for label, _ in b.screen or ())
    gone = "removed" if a.package == b.package else "hidden"
    out = [Change(None, "added", label, False) for label in (after - before).elements()]
    out += [Change(None, gone, label, False) for label in (before - after).elements()]
    on_a, on_b = dict(reversed(a.screen or ())), dict(reversed(b.screen or ()))
    out += [Change(None, "changed", f"{label}: {_on(on_a[label])} -> {_on(on_b[label])}", False)
            for label in on_a if label in on_b and None not in (on_a[label], on_b[label]) and on_a[label] != on_b[label]]
    if a.package != b.package:
        out.append(Change(None, "opened", b.package, False))
    return out


def _on(value: bool | None) -> str:
    return "on" if value else "off"


def _fields(value: Any) -> tuple[tuple[str, str], ...]:
    """An entry's fields, each with its readable text (() for a value that is no entry)."""
    return tuple((k, _text(v)) for k, v in value.items()) if isinstance(value, dict) else ()


def _text(value: Any) -> str:
    """The readable text of a state value: its strings and numbers, depth first."""
    if isinstance(value, dict):
        return " ".join(filter(None, (_text(v) for v in value.values())))
    if isinstance(value, list):
        return " ".join(filter(None, (_text(v) for v in value)))
    return "" if value is None else str(value)


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(value, dict):
        return {prefix: value} if prefix else {}
    out: dict[str, Any] = {}
    for k, v in value.items():
        out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    return out


def _summary(state: dict[str, Any], fields: Sequence[str]) -> str:
    parts = []
    for f in fields:
        v = state.get(f)
        parts.append(f"{f}: {len(v)} entries" if isinstance(v, (list, dict)) else f"{f}: {v!r}")
    return "; ".join(parts)
