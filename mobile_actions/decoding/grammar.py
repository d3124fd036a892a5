"""Schema-constrained decoding: only tokens that keep the output a valid call may be chosen.

Two layers:
- a symbol-level automaton for `<start_function_call>call:NAME{key:value,...}<end_function_call>`
  over the declared tools (names, argument names, required arguments, `<escape>`-quoted strings,
  enums, numbers, booleans, arrays, nested objects and the Mobile Actions datetime pattern). Control
  strings are single symbols, so the structure can only be written with the real control tokens;
- a token layer: a token is allowed iff the automaton accepts its whole string from the current
  state. Structural states have a finite set of next symbols, so the allowed tokens are found by a
  depth-first walk over the sorted token strings (bisect finds "some token starts with this");
  free strings, where almost every token is legal, use one precomputed mask.

Every emitted call therefore parses and validates by construction. When the grammar admits only
one continuation (e.g. `call:` after `<start_function_call>`, the rest of a unique tool name),
`forced_tokens()` returns it tokenized, so the runtime appends it without a model step, except
the last token before a choice, which the model writes itself (token boundaries stay natural).
At the very start the model may also write plain text (a refusal); then only control strings are
kept out of it. The module needs numpy and tokenizers only (it runs in the torch-free runtime).
"""
from __future__ import annotations

import bisect
import calendar
import copy
import hashlib
import json
import re
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from mobile_actions.calls import argument_schema, is_datetime
from mobile_actions.catalog import Catalogue
from mobile_actions import acting
from mobile_actions.decoding import coverage
from mobile_actions.decoding.datetimes import expression_spans, resolve
from mobile_actions.errors import GrammarDeadEnd
from mobile_actions.wire import CONTROL_TOKEN_IDS, CONTROL_TOKENS, END_CALL, ESCAPE, START_CALL, STOP_STRINGS, parse

TOKEN_CACHE = "token_table.npz"
# Control strings become private-use symbols inside the automaton.
CTRL_SYM = {text: chr(0xE000 + k) for k, text in enumerate(CONTROL_TOKENS)}
S_START, S_END, S_ESC = CTRL_SYM[START_CALL], CTRL_SYM[END_CALL], CTRL_SYM[ESCAPE]
# Literal texts that must not appear inside strings or plain text: the parser would read them as structure.
FORBIDDEN_IN_STRINGS = (ESCAPE, *STOP_STRINGS)
FORBIDDEN_IN_TEXT = (*CONTROL_TOKENS, *STOP_STRINGS)
DATETIME_TEMPLATE = "dddd-dd-ddTdd:dd:dd"
DIGITS = frozenset("0123456789")


# ============================================================================================ automaton
class State:
    """A grammar state: immutable and hashable (allowed-token sets are memoised per state)."""

    can_stop = False

    def step(self, sym: str) -> "State | None":
        raise NotImplementedError

    def next_syms(self) -> frozenset | None:
        """The symbols that may come next; None for a free string (anything but the forbidden texts)."""
        raise NotImplementedError


@dataclass(frozen=True, eq=False)
class ObjSchema:
    """An object schema prepared for the automaton (identity-hashed: built once per grammar)."""
    props: dict
    required: frozenset


@dataclass(frozen=True, eq=False)
class StrSpec:
    kind: str                       # free | enum | datetime | span (values: the texts it is a substring of)
    values: tuple = ()              # | words (values: the lower-cased words it may use)
    heads: tuple = ()               # words: the words it may start with (empty: any of `values`)
    wholes: tuple = ()              # span: values taken whole or not at all (what the request put in quotes)
    unbroken: bool = False          # span: never ends where a phrase goes on with it (`GOES_ON_RE`)
    ends_before: frozenset = frozenset()   # span: ends only before these (`end_class`); empty: anywhere

    def may_end(self, text: str, j: int) -> bool:
        """Whether a value may end at ``text[j]`` (a word boundary): not before a phrase that goes on with it,
        and only before what the argument's values were seen to end before."""
        if self.unbroken and GOES_ON_RE.match(text, j):
            return False
        return not self.ends_before or end_class(text, j) in self.ends_before | ALWAYS_ENDS

    def _ends(self, content: str) -> Iterable[tuple[str, int]]:
        """span: (text, end) of every occurrence of ``content`` that starts on a word boundary, and not on a
        joining or filler word: "and email" or "Hmm" is nobody's value."""
        for text in self.values:
            i = text.find(content)
            while 0 <= i < len(text):
                if i == 0 or not (text[i - 1].isalnum() and text[i].isalnum()):
                    word = coverage.WORD_RE.match(text, i)
                    if not (word and word.group().lower() in NO_SPAN_START_WORDS):
                        yield text, i + len(content)
                i = text.find(content, i + 1)

    def continuations(self, content: str) -> set[str]:
        """span: the characters that keep ``content`` a substring of one of the texts (never a leading space
        or closing punctuation: ", and" is nobody's value) from which a whole span can still be reached.
        Without that last check a source ending "..., Paris, " or "... 🙏" let the model write itself into a
        value it could neither finish nor extend."""
        out = {text[j] for text, j in self._ends(content)
               if j < len(text) and _completable(text, j - len(content), j + 1, self.may_end)}
        out = {c for c in out if c not in _CTRL_SYMS and (content or not c.isspace() and c not in NO_SPAN_START)}
        n = len(content)
        return out | {w[n] for w in self.wholes if len(w) > n and w.startswith(content) and w[n] not in _CTRL_SYMS}

    def next_word_chars(self, content: str) -> set[str]:
        """words: the characters that keep ``content`` a sequence of the given words (any case) joined by
        single separators."""
        cur = _last_word(content)
        pool = self._pool(content)
        if cur:
            out = {w[len(cur)] for w in pool if w.startswith(cur) and len(w) > len(cur)}
            out = {c for ch in out for c in (ch, ch.upper())}
            return out | (WORD_SEPARATORS if cur in pool else set())
        if content and content[-1] in WORD_SEPARATORS and content[-1] != " ":
            return {" "} | {c for w in self.values for c in (w[0], w[0].upper())}
        if content.endswith(" ") or not content:
            return {c for w in pool for c in (w[0], w[0].upper())}
        return set()

    def _pool(self, content: str) -> tuple:
        """words: the words the current one may be (the heads while the first word is being written)."""
        return self.heads if self.heads and not any(c in WORD_SEPARATORS for c in content) else self.values

    def whole_words(self, content: str) -> bool:
        return bool(content) and content[-1].isalnum() and _last_word(content) in self._pool(content)

    def whole_span(self, content: str) -> bool:
        """span: ``content`` is a whole span: it ends on a word boundary too, without spaces at its ends, and
        holds a letter or digit (a lone "+" or "," is nobody's value); or one of the values taken whole."""
        if content in self.wholes:
            return True
        if not content or content != content.strip() or not any(c.isalnum() for c in content):
            return False
        return any((j == len(text) or not (text[j].isalnum() and content[-1].isalnum())) and self.may_end(text, j)
                   for text, j in self._ends(content))


def _completable(text: str, i: int, e: int, may_end) -> bool:
    """Whether ``text[i:e]`` extends to a whole span ``text[i:k]``, k >= e (`StrSpec.whole_span`)."""
    alnum = any(ch.isalnum() for ch in text[i:e])
    for k in range(e, len(text) + 1):
        alnum = alnum or text[k - 1].isalnum()
        if alnum and not text[k - 1].isspace() and (k == len(text) or not (text[k].isalnum() and text[k - 1].isalnum())):
            if may_end(text, k):
                return True
    return False


# A phrase that goes on with the value before it ("Mehndi| at Aunty Farah's", "Catch-up| with Liam", "bday party| 4
# Leo"), not one that says when, where to or for whom ("Dinner| at 7", "... in my calendar", "... for me"). An
# event's title never ends before one in the data (`grounding.learn_policies`: "unbroken"); a 270M model often does.
_NOT_GOING_ON = ("my the our your a an his her their me us you him them it this that next tomorrow today tonight "
                 "noon midnight half quarter one two three four five six seven eight nine ten eleven twelve "
                 "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun "
                 "january february march april may june july august september october november december "
                 "jan feb mar apr jun jul aug sep sept oct nov dec").split()
GOES_ON_RE = re.compile(r"\s+(?:with|w/|for|at|in|from|4|of|near|by)\s+(?!(?:" + "|".join(_NOT_GOING_ON)
                        + r")(?![^\W_])|\d)[^\W_]", re.IGNORECASE)


# What a copied value ends before, as a class (`end_class`). An event's title in the data ends before a quote,
# a date, "in"/"on"/"to" (my calendar) and little else, never before a plain word: a 270M model that stops at
# "Dentist| apointment for Ruby" or "Late check-in| tonight" (a subject, which keeps its dates) is cut short.
# Which classes each argument ends before is learned (`grounding.learn_policies`: "ends_before"); the ends below
# are always allowed, since no value goes on through them: the text's end, punctuation, joining and polite
# words, a verb that starts the next request, and a word that leads to an address or number ("with ana@x.com").
END, PUNCT, INSIDE, DASH, DATE, JOIN = "END", "PUNCT", "INSIDE", "DASH", "DATE", "JOIN"
END_CLASSES = frozenset({END, PUNCT, INSIDE, DASH, DATE, JOIN})   # besides these, a class is the next word
ALWAYS_ENDS = frozenset({END, PUNCT, JOIN})
_DASHES = "-–—"
_JOINS = frozenset("and then also plus or but so & is are was please pls plz kindly thanks thx thank ty tysm ok "
                   "okay asap lol cheers".split()) | coverage.VERBS


@lru_cache(maxsize=256)
def _date_starts(text: str) -> frozenset:
    return frozenset(start for start, _ in expression_spans(text))


def end_class(text: str, j: int) -> str:
    """What follows a value that ends at ``text[j]``: `END`, `PUNCT`, `INSIDE` (a hyphen, slash or apostrophe
    inside a word: "check|-in", "w|/ Maya"; a dash inside a value, `_dash_class`), `DASH` (" - "), `DATE` (a
    date/time expression), `JOIN` (see `ALWAYS_ENDS`) or the next word, lower-cased."""
    rest = text[j:]
    if not rest.strip():
        return END
    if not rest[0].isspace():
        if rest[0] == "/" or rest[0] in _DASHES + "'’" and rest[1:2].isalnum():
            return INSIDE
        if rest[0] in _DASHES:
            return _dash_class(text, j)
        return PUNCT if not rest[0].isalnum() else INSIDE
    k = len(text) - len(rest.lstrip())
    if k in _date_starts(text):
        return DATE
    word = coverage.WORD_RE.match(text, k)
    if not word:   # a symbol first: " - ", "#2", "(my GP)"
        return _dash_class(text, k) if text[k] in _DASHES else PUNCT
    after = text[word.end():].lstrip()
    w = word.group().lower()
    if w in _JOINS or coverage.EMAIL_RE.match(after) or coverage.PHONE_RE.match(after):
        return JOIN
    return w


# After a dash, a few words that ask and say nothing up to the clause's end are the rest of the value: "Sick day -
# Tomasz", "Running late – tram breakdown, then ...", "Broken boiler - flat 4B, body ...". Not "... - thank you!",
# "... - add them to my contacts", "... - where is it?", "... - +31 6 3956 0634" or a sentence.
_DASH_TAIL_RE = re.compile(r"[-–—]+((?:[^,.;!?\n]|\.(?=\S))*)")   # up to a comma, a stop (not one in "a.b@c.de")
_DASH_TAIL_WORDS = 4


def _dash_class(text: str, k: int) -> str:
    """`DASH`, or `INSIDE` when the dash at ``text[k]`` parts one value (`_DASH_TAIL_RE`)."""
    tail = _DASH_TAIL_RE.match(text, k).group(1)
    words = [w.lower() for w in coverage.WORD_RE.findall(tail)]
    goes_on = (0 < len(words) <= _DASH_TAIL_WORDS and not set(words) & (_JOINS | coverage.SENTENCE_WORDS)
               and not coverage.written_addresses(tail))
    return INSIDE if goes_on else DASH


WORD_SEPARATORS = frozenset(" ,'-")
NO_SPAN_START = frozenset(",.;:!?)]}")
NO_SPAN_START_WORDS = frozenset({"and", "then", "also", "hmm", "um", "uh", "erm"})


WORD_INNER = frozenset(".@/:")   # inside a word ("example.com"), never at either end (`grounding.GOAL_WORD_RE`)


def _last_word(content: str) -> str:
    """The lower-cased word at the end of ``content``: alphanumerics, and `WORD_INNER` characters after
    one (empty after a separator)."""
    i = len(content)
    while i > 0 and (content[i - 1].isalnum() or content[i - 1] in WORD_INNER and i > 1 and content[i - 2].isalnum()):
        i -= 1
    return content[i:].lower()


@dataclass(frozen=True)
class Lit(State):
    text: str
    cont: State

    def step(self, sym):
        if sym != self.text[0]:
            return None
        return self.cont if len(self.text) == 1 else Lit(self.text[1:], self.cont)

    def next_syms(self):
        return frozenset(self.text[0])


@dataclass(frozen=True)
class Start(State):
    """Before anything: a call (plain text is handled by the token layer)."""
    g: "CallGrammar"

    def step(self, sym):
        return Lit("call:", Name("", self.g)) if sym == S_START else None

    def next_syms(self):
        return frozenset(S_START)


@dataclass(frozen=True)
class AfterCall(Start):
    """After `<end_function_call>`: another call or stop."""
    can_stop = True


@dataclass(frozen=True)
class Name(State):
    prefix: str
    g: "CallGrammar"

    def step(self, sym):
        if sym == "{" and self.prefix in self.g.tools:
            return Key(self.g.tools[self.prefix], frozenset(), "", True, Lit(S_END, AfterCall(self.g)))
        p = self.prefix + sym
        return Name(p, self.g) if any(n.startswith(p) for n in self.g.tools) else None

    def next_syms(self):
        n = len(self.prefix)
        out = {name[n] for name in self.g.tools if name.startswith(self.prefix) and len(name) > n}
        if self.prefix in self.g.tools:
            out.add("{")
        return frozenset(out)


@dataclass(frozen=True)
class Key(State):
    """After `{` (first) or `,`: an argument name not used yet, or `}` once the required ones are in."""
    obj: ObjSchema
    used: frozenset
    prefix: str
    first: bool
    cont: State

    def _remaining(self):
        return [k for k in self.obj.props if k not in self.used]

    def step(self, sym):
        if sym == "}" and self.first and not self.prefix and self.obj.required <= self.used:
            return self.cont
        if sym == ":" and self.prefix in self.obj.props and self.prefix not in self.used:
            after = AfterValue(self.obj, self.used | {self.prefix}, self.cont)
            return value_state(self.obj.props[self.prefix], after)
        p = self.prefix + sym
        return Key(self.obj, self.used, p, self.first, self.cont) if any(k.startswith(p) for k in self._remaining()) else None

    def next_syms(self):
        n = len(self.prefix)
        rem = self._remaining()
        out = {k[n] for k in rem if k.startswith(self.prefix) and len(k) > n}
        if self.prefix in rem:
            out.add(":")
        if self.first and not self.prefix and self.obj.required <= self.used:
            out.add("}")
        return frozenset(out)


@dataclass(frozen=True)
class AfterValue(State):
    obj: ObjSchema
    used: frozenset
    cont: State

    def step(self, sym):
        if sym == "," and any(k not in self.used for k in self.obj.props):
            return Key(self.obj, self.used, "", False, self.cont)
        if sym == "}" and self.obj.required <= self.used:
            return self.cont
        return None

    def next_syms(self):
        out = set()
        if any(k not in self.used for k in self.obj.props):
            out.add(",")
        if self.obj.required <= self.used:
            out.add("}")
        return frozenset(out)


@dataclass(frozen=True)
class Str(State):
    """Inside `<escape>...<escape>`. Free strings keep only a short tail (enough to stop a
    forbidden literal such as `<escape>` being spelt across tokens)."""
    spec: StrSpec
    content: str
    cont: State

    def step(self, sym):
        if sym == S_ESC:
            return self.cont if self._complete() else None
        if sym in _CTRL_SYMS:
            return None
        c = self.content + sym
        kind = self.spec.kind
        if kind == "free":
            c = c[-_TAIL:]
            if any(f in c for f in FORBIDDEN_IN_STRINGS):
                return None
            return Str(self.spec, c, self.cont)
        if kind == "enum":
            return Str(self.spec, c, self.cont) if any(v.startswith(c) for v in self.spec.values) else None
        if kind == "span":
            return Str(self.spec, c, self.cont) if sym in self.spec.continuations(self.content) else None
        if kind == "words":
            return Str(self.spec, c, self.cont) if sym in self.spec.next_word_chars(self.content) else None
        return Str(self.spec, c, self.cont) if datetime_prefix_ok(c) else None

    def _complete(self):
        if self.spec.kind == "enum":
            return self.content in self.spec.values
        if self.spec.kind == "span":
            return self.spec.whole_span(self.content)
        if self.spec.kind == "words":
            return self.spec.whole_words(self.content)
        if self.spec.kind == "datetime":
            return len(self.content) == len(DATETIME_TEMPLATE) and datetime_prefix_ok(self.content)
        return True

    def next_syms(self):
        kind = self.spec.kind
        if kind == "free":
            return None
        out = set()
        if self._complete():
            out.add(S_ESC)
        if kind == "enum":
            n = len(self.content)
            out |= {v[n] for v in self.spec.values if v.startswith(self.content) and len(v) > n}
        elif kind == "span":
            out |= {c for c in self.spec.continuations(self.content)
                    if not any(f in (self.content + c)[-_TAIL:] for f in FORBIDDEN_IN_STRINGS)}
        elif kind == "words":
            out |= self.spec.next_word_chars(self.content)
        elif len(self.content) < len(DATETIME_TEMPLATE):
            t = DATETIME_TEMPLATE[len(self.content)]
            cands = DIGITS if t == "d" else {t}
            out |= {c for c in cands if datetime_prefix_ok(self.content + c)}
        return frozenset(out)


@dataclass(frozen=True)
class Num(State):
    integer: bool
    text: str
    cont: State

    def _chars(self):
        t = self.text
        if t in ("", "-"):
            return DIGITS | ({"-"} if not t else set())
        last = t.lstrip("-")
        if last == "0":
            return frozenset() if self.integer else frozenset(".")
        out = set(DIGITS) if t[-1] in DIGITS or t[-1] == "." else set()
        if not self.integer and "." not in t and t[-1] in DIGITS:
            out.add(".")
        return frozenset(out)

    def _complete(self):
        return bool(self.text) and self.text[-1] in DIGITS

    def step(self, sym):
        if sym in self._chars():
            return Num(self.integer, self.text + sym, self.cont)
        return self.cont.step(sym) if self._complete() else None

    def next_syms(self):
        out = set(self._chars())
        if self._complete():
            out |= self.cont.next_syms() or set()
        return frozenset(out)


@dataclass(frozen=True)
class Choice(State):
    """One of a few literal words (true/false/null)."""
    options: tuple
    prefix: str
    cont: State

    def step(self, sym):
        p = self.prefix + sym
        if p in self.options:
            return self.cont
        return Choice(self.options, p, self.cont) if any(o.startswith(p) for o in self.options) else None

    def next_syms(self):
        n = len(self.prefix)
        return frozenset(o[n] for o in self.options if o.startswith(self.prefix) and len(o) > n)


@dataclass(frozen=True, eq=False)
class ArrSpec:
    item: Any


@dataclass(frozen=True)
class Arr(State):
    """`[` seen (`first`) or `,` seen: an item (or `]` right after `[`)."""
    spec: ArrSpec
    first: bool
    cont: State

    def _item(self):
        return value_state(self.spec.item, ArrAfter(self.spec, self.cont))

    def step(self, sym):
        if sym == "]" and self.first:
            return self.cont
        return self._item().step(sym)

    def next_syms(self):
        out = set(self._item().next_syms() or ())
        if self.first:
            out.add("]")
        return frozenset(out)


@dataclass(frozen=True)
class ArrAfter(State):
    spec: ArrSpec
    cont: State

    def step(self, sym):
        if sym == ",":
            return Arr(self.spec, False, self.cont)
        return self.cont if sym == "]" else None

    def next_syms(self):
        return frozenset(",]")


_CTRL_SYMS = frozenset(CTRL_SYM.values())
_TAIL = max(len(f) for f in FORBIDDEN_IN_STRINGS)
# Specs are shared by content so that equal states hash equal across requests (the memo's hits). Bounded:
# grounded requests make per-request specs, and an evicted spec only costs a memo miss.
_SPECS: "OrderedDict[str, Any]" = OrderedDict()
_SPECS_KEEP = 4096


def _shared(key: str, make) -> Any:
    if key in _SPECS:
        _SPECS.move_to_end(key)
        return _SPECS[key]
    _SPECS[key] = value = make()
    if len(_SPECS) > _SPECS_KEEP:
        _SPECS.popitem(last=False)
    return value


def _obj(schema: dict) -> ObjSchema:
    return _shared("obj:" + json.dumps(schema, sort_keys=True),
                   lambda: ObjSchema(dict(schema.get("properties") or {}), frozenset(schema.get("required") or ())))


def _spec(kind: str, values: tuple = (), heads: tuple = (), wholes: tuple = (), unbroken: bool = False,
          ends_before: tuple = ()) -> StrSpec:
    return _shared(f"str:{kind}:{json.dumps([values, heads, wholes, unbroken, ends_before])}",
                   lambda: StrSpec(kind, values, heads, wholes, unbroken, frozenset(ends_before)))


def _arr(item: Any) -> ArrSpec:
    return _shared("arr:" + json.dumps(item, sort_keys=True), lambda: ArrSpec(item))


def value_state(schema: Any, cont: State) -> State:
    """The state that reads one value of `schema` and then continues with `cont`."""
    schema = schema if isinstance(schema, dict) else {}
    typ = schema.get("type")
    if isinstance(typ, list):
        typ = next((t for t in typ if t != "null"), "string")
    enum = schema.get("enum")
    if enum and all(isinstance(v, str) for v in enum) and typ in (None, "string"):
        return Lit(S_ESC, Str(_spec("enum", tuple(enum)), "", cont))
    hidden = schema.get("x-enum")   # choices the grammar enforces but the prompt does not list (screen labels)
    if hidden and all(isinstance(v, str) for v in hidden) and typ in (None, "string"):
        return Lit(S_ESC, Str(_spec("enum", tuple(hidden)), "", cont))
    if (schema.get("x-span") or schema.get("x-span-whole")) and typ in (None, "string"):  # set by decoding.grounding
        spec = _spec("span", tuple(schema.get("x-span") or ()), wholes=tuple(schema.get("x-span-whole") or ()),
                     unbroken=schema.get("x-span-unbroken") is True,
                     ends_before=tuple(sorted(x for x in schema.get("x-span-ends-before") or () if isinstance(x, str))))
        if spec.continuations(""):   # sources of only fillers and joins ("um, ", ", and then ") offer no value
            return Lit(S_ESC, Str(spec, "", cont))
    if schema.get("x-words") and typ in (None, "string"):
        heads = tuple(schema.get("x-words-first") or ())
        return Lit(S_ESC, Str(_spec("words", tuple(schema["x-words"]), heads), "", cont))
    if enum and all(isinstance(v, bool) or v is None for v in enum):
        return Choice(tuple("null" if v is None else ("true" if v else "false") for v in enum), "", cont)
    if typ in ("integer", "number"):
        return Num(typ == "integer", "", cont)
    if typ == "boolean":
        return Choice(("true", "false") + (("null",) if schema.get("nullable") else ()), "", cont)
    if typ == "array":
        return Lit("[", Arr(_arr(schema.get("items") or {"type": "string"}), True, cont))
    if typ == "object":
        return Lit("{", Key(_obj(schema), frozenset(), "", True, cont))
    return Lit(S_ESC, Str(_spec("datetime" if is_datetime(schema) else "free"), "", cont))


def datetime_prefix_ok(s: str) -> bool:
    """Can `s` be extended to a real `YYYY-MM-DDTHH:MM:SS`? (So the model never writes itself into a dead end.)"""
    if len(s) > len(DATETIME_TEMPLATE):
        return False
    for c, t in zip(s, DATETIME_TEMPLATE):
        if (t == "d") != (c in DIGITS) or (t != "d" and c != t):
            return False
    n = len(s)
    if n >= 6 and s[5] not in "01":
        return False
    if n >= 7:
        month = int(s[5:7])
        if not 1 <= month <= 12:
            return False
        year = int(s[:4])
        last = calendar.monthrange(year if year > 0 else 2000, month)[1]
        if n >= 9:
            d1 = int(s[8])
            if d1 * 10 > last:
                return False
            if n >= 10 and not 1 <= int(s[8:10]) <= last:
                return False
    if n >= 12 and s[11] not in "012":
        return False
    if n >= 13 and int(s[11:13]) > 23:
        return False
    if n >= 15 and s[14] not in "012345":
        return False
    if n >= 18 and s[17] not in "012345":
        return False
    return True


_CLAUSE_END = frozenset(".!?…)]\"'”’")


def _spans_within(schema: dict, request: str, clause: str) -> dict | None:
    """A span argument's schema (`grounding`'s ``x-span`` pieces, ``x-span-whole`` values) narrowed to what lies
    in `clause`, a part of `request`; None when nothing of it does (the value is said elsewhere: "email him.
    The subject is ...")."""
    lo = request.find(clause)
    if lo < 0:
        return None
    hi = lo + len(clause)
    while hi < len(request) and request[hi] in _CLAUSE_END:   # a clause leaves out the "?" its question ends on
        hi += 1
    pieces = []
    for piece in schema.get("x-span") or ():
        i = request.find(piece)
        while i >= 0:
            a, b = max(i, lo), min(i + len(piece), hi)
            if a < b and request[a:b].strip():
                pieces.append(request[a:b])
            i = request.find(piece, i + 1)
    wholes = [w for w in schema.get("x-span-whole") or () if w in clause]
    if not pieces and not wholes:
        return None
    out = {k: v for k, v in schema.items() if k not in ("x-span", "x-span-whole")}
    return {**out, **({"x-span": list(dict.fromkeys(pieces))} if pieces else {}),
            **({"x-span-whole": wholes} if wholes else {})}


class CallGrammar:
    """The automaton for one catalogue; `start()` is the state before the model's first symbol.
    With a `grounding.Grounding`, each tool's arguments are narrowed to what that request offers."""

    def __init__(self, catalogue: Catalogue, grounding: Any = None):
        self.catalogue = catalogue
        self.grounding = grounding
        self.grounded = grounding is not None
        # A declaration may be shown but not callable here (``"x-callable": false`` in its parameters, e.g.
        # `type_text` on a screen with no focused field, or set by the grounding: `send_email` when nobody
        # wrote an address): the prompt stays the same, the grammar refuses it.
        # The request's clauses (`coverage`): what a turn must cover, and which values belong to which tool.
        self.clauses = coverage.clauses(grounding.request, catalogue) if grounding is not None else []
        # Clauses the person does not ask for ("send no email to ...", "should I save ...?") are never owed.
        self.unasked = (acting.unasked(grounding.request, [c.text for c in self.clauses])
                        if grounding is not None else frozenset())
        self.fallback = coverage.fallback_tool(catalogue)   # the GUI-step tool, if offered
        schemas = {t.name: grounding.tool_schema(t, self.clauses) if grounding is not None else argument_schema(t)
                   for t in catalogue}
        schemas = {name: s for name, s in schemas.items() if s.get("x-callable", True) is not False}
        self.tools = {name: _obj(s) for name, s in schemas.items()}
        # A follow-up that still owes an address the user wrote, to a tool that takes it and changes nothing: a
        # call, not text. A call that changes or sends something is never forced: the model makes it or not.
        owed = set(grounding.owed_emails) if grounding is not None else set()
        self.must_call = bool(owed) and any(owed & set(p.get("enum") or ()) for name, s in schemas.items()
                                            if catalogue[name].effect == "none"
                                            for p in (s.get("properties") or {}).values() if isinstance(p, dict))
        # A follow-up whose request the earlier calls have covered, owing no address: a text reply. A 270M
        # model otherwise answers "All done" results with one more call, e.g. the map's answer mailed to an
        # address the request gave a contact.
        self.must_answer = (grounding is not None and grounding.after_results and not owed
                            and bool(self.clauses) and coverage.owed(self.clauses, grounding.calls, self.tools,
                                                                     self.fallback, True, self.unasked) is None)

    def start(self) -> State:
        return Start(self)

    def only(self, names: Iterable[str], values: dict[str, dict[str, list[str] | dict]] | None = None
             ) -> "CallGrammar":
        """The same grammar with only these tools callable (the call a request still owes); `values` narrows
        string arguments of theirs, per tool and argument, to a list of values or to a schema (what the clause
        the call is for says); an optional argument narrowed to no value is not offered."""
        sub = copy.copy(self)
        sub.tools = {n: o for n, o in self.tools.items() if n in set(names)}
        for name, obj in sub.tools.items():
            given = (values or {}).get(name, {})
            props = {k: v for k, v in obj.props.items()}
            for k, narrowed in given.items():
                if k in props and not narrowed and k not in obj.required:   # nothing left it may take
                    del props[k]
                elif k in props:
                    props[k] = narrowed if isinstance(narrowed, dict) else {"type": "string", "enum": list(narrowed)}
            sub.tools[name] = ObjSchema(props, obj.required)
        return sub


def accepts(grammar: CallGrammar, text: str) -> bool:
    """Whether `text` (control strings written out) is one or more complete calls; for tests."""
    state: State | None = grammar.start()
    i = 0
    while i < len(text) and state is not None:
        for ctrl, sym in CTRL_SYM.items():
            if text.startswith(ctrl, i):
                state, i = state.step(sym), i + len(ctrl)
                break
        else:
            state, i = state.step(text[i]), i + 1
    return state is not None and state.can_stop


# ============================================================================================ tokens
@dataclass
class TokenTable:
    """Per tokenizer: each id's string in automaton symbols (None: never allowed by the grammar),
    which ids are plain text, and a sorted index for prefix search. Built once and cached in the
    model folder (`token_table.npz`, ~5 MB for Gemma), since decoding and sorting 262k ids takes
    seconds in Python; loading the cache takes a fraction of that."""
    strings: list            # str | None per id; control ids map to their private-use symbol
    opaque: np.ndarray       # bool: partial UTF-8 byte tokens (only inside strings/text)
    stop_ids: tuple
    control_ids: dict
    key_ids: np.ndarray | None = None     # regular ids sorted by string (derived when None)
    string_ok: np.ndarray | None = None   # free-string content
    text_ok: np.ndarray | None = None     # plain-text reply

    def __post_init__(self):
        n = len(self.strings)
        self.size = n
        ctrl = set(self.control_ids.values())
        if self.key_ids is None:
            regular = [(s, i) for i, s in enumerate(self.strings) if s and not self.opaque[i] and i not in ctrl]
            regular.sort()
            self.key_ids = np.array([i for _, i in regular], dtype=np.int64)
        if self.string_ok is None or self.text_ok is None:
            plain = np.zeros(n, dtype=bool)
            text_ok = np.zeros(n, dtype=bool)
            for i, s in enumerate(self.strings):
                if s and i not in ctrl:
                    plain[i] = not any(f in s for f in FORBIDDEN_IN_STRINGS)
                    text_ok[i] = not any(f in s for f in FORBIDDEN_IN_TEXT)
            self.string_ok, self.text_ok = plain, text_ok
        strings = self.strings
        self.keys = [strings[i] for i in self.key_ids.tolist()]
        self._starts: dict[str, np.ndarray] = {}

    def prefix_range(self, p: str) -> tuple[int, int]:
        lo = bisect.bisect_left(self.keys, p)
        hi = bisect.bisect_left(self.keys, p + "\U0010ffff", lo)
        return lo, hi

    def ids_starting_with(self, p: str) -> np.ndarray:
        if p not in self._starts:
            lo, hi = self.prefix_range(p)
            self._starts[p] = self.key_ids[lo:hi]
        return self._starts[p]

    # ------------------------------------------------------------------ building
    @classmethod
    def from_tokenizer(cls, tokenizer, stop_ids: Iterable[int], control_ids: dict | None = None) -> "TokenTable":
        strings, opaque = _token_strings(tokenizer, control_ids or CONTROL_TOKEN_IDS)
        return cls(strings, np.array(opaque, dtype=bool), tuple(stop_ids), dict(control_ids or CONTROL_TOKEN_IDS))

    def save(self, path: Path, digest: str) -> None:
        encoded = [(s or "").encode("utf-8", "surrogatepass") for s in self.strings]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([len(e) for e in encoded])
        with open(path, "wb") as f:
            np.savez(f, blob=np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets=offsets,
                     none=np.array([s is None for s in self.strings]), opaque=self.opaque, key_ids=self.key_ids,
                     string_ok=self.string_ok, text_ok=self.text_ok, digest=np.array(digest))

    @classmethod
    def from_folder(cls, folder: str | Path) -> "TokenTable":
        """Load (or build and try to cache) the table of an exported model folder."""
        from tokenizers import Tokenizer

        folder = Path(folder)
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        tok_path = folder / manifest.get("tokenizer", "tokenizer.json")
        digest = hashlib.sha256(tok_path.read_bytes()).hexdigest()
        controls = {k: int(v) for k, v in manifest.get("control_token_ids", CONTROL_TOKEN_IDS).items()}
        stop = tuple(manifest["stop_token_ids"])
        cache = folder / TOKEN_CACHE
        if cache.is_file():
            with np.load(cache) as z:
                if str(z["digest"]) == digest:
                    blob, off, none = z["blob"].tobytes(), z["offsets"].tolist(), z["none"].tolist()
                    strings = [None if none[i] else blob[off[i]:off[i + 1]].decode("utf-8", "surrogatepass")
                               for i in range(len(none))]
                    return cls(strings, z["opaque"], stop, controls, z["key_ids"], z["string_ok"], z["text_ok"])
        strings, opaque = _token_strings(Tokenizer.from_file(str(tok_path)), controls)
        table = cls(strings, np.array(opaque, dtype=bool), stop, controls)
        try:
            table.save(cache, digest)
        except OSError:
            pass  # a read-only folder: rebuild next time
        return table


def _token_strings(tokenizer, control_ids: dict) -> tuple[list, list]:
    """Decode every id alone. Special tokens other than the control strings are None."""
    tok = getattr(tokenizer, "backend_tokenizer", tokenizer)  # transformers fast tokenizer or tokenizers.Tokenizer
    n = tok.get_vocab_size(with_added_tokens=True)
    special = {i for i, t in tok.get_added_tokens_decoder().items() if t.special}
    texts = tok.decode_batch([[i] for i in range(n)], skip_special_tokens=False)
    by_id = {v: k for k, v in control_ids.items()}
    strings: list = []
    opaque: list = []
    for i, s in enumerate(texts):
        if i in by_id:
            strings.append(CTRL_SYM[by_id[i]])
            opaque.append(False)
        elif i in special or not s:
            strings.append(None)
            opaque.append(False)
        else:
            strings.append(s)
            opaque.append("\ufffd" in s)
    return strings, opaque


# ============================================================================================ constraint
class _Text:
    """Marker state: the model chose a plain-text reply."""


TEXT = _Text()
_SYM_CTRL = {sym: text for text, sym in CTRL_SYM.items()}


class Constraint:
    """Per request: which token ids are legal now, and the state after each chosen token."""

    def __init__(self, grammar: CallGrammar, table: TokenTable, tokenizer=None, memo: dict | None = None):
        self.g, self.t, self.tokenizer = grammar, table, tokenizer
        self.state: Any = grammar.start()
        self.memo = memo if memo is not None else {}
        # A grounded grammar's states belong to one request: memoise them here, not in the shared memo.
        self.states = {} if grammar.grounded else self.memo
        self._ctrl_id = {CTRL_SYM[k]: v for k, v in table.control_ids.items()}
        self._syms: list[str] = []          # this turn's calls so far, in automaton symbols
        self._forced: set[int] = set()      # the request's clauses that have forced a call
        self._owed: tuple[int, tuple[str, ...]] | None = None   # (clause, tools) the next call is for

    # ------------------------------------------------------------------ coverage
    def _owed_call(self, in_order: bool = False) -> tuple[int, tuple[str, ...]] | None:
        """A clause of the request no call answers yet, and the tools that may answer it (`coverage`).
        Only for grounded requests, and only once the turn has made a call or answers tool results: the
        model itself decides whether the request is one for the tools at all."""
        gr = self.g.grounding
        if gr is None or not (self._syms or gr.after_results):
            return None
        if not self.g.clauses:
            return None
        text = "".join(_SYM_CTRL.get(c, c) for c in "".join(self._syms))
        calls = [*gr.calls, *parse(text).calls]
        return coverage.owed(self.g.clauses, calls, self.g.tools, self.g.fallback, gr.after_results,
                             self._forced | self.g.unasked, gr.request if in_order else None)

    def _clause_values(self, i: int, tools: tuple[str, ...]) -> dict[str, dict[str, list[str] | dict]]:
        """What a call made for clause `i` takes from that clause. A GUI step says the clause: its goal
        arguments (policy ``words``) are the clause's text, not words a model picks from the request ("write a
        note saying call Omar", not "call Omar"). A date-time, an address, a number or a copied text is one
        the clause says, when it says one: in "put standup mon 9am and retro fri 4pm on my calendar", retro's
        date-time is Friday's; in "Email sales@x.com, hello@y.com and info@z.com", the mail owed for the second
        item goes to hello@y.com; in "Put School photos on Wednesday, Parents' evening at Oakwood on Thursday at
        5:45pm and ...", the event owed for the list's second item is titled from that item."""
        gr, fallback, text = self.g.grounding, self.g.fallback, self.g.clauses[i].text
        if tools == (fallback,):
            if any(f in text for f in FORBIDDEN_IN_STRINGS):
                return {}
            props = argument_schema(self.g.catalogue[fallback]).get("properties") or {}
            return {fallback: {arg: [text] for arg, sub in props.items()
                               if isinstance(sub, dict) and gr.policy(fallback, arg, sub) == "words"}}
        said = resolve(text, gr.now) if gr.now is not None else []
        out: dict[str, dict[str, list[str] | dict]] = {}
        for name in tools:
            for arg, sub in self.g.tools[name].props.items():
                if not isinstance(sub, dict):
                    continue
                policy = gr.policy(name, arg, sub)
                if policy in ("datetime", "email", "phone"):
                    keep = [v for v in sub.get("enum") or () if (v in said if policy == "datetime" else v in text)]
                else:   # a list item writes its own values; a clause may name them ("show me that on the map")
                    keep = _spans_within(sub, gr.request, text) if policy == "span" and self.g.clauses[i].listed else None
                if keep:
                    out.setdefault(name, {})[arg] = keep
        return out

    def _first_call(self) -> CallGrammar:
        """The grammar of the turn's first call, which the model starts by itself: a tool that a list of the
        request names takes the first item's date-time, address and number, as the calls owed for the later
        items take theirs (in "add Dentist Monday 9am, Haircut Wed 4pm", the first event is Monday's), and never
        an address or number a later item writes ("save Ingrid ingrid@nrk.no and Ole Hansen +47 912 34 567":
        Ingrid has no number). The first item is the clause before the list's first `listed` one; its copied
        texts stay free, since a list read where there is none ("called 'X' and the text 'Y'") would cut them."""
        clauses, gr, values = self.g.clauses, self.g.grounding, {}
        for name in self.g.tools.keys() - {self.g.fallback}:
            first = next((i for i, c in enumerate(clauses) if c.listed and name in c.tools), None)
            if first is None:
                continue
            head = next((i for i in range(first - 1, -1, -1) if not clauses[i].listed), None)
            if head is None:
                continue
            mine = self._clause_values(head, (name,)).get(name, {})
            items = [c.text for c in clauses[first:] if c.listed and name in c.tools]
            for arg, sub in self.g.tools[name].props.items():
                if arg not in mine and isinstance(sub, dict) and gr.policy(name, arg, sub) in ("email", "phone"):
                    enum = sub.get("enum") or []
                    rest = [v for v in enum if not any(v in item for item in items)]
                    if len(rest) < len(enum) and (rest or arg not in self.g.tools[name].required):
                        mine[arg] = rest
            if mine:
                values[name] = mine
        return self.g.only(self.g.tools, values) if values else self.g

    def settle(self, token_id: int) -> int:
        """The token to take instead of the model's greedy choice `token_id`: a call's start when the model
        would end the turn (or answer tool results in text) while a clause of the request is owed
        (`coverage`) and a tool that changes nothing can answer it; that call is then restricted to those tools.
        A call that changes or sends something is never forced; one the model starts by itself is restricted to
        the owed clause's tools (`advance`). Every runtime calls this on its choice, so the model keeps the turn
        whenever it continues by itself."""
        s, start = self.state, self._ctrl_id[S_START]
        if token_id == start or not isinstance(s, Start):
            return token_id
        gr = self.g.grounding
        if not isinstance(s, AfterCall) and not (gr is not None and gr.after_results):
            return token_id   # the turn's first choice: the model decides whether this is a request for tools
        owed = self._owed_call()
        if owed is not None:   # only a call that changes nothing is forced (`Tool.effect`); others are the model's
            i, tools = owed
            tools = tuple(t for t in tools if self.g.catalogue[t].effect == "none")
            owed = (i, tools) if tools else None
        self._owed = owed
        return start if owed is not None else token_id

    # ------------------------------------------------------------------ allowed
    def allowed(self) -> np.ndarray:
        """Either an int array of legal ids, or a bool mask over the vocabulary."""
        s = self.state
        if isinstance(s, Start) and not isinstance(s, AfterCall) and self.g.must_call:
            return np.array([self._ctrl_id[S_START]], dtype=np.int64)
        if self.g.must_answer and (s is TEXT or isinstance(s, Start) and not isinstance(s, AfterCall)):
            if "answer" not in self.memo:
                m = self.t.text_ok.copy()
                m[list(self.t.stop_ids)] = True
                self.memo["answer"] = m
            return self.memo["answer"]
        if s is TEXT or isinstance(s, Start) and not isinstance(s, AfterCall):
            key = "text" if s is TEXT else "start"
            if key not in self.memo:
                m = self.t.text_ok.copy()
                m[list(self.t.stop_ids)] = True
                m[self._ctrl_id[S_START]] = bool(self.g.tools)  # no tools: a call could never be finished
                self.memo[key] = m
            return self.memo[key]
        if isinstance(s, Str) and s.spec.kind == "free":
            return self._free_mask(s)
        hit = self.states.get(s)
        if hit is None:
            hit = self.states[s] = self._walk(s)
        return hit

    def _free_mask(self, s: Str) -> np.ndarray:
        m = self.t.string_ok
        extra_off = []
        for f in FORBIDDEN_IN_STRINGS:
            for k in range(1, len(f)):
                if s.content.endswith(f[:k]):
                    extra_off.append(self.t.ids_starting_with(f[k:]))
        m = m.copy() if extra_off else m.copy()
        for ids in extra_off:
            m[ids] = False
        m[self._ctrl_id[S_ESC]] = True
        return m

    def _walk(self, s: State) -> np.ndarray:
        ids: list[int] = list(self.t.stop_ids) if s.can_stop else []
        keys, key_ids = self.t.keys, self.t.key_ids

        def dfs(prefix: str, state: State) -> None:
            syms = state.next_syms()
            if syms is None:
                raise AssertionError("a free string cannot be entered inside a token")
            for c in syms:
                if c in _CTRL_SYMS:
                    if not prefix:
                        ids.append(self._ctrl_id[c])
                    continue
                p = prefix + c
                lo, hi = self.t.prefix_range(p)
                if lo == hi:
                    continue
                ns = state.step(c)
                if ns is None:
                    continue
                j = lo
                while j < hi and keys[j] == p:
                    ids.append(int(key_ids[j]))
                    j += 1
                if j < hi:
                    dfs(p, ns)

        dfs("", s)
        return np.array(sorted(set(ids)), dtype=np.int64)

    # ------------------------------------------------------------------ advance
    def advance(self, token_id: int) -> None:
        s = self.state
        if token_id in self.t.stop_ids:
            self.state = None
            return
        text = self.t.strings[token_id]
        if s is TEXT or isinstance(s, Start):
            if text == S_START:
                grammar = self.g
                if isinstance(s, AfterCall) and self._owed is None:   # a call the model goes on to by itself is
                    self._owed = self._owed_call(in_order=True)     # for the next clause, in the user's order
                if isinstance(s, Start) and self._owed is not None:   # the call a clause is owed (`settle`)
                    i, tools = self._owed
                    self._forced.add(i)
                    self._owed = None
                    grammar = self.g.only(tools, self._clause_values(i, tools))
                elif not self._syms:
                    grammar = self._first_call()
                self.state = Lit("call:", Name("", grammar))
                self._syms.append(text)
            elif isinstance(s, AfterCall):
                raise ValueError(f"token {token_id} ({text!r}) is not allowed here")
            else:
                self.state = TEXT
            return
        for sym in text:
            s = s.step(sym)
            if s is None:
                raise ValueError(f"token {token_id} ({text!r}) is not allowed here")
        self.state = s
        self._syms.append(text)

    @property
    def in_call(self) -> bool:
        return self.state is not TEXT and self.state is not None and not isinstance(self.state, Start)

    # ------------------------------------------------------------------ forced
    def take(self, token_id: int) -> list[int] | None:
        """Advance by the chosen token and then by every token the grammar forces after it: those forced
        tokens, which the runtime appends without a model step (None: the turn is over)."""
        self.advance(token_id)
        if self.state is None:
            return None
        forced = self.forced_tokens()
        for f in forced:
            self.advance(f)
        return forced

    def forced_tokens(self) -> list[int]:
        """Tokens for the only legal continuation from here (empty when there is a choice)."""
        s = self.state
        if not self.in_call or self.tokenizer is None:
            return []
        syms = []
        while s is not None and not s.can_stop:
            nxt = s.next_syms()
            if nxt is None or len(nxt) != 1:
                break
            (c,) = nxt
            syms.append(c)
            s = s.step(c)
        if not syms:
            return []
        out: list[int] = []
        run = ""
        for c in syms + [None]:
            if c is None or c in _CTRL_SYMS:
                if run:
                    ids = self._encode(run)
                    if ids is None:
                        return out  # cannot tokenize exactly: stop forcing before this run
                    # A run that ends where the model has a choice keeps its last token back: the model
                    # writes it, merged with what follows as in training ("_on" / "_off", not "_o" +
                    # "n"; "{}" not "{" + "}"). Forcing a split the model never saw derails it.
                    out += ids if c is not None else ids[:-1]
                    run = ""
                if c is not None:
                    out.append(self._ctrl_id[c])
            else:
                run += c
        return out

    def _encode(self, text: str) -> list[int] | None:
        key = ("enc", text)
        if key not in self.memo:
            ids = self.tokenizer.encode(text, add_special_tokens=False).ids
            ok = "".join(self.t.strings[i] or "\0" for i in ids) == text
            self.memo[key] = list(ids) if ok else None
        return self.memo[key]


class Constraints:
    """One token table, a grammar per catalogue: a fresh `Constraint` for each request.

    Why shared: building the allowed-token sets of structural states is the slow part of constrained
    decoding, and they depend only on (table, catalogue); keyed by the catalogue's content, equal
    catalogues share one grammar and its memo. The ONNX runtime, `eval --grammar` and the PyTorch
    caller all decode through this."""

    def __init__(self, table: TokenTable, tokenizer=None, keep: int = 8, policies: dict | None = None):
        """`policies` (``tool.argument -> policy``, `grounding.read_policies`) turns grounding on: every
        request's values are then narrowed to what its messages offer; None decodes under the grammar only."""
        self.table, self.tokenizer, self.keep = table, tokenizer, keep
        self.policies = policies
        self._grammars: dict[str, tuple[CallGrammar, dict]] = {}

    def for_tools(self, tools: Catalogue, messages: Sequence[dict] | None = None) -> Constraint:
        """`tokenizer` (a `tokenizers.Tokenizer`) enables `forced_tokens()`; without it nothing is forced.
        With grounding on, `messages` (the conversation so far) is what values may be taken from."""
        key = json.dumps([t.to_openai() for t in tools], sort_keys=True)
        if key not in self._grammars:
            if len(self._grammars) >= self.keep:
                self._grammars.pop(next(iter(self._grammars)))
            self._grammars[key] = (CallGrammar(tools), {})
        grammar, memo = self._grammars[key]
        if self.policies is not None and messages is not None:
            from mobile_actions.decoding.grounding import Grounding

            grammar = CallGrammar(tools, Grounding.from_messages(messages, self.policies))
        return Constraint(grammar, self.table, self.tokenizer, memo)


def allowed_mask(allowed: np.ndarray, size: int) -> np.ndarray:
    """`Constraint.allowed()` (ids or a mask) as a bool mask of `size` (a model's head may be wider
    than its tokenizer: the extra ids are never allowed)."""
    if allowed.dtype == bool:
        return allowed if len(allowed) == size else np.pad(allowed[:size], (0, max(0, size - len(allowed))))
    m = np.zeros(size, dtype=bool)
    m[allowed[allowed < size]] = True
    return m


def pick(logits: np.ndarray, allowed: np.ndarray) -> int:
    """Greedy choice among the allowed ids (int array) or mask (bool array); a mask is fitted to the
    logits' width first (a head may be wider than its tokenizer)."""
    if len(allowed) == 0 or allowed.dtype == bool and not allowed.any():
        raise GrammarDeadEnd("no token is allowed: the grammar reached a dead end")
    if allowed.dtype == bool:
        if len(allowed) != len(logits):
            allowed = allowed_mask(allowed, len(logits))
        return int(np.argmax(np.where(allowed, logits, -np.inf)))
    return int(allowed[int(np.argmax(logits[allowed]))])


def constrain_sequence(grammar: CallGrammar, table: TokenTable, logits_seq: Sequence[np.ndarray],
                       tokenizer=None, max_tokens: int = 256) -> list[int]:
    """Greedy decoding over given per-step logits (a test/diagnostic helper without a model)."""
    c = Constraint(grammar, table, tokenizer)
    out: list[int] = []
    for step in range(max_tokens):
        logits = logits_seq[step % len(logits_seq)]
        tid = c.settle(pick(logits, c.allowed()))
        out.append(tid)
        forced = c.take(tid)
        if forced is None:
            break
        out += forced
    return out
