"""A tiny phrasing-template language, compiled once and expanded many times.

Why a language and not f-strings: one template line must describe hundreds of surface variants
(choices, optional words, slots that exist only when an optional argument is present) while the
expander keeps track of which characters are copied argument values, so later noise (typos,
casing) never corrupts a value the model is supposed to copy.

Syntax::

    (a|b|c)        one alternative, uniformly
    [words]        optional, half the time
    {slot}         the slot's surface text (an argument value or an auxiliary value)
    {slot!q}       the same, wrapped in the row's quote style ("", '', “”, or none)
    <slot:...>     the inner text only when `slot` is present in this expansion
    <!slot:...>    the inner text only when `slot` is absent

Expansion yields `Segment`s: (text, kind) with kind TEXT (template words: may be restyled),
LITERAL (copied verbatim into the gold arguments: never touched) or SURFACE (a value's surface form
that is not copied, e.g. "tomorrow at 3pm": may change case, never gets typos).
"""
from __future__ import annotations

from dataclasses import dataclass
from random import Random
from typing import Union

from mobile_actions.errors import TemplateError

TEXT, LITERAL, SURFACE = 0, 1, 2
Segment = tuple[str, int]


@dataclass(frozen=True)
class Value:
    """A slot's filling: what the text shows and whether it is a verbatim copy of an argument."""
    surface: str
    kind: int = LITERAL


@dataclass(frozen=True)
class _Text:
    text: str


@dataclass(frozen=True)
class _Slot:
    name: str
    quoted: bool


@dataclass(frozen=True)
class _Seq:
    items: tuple["Node", ...]


@dataclass(frozen=True)
class _Choice:
    options: tuple[_Seq, ...]


@dataclass(frozen=True)
class _Opt:
    body: _Seq


@dataclass(frozen=True)
class _Cond:
    name: str
    negate: bool
    body: _Seq


Node = Union[_Text, _Slot, _Seq, _Choice, _Opt, _Cond]


class _Parser:
    def __init__(self, src: str):
        self.src, self.pos = src, 0

    def fail(self, msg: str) -> None:
        raise TemplateError(f"{msg} at {self.pos} in template {self.src!r}")

    def seq(self, stops: str) -> _Seq:
        items: list[Node] = []
        buf: list[str] = []
        while self.pos < len(self.src) and self.src[self.pos] not in stops:
            c = self.src[self.pos]
            if c in "([{<":
                if buf:
                    items.append(_Text("".join(buf)))
                    buf = []
                items.append(self.group(c))
            elif c in ")]}>|":
                self.fail(f"unexpected {c!r}")
            else:
                buf.append(c)
                self.pos += 1
        if buf:
            items.append(_Text("".join(buf)))
        return _Seq(tuple(items))

    def group(self, opener: str) -> Node:
        self.pos += 1
        if opener == "(":
            options = [self.seq("|)")]
            while self.pos < len(self.src) and self.src[self.pos] == "|":
                self.pos += 1
                options.append(self.seq("|)"))
            self.close(")")
            return _Choice(tuple(options))
        if opener == "[":
            body = self.seq("]")
            self.close("]")
            return _Opt(body)
        if opener == "{":
            end = self.src.find("}", self.pos)
            if end < 0:
                self.fail("unclosed '{'")
            name = self.src[self.pos:end]
            self.pos = end + 1
            quoted = name.endswith("!q")
            return _Slot(name[:-2] if quoted else name, quoted)
        colon = self.src.find(":", self.pos)
        if colon < 0:
            self.fail("'<' without ':'")
        name = self.src[self.pos:colon]
        self.pos = colon + 1
        body = self.seq(">")
        self.close(">")
        negate = name.startswith("!")
        return _Cond(name.lstrip("!"), negate, body)

    def close(self, c: str) -> None:
        if self.pos >= len(self.src) or self.src[self.pos] != c:
            self.fail(f"expected {c!r}")
        self.pos += 1


@dataclass(frozen=True)
class Template:
    """A compiled template.

    always: slots every expansion shows; conditional: slots shown only under their own `<slot:...>`
    guard (safe to include or omit); mentioned: every slot it can show. Computed once at compile.
    """
    source: str
    root: _Seq
    always: frozenset[str] = frozenset()
    conditional: frozenset[str] = frozenset()
    mentioned: frozenset[str] = frozenset()

    @classmethod
    def compile(cls, source: str) -> "Template":
        p = _Parser(source)
        root = p.seq("")
        if p.pos != len(source):
            p.fail("trailing text")
        return cls(source, root, frozenset(_always(root)), frozenset(_guarded(root)), frozenset(_mentioned(root)))

    def expand(self, rng: Random, slots: dict[str, Value], quote: tuple[str, str] = ('"', '"')) -> list[Segment]:
        out: list[Segment] = []
        _expand(self.root, rng, slots, quote, out)
        return out


def _always(node: Node) -> set[str]:
    if isinstance(node, _Slot):
        return {node.name}
    if isinstance(node, _Seq):
        return set().union(*(_always(i) for i in node.items)) if node.items else set()
    if isinstance(node, _Choice):
        sets = [_always(o) for o in node.options]
        return set.intersection(*sets)
    return set()


def _mentioned(node: Node) -> set[str]:
    if isinstance(node, _Slot):
        return {node.name}
    if isinstance(node, _Seq):
        return set().union(*(_mentioned(i) for i in node.items)) if node.items else set()
    if isinstance(node, _Choice):
        return set().union(*(_mentioned(o) for o in node.options))
    if isinstance(node, (_Opt, _Cond)):
        return _mentioned(node.body)
    return set()


def _guarded(node: Node) -> set[str]:
    """Slots guarded by a positive `<slot:...>` whose body always shows the slot."""
    if isinstance(node, _Cond) and not node.negate and node.name in _always(node.body):
        return {node.name} | _guarded(node.body)
    if isinstance(node, _Seq):
        return set().union(*(_guarded(i) for i in node.items)) if node.items else set()
    if isinstance(node, _Choice):
        return set().union(*(_guarded(o) for o in node.options))
    if isinstance(node, (_Opt, _Cond)):
        return _guarded(node.body)
    return set()


def _expand(node: Node, rng: Random, slots: dict[str, Value], quote: tuple[str, str], out: list[Segment]) -> None:
    if isinstance(node, _Text):
        out.append((node.text, TEXT))
    elif isinstance(node, _Seq):
        for item in node.items:
            _expand(item, rng, slots, quote, out)
    elif isinstance(node, _Choice):
        _expand(node.options[rng.randrange(len(node.options))], rng, slots, quote, out)
    elif isinstance(node, _Opt):
        if rng.random() < 0.5:
            _expand(node.body, rng, slots, quote, out)
    elif isinstance(node, _Cond):
        if (node.name in slots) != node.negate:
            _expand(node.body, rng, slots, quote, out)
    elif isinstance(node, _Slot):
        value = slots[node.name]
        if node.quoted and quote[0]:
            # Quote marks delimit the value for the model: kept as verbatim as the value itself.
            out.append((quote[0], LITERAL))
            out.append((value.surface, value.kind))
            out.append((quote[1], LITERAL))
        else:
            out.append((value.surface, value.kind))
