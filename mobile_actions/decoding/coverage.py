"""Which parts of a request no call answers yet: a turn does not end while one is owed.

A 270M caller often stops after the first call of a request that asks for two things ("turn off the
flashlight and show me Union Station on the map" gives only `turn_off_flashlight()`); a dropped call is
its most common miss on multi-call requests, and the model alone cannot be trusted to notice. The toolkit
reads the request as clauses joined the way people join requests ("and", "then", "also", a new sentence,
a comma before a verb) and keeps those that start with an action verb. Every call made so far is
attributed to the clause it answers (the tool's keywords said there, its argument values written there).
While a clause is left that a callable tool's keywords name -- or, when the catalogue has a fallback tool
such as `operate_screen`, one that no tool names -- the grammar does not let the turn end, and the next
call is restricted to those tools. The model still writes that call, under the grounded grammar; each
clause can force one call at most. A list after one verb ("put standup mon 9am and retro fri 4pm on my
calendar") has a clause per item that writes a value of its own, and calls come in the user's order.

What keeps this from adding calls nobody asked for: only verb-first clauses count ("I'm at the Louvre"
does not), text in quotes is never split ("a note saying 'call mom and email dad'"), a tool must be named
by its keywords (or be the fallback for a clause no tool names), nothing destructive is ever forced
("delete ..."), and a clause that needs a tool's *result* ("email its address to ...") waits for the turn
that has the result. A tool's keywords are the words of its name (less generic verbs), their usual
synonyms, and any ``"x-keywords": [...]`` set on its parameters in a catalogue; a reminder for oneself
with a date or time ("remind me to pay rent on the 1st at 9") names the tools that take a date-time, and
something added or saved with an address or number the tools that keep one ("save Kofi 024 123 4567"),
and "show me X" with no tool word the tools whose keywords say "map";
``"x-fallback": true`` there marks the tool for GUI steps. The same reading splits a GUI goal into the steps it says one after
another (`steps`, for the navigator).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Collection, Sequence

from mobile_actions import lexicon
from mobile_actions.calls import argument_schema, is_datetime, value_kind
from mobile_actions.decoding.datetimes import expression_spans
from mobile_actions.lexicon import alternation

_WORDS = lexicon.load().clauses   # what each list means: the "clauses" section of lexicon/en.json
WORD_RE = re.compile(r"[^\W_]+")
GENERIC = _WORDS.generic
# What people call the things tool names are about ("torch" for a flashlight), for any catalogue.
SYNONYMS = _WORDS.synonyms
# Verbs that start a request to the phone; none destroys anything: a step that does is never added by the toolkit.
VERBS = _WORDS.verbs
PARTICLES = _WORDS.particles
# After a comma these verbs usually start a field, not a request ("Ana Ruiz, email ana@x.com, ...").
FIELD_WORDS = _WORDS.field_words
FILLER_RE = re.compile(r"(?:(?:" + alternation(sorted(_WORDS.fillers, key=len, reverse=True))
                       + r")(?![^\W_])[\s,:]*)+", re.IGNORECASE)
_FIELD_VERBS = alternation(sorted(VERBS - FIELD_WORDS, key=len, reverse=True))
# A comma parts clauses before a verb, and before a sentence about someone ("save Chloé 06 12 34 56 78, she lives
# near Place Bellecour, show me that on the map").
SPLIT_RE = re.compile(r"[.!?;\n]+\s+|[.!?;]+\s*$|\s*,?\s*\b(?:" + alternation(_WORDS.clause_joins) + r")\b\s*"
                      r"|,\s*(?=(?:" + _FIELD_VERBS + "|" + alternation(_WORDS.subjects) + r")(?![^\W_]))",
                      re.IGNORECASE)
# Values a request writes: an email address, a phone number as people write one (an optional +, digits with
# spaces, dots, dashes or brackets between), text in quotes.
EMAIL_RE = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
PHONE_RE = re.compile(r"(?<![\w@])\+?\(?\d[\d\s().-]{5,}\d(?![\w@])")
QUOTED_RE = re.compile(r"\"[^\"]*\"|“[^”]*”|‘[^’]*’|(?<![^\W_])'[^']*'(?![^\W_])")
# Something only a tool's answer can give: "its address", "the location", "where it is".
# A reminder for oneself at a time is a dated entry ("remind me to pay rent on the 1st at 9"), though it names
# no tool: with a date or time it names the tools that take one. Without ("remind me to call mom") it names none.
REMINDER_RE = re.compile(r"\b(?:" + alternation(_WORDS.reminders, r"\s+") + r")\b", re.IGNORECASE)
# So is something added at a time ("add Thesis defense on June 30th at 10am", "put Braai at Sipho's on Saturday
# at 1pm"); "set an alarm for 7", "book a table at 8" and "call mom at 5" ask for things no calendar holds.
SCHEDULE_RE = re.compile(r"(?:" + alternation(_WORDS.schedule_verbs) + r")\b", re.IGNORECASE)
# So is something saved with an address or number ("add Giulia Romano giulia@x.it and Marco Bianchi marco@x.it",
# "save Kofi Boateng 024 123 4567"): it names the tools that keep one, as an optional argument.
STORE_RE = re.compile(r"(?:" + alternation(_WORDS.store_verbs) + r")\b", re.IGNORECASE)
# "show me X" with no tool word shows a place: "..., and show me Sukiyabashi Jiro" names the map's tools.
SHOW_ME_RE = re.compile(r"(?:" + alternation(_WORDS.show_me, r"\s+") + r")\b", re.IGNORECASE)
NEEDS_RESULT_RE = re.compile(r"\b(?:" + alternation(_WORDS.result_words) + r")\b"
                             r"|\b(?:" + alternation(_WORDS.result_owners) + r")\s+(?:" + alternation(_WORDS.result_fields)
                             + r")\b|\b(?:" + alternation(_WORDS.result_where, r"\s+") + r")\b", re.IGNORECASE)


# A list after one verb: "add Hana hana@x.com and Yuki Mori yuki@x.com to contacts", "put standup mon 9am and
# retro fri 4pm on my calendar". A part with no verb of its own is a request too when it follows one after
# "and" or a comma, names a tool and writes a value of its own (an address, a number, a date or time, a
# quote) -- and is no sentence of its own: "... and my meeting is at 3pm" says something, it asks nothing.
FIELD_LABEL_RE = re.compile(r"(?<![^\W_])(?:" + alternation(_WORDS.field_labels) + r")\s*[:=-]?\s*(?=\S+@|\+?\(?\d)",
                            re.IGNORECASE)
# "... as Léa González and the email lea@x.com": a field of the item before, not an item.
_FIELD_ITEM_RE = re.compile(r"(?:(?:" + alternation(_WORDS.field_owners) + r")\s+)?" + FIELD_LABEL_RE.pattern,
                            re.IGNORECASE)
LIST_JOIN_RE = re.compile(r"^\s*,?\s*(?:" + alternation(_WORDS.list_joins) + r")?\s*$", re.IGNORECASE)
SENTENCE_WORDS = _WORDS.sentence_words
# Words written with a capital that are no name ("I"), and their contractions ("I'm", "I’ve").
_CAPITALISED = _WORDS.capitalised_words
_CAPITALISED_CONTRACTIONS = tuple(w.lower() + quote for w in sorted(_CAPITALISED) for quote in "'’")
_TO_ASSISTANT = tuple(phrase.split() for phrase in _WORDS.to_assistant)


@dataclass(frozen=True)
class Clause:
    """A part of a request that asks the phone for one thing."""
    text: str
    tools: frozenset          # the catalogue's tools whose keywords the clause says
    needs_result: bool        # it refers to what a tool's answer gives
    listed: bool = False      # an item of a list after the verb before it: answered by a call of its values


def keywords(tool: Any) -> tuple[str, ...]:
    """What a request says when it means this tool."""
    out: list[str] = []
    for word in tool.name.lower().split("_"):
        if word and word not in GENERIC:
            out += SYNONYMS.get(word, (word, word + _WORDS.plural_suffix))
    given = argument_schema(tool).get("x-keywords")
    if isinstance(given, list):
        out += [k.lower() for k in given if isinstance(k, str) and k.strip()]
    return tuple(dict.fromkeys(out))


def fallback_tool(catalogue: Any) -> str | None:
    """The tool for steps no other tool covers (``"x-fallback": true``), if the catalogue has one."""
    for tool in catalogue:
        if argument_schema(tool).get("x-fallback") is True:
            return tool.name
    return None


def mask_quotes(text: str) -> str:
    """`text` with the inside of every quote blanked (same length): quoted words are values, not requests."""
    return QUOTED_RE.sub(lambda m: m.group(0)[0] + "_" * (len(m.group(0)) - 2) + m.group(0)[-1], text)


def _segments(request: str) -> list[tuple[str, str | None, str]]:
    """Every part of `request` between joining words, as (its text with fillers dropped, why it is not a
    clause or None, the joining text before it)."""
    masked = mask_quotes(request)
    out, start, join = [], 0, ""
    cuts = sorted([*SPLIT_RE.finditer(masked), *_list_commas(masked)], key=lambda m: m.start())
    for cut in [*cuts, None]:
        if cut and cut.start() < start:   # a list comma inside a joining word's cut
            continue
        end = cut.start() if cut else len(request)
        seg = masked[start:end]
        lo = start + len(seg) - len(seg.lstrip(" ,:-"))
        start = cut.end() if cut else len(request)
        lead = FILLER_RE.match(masked, lo, end)
        lo = lead.end() if lead else lo
        bare = masked[lo:end].rstrip(" ,:-")     # quotes blanked: their words are values, not requests
        words = bare.lower().split()
        why = None
        if not words or words[0].strip(",:") not in VERBS:
            why = "not a request"
        elif all(w in PARTICLES for w in words[1:]):
            why = "a verb that shares the next clause's object"     # "write up and send ..."
        elif words[0] in FIELD_WORDS and len(words) <= 2 and masked[:lo].strip(" ,:-"):
            why = "a field"                   # "..., phone 555 0100 and mail h.suzuki@gmail.com"
        elif any(words[:len(phrase)] == phrase for phrase in _TO_ASSISTANT):
            why = "talk to the assistant"     # "... then let me know"
        if bare.strip():
            out.append((request[lo:lo + len(bare)], why, join))
        join = cut.group(0) if cut else ""
    return out


_COMMA_RE = re.compile(r"\s*,\s*")
_NOT_A_TITLE = _WORDS.not_a_title


def _list_commas(masked: str) -> list[re.Match]:
    """The commas of `masked` (a request, quotes blanked) that part items of a list: "add Standup Mon 9:15am,
    Retro Wed 4pm, Demo Fri 11:30am", "email a@x.com, b@y.com and c@z.com". Both sides write a value of one
    kind, an address, a number, or a date after the item's own name; "Dentist on Friday, 3pm", "lunch
    tomorrow, 1pm at Nando's" and "Ana Ruiz, ana@x.com, 555 0100" are one item each."""
    commas = list(_COMMA_RE.finditer(masked))
    bounds = [0, *(m.start() for m in commas), len(masked)]
    starts = [0, *(m.end() for m in commas)]
    kinds = [_item_kinds(masked[a:b]) for a, b in zip(starts, bounds[1:])]
    return [m for k, m in enumerate(commas) if kinds[k] & kinds[k + 1] and not _fielded(masked[m.end():])
            and ("date" not in kinds[k] & kinds[k + 1] or _titled(masked[m.end():bounds[k + 2]]))]


def _fielded(text: str) -> bool:
    """Whether `text` starts with a field of the item before it: "..., mail me.johnson@x.com"."""
    first = WORD_RE.match(text)
    return bool(first) and first.group().lower() in FIELD_WORDS


def _item_kinds(text: str) -> set[str]:
    return {kind for kind, found in (("email", EMAIL_RE.search(text)), ("phone", PHONE_RE.search(text)),
                                     ("date", expression_spans(text))) if found}


def _titled(text: str) -> bool:
    """Whether `text` starts with a name of its own before its date: "Retro Wed 4pm", "'Client dinner' for
    Wednesday at 7pm" (a quote, maybe blanked), not "at 3pm" or "2025 at 8:45 pm" (after "August 17,")."""
    text = text.lstrip()
    if QUOTED_RE.match(text):
        return True
    first = WORD_RE.match(text)
    dates = expression_spans(text)
    return (bool(first) and first.group().lower() not in _NOT_A_TITLE and not first.group()[0].isdigit()
            and not (dates and dates[0][0] == 0))


def written_addresses(text: str) -> list[str]:
    """The email addresses and phone numbers `text` writes."""
    return [*EMAIL_RE.findall(text), *(m.strip() for m in PHONE_RE.findall(text))]


def written_values(text: str) -> list[str]:
    """The addresses, phone numbers and quoted texts `text` writes."""
    return [*written_addresses(text), *(q for m in QUOTED_RE.finditer(text) if (q := m.group(0)[1:-1].strip()))]


def _listed(text: str, join: str) -> bool:
    """Whether a part with no verb of its own is the next item of a list after a request (`LIST_JOIN_RE`). An
    item that writes only a date names itself first ("Dentist on Monday at 3pm"): in "body Tuesdays and
    Thursdays work best", "Thursdays work best" is no item. A capitalised word other than "I" is a name, not a
    sentence's word ("... and Can Öztürk 0541 111 22 33"). A field ("... and the number 555 0100") is no item."""
    words = {w.strip(",.:;!?").lower() for w in text.split()
             if not w[0].isupper() or w in _CAPITALISED or w.lower().startswith(_CAPITALISED_CONTRACTIONS)}
    if not LIST_JOIN_RE.match(join) or words & SENTENCE_WORDS or _FIELD_ITEM_RE.match(text):
        return False
    return bool(written_values(text)) or bool(expression_spans(text)) and _titled(text)


def timed_tools(catalogue: Any) -> frozenset:
    """The tools with a datetime argument (`calls.is_datetime`, as the grammar reads them)."""
    return frozenset(tool.name for tool in catalogue if any(
        isinstance(p, dict) and is_datetime(p) for p in (argument_schema(tool).get("properties") or {}).values()))


def keeping_tools(catalogue: Any, text: str) -> frozenset:
    """The tools with an optional argument for the kind of value `text` writes (an email address, a phone
    number): the ones that keep it (a contact), not the ones that need it to act (an email's recipient)."""
    kinds = {kind for kind, found in (("email", EMAIL_RE.search(text)), ("phone", PHONE_RE.search(text))) if found}
    out = set()
    for tool in catalogue:
        schema = argument_schema(tool)
        required = set(schema.get("required") or ())
        if any(isinstance(p, dict) and n not in required and value_kind(n, p) in kinds
               for n, p in (schema.get("properties") or {}).items()):
            out.add(tool.name)
    return frozenset(out)


# The words besides a tool's keywords that a request without a verb is made of ("torch on", "wifi settings pls"),
# one of them asking ("the torch" asks nothing).
FRAGMENT_ASKS = _WORDS.fragment_asks
FRAGMENT_WORDS = FRAGMENT_ASKS | _WORDS.fragment_other_words


def _fragment_tools(bare: str, marks: dict, catalogue: Any) -> frozenset:
    """The tools a part with no verb asks for when it is nothing but their keywords and `FRAGMENT_WORDS`
    ("flashlight on", "wifi settings"), and they need no value; not "wifi's dead", "the torch" or "Flashlight
    still on??"."""
    named = [name for name, pats in marks.items() if any(p.search(bare) for p in pats)
             and not argument_schema(catalogue[name]).get("required")]
    rest = bare
    for name in named:
        for p in marks[name]:
            rest = p.sub(" ", rest)
    words = [w.lower() for w in WORD_RE.findall(rest)]
    asks = named and all(w in FRAGMENT_WORDS for w in words) and any(w in FRAGMENT_ASKS for w in words)
    return frozenset(named) if asks else frozenset()


def _fragments_apart(segment: tuple[str, str | None, str], marks: dict, catalogue: Any) -> list[tuple]:
    """A segment of `_segments` cut at each comma or colon that a request without a verb follows, to the next
    one or the end ("open wifi settings, flashlight on": two requests; "... on the back of the router: torch on")."""
    text, why, join = segment
    out, start = [], 0
    masked = mask_quotes(text)
    cuts = list(re.finditer(r"[,:]\s*", masked))
    for k, m in enumerate(cuts):
        end = cuts[k + 1].start() if k + 1 < len(cuts) else len(text)
        if _fragment_tools(masked[m.end():end], marks, catalogue) and masked[start:m.start()].strip():
            out.append((text[start:m.start()], why if not out else "not a request", join if not out else ", "))
            start = m.end()
    if not out:
        return [segment]
    return out + [(text[start:], "not a request", ", ")]


def clauses(request: str, catalogue: Any) -> list[Clause]:
    """The verb-first clauses of `request`, in order, each with the tools its words name."""
    marks = {tool.name: [re.compile(rf"(?<![^\W_]){re.escape(k)}(?![^\W_])", re.IGNORECASE) for k in keywords(tool)]
             for tool in catalogue}

    def named(text: str) -> frozenset:
        return frozenset(name for name, pats in marks.items() if any(p.search(text) for p in pats))

    out: list[Clause] = []
    after_request = False
    pieces = (piece for segment in _segments(request) for piece in _fragments_apart(segment, marks, catalogue))
    for text, why, join in pieces:
        bare = mask_quotes(text)
        if why is None:
            tools = named(bare)
            if not tools and (REMINDER_RE.search(bare) or SCHEDULE_RE.match(bare)) and expression_spans(text):
                tools = timed_tools(catalogue)
            elif not tools and STORE_RE.match(bare):
                tools = keeping_tools(catalogue, text)
            elif not tools and SHOW_ME_RE.match(bare):
                tools = frozenset(t.name for t in catalogue if "map" in keywords(t))
            out.append(Clause(text, tools, bool(NEEDS_RESULT_RE.search(bare))))
        elif why == "not a request" and (tools := _fragment_tools(bare, marks, catalogue)):
            out.append(Clause(text, tools, False))
        elif why == "not a request" and after_request and _listed(text, join):
            tools = named(FIELD_LABEL_RE.sub(" ", bare))   # "..., e-mail d@x.com - add to contacts": no email
            # else the tools of the request it continues that take values: "add Gym tomorrow at 7am and Dentist
            # on Monday at 3:30pm"; not "stop the flash light, and surname MacLeod, ... Add to contacts."
            tools = tools or frozenset(t for t in out[-1].tools if argument_schema(catalogue[t]).get("properties"))
            if not tools:
                after_request = False
                continue
            out.append(Clause(text, tools, bool(NEEDS_RESULT_RE.search(bare)), listed=True))
        else:
            after_request = False
            continue
        after_request = True
    return out


def steps(goal: str) -> list[str]:
    """A GUI goal as the steps it says one after another ("jot down X in Notes, then search for Y in
    Chrome"), when every part of it is a request of its own or a short object after "then" that shares the
    verb of the step before ("open Notes, then Chrome": "open Chrome", as people list apps after one verb);
    otherwise the goal whole (nothing is dropped)."""
    out: list[str] = []
    for text, why, _ in _segments(goal):
        if why is None:
            out.append(text)
        elif (why == "not a request" and out and len(text.split()) <= ELLIPSIS_WORDS
              and re.search(rf"\b(?:{_ELLIPSIS_JOINS})\s+{re.escape(text)}", goal, re.I)):   # "milk and eggs": one value
            out.append(f"{verb_phrase(out[-1])} {text}")
        else:
            return [goal]
    return out if len(out) > 1 else [goal]


ELLIPSIS_WORDS = 3   # "then Chrome", "then the Wi-Fi settings": an object, not a sentence of its own
_ELLIPSIS_JOINS = alternation(_WORDS.ellipsis_joins)
_VERB_TAIL = _WORDS.verb_tail


def verb_phrase(step: str) -> str:
    """The verb a step starts with and the particles after it ("turn on", "go to", "open")."""
    words = step.split()
    n = 1
    while n < len(words) and words[n].lower() in _VERB_TAIL:
        n += 1
    return " ".join(words[:n])


def _words(text: str) -> set[str]:
    return {w.lower() for w in WORD_RE.findall(text)}


def _score(call: Any, clause: Clause) -> int:
    """How surely `call` answers `clause`: its tool is named there (2), a value of it is written there (1).
    A list item names the tool of the whole list ("put A mon 9am and B fri 4pm on my calendar"): only its
    values say which call answers it."""
    return 2 * (call.name in clause.tools and not clause.listed) + int(_said(call, clause))


def _said(call: Any, clause: Clause) -> bool:
    """Whether a value of `call` is written in `clause`."""
    words = _words(clause.text)
    return any(isinstance(v, str) and (vw := _words(v)) and vw <= words for v in call.arguments.values())


def _answers(call: Any, item: Clause) -> bool:
    """Whether `call` takes a list item's values: its address or number when it writes one (the item
    "tomasz@x.pl, both with subject 'Thesis defense'" is not answered by the email to olga@x.pl with that
    subject), else any of its values."""
    own = written_addresses(item.text)
    if own:
        return any(isinstance(v, str) and v in own for v in call.arguments.values())
    return _said(call, item)


def owed(parts: Sequence[Clause], calls: Sequence[Any], callable_tools: Collection[str], fallback: str | None,
         after_results: bool, forced: Collection[int] = (), in_order: str | None = None
         ) -> tuple[int, tuple[str, ...]] | None:
    """The first clause no call answers and a callable tool could, as (its index, those tools); None when
    the request is covered. `forced` are the clauses that already forced a call (at most one each).
    `in_order` (the request): only when the first clause no call answers is one a tool could, and the request
    writes no value before it that no call has taken -- a call the model starts by itself goes to the next
    thing the user asked for, which may be a clause no tool names or a request read as none ("save Kofi 024
    123 4567 and Abena Asante 020 987 6543, and turn off the flashlight")."""
    free = list(range(len(parts)))
    for call in calls:
        scored = [(_score(call, parts[i]), -i) for i in free]
        best = max(scored, default=(0, 0))
        if best[0] > 0:
            free.remove(-best[1])
    for i in free:
        part = parts[i]
        if i in forced or part.needs_result and not after_results:
            continue
        if part.listed and any(_answers(call, part) for call in calls):   # its values went to a call named elsewhere
            continue
        if any(_repeats(call, part) for call in calls):
            continue
        tools = tuple(sorted(t for t in part.tools if t in callable_tools))
        if not part.tools and fallback in callable_tools:
            tools = (fallback,)
        if tools and not (in_order is not None and _unused_before(in_order, part.text, calls)):
            return i, tools
        if in_order is not None:
            return None
    return None


def _repeats(call: Any, part: Clause) -> bool:
    """Whether `part` asks again for what `call`, which takes no values, already did ("let there be light, torch
    now": one torch); "torch on, ..., then turn the torch off" asks for the other switch."""
    if call.arguments or call.name not in part.tools:
        return False
    said = switched([part])
    return said is None or said in call.name.lower().split("_")


def _unused_before(request: str, text: str, calls: Sequence[Any]) -> bool:
    """Whether `request` writes an address, a number or a quote before `text` that no call has taken."""
    used = " ".join(v for call in calls for v in call.arguments.values() if isinstance(v, str))
    return any(v not in used for v in written_values(request[:max(request.find(text), 0)]))


# What a request switches on and off by naming it (lexicon `clauses.switched_things`): "torch off" switches as "turn
# it off" does, and "open" switches on only a lamp (`clauses.lamps`: "open the torch", not "open the map").
LAMP_PATTERN = alternation(_WORDS.lamps, r"\s*")
# Switching something on or off: "turn the phone light on", "switch it off", "torch off", "kill the torch"; not
# "put it on my calendar" or "pull it up on the map".
_OPENS_LAMP = (r"(?=\s+(?:" + "|".join(rf"{re.escape(w)}\s+" for w in _WORDS.before_lamp) + r")*(?:" + LAMP_PATTERN
               + r")\b)")
_SWITCH_RE = re.compile(r"\b(?:" + alternation((*_WORDS.switch_verbs, *_WORDS.switched_things))
                        + r")\s+(?:[^\W_]+\s+){0,3}?("
                        + alternation((*_WORDS.switched_on, *_WORDS.switched_off)) + r")\b|\b("
                        + alternation((*_WORDS.switches_off, *_WORDS.switches_on)) + "|"
                        + "|".join(re.escape(w) + _OPENS_LAMP for w in _WORDS.opens) + r")\b", re.IGNORECASE)
# The word that switched, and which way: "on" or "off" (the words of the tools' names, "turn_on_flashlight").
_SENSE = {**{w: "on" for w in (*_WORDS.switched_on, *_WORDS.switches_on, *_WORDS.opens)},
          **{w: "off" for w in (*_WORDS.switched_off, *_WORDS.switches_off)}}


def switched(parts: Sequence[Clause]) -> str | None:
    """"on" or "off", when the request's clauses switch something one way and never the other ("Flashlight
    still on?? switch it off pls": "off"; "Please open torch and also wifi settings": "on"; "kill the torch and
    show X on the map": "off" -- "on the map" switches nothing; "open the wifi settings and turn on the torch,
    then stop the music": neither)."""
    said = {_SENSE[(m.group(1) or m.group(2)).lower()] for c in parts for m in _SWITCH_RE.finditer(mask_quotes(c.text))}
    return said.pop() if len(said) == 1 else None


def outside_others(parts: Sequence[Clause], tool: Any, text: str) -> list[str]:
    """`text` (a source of values) less the clauses that name only other tools, when `tool` has a clause of its
    own: the pieces a copied value of `tool` may come from."""
    parts = [c for c in parts if not c.listed]   # a list item's tool word is the list's, not its values' owner
    if not any(tool.name in c.tools for c in parts):
        return [text]
    pieces = [text]
    for c in parts:
        if c.tools and tool.name not in c.tools:
            pieces = [q for piece in pieces for q in piece.split(c.text)]
    return pieces


def claimed_elsewhere(request: str, parts: Sequence[Clause], tool: Any, value: str) -> bool:
    """Whether `value` belongs to another tool's request: every clause that writes it names other tools and
    not `tool`, and `tool` is named elsewhere in the request ("add Rohan to contacts and email careers@x.com":
    not Rohan's email; "store Mia Gagné, email mia@x.com": hers, since nothing else asks for a contact)."""
    holders = [c for c in parts if value in c.text and not c.listed]
    if not holders or any(not c.tools or tool.name in c.tools for c in holders):
        return False
    rest = request
    for c in holders:
        rest = rest.replace(c.text, " ")
    return any(re.search(rf"(?<![^\W_]){re.escape(k)}(?![^\W_])", rest, re.IGNORECASE) for k in keywords(tool))
