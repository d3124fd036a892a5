"""Relative date/time expressions and their resolution against the row's "now".

The gold datetime must be exactly what a careful reader computes from the developer message's
datetime, so every expression here is generated *from* its resolved value (pick the target, then
say it), never parsed. Conventions (documented because real speech is ambiguous):

- "on Friday", "this Friday", "next Friday", "Friday": the first Friday strictly after today (1-7 days ahead).
- "today"/"tonight"/"this evening" are used only when the time is still ahead of now.
- "in N days" = today + N; "in a week" = today + 7; "the day after tomorrow" = today + 2.
- "March 3rd" = the next March 3rd strictly after today; "on the 15th" = the next 15th strictly after today.
- A bare hour ("at 9") is used only for 8-11 and means the morning; other hours carry am/pm or are 24-hour.
- Seconds are always :00.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from random import Random

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")
_NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten"}
_MINUTES = (0, 0, 0, 0, 0, 30, 30, 15, 45, 10, 20, 40, 50, 5)


@dataclass(frozen=True)
class When:
    """A spoken date+time ("next Friday at 10:30am") and the datetime it means."""
    text: str
    value: datetime

    @property
    def iso(self) -> str:
        return self.value.strftime("%Y-%m-%dT%H:%M:%S")


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def random_now(rng: Random, start: datetime, end: datetime) -> datetime:
    """A uniformly random second in [start, end)."""
    span = int((end - start).total_seconds())
    return start + timedelta(seconds=rng.randrange(max(span, 1)))


# ------------------------------------------------------------------------------------------ times
def say_time(rng: Random, h: int, m: int) -> str:
    """A time of day with its preposition: "at 3pm", "at 15:30", "at half past 9 in the morning", "at noon"."""
    if h == 12 and m == 0:
        return rng.choice(("at noon", "at midday", "at 12 noon", "at 12pm", "at 12:00", "at 12 pm"))
    h12 = h % 12 or 12
    ampm = "am" if h < 12 else "pm"
    part = "in the morning" if h < 12 else ("in the afternoon" if h < 18 else "in the evening")
    forms = [
        f"at {h12}{ampm}" if m == 0 else f"at {h12}:{m:02d}{ampm}",
        f"at {h12} {ampm}" if m == 0 else f"at {h12}:{m:02d} {ampm}",
        f"at {h12}:{m:02d} {ampm.upper()}",
        f"at {h12}:{m:02d}{ampm[0]}.m." if rng.random() < 0.3 else f"at {h:02d}:{m:02d}",
        f"at {h}:{m:02d}" if h >= 13 else f"at {h12}:{m:02d}{ampm}",
        f"at {h12}" + (f":{m:02d}" if m else "") + f" {part}",
    ]
    if m == 30:
        forms.append(f"at half past {h12} {part}")
    if m == 15:
        forms.append(f"at quarter past {h12}{ampm}")
    if m == 0 and 8 <= h <= 11:
        forms.append(f"at {h}")  # a bare morning hour
    if m == 0:
        forms.append(f"at {h12} o'clock {part}")
    return rng.choice(forms)


def _pick_time(rng: Random, lo: int = 7, hi: int = 21) -> tuple[int, int]:
    return rng.randint(lo, hi), rng.choice(_MINUTES)


# ------------------------------------------------------------------------------------------ dates
def _days_phrase(rng: Random, n: int) -> str:
    word = _NUMBER_WORDS.get(n, str(n)) if rng.random() < 0.4 else str(n)
    return rng.choice((f"in {word} days", f"{word} days from now", f"in {word} days' time"))


def _month_day(rng: Random, d: date, with_year: bool) -> str:
    month, short = MONTHS[d.month - 1], MONTHS[d.month - 1][:3]
    forms = [f"{month} {ordinal(d.day)}", f"{month} {d.day}", f"{d.day} {month}", f"the {ordinal(d.day)} of {month}",
             f"{short} {d.day}", f"{ordinal(d.day)} {month}"]
    text = rng.choice(forms)
    if with_year:
        text = f"{month} {d.day}, {d.year}" if rng.random() < 0.5 else f"{d.day} {month} {d.year}"
    return text


def _next_weekday(today: date, weekday: int) -> date:
    ahead = (weekday - today.weekday()) % 7 or 7
    return today + timedelta(days=ahead)


def _next_month_day(today: date, rng: Random) -> date:
    """A random date 3-300 days ahead: within a year, so "March 3rd" resolves to it unambiguously."""
    return today + timedelta(days=rng.randint(3, 300))


def _next_dom(today: date, day: int) -> date:
    y, m = today.year, today.month
    if today.day >= day:
        m += 1
        if m == 13:
            y, m = y + 1, 1
    return date(y, m, day)


def sample_when(rng: Random, now: datetime, with_time: bool = True) -> When:
    """A spoken future date+time and its resolution. Date and time order vary ("at 3pm tomorrow").

    With `with_time=False` only the day is said ("next Friday") and the value is that day at 00:00.
    """
    today = now.date()
    kind = rng.choices(
        ("today", "tonight", "tomorrow", "tomorrow_part", "after_tomorrow", "in_days", "weekday", "week",
         "month_day", "month_day_year", "dom", "iso"),
        weights=(6, 4, 22, 6, 5, 8, 22, 4, 12, 3, 5, 3))[0]
    h, m = _pick_time(rng)
    if kind in ("today", "tonight"):
        lo = now.hour + 1
        if kind == "tonight":
            lo = max(lo, 19)
        if lo > 22:
            kind = "tomorrow"
        else:
            h = rng.randint(lo, 22 if kind == "tonight" else max(lo, 21))
            d = today
            day = "tonight" if kind == "tonight" else rng.choice(("today", "later today", "today", "this afternoon" if 12 <= h < 18 else "this evening" if h >= 18 else "this morning"))
            return _when(rng, day, d, h, m, with_time)
    if kind == "tomorrow":
        return _when(rng, "tomorrow", today + timedelta(days=1), h, m, with_time)
    if kind == "tomorrow_part":
        h = rng.randint(7, 11) if rng.random() < 0.5 else rng.randint(18, 21)
        part = "tomorrow morning" if h < 12 else rng.choice(("tomorrow evening", "tomorrow night"))
        return _when(rng, part, today + timedelta(days=1), h, m, with_time)
    if kind == "after_tomorrow":
        return _when(rng, "the day after tomorrow", today + timedelta(days=2), h, m, with_time)
    if kind == "in_days":
        n = rng.randint(2, 10)
        return _when(rng, _days_phrase(rng, n), today + timedelta(days=n), h, m, with_time)
    if kind == "weekday":
        wd = rng.randrange(7)
        name = WEEKDAYS[wd]
        said = rng.choice((f"on {name}", f"this {name}", f"next {name}", f"{name}", f"this coming {name}", f"on {name[:3]}"))
        return _when(rng, said, _next_weekday(today, wd), h, m, with_time)
    if kind == "week":
        n = rng.choice((7, 14))
        said = rng.choice(("in a week", "a week from today", "one week from today") if n == 7 else ("in two weeks", "two weeks from today", "in 2 weeks"))
        return _when(rng, said, today + timedelta(days=n), h, m, with_time)
    if kind in ("month_day", "month_day_year"):
        d = _next_month_day(today, rng)
        said = ("on " if rng.random() < 0.8 else "") + _month_day(rng, d, with_year=kind == "month_day_year")
        if kind == "month_day" and _next_occurrence(today, d.month, d.day) != d:
            said = "on " + _month_day(rng, d, with_year=True)  # more than a year out would be ambiguous
        return _when(rng, said, d, h, m, with_time)
    if kind == "dom":
        day = rng.randint(1, 28)
        d = _next_dom(today, day)
        return _when(rng, f"on the {ordinal(day)}", d, h, m, with_time)
    d = today + timedelta(days=rng.randint(1, 200))
    return _when(rng, f"on {d.isoformat()}", d, h, m, with_time)


def _next_occurrence(today: date, month: int, day: int) -> date:
    for year in (today.year, today.year + 1, today.year + 2):
        try:
            d = date(year, month, day)
        except ValueError:
            continue
        if d > today:
            return d
    raise ValueError("no next occurrence")


def _when(rng: Random, day: str, d: date, h: int, m: int, with_time: bool = True) -> When:
    if not with_time:
        day = day.replace("tonight", "today").replace("this evening", "today").replace("this afternoon", "today")
        for part in (" morning", " evening", " night"):
            day = day.replace("tomorrow" + part, "tomorrow")
        return When(day, datetime.combine(d, time(0, 0)))
    t = say_time(rng, h, m)
    if day == "tonight" or "evening" in day or "night" in day:
        t = t.replace(" in the evening", "")
    if "morning" in day:
        t = t.replace(" in the morning", "")
    if "afternoon" in day:
        t = t.replace(" in the afternoon", "")
    r = rng.random()
    if r < 0.65:
        text = f"{day} {t}"
    elif r < 0.9:
        text = f"{t} {day}"
    else:
        text = f"{day}, {t}"
    return When(text, datetime.combine(d, time(h, m)))
