"""Where a value copied from the request may start and end: the reading of words that the grammar engine is
given as positions (`strings.Source`), so the engine itself knows no language.

A 270M model copying "Mehndi at Aunty Farah's" into an event title often stops at "Mehndi"; one copying a
subject starts it on "and email ...". Which words a value never starts on, always ends before, or goes on
through are words of a language (`lexicon` ``values``); which classes of ending each argument's values were
seen to end before is learned from gold data (`grounding.learn_policies`: ``ends_before``, ``unbroken``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from mobile_actions import lexicon
from mobile_actions.decoding import coverage
from mobile_actions.decoding.datetimes import expression_spans
from mobile_actions.decoding.strings import Source

_WORDS = lexicon.load().values
# A phrase that goes on with the value before it ("Mehndi| at Aunty Farah's", "Catch-up| with Liam", "bday party| 4
# Leo"), not one that says when, where to or for whom ("Dinner| at 7", "... in my calendar", "... for me"). An
# event's title never ends before one in the data (`grounding.learn_policies`: "unbroken"); a 270M model often does.
GOES_ON_RE = re.compile(r"\s+(?:" + "|".join(map(re.escape, _WORDS.goes_on)) + r")\s+(?!(?:"
                        + "|".join(map(re.escape, _WORDS.not_going_on)) + r")(?![^\W_])|\d)[^\W_]", re.IGNORECASE)

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
_JOINS = _WORDS.joins | coverage.VERBS


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


def _boundary(text: str, i: int) -> bool:
    return i == 0 or i == len(text) or not (text[i - 1].isalnum() and text[i].isalnum())


@dataclass(frozen=True)
class SpanReading:
    """`strings.SpanBounds` for English: a value starts on a word boundary but not on a joining or filler word
    ("and email" or "Hmm" is nobody's value), and ends where `end_class` allows."""

    def source(self, text: str, unbroken: bool = False, ends_before: frozenset[str] = frozenset()) -> Source:
        return _source(text, unbroken, ends_before)


def inside_addresses(text: str) -> frozenset[int]:
    """The positions strictly inside an email address: an address is one value or none, so no copy starts or
    ends within it ("Wierzbicki email tomek|.wierzbicki@pszczelarz.pl" as a last name)."""
    return frozenset(i for m in coverage.EMAIL_RE.finditer(text) for i in range(m.start() + 1, m.end()))


@lru_cache(maxsize=1024)
def _source(text: str, unbroken: bool, ends_before: frozenset[str]) -> Source:
    inside = inside_addresses(text)
    starts = frozenset(i for i in range(len(text)) if _boundary(text, i) and i not in inside
                       and not ((w := coverage.WORD_RE.match(text, i)) and w.group().lower() in _WORDS.no_start))
    if not unbroken and not ends_before and not inside:
        return Source(text, starts)
    allowed = ends_before | ALWAYS_ENDS
    ends = frozenset(j for j in range(len(text) + 1) if _boundary(text, j) and j not in inside
                     and not (unbroken and GOES_ON_RE.match(text, j))
                     and (not ends_before or end_class(text, j) in allowed))
    return Source(text, starts, ends)


READING = SpanReading()
