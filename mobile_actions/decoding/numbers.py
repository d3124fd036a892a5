"""The numbers a request says, as grounding offers them to an integer or number argument.

A 270M caller writes numbers nobody said: `set_alarm(hour=16, minute=15)` for "an alarm for 6:30", a 15-second
timer for "ten minutes". An integer or number argument is therefore offered only the numbers the conversation
holds, read four ways:

- as written, once number words have one spelling ("ten" is 10; `datewords.normalise`), times a multiplier
  after it ("10k" is 10 and 10000);
- as the hours and minutes of a time the date resolver reads ("6:30" gives 6 and 18 for the hour, 30 for the
  minute; "9:45pm" 21 and 45); an argument whose name says it holds one part of a time (`numbers.clock_parts`:
  `hour`, `alarmMinute`) is offered that part and not the other, so "6:30" never sets a minute to 6;
- as a quantity in the argument's unit, when a unit word follows the number and the argument's name or
  description names a unit of the same kind ("half an hour" is 1800 for `seconds`, 30 for `duration_min`;
  "1h 20m" is 4800 s; "33cl" is 330 for "Volume in millilitres"); "7:32" is also 452 for seconds;
- as the numbers of the conversation's earlier calls ("log the same thing for today").

Digits inside an email address, a phone number or a written date are no amount. The unit words are the
lexicon's (`numbers.units`); nothing here knows a tool. Standard library only: it runs on-device.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Iterable

from mobile_actions import lexicon
from mobile_actions.decoding import datewords
from mobile_actions.decoding.coverage import EMAIL_RE, PHONE_RE
from mobile_actions.decoding.datementions import mentions
from mobile_actions.decoding.datetimes import clock_readings

_WORDS = lexicon.load().numbers
UNITS: dict[str, dict[str, float]] = {}   # unit word -> {kind: how many of the kind's base unit}
for _kind, _table in _WORDS.units.items():
    for _word, _factor in _table.items():
        UNITS.setdefault(_word.lower(), {})[_kind] = float(_factor)
_UNIT_RE = "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True))
_NUMBER = r"(?<![\w.,:])(?P<sign>-)?(?P<n>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\d])"
NUMBER_RE = re.compile(_NUMBER)
_COUNT = r"|(?<![\w])(?P<words>" + "|".join(re.escape(w) for w in sorted(_WORDS.unit_counts, key=len, reverse=True)) + r")\s+"
MULTIPLIED_RE = re.compile(_NUMBER + r"\s*(?P<x>" + "|".join(re.escape(m) for m in _WORDS.multipliers)
                           + r")(?![^\W\d_])", re.IGNORECASE)
QUANTITY_RE = re.compile(r"(?:" + _NUMBER + r"\s*" + _COUNT + r")(?P<unit>" + _UNIT_RE + r")(?![^\W\d_])", re.IGNORECASE)
CLOCK_RE = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?::(\d{2}))?(?![\d:])")   # "7:32", "1:05:00"
# quantities one after another add up: "1 hour 20 minutes", "1h 20m", "2 hours and 15 min"
_JOINED = re.compile(r"\s*(?:,|\band\b)?\s*$", re.IGNORECASE)
# hours and minutes written as one word ("1h20m", "2h50"): the digits after the "h" are that length's minutes
_GLUED_HOURS = re.compile(r"(?<![\w.])(\d{1,2})h(\d{1,2})(?:m|mins?)?(?![\w:])", re.IGNORECASE)


@dataclass(frozen=True)
class Quantity:
    """A number said with a unit, in its kind's base unit (seconds, millilitres, metres, grams)."""
    kind: str
    value: float


@dataclass(frozen=True)
class Said:
    """What a conversation says with numbers: plain numbers (with clock hours and minutes), the numbers of its
    quantities as written ("10" of "10 min"), and its quantities."""
    numbers: tuple[float, ...]
    counts: tuple[float, ...]
    quantities: tuple[Quantity, ...]
    parts: tuple[Quantity, ...] = ()   # quantities a longer one adds up ("1 hour" and "15 minutes" of 4500 s)
    clock: tuple[tuple[int, int], ...] = ()   # (hour, minute) readings of the times said

    @property
    def wholes(self) -> tuple[Quantity, ...]:
        """The quantities no longer one adds up: what a request asks for ("1 hour and 15 minutes": 4500 s)."""
        return tuple(q for q in self.quantities if q not in self.parts)


def read(text: str, now: datetime | None = None, earlier: Iterable[float] = ()) -> Said:
    """The numbers `text` says (see the module's docstring); `earlier`: numbers of the conversation's calls."""
    plain = _GLUED_HOURS.sub(r"\1h \2min", datewords.normalise(_masked(text)))
    measured = list(QUANTITY_RE.finditer(plain))
    heads = {m.start("n") for m in measured if m.group("n") is not None}
    numbers = [_value(m) for m in NUMBER_RE.finditer(plain) if m.start() not in heads]
    numbers += [_value(m) * _WORDS.multipliers[m.group("x").lower()] for m in MULTIPLIED_RE.finditer(plain)]
    quantities: list[Quantity] = []
    parts: list[Quantity] = []
    runs: dict[str, float] = {}
    last_end = -1
    for m in measured:
        joined = last_end >= 0 and _JOINED.match(plain[last_end:m.start()]) is not None
        kinds = UNITS[m.group("unit").lower()]
        if joined and kinds.keys() & runs.keys():   # "1h 20m": 20 minutes of a run, not also 20 metres
            parts += [Quantity(kind, _value(m) * factor) for kind, factor in kinds.items() if kind not in runs]
        for kind, factor in kinds.items():
            value = _value(m) * factor
            quantities.append(Quantity(kind, value))
            if joined and kind in runs:
                quantities.append(Quantity(kind, runs[kind] + value))
                parts += [Quantity(kind, runs[kind]), Quantity(kind, value)]
            runs[kind] = runs.get(kind, 0.0) + value if joined else value
        if not joined:
            runs = {k: v for k, v in runs.items() if k in UNITS[m.group("unit").lower()]}
        last_end = m.end()
    for m in CLOCK_RE.finditer(plain):   # "rowed 2000 m in 7:32": minutes and seconds, or hours and minutes
        a, b, c = (int(x) if x else None for x in m.groups())
        quantities += [Quantity("time", a * 3600 + b * 60 + c)] if c is not None else \
            [Quantity("time", a * 60 + b), Quantity("time", a * 3600 + b * 60)]
    clock: list[tuple[int, int]] = []
    if now is not None:
        for t in mentions(datewords.normalise(text), now):   # the resolver reads normalised text ("tmrw")
            if t.kind == "time":
                for hour, minute, _ in clock_readings(t, t.part):
                    numbers += [hour, minute]
                    clock.append((hour, minute))
    numbers += list(earlier)
    return Said(tuple(dict.fromkeys(numbers)), tuple(dict.fromkeys(_value(m) for m in measured if m.group("n"))),
                tuple(dict.fromkeys(quantities)), tuple(dict.fromkeys(parts)), tuple(dict.fromkeys(clock)))


def _masked(text: str) -> str:
    """`text` without email addresses, phone numbers and dates written with digits (their digits are no amount)."""
    text = re.sub(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b", " ", text)
    for rx in (EMAIL_RE, PHONE_RE):
        text = rx.sub(lambda m: " " * len(m.group(0)), text)
    return text


def _value(m: re.Match) -> float:
    if m.group("n") is None:   # "a kilometer", "half a litre"
        return float(_WORDS.unit_counts[m.group("words").lower()])
    n = float(m.group("n").replace(",", ""))
    return -n if m.group("sign") else n


def name_words(name: str) -> list[str]:
    """The words and numbers of an argument's name or an enum value, lower case ("radius_meters", "durationMin",
    "alarmHour", "hot_100")."""
    return [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", str(name))]


def clock_part(name: str) -> str | None:
    """"hour" or "minute" when an argument's name says it holds that part of a time of day (`clock_parts`)."""
    words = set(name_words(name))
    found = [part for part, forms in _WORDS.clock_parts.items() if words & set(forms)]
    return found[0] if len(found) == 1 else None


def unit_of(name: str, description: str) -> tuple[str, float] | None:
    """The kind and size of the unit an argument's name or description names ("seconds", "Volume in
    millilitres", "radius_meters", "durationMin"), else None. Words of one or two letters ("s", "ml") count only
    in the name; a word of several kinds ("m") says none."""
    own = name_words(name)
    for word in own + re.findall(r"[a-z]+", description.lower()):
        kinds = UNITS.get(word)
        if kinds and len(kinds) == 1 and (len(word) > 2 or word in own):
            return next(iter(kinds.items()))
    return None


def offered(said: Said, schema: dict, name: str) -> tuple[str, ...]:
    """The values, as JSON, an integer or number argument may take: the numbers said, and the quantities said --
    in its unit when it names one (not "10" of "10 min" for seconds), as written otherwise -- within its
    `minimum`/`maximum` (an integer only whole ones)."""
    integer = schema.get("type") == "integer"
    unit = unit_of(name, str(schema.get("description", "")))
    values = list(said.numbers)
    part = clock_part(name)
    if part is not None and said.clock:   # "6:30": 30 for a minute, never 6; 6 or 18 for an hour, never 30
        own = {h if part == "hour" else m for h, m in said.clock}
        other = {m if part == "hour" else h for h, m in said.clock}
        values = [v for v in values if v in own or v not in other]
    if unit is None:
        values += said.counts
    else:
        kind, size = unit
        values += [q.value / size for q in said.quantities if q.kind == kind]
    low, high = schema.get("minimum"), schema.get("maximum")
    values = [round(v, 6) for v in values]
    return tuple(dict.fromkeys(_json(v) for v in values if (not integer or v == int(v)) and _within(v, low, high)))


def _within(v: float, low: object, high: object) -> bool:
    number = lambda x: isinstance(x, (int, float)) and not isinstance(x, bool)   # noqa: E731
    return (not number(low) or v >= low) and (not number(high) or v <= high)


def _json(v: float) -> str:
    return str(int(v)) if v == int(v) else repr(v)


def numeric_args(schema: dict) -> Iterable[tuple[str, dict]]:
    """The top-level integer and number arguments of a tool's argument schema (without an enum of their own)."""
    for name, sub in (schema.get("properties") or {}).items():
        if isinstance(sub, dict) and sub.get("type") in ("integer", "number") and "enum" not in sub:
            yield name, sub


def call_numbers(arguments: object) -> list[float]:
    """The numbers in a call's arguments, nested ones too (what "the same again" may repeat)."""
    if isinstance(arguments, dict):
        return [x for v in arguments.values() for x in call_numbers(v)]
    if isinstance(arguments, list):
        return [x for v in arguments for x in call_numbers(v)]
    return [float(arguments)] if isinstance(arguments, (int, float)) and not isinstance(arguments, bool) else []
