"""The call automaton: a symbol-level automaton for `<start_function_call>call:NAME{key:value,...}<end_function_call>`
over the callable tools (names, argument names, required arguments, `<escape>`-quoted strings, enums, numbers,
booleans, arrays, nested objects and the Mobile Actions datetime pattern). Control strings are single symbols,
so the structure can only be written with the real control tokens. States are immutable and hashable, so the
token layer (`decoding.constraint`) memoises the allowed tokens of each.

Every emitted call therefore parses and validates by construction. The engine knows no language and nothing of
requests: what a string value may be is `decoding.strings` (where copies start and end comes as positions read by
`decoding.spans`), and which tools and values a request leaves callable as schemas (`decoding.turn.TurnPlan`).
It needs nothing beyond the standard library (it runs in the torch-free runtime).
"""
from __future__ import annotations

import copy
import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence


from mobile_actions.calls import argument_schema, is_datetime
from mobile_actions.catalog import Catalogue
from mobile_actions.wire import format_value
from mobile_actions.decoding.strings import (DATETIME_TEMPLATE, DIGITS, Source, SpanBounds, StrSpec,
                                             datetime_prefix_ok)
from mobile_actions.decoding.tokens import CTRL_SYM, CTRL_SYMS, FORBIDDEN_IN_STRINGS, S_END, S_ESC, S_START

# A number ends: a 270M model otherwise writes "1.84000000..." to the token limit and the cut call is lost.
MAX_WHOLE_DIGITS, MAX_FRACTION_DIGITS = 15, 6


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
    bounds: "SpanBounds | None" = None   # where copied values start and end (`value_state`)


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
            return value_state(self.obj.props[self.prefix], after, self.obj.bounds)
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
        if sym in CTRL_SYMS:
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
    """A JSON number; with the schema's `minimum` / `maximum` (`low` / `high`), no sign below a minimum of 0 and,
    for non-negative numbers, no digit that takes the whole part past the maximum (a call outside them would
    only be refused by validation after it was written)."""
    integer: bool
    text: str
    cont: State
    low: float | None = None
    high: float | None = None
    allowed: frozenset[str] | None = None   # the only numbers it may write (``x-numbers``, set by grounding)

    def _chars(self):
        t = self.text
        if self.allowed is not None:
            return frozenset(a[len(t)] for a in self.allowed if len(a) > len(t) and a.startswith(t))
        if t in ("", "-"):
            first = DIGITS - ({"0"} if self.integer and self.low is not None and self.low >= 1 else set())
            return self._fits(first | ({"-"} if not t and (self.low is None or self.low < 0) else set()))
        last = t.lstrip("-")
        if last == "0":
            return frozenset() if self.integer else frozenset(".")
        whole, _, fraction = last.partition(".")
        room = len(fraction) < MAX_FRACTION_DIGITS if "." in last else len(whole) < MAX_WHOLE_DIGITS
        out = set(DIGITS) if room and (t[-1] in DIGITS or t[-1] == ".") else set()
        if not self.integer and "." not in t and t[-1] in DIGITS:
            out.add(".")
        return self._fits(out)

    def _fits(self, chars) -> frozenset:
        """The characters after which the whole part of a non-negative number stays within the maximum."""
        if self.high is None or self.text.startswith("-") or "." in self.text:
            return frozenset(chars)
        return frozenset(c for c in chars if not c.isdigit() or int(self.text + c) <= self.high)

    def _complete(self):
        if self.allowed is not None:
            return self.text in self.allowed
        if not (bool(self.text) and self.text[-1] in DIGITS):
            return False
        value = float(self.text)
        return (self.low is None or value >= self.low) and (self.high is None or value <= self.high)

    def step(self, sym):
        if sym in self._chars():
            return Num(self.integer, self.text + sym, self.cont, self.low, self.high, self.allowed)
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
    bounds: "SpanBounds | None" = None
    most: int | None = None   # items at most: the schema's maxItems, or as many as an item's enum has choices


@dataclass(frozen=True)
class Arr(State):
    """`[` seen (`first`) or `,` seen: an item (or `]` right after `[`); `n` items before it."""
    spec: ArrSpec
    first: bool
    cont: State
    n: int = 0

    def _item(self):
        return value_state(self.spec.item, ArrAfter(self.spec, self.cont, self.n + 1), self.spec.bounds)

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
    """After an item (`n` so far): another, unless the array holds all it may."""
    spec: ArrSpec
    cont: State
    n: int = 1

    def step(self, sym):
        if sym == "," and (self.spec.most is None or self.n < self.spec.most):
            return Arr(self.spec, False, self.cont, self.n)
        return self.cont if sym == "]" else None

    def next_syms(self):
        return frozenset(",]") if self.spec.most is None or self.n < self.spec.most else frozenset("]")


_TAIL = max(len(f) for f in FORBIDDEN_IN_STRINGS)
# Specs are shared by content so that equal states hash equal across requests (the memo's hits). Bounded:
# grounded requests make per-request specs, and an evicted spec only costs a memo miss.
_SPECS: "OrderedDict[tuple, Any]" = OrderedDict()
_SPECS_KEEP = 4096


def _shared(key: tuple, make) -> Any:
    if key in _SPECS:
        _SPECS.move_to_end(key)
        return _SPECS[key]
    _SPECS[key] = value = make()
    if len(_SPECS) > _SPECS_KEEP:
        _SPECS.popitem(last=False)
    return value


def _obj(schema: dict, bounds: SpanBounds | None = None) -> ObjSchema:
    return _shared(("obj", json.dumps(schema, sort_keys=True), bounds),
                   lambda: ObjSchema(dict(schema.get("properties") or {}), frozenset(schema.get("required") or ()),
                                     bounds))


def _spec(kind: str, values: tuple = (), heads: tuple = ()) -> StrSpec:
    return _shared(("str", kind, values, heads), lambda: StrSpec(kind, values, heads))


def span_spec(texts: Sequence[str], wholes: Sequence[str] = (), unbroken: bool = False,
              ends_before: frozenset = frozenset(), bounds: SpanBounds | None = None) -> StrSpec:
    """The spec of a value copied from `texts` (or one of `wholes`), its ends read by `bounds`."""
    texts, wholes = tuple(texts), tuple(wholes)

    def make() -> StrSpec:
        sources = tuple(bounds.source(t, unbroken, ends_before) if bounds is not None else Source(t) for t in texts)
        return StrSpec("span", wholes=wholes, sources=sources)
    return _shared(("span", texts, wholes, unbroken, ends_before, bounds), make)


def _arr(schema: dict, bounds: SpanBounds | None) -> ArrSpec:
    """An array's spec. Its length is bounded by `maxItems`, else, for items from an enum, by the enum's size:
    a list of choices names each once, and a small model repeating "Monday, Tuesday, ..." ends there."""
    item = schema.get("items") if isinstance(schema.get("items"), dict) else {"type": "string"}
    most = schema.get("maxItems")
    if not (isinstance(most, int) and not isinstance(most, bool) and most >= 1):
        most = len(item["enum"]) if isinstance(item.get("enum"), list) and item["enum"] else None
    return _shared(("arr", json.dumps(item, sort_keys=True), bounds, most), lambda: ArrSpec(item, bounds, most))


def value_state(schema: Any, cont: State, bounds: SpanBounds | None = None) -> State:
    """The state that reads one value of `schema` and then continues with `cont`; `bounds` reads where values
    copied from a source (``x-span``) may start and end (None: at any word boundary)."""
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
        spec = span_spec(tuple(schema.get("x-span") or ()), tuple(schema.get("x-span-whole") or ()),
                     schema.get("x-span-unbroken") is True,
                     frozenset(x for x in schema.get("x-span-ends-before") or () if isinstance(x, str)), bounds)
        if spec.continuations(""):   # sources of only fillers and joins ("um, ", ", and then ") offer no value
            return Lit(S_ESC, Str(spec, "", cont))
    if schema.get("x-words") and typ in (None, "string"):
        heads = tuple(schema.get("x-words-first") or ())
        return Lit(S_ESC, Str(_spec("words", tuple(schema["x-words"]), heads), "", cont))
    if enum and all(isinstance(v, bool) or v is None for v in enum):
        return Choice(tuple("null" if v is None else ("true" if v else "false") for v in enum), "", cont)
    if typ in ("integer", "number"):
        low, high = schema.get("minimum"), schema.get("maximum")
        bound = lambda v: float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None  # noqa: E731
        said = schema.get("x-numbers")   # set by decoding.grounding: the numbers the request says
        allowed = frozenset(x for x in said if isinstance(x, str) and x) if isinstance(said, list) else None
        return Num(typ == "integer", "", cont, bound(low), bound(high), allowed)
    if typ == "boolean":
        return Choice(("true", "false") + (("null",) if schema.get("nullable") else ()), "", cont)
    values = schema.get("x-values")   # set by decoding.grounding: the only whole values it may take
    if isinstance(values, list) and values:
        return Choice(tuple(_symbols(format_value(v)) for v in values), "", cont)
    if typ == "array":
        return Lit("[", Arr(_arr(schema, bounds), True, cont))
    if typ == "object":
        return Lit("{", Key(_obj(schema, bounds), frozenset(), "", True, cont))
    return Lit(S_ESC, Str(_spec("datetime" if is_datetime(schema) else "free"), "", cont))


def _symbols(text: str) -> str:
    """Wire text as the automaton's symbols (each control token one symbol)."""
    for ctrl, sym in CTRL_SYM.items():
        text = text.replace(ctrl, sym)
    return text


class CallGrammar:
    """The automaton over a set of callable tools; `start()` is the state before the model's first symbol.

    `tools` is a catalogue, or each callable tool's argument schema (what a `decoding.turn.TurnPlan` narrowed
    to one request). A declaration may be shown but not callable (``"x-callable": false`` in its parameters, e.g.
    `type_text` on a screen with no focused field): the prompt stays the same, the grammar refuses it.
    `per_request`: the grammar's states belong to one request (values read from it), so their allowed-token
    sets are memoised with that request only."""

    def __init__(self, tools: Catalogue | Mapping[str, dict], bounds: SpanBounds | None = None, *,
                 per_request: bool = False):
        schemas = ({t.name: argument_schema(t) for t in tools} if isinstance(tools, Catalogue) else dict(tools))
        self.bounds, self.per_request = bounds, per_request
        self.tools = {name: _obj(s, bounds) for name, s in schemas.items() if s.get("x-callable", True) is not False}

    def start(self) -> State:
        return Start(self)

    def only(self, names: Iterable[str], values: Mapping[str, Mapping[str, list[str] | dict]] | None = None
             ) -> "CallGrammar":
        """The same grammar with only these tools callable; `values` narrows string arguments of theirs, per
        tool and argument, to a list of values or to a schema; an optional argument narrowed to no value is not
        offered."""
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
            sub.tools[name] = ObjSchema(props, obj.required, obj.bounds)
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
