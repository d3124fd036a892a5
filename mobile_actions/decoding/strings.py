"""What a string value may be, as the call automaton (`decoding.grammar`) reads it: free text, one of an enum's
values, a sequence of given words, a copy of a source text, or a real `YYYY-MM-DDTHH:MM:SS`.

Kept apart from the automaton's states because this is where a value's content is decided, character by character:
the states only ask which characters may come next and whether the value may end. Like the automaton it knows no
language: where copies start and end comes as positions (`Source`, read by `decoding.spans`).
"""
from __future__ import annotations

import calendar
from dataclasses import dataclass
from typing import Iterable, Protocol

from mobile_actions.decoding.tokens import CTRL_SYMS

DATETIME_TEMPLATE = "dddd-dd-ddTdd:dd:dd"
DIGITS = frozenset("0123456789")


@dataclass(frozen=True)
class Source:
    """A text a value may be copied from, with the positions a copy may start and end at (None: any word
    boundary). Which positions those are is a reading of the text's words (`SpanBounds`), given to the engine."""
    text: str
    starts: frozenset | None = None
    ends: frozenset | None = None

    def may_start(self, i: int) -> bool:
        return (i == 0 or not (self.text[i - 1].isalnum() and self.text[i].isalnum())) and (
            self.starts is None or i in self.starts)

    def may_end(self, j: int) -> bool:
        """At a word boundary ``j`` (the caller checks it)."""
        return self.ends is None or j in self.ends


class SpanBounds(Protocol):
    """Where copies of a source text may start and end: ``unbroken`` and ``ends_before`` are the argument's
    learned end policies (``x-span-unbroken``, ``x-span-ends-before``), which the reading interprets."""

    def source(self, text: str, unbroken: bool = False, ends_before: frozenset = frozenset()) -> Source: ...


@dataclass(frozen=True, eq=False)
class StrSpec:
    kind: str                       # free | enum | datetime | span (sources: the texts it is a substring of)
    values: tuple = ()              # enum: the values | words: the lower-cased words it may use
    heads: tuple = ()               # words: the words it may start with (empty: any of `values`)
    wholes: tuple = ()              # span: values taken whole or not at all (what the request put in quotes)
    sources: tuple = ()             # span: `Source`s

    def _ends(self, content: str) -> Iterable[tuple[Source, int]]:
        """span: (source, end) of every occurrence of ``content`` where a copy may start."""
        for src in self.sources:
            text = src.text
            i = text.find(content)
            while 0 <= i < len(text):
                if src.may_start(i):
                    yield src, i + len(content)
                i = text.find(content, i + 1)

    def continuations(self, content: str) -> set[str]:
        """span: the characters that keep ``content`` a substring of one of the texts (never a leading space
        or closing punctuation: ", and" is nobody's value) from which a whole span can still be reached.
        Without that last check a source ending "..., Paris, " or "... 🙏" let the model write itself into a
        value it could neither finish nor extend."""
        out = {src.text[j] for src, j in self._ends(content)
               if j < len(src.text) and _completable(src, j - len(content), j + 1)}
        out = {c for c in out if c not in CTRL_SYMS and (content or not c.isspace() and c not in NO_SPAN_START)}
        n = len(content)
        return out | {w[n] for w in self.wholes if len(w) > n and w.startswith(content) and w[n] not in CTRL_SYMS}

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
        return any((j == len(src.text) or not (src.text[j].isalnum() and content[-1].isalnum())) and src.may_end(j)
                   for src, j in self._ends(content))


def _completable(src: Source, i: int, e: int) -> bool:
    """Whether ``text[i:e]`` extends to a whole span ``text[i:k]``, k >= e (`StrSpec.whole_span`)."""
    text = src.text
    alnum = any(ch.isalnum() for ch in text[i:e])
    for k in range(e, len(text) + 1):
        alnum = alnum or text[k - 1].isalnum()
        if alnum and not text[k - 1].isspace() and (k == len(text) or not (text[k].isalnum() and text[k - 1].isalnum())):
            if src.may_end(k):
                return True
    return False


WORD_SEPARATORS = frozenset(" ,'-")
NO_SPAN_START = frozenset(",.;:!?)]}")


WORD_INNER = frozenset(".@/:")   # inside a word ("example.com"), never at either end (`grounding.GOAL_WORD_RE`)


def _last_word(content: str) -> str:
    """The lower-cased word at the end of ``content``: alphanumerics, and `WORD_INNER` characters after
    one (empty after a separator)."""
    i = len(content)
    while i > 0 and (content[i - 1].isalnum() or content[i - 1] in WORD_INNER and i > 1 and content[i - 2].isalnum()):
        i -= 1
    return content[i:].lower()


def datetime_prefix_ok(s: str) -> bool:
    """Can `s` be extended to a real `YYYY-MM-DDTHH:MM:SS`? (So the model never writes itself into a dead end.)"""
    if len(s) > len(DATETIME_TEMPLATE):
        return False
    for c, t in zip(s, DATETIME_TEMPLATE):
        if (t == "d") != (c in DIGITS) or (t != "d" and c != t):
            return False
    n = len(s)
    if n >= 4 and int(s[:4]) == 0:   # no year 0 (Python's datetime and the validator start at 1)
        return False
    if n >= 6 and s[5] not in "01":
        return False
    if n >= 7:
        month = int(s[5:7])
        if not 1 <= month <= 12:
            return False
        year = int(s[:4])
        last = calendar.monthrange(year, month)[1]
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
