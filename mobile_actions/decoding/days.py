"""The days of the week a request names, as grounding offers them to a list-of-weekdays argument.

A 270M caller writes `days: ["Tuesday", ..., "Sunday", "Tuesday"]` for "on weekdays": a list of choices is where it
invents most. An argument whose items are the seven weekday names (`weekday_items`: an enum naming each day
once, in any spelling the lexicon reads: "monday", "MON", "Mo" is not one) is therefore offered only the lists
the request says (`said`), each whole and in the enum's order:

- a group: "weekdays" is Monday to Friday, "weekends" Saturday and Sunday, "daily" all seven (`day_groups`);
- a run: "mon-fri", "sun thru thurs" (`day_ranges`; a run may wrap past Sunday);
- a list: "sat and sun", "mon, wed, fri", "tue/thu" (`day_joins`); a lone day ("on tuesdays") is a list of one.

A short form that is also a word ("sat", "sun", "wed") counts only beside another day or after a cue
("every sat"; `day_cues`). The words are the lexicon's ("datetimes" in `lexicon/en.json`); nothing here knows
a tool. Standard library only: it runs on-device.
"""
from __future__ import annotations

import re
from typing import Sequence

from mobile_actions import lexicon
from mobile_actions.decoding.datewords import WEEKDAY_FORMS, normalise
from mobile_actions.lexicon import alternation

_WORDS = lexicon.load().datetimes
_DAY = r"(?<![a-z])(?:" + "|".join(f"(?P<d{i}>{f})" for i, f in enumerate(WEEKDAY_FORMS)) + r")s?(?![a-z])"
DAY_RE = re.compile(_DAY)
_GROUPS: list[tuple[re.Pattern, frozenset[int]]] = []
for _key, _forms in _WORDS.day_groups.items():
    _days = frozenset(int(d) - 1 for d in _key.split(","))
    if not _days or not _days <= set(range(7)):
        raise lexicon.CatalogueError(f"lexicon datetimes.day_groups: {_key!r} is not a list of days 1-7")
    _GROUPS.append((re.compile(r"(?<![a-z])(?:" + alternation(_forms) + r")(?![a-z])"), _days))
_JOIN = re.compile(r"\s*(?:(?:" + alternation(_WORDS.day_joins) + r")\s*)+$")
_RANGE = re.compile(r"\s*(?:" + alternation(_WORDS.day_ranges) + r")\s*$")
_CUE = re.compile(r"(?:^|[^a-z])(?:" + alternation(_WORDS.day_cues) + r")\s+$")


def weekday_of(word: str) -> int | None:
    """0 (Monday) to 6 (Sunday) when `word` is a weekday's name in a form the lexicon reads, else None."""
    m = re.fullmatch(_DAY, word.strip().lower())
    return None if m is None else next(i for i in range(7) if m.group(f"d{i}") is not None)


def weekday_items(schema: dict) -> tuple[str, ...] | None:
    """The item names of a list-of-weekdays argument, Monday first (None: not one): an array whose items' enum
    names each of the seven days once."""
    if schema.get("type") != "array" or not isinstance(schema.get("items"), dict):
        return None
    enum = schema["items"].get("enum")
    if not (isinstance(enum, list) and len(enum) == 7 and all(isinstance(v, str) for v in enum)):
        return None
    by_day = {weekday_of(v): v for v in enum}
    return tuple(by_day[d] for d in range(7)) if set(by_day) == set(range(7)) else None


def said(text: str) -> tuple[frozenset[int], ...]:
    """The lists of days `text` says, each once, in the order said (see the module's docstring)."""
    text = normalise(text)
    found: list[tuple[int, int, frozenset[int]]] = []
    for rx, days in _GROUPS:
        found += [(m.start(), m.end(), days) for m in rx.finditer(text)]
    singles = [m for m in DAY_RE.finditer(text)
               if not any(a <= m.start() < b for a, b, _ in found)]
    runs: list[tuple[int, int, frozenset[int]]] = []
    i = 0
    while i < len(singles):   # a run ("mon-fri") or a list ("sat and sun") of single days
        first = singles[i]
        days, end, j = {_index(first)}, first.end(), i + 1
        while j < len(singles):
            between = text[end:singles[j].start()]
            if _RANGE.match(between) and len(days) == 1:
                a, b = _index(singles[j - 1]), _index(singles[j])
                days |= {(a + k) % 7 for k in range((b - a) % 7 + 1)}
            elif _JOIN.match(between) or not between.strip():
                days.add(_index(singles[j]))
            else:
                break
            end, j = singles[j].end(), j + 1
        alone = j == i + 1
        if not (alone and _short(first) and not _CUE.search(text[:first.start()])):
            runs.append((first.start(), end, frozenset(days)))
        i = j
    out = [days for _, _, days in sorted(found + runs, key=lambda x: x[0])]
    return tuple(dict.fromkeys(out))


def offered(lists: Sequence[frozenset[int]], items: tuple[str, ...]) -> list[list[str]]:
    """Each said list as the argument's values, in the enum's day order (Monday first)."""
    return [[items[d] for d in sorted(days)] for days in lists]


def _index(m: re.Match) -> int:
    return next(i for i in range(7) if m.group(f"d{i}") is not None)


def _short(m: re.Match) -> bool:
    return m.group().rstrip("s") in _WORDS.short_weekdays or m.group() in _WORDS.short_weekdays
