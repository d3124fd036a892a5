"""Datetime candidates for a phone request, computed from its words and the prompt's "now".

Why: the 270M caller copies strings well but does date arithmetic badly ("next Wednesday" on a
Thursday, "on the 14th" in the wrong month, "2pm" -> 13:00). The decoder constrains a datetime
argument to the strings `resolve` returns and lets the model choose among them, so this module
aims at recall with short lists: where a phrase is ambiguous, every reasonable reading is kept.

Readings follow the data generator (`mobile_actions.phrases.dates`), because that is what gold values mean:
- "Friday", "on/this/coming Friday": the first Friday strictly after today; "next Friday" also
  gives the one a week later (people mean either).
- "tonight", "this evening", "... afternoon/evening/night" make a bare hour pm; "morning" makes it am.
  A bare hour with no such word ("at 9", "tomorrow 9") gives both 09:00 and 21:00; from 1 to 5 only the
  afternoon ("at 3": 15:00).
- Fixed-date holidays ("Christmas Eve", "NYE", "New Year's Day", "Halloween"): the next such day.
- "March 3rd", "3/14" (US; "3/4" also as 3 April), "on the 15th": the next such day strictly after
  today (and today, when it is that day and the time is still ahead).
- "in N days/weeks" = today + N; "in N hours/minutes" = now + N with seconds dropped (and kept).
- A day without a time is that day at 00:00 (the generator's date-only value); with a part of the
  day and no time ("tomorrow morning") a typical hour (PART_HOURS) comes first.
- A time without a day is its next occurrence: today if still ahead, else tomorrow.
Readings that lie in the past are dropped when another reading of the same phrase is ahead (for a
day said without a time, past days; its 00:00 is a date, not an instant).

The expressions themselves are found by `datementions`. Standard library only: it runs in the torch-free on-device
runtime.
"""
from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, time, timedelta

from mobile_actions.decoding.datementions import Mention, mentions
from mobile_actions.decoding.datewords import DAY_SHORTHANDS, PART_HOURS, PUNCTUATION, normalise

FORMAT = "%Y-%m-%dT%H:%M:%S"
MAX_CANDIDATES = 8  # the decoder's choice must stay small; readings are ordered so the likely ones survive
LOOSE_GAP = 40  # a day and a time further apart than this may belong to different requests: keep both unpaired too


# ------------------------------------------------------------------------------------------ readings
def clock_readings(t: Mention, part: str | None) -> list[tuple[int, int, int]]:
    """(hour, minute, days to add) readings of a written time, most likely first."""
    h, mi = t.clock
    if t.midnight:
        return [(0, 0, 1), (0, 0, 0)]
    if t.meridiem == "am":
        return [(0, mi, 0), (0, mi, 1)] if h == 12 else [(h, mi, 0)]
    if t.meridiem == "pm":
        return [(h + 12 if h < 12 else h, mi, 0)]
    if t.exact24 or h == 0 or h >= 13:
        return [(h, mi, 0)]
    if h == 12:
        return [(0, mi, 1)] if part in ("evening", "night") else [(12, mi, 0)]
    if part == "morning":
        return [(h, mi, 0)]
    if part == "night" and h <= 4:
        return [(h, mi, 1), (h + 12, mi, 0)]
    if part:
        return [(h + 12, mi, 0)]
    am, pm = (h, mi, 0), (h + 12, mi, 0)
    if h <= 5:   # people say "at 3" for 15:00; 3 am is said "3am" (a 270M model otherwise picks it half the time)
        return [pm]
    return [am, pm] if h >= 7 else [pm, am]  # the generator's bare hours are 8-11 am


def readings(day: Mention | None, clock: Mention | None, now: datetime) -> list[datetime]:
    """The datetimes a day and/or a time can mean, most likely first, past ones dropped if any is ahead.

    An "exact" mention ("in 2 hours") comes in as `day` and is already its readings.
    """
    if day is not None and day.kind == "exact":
        return list(day.values)
    if clock is None:  # a day alone: a past *day* is dropped, not a past instant (00:00 stands for the date)
        assert day is not None
        days = [d for d in day.days if d >= now.date()] or list(day.days)
        out = [datetime.combine(d, time(PART_HOURS[day.part])) for d in days] if day.part else []
        return out + [datetime.combine(d, time()) for d in days]
    clocks = clock_readings(clock, clock.part or (day.part if day else None))
    if day is not None:
        out = [datetime.combine(d + timedelta(days=plus), time(h, mi)) for d in day.days for h, mi, plus in clocks]
    else:  # a time alone: its next occurrence
        out = [datetime.combine(now.date() + timedelta(days=plus), time(h, mi)) for h, mi, plus in clocks]
        out = [v if v > now else v + timedelta(days=1) for v in out]
    ahead = [v for v in out if v > now]
    return ahead or out


def _groups(found: list[Mention], text: str) -> list[tuple[int, Mention | None, Mention | None]]:
    """(rank, day, time) groups. Each day joins the time next to it, closest pairs first.

    Rank orders the output: paired day+time, exact, lone days, lone times, loose pairs' parts, quoted.
    """
    seq = [m for m in found if m.kind in ("day", "time")]
    links = sorted((seq[i + 1].start - seq[i].end, i) for i in range(len(seq) - 1)
                   if seq[i].kind != seq[i + 1].kind and seq[i].quoted == seq[i + 1].quoted)
    partner: dict[int, int] = {}
    for _, i in links:
        if i not in partner and i + 1 not in partner:
            partner[i], partner[i + 1] = i + 1, i
    out: list[tuple[int, Mention | None, Mention | None]] = []
    for i, m in enumerate(seq):
        q = 5 if m.quoted else 0
        j = partner.get(i)
        if j is None:
            out.append((q + (2 if m.kind == "day" else 3), m if m.kind == "day" else None, m if m.kind == "time" else None))
        elif j > i:
            other = seq[j]
            day, clock = (m, other) if m.kind == "day" else (other, m)
            out.append((q, day, clock))
            between = text[m.end:other.start]
            if len(between) > LOOSE_GAP or re.search(r"[.;!?](?:\s|$)", between):
                out += [(q + 4, day, None), (q + 4, None, clock)]
    out += [(5 if m.quoted else 1, m, None) for m in found if m.kind == "exact"]
    return sorted(out, key=lambda g: g[0])


def mentions_as_written(text: str, now: datetime, shorthands: bool = True) -> list[Mention]:
    """`mentions` of `text` itself, not of its normalised form, offsets the text's: only the one-for-one part of
    `normalise` is applied ("İ" lower-cases to two characters: kept as it is), a number in words ("at nine") is
    not found, and an expression inside quotes (a title: "Sunday brunch") or a holiday's name (the name of
    things too: "New Year's Eve party") is left out. With `shorthands`, a typed shorthand for a day ("2moro",
    "tmrw", "2nite"), which normalising would lengthen, is the day it stands for at the place it is written."""
    low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text).translate(PUNCTUATION)
    found = [m for m in mentions(low, now) if not m.quoted and not m.holiday]
    if shorthands:
        for pattern, day in DAY_SHORTHANDS:
            for s in re.finditer(pattern, low):
                if not any(m.start <= s.start() < m.end for m in found):
                    found += [replace(m, start=s.start(), end=s.end()) for m in mentions(day, now)[:1]]
    return sorted(found, key=lambda m: (m.start, m.end))


def expression_spans(text: str, kinds: frozenset[str] | None = None) -> list[tuple[int, int]]:
    """(start, end) of each date/time expression in `text` itself (`mentions_as_written`): the parts a copied
    value that never holds a date (an event's title) must not take. `kinds` keeps only mentions of those kinds
    (`Mention.kind`; "exact": "in 2 hours", a time that is no length), shorthands for a day left out."""
    return [(m.start, m.end) for m in mentions_as_written(text, datetime(2000, 1, 1), shorthands=kinds is None)
            if kinds is None or m.kind in kinds]


def blank_expressions(text: str, kinds: frozenset[str] | None = None) -> str:
    """`text` with its date/time expressions (`expression_spans`, of `kinds`) blanked out, offsets kept."""
    for a, b in expression_spans(text, kinds):
        text = text[:a] + " " * (b - a) + text[b:]
    return text


def _said(text: str, now: datetime) -> list[tuple[Mention | None, Mention | None]]:
    """The (day, time) pairs the request says, likeliest first (`_groups` of the normalised text)."""
    norm = normalise(text)
    return [(day, clock) for _, day, clock in _groups(mentions(norm, now), norm)]


def start_readings(text: str, now: datetime) -> list[datetime]:
    """The readings of the first date and time `text` gives, as `resolve` ranks them (its best day-and-time pair):
    an entry's start, without the times said of its end ("tuesday at 6pm till 8:15": 18:00 alone)."""
    said = _said(text, now)
    return readings(*said[0], now) if said else []


def minutes_to_end(text: str, begin: datetime) -> int | None:
    """The minutes from `begin` (an entry's start, as its call wrote it) to the time of day `text` says the entry
    ends ("2pm till 4:30", "should wrap up around 9"): the one time written besides the start that reads as later
    the same day, in its reading nearest after the start; None when no time or more than one does. An entry
    has one start, so a second time said of it is its end."""
    norm = normalise(text)
    start = (begin.hour, begin.minute)
    found: list[int] = []
    for m in mentions(norm, begin):
        if m.kind != "time":
            continue
        if m.until is not None and m.until > start:   # "2-5pm": the range's own end
            found.append(60 * (m.until[0] - start[0]) + m.until[1] - start[1])
            continue
        said = [(h, mi) for h, mi, days in clock_readings(m, m.part) if days == 0]
        if start in said:
            continue
        after = [60 * (h - start[0]) + mi - start[1] for h, mi in said if (h, mi) > start]
        if after:
            found.append(min(after))
    return found[0] if len(found) == 1 else None


def resolve_clocks(text: str, now: datetime) -> list[str]:
    """Candidate "HH:MM:SS" times of day the request says, most likely first: a clock ("at 8:45", "noon"), a
    part of the day ("tomorrow morning": its hour) or a time from now ("in 2 hours"). A day said alone gives
    none: `resolve` writes it at 00:00 to stand for the date, a time nobody said, so a tool's time argument
    is not offered midnight for "book Max on monday"."""
    out: list[str] = []
    for day, clock in _said(text, now):
        if clock is not None or (day is not None and day.kind == "exact"):
            out += [v.strftime("%H:%M:%S") for v in readings(day, clock, now)]
        elif day is not None and day.part:
            out.append(time(PART_HOURS[day.part]).strftime("%H:%M:%S"))
    return list(dict.fromkeys(out))[:MAX_CANDIDATES]


def resolve(text: str, now: datetime) -> list[str]:
    """Candidate "YYYY-MM-DDTHH:MM:SS" values for the date/time expressions in a request, most likely first.

    `now` is the prompt's current datetime. Returns [] when the request says no date or time.
    At most MAX_CANDIDATES values; every ambiguous phrase contributes each of its readings.
    """
    out = [v.strftime(FORMAT) for day, clock in _said(text, now) for v in readings(day, clock, now)]
    return list(dict.fromkeys(out))[:MAX_CANDIDATES]
