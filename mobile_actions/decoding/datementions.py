"""Date and time expressions in a request: each rule is a pattern and a handler that turns a match into a
`Mention` (a day, a time or an exact instant, with every reading it can have); `mentions` runs them all.

Why apart from `datetimes`: finding what the text says is one job (a rule per way of writing a date or time,
English in its patterns and the lexicon's `datewords`), and choosing among readings and writing values is another.
Standard library only: it runs in the torch-free on-device runtime.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from itertools import pairwise

from mobile_actions.decoding.datewords import (AFTER_BARE_HOUR, AT, BEFORE_BARE_HOUR, HOLIDAYS, MERIDIEM, MON,
                                               MONTH_FORMS, PART, PART_HOURS, SHORT_WEEKDAYS, TIME_PART, WD,
                                               WEEKDAY_FORMS, index)

# ------------------------------------------------------------------------------------------ mentions
@dataclass(frozen=True)
class Mention:
    """One date or time expression found in the text, with its possible readings."""
    start: int
    end: int
    kind: str                              # "day", "time" or "exact" (already a datetime: "in 2 hours")
    days: tuple[date, ...] = ()            # kind "day": readings, most likely first
    part: str | None = None                # morning / afternoon / evening / night, said with the day or the time
    clock: tuple[int, int] = (0, 0)        # kind "time": hour and minute as written
    meridiem: str | None = None            # "am" / "pm" when written
    exact24: bool = False                  # "09:30", "14:00", "noon": no other hour reading
    midnight: bool = False                 # "midnight": 00:00 of the next day (or, literally, of the same day)
    values: tuple[datetime, ...] = ()      # kind "exact"
    weekday: bool = False                  # a weekday name; a date next to it ("Friday the 14th") wins
    quoted: bool = False                   # inside quotes: probably a title, not the event's time
    holiday: bool = False                  # a holiday's name: also the name of things ("New Year's Eve party")
    until: tuple[int, int] | None = None   # a range's end on a 24-hour clock ("2-5pm": 17:00)


Rule = tuple["re.Pattern[str]", Callable[["re.Match[str]", datetime, str], "Mention | None"]]
RULES: list[Rule] = []


def rule(pattern: str) -> Callable:
    """Register a handler for a pattern: handler(match, now, text) -> Mention | None."""
    def register(handler: Callable) -> Callable:
        RULES.append((re.compile(pattern), handler))
        return handler
    return register


def _day(m: re.Match, days: list[date] | tuple[date, ...], part: str | None = None, weekday: bool = False) -> Mention:
    unique = tuple(dict.fromkeys(days))
    return Mention(m.start(), m.end(), "day", days=unique, part=part, weekday=weekday)


def _coming(today: date, weekday: int) -> date:
    """The first such weekday strictly after today (the generator's "on/this/next Friday")."""
    return today + timedelta(days=(weekday - today.weekday()) % 7 or 7)


def _add_months(d: date, n: int) -> date:
    y, m = divmod(d.month - 1 + n, 12)
    year, month = d.year + y, m + 1
    return date(year, month, min(d.day, _month_length(year, month)))


def _month_length(year: int, month: int) -> int:
    return ((date(year + month // 12, month % 12 + 1, 1)) - date(year, month, 1)).days


def _valid(year: int, month: int, day: int) -> bool:
    """A real calendar day in years a phone request can mean (date() itself fails outside 1..9999)."""
    return 1900 <= year <= 2200 and 1 <= month <= 12 and 1 <= day <= _month_length(year, month)


def _next_date(today: date, month: int, day: int) -> list[date]:
    """The next month/day strictly after today; today too when it is that day."""
    out = []
    for year in (today.year, today.year + 1, today.year + 4):  # +4: 29 February
        if day <= _month_length(year, month) and date(year, month, day) > today:
            out.append(date(year, month, day))
            break
    if (today.month, today.day) == (month, day):
        out.append(today)
    return out


def _next_day_of_month(today: date, day: int, which: str | None = None) -> list[date]:
    """"the 14th": the next 14th strictly after today (months without it are skipped); today too if it is the 14th."""
    if which in ("this", "the"):
        return [date(today.year, today.month, day)] if day <= _month_length(today.year, today.month) else []
    first = date(today.year, today.month, 1)
    for k in range(1 if which == "next" else 0, 14):
        month = _add_months(first, k)
        if day <= _month_length(month.year, month.month) and month.replace(day=day) > today:
            return [month.replace(day=day)] + ([today] if today.day == day and which is None else [])
    return []


# ---- days said relative to today
@rule(r"\b(?:(?:on|for|by)\s+)?(?P<rel>(?:the\s+)?day after tomorrow|tomorrow|later\s+today|today|tonight"
      r"|this\s+(?:morning|afternoon|evening|eve))\b(?:\s+(?:in\s+the\s+|at\s+)?" + PART + ")?")
def _relative_day(m: re.Match, now: datetime, text: str) -> Mention:
    rel = m["rel"]
    offset = 2 if "day after" in rel else 1 if rel == "tomorrow" else 0
    implied = "night" if rel == "tonight" else next((p for p in PART_HOURS if p in rel), None)
    if rel.endswith("eve"):
        implied = "evening"
    return _day(m, [now.date() + timedelta(days=offset)], m["part"] or implied)


@rule(r"\b(?:in|within|after)\s+(?P<n>\d{1,3})\s+(?P<unit>day|week|month)s?(?:'s|')?(?:\s+time)?\b"
      r"|(?P<n2>\d{1,3})\s+(?P<unit2>day|week|month)s?\s+(?:from\s+(?:now|today)|today)\b")
def _in_days(m: re.Match, now: datetime, text: str) -> Mention:
    n, unit = int(m["n"] or m["n2"]), m["unit"] or m["unit2"]
    today = now.date()
    d = _add_months(today, n) if unit == "month" else today + timedelta(days=n * (7 if unit == "week" else 1))
    return _day(m, [d])


@rule(r"(?<![\d:.])(?P<n>\d{1,2})\s+(?P<unit>day|week)s?\s+(?:from|after|on)\s+(?:(?P<tomorrow>tomorrow)|(?:this\s+|next\s+)?" + WD + r")\b")
def _days_after_day(m: re.Match, now: datetime, text: str) -> Mention:
    """"2 weeks from Friday", "a week on Friday", "3 days after tomorrow"."""
    today = now.date()
    base = today + timedelta(days=1) if m["tomorrow"] else _coming(today, index(WEEKDAY_FORMS, m["wd"]))
    return _day(m, [base + timedelta(days=int(m["n"]) * (7 if m["unit"] == "week" else 1))])


@rule(r"\b(?:(?P<on>on|by|until|till|before|for)\s+)?(?:(?P<pre>this\s+coming|the\s+coming|coming|this|next|the\s+following|following)\s+)?"
      r"(?:(?P<nw>next\s+week|this\s+week)\s+(?:on\s+)?)?(?<!last )" + WD + r"s?\b"
      r"(?:\s+(?P<post>after\s+next|(?:of\s+)?next\s+week|(?:of\s+)?this\s+week))?(?:\s+(?:in\s+the\s+)?" + PART + ")?")
def _weekday(m: re.Match, now: datetime, text: str) -> Mention | None:
    word, today = m["wd"], now.date()
    if len(word) <= 4 and text[m.end("wd"):m.end("wd") + 1] == "s":
        return None  # "thus", "suns", "mons"
    if word in SHORT_WEEKDAYS and not (m["on"] or m["pre"] or m["nw"]) \
            and not re.match(r"\s*(?:\d|at\b|@|morning|afternoon|evening|night|noon|(?:quarter|half)\s+(?:past|to)\b|half\s+\d)",
                             text[m.end():]) \
            and not re.search(r"\d\s*(?:[ap]\.?m\.?)?\s*,?\s*$", text[:m.start()]):
        return None  # "sat", "sun", "mon" alone are more often words than days; after a time ("2-5pm wed") a day
    wd = index(WEEKDAY_FORMS, word)
    coming = _coming(today, wd)
    week = (m["nw"] or m["post"] or "").replace("of ", "")
    if (m["post"] or "").startswith("after"):
        days = [coming + timedelta(days=7)]
    elif week == "next week":
        in_next_week = today - timedelta(days=today.weekday()) + timedelta(days=7 + wd)
        days = [in_next_week, coming, coming + timedelta(days=7)]
    elif week == "this week":
        in_this_week = today - timedelta(days=today.weekday()) + timedelta(days=wd)
        days = [in_this_week if in_this_week >= today else coming, coming]
    elif m["pre"] and re.search("next|following", m["pre"]):
        days = [coming, coming + timedelta(days=7)]
    else:
        days = [coming] + ([today] if today.weekday() == wd else [])
    return _day(m, days, m["part"], weekday=True)


@rule(r"\b(?:(?:on|over|at|for|by)\s+)?(?P<w>next\s+week(?:end)?|this\s+weekend|the\s+weekend|weekend|next\s+month"
      r"|end\s+of\s+(?:the\s+|this\s+)?month)\b(?!\s*'s)")
def _week_words(m: re.Match, now: datetime, text: str) -> Mention:
    w, today = re.sub(r"\s+", " ", m["w"]), now.date()
    saturday = today + timedelta(days=(5 - today.weekday()) % 7)
    if w == "next week":
        days = [today + timedelta(days=7), today + timedelta(days=7 - today.weekday())]
    elif w == "next weekend":
        first = _coming(today, 5)
        days = [first, first + timedelta(days=7)]
    elif w == "next month":
        days = [_add_months(today.replace(day=1), 1), _add_months(today, 1)]
    elif w.startswith("end of"):
        last = today.replace(day=_month_length(today.year, today.month))
        if last == today:
            nxt = _add_months(today.replace(day=1), 1)
            last = nxt.replace(day=_month_length(nxt.year, nxt.month))
        days = [last]
    elif today.weekday() == 6:  # "this weekend" on a Sunday
        days = [today, today + timedelta(days=6)]
    else:
        days = [saturday, saturday + timedelta(days=1)]
    return _day(m, days)


@rule(r"\b(?:(?:on|for|by|at)\s+)?(?P<name>" + "|".join(f"(?:{f})" for h in HOLIDAYS for f in h.forms) + r")\b")
def _holiday(m: re.Match, now: datetime, text: str) -> Mention | None:
    """"Christmas Eve", "on New Year's Day", "NYE": the next such day (today too when it is that day)."""
    holiday = next(h for h in HOLIDAYS if any(re.fullmatch(f, m["name"]) for f in h.forms))
    return replace(_day(m, _next_date(now.date(), holiday.month, holiday.day)), holiday=True)


# ---- days said as dates
def _month_day(m: re.Match, now: datetime, text: str) -> Mention | None:
    if m["mon"] == "may" and not (m["suf"] or m["year"] or AFTER_BARE_HOUR.match(text[m.end():])):
        return None  # "I may 5 times"
    month, day = index(MONTH_FORMS, m["mon"]) + 1, int(m["day"])
    if m["year"]:
        year = int(m["year"])
        return _day(m, [date(year, month, day)]) if _valid(year, month, day) else None
    days = _next_date(now.date(), month, day) if 1 <= day <= 31 else []
    return _day(m, days) if days else None


@rule(r"(?:\bon\s+)?(?:\bthe\s+)?(?<![\d:.])(?P<day>\d{1,2})(?P<suf>st|nd|rd|th)?\s+(?:of\s+)?" + MON + r"(?:,?\s+(?P<year>\d{4}))?")
def _day_month(m: re.Match, now: datetime, text: str) -> Mention | None:
    return _month_day(m, now, text)


@rule(r"(?:\bon\s+)?\b" + MON + r"\s+(?:the\s+)?(?P<day>\d{1,2})(?P<suf>st|nd|rd|th)?(?!\d|\s*(?::|[ap]\.?m\b|o'clock|hours|minutes))"
      r"(?:,?\s+(?P<year>\d{4}))?")
def _month_first(m: re.Match, now: datetime, text: str) -> Mention | None:
    return _month_day(m, now, text)


_NOT_A_DAY = r"(?!\s*(?:floor|century|time|place|anniversary|birthday|row|street|st\b|avenue|ave\b|percent|%|of\s+(?!this|next|the\s+month)))"


@rule(r"\b(?:(?P<pre>on|by|until|till|for|before)\s+)?the\s+(?P<day>\d{1,2})(?P<suf>st|nd|rd|th)?\b"
      r"(?:\s+of\s+(?P<which>this|next|the)\s+month)?" + _NOT_A_DAY)
def _the_nth(m: re.Match, now: datetime, text: str) -> Mention | None:
    if not (m["suf"] or m["pre"]) or not 1 <= int(m["day"]) <= 31:
        return None
    days = _next_day_of_month(now.date(), int(m["day"]), m["which"])
    return _day(m, days) if days else None


@rule(r"\b(?P<pre>on|by|until|till|before)\s+(?P<day>\d{1,2})(?:st|nd|rd|th)\b(?:\s+of\s+(?P<which>this|next|the)\s+month)?" + _NOT_A_DAY)
def _on_nth(m: re.Match, now: datetime, text: str) -> Mention | None:
    days = _next_day_of_month(now.date(), int(m["day"]), m["which"]) if 1 <= int(m["day"]) <= 31 else []
    return _day(m, days) if days else None


@rule(r"(?:\bon\s+)?(?<![\d/.:-])(?P<a>\d{1,2})/(?P<b>\d{1,2})(?:/(?P<y>\d{4}|\d{2}))?(?![\d/])(?!\s*(?:hours?|minutes?|cups?|of)\b)")
def _slash_date(m: re.Match, now: datetime, text: str) -> Mention | None:
    """"3/14" is US (month first); "14/3" can only be day first; "3/4" gives both, US first."""
    a, b = int(m["a"]), int(m["b"])
    if (a, b) == (24, 7):
        return None
    readings = [(a, b)] + ([(b, a)] if a != b else [])
    days: list[date] = []
    for month, day in readings:
        if m["y"]:
            year = int(m["y"]) + (2000 if len(m["y"]) == 2 else 0)
            days += [date(year, month, day)] if _valid(year, month, day) else []
        elif 1 <= month <= 12 and 1 <= day <= 31:
            days += _next_date(now.date(), month, day)
    return _day(m, days) if days else None


@rule(r"(?:\bon\s+)?(?<![\d.:])(?P<d>\d{1,2})\.(?P<mo>\d{1,2})\.(?P<y>\d{4}|\d{2})(?![\d.])"
      r"|(?:\bon\s+)?(?<!\d)(?P<y2>\d{4})[-/.](?P<mo2>\d{1,2})[-/.](?P<d2>\d{1,2})(?!\d)")
def _full_date(m: re.Match, now: datetime, text: str) -> Mention | None:
    """European "14.03.2025" and ISO "2025-03-14" (also with a "T14:00" after it: that is a time mention)."""
    y, mo, d = (m["y"], m["mo"], m["d"]) if m["y"] else (m["y2"], m["mo2"], m["d2"])
    year, month, day = int(y) + (2000 if len(y) == 2 else 0), int(mo), int(d)
    return _day(m, [date(year, month, day)]) if _valid(year, month, day) else None


# ---- times
def _time(m: re.Match, hour: int, minute: int, meridiem: str | None = None, exact24: bool = False,
          midnight: bool = False) -> Mention | None:
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        return None
    part = m.groupdict().get("part")
    mer = meridiem[0] + "m" if meridiem else None
    return Mention(m.start(), m.end(), "time", clock=(hour, minute), meridiem=mer, part=part, exact24=exact24,
                   midnight=midnight)


_MONTH_BEFORE = re.compile(r"\b" + MON + r"\s+$")


@rule(AT + r"(?<![\d:.$£€/])(?P<h>\d{1,2})(?:(?P<sep>[:. ])(?P<m>[0-5]\d))?\s*" + MERIDIEM + TIME_PART)
def _meridiem_time(m: re.Match, now: datetime, text: str) -> Mention | None:
    """"2pm", "2 PM", "2:30 p.m.", "9.15am", "7 30 pm". Not "1 10am" after a month: "sept 1 10am" is 10 am on
    the 1st (`_hour_meridiem` reads the "10am")."""
    if m["sep"] == " " and _MONTH_BEFORE.search(text, 0, m.start("h")):
        return None
    return _time(m, int(m["h"]), int(m["m"] or 0), m["mer"])


@rule(r"(?<![\d:.$£€/])(?P<h>\d{1,2})\s*" + MERIDIEM + TIME_PART)
def _hour_meridiem(m: re.Match, now: datetime, text: str) -> Mention | None:
    """"10am" on its own, also where `_meridiem_time` read it as the minutes of a day's number ("sept 1 10am");
    the longer reading wins where both stand."""
    return _time(m, int(m["h"]), 0, m["mer"])


@rule(r"(?:\b(?:from|between)\s+)?(?<![\d:.$£€/])(?P<h>\d{1,2})(?::(?P<m>[0-5]\d))?\s*(?P<mer1>[ap]\.?m\.?)?"
      r"\s*(?:-|to|until|till|and)\s*(?P<h2>\d{1,2})(?::(?P<m2>[0-5]\d))?\s*" + MERIDIEM)
def _time_range(m: re.Match, now: datetime, text: str) -> Mention | None:
    """"10-11am", "from 2 to 4pm": the event starts at the first time, which shares the second's am/pm
    unless that would make it later ("11-1pm" starts at 11am)."""
    h, h2 = int(m["h"]), int(m["h2"])
    if not (1 <= h <= 12 and 1 <= h2 <= 12):
        return None
    meridiem = m["mer1"] or (m["mer"] if h % 12 <= h2 % 12 else {"a": "pm", "p": "am"}[m["mer"][0]])
    start = _time(m, h, int(m["m"] or 0), meridiem)
    end = h2 % 12 + (12 if m["mer"][0].lower() == "p" else 0)
    return replace(start, until=(end, int(m["m2"] or 0))) if start is not None else None


@rule(r"(?:\b(?:at|around)\s+)?(?<![\d:.$£€/])(?P<h>\d{1,2})(?::(?P<m>[0-5]\d))?\s*-?ish\b")
def _ish(m: re.Match, now: datetime, text: str) -> Mention | None:
    """"9ish", "at 7:30-ish"."""
    return _time(m, int(m["h"]), int(m["m"] or 0))


@rule(r"(?<![\d:.$£€/])(?P<h>\d{1,2})(?:[:.](?P<m>[0-5]\d))?\s+(?:in\s+the|at)\s+" + PART)
def _hour_part(m: re.Match, now: datetime, text: str) -> Mention | None:
    """"8 in the morning", "10 at night" without an "at" before the hour."""
    return _time(m, int(m["h"]), int(m["m"] or 0))


@rule(AT + r"(?<![\d:.$£€/])(?P<h>\d{1,2})(?P<sep>[:h])(?P<m>[0-5]\d)(?::[0-5]\d)?(?![\d:]|m\b|mins?\b)(?:\s*o'clock)?"
      + TIME_PART)
def _clock_time(m: re.Match, now: datetime, text: str) -> Mention | None:
    """"14:00", "09:30" (zero-padded or past 12: a 24-hour clock), "9:30" (either half of the day), "14h30"
    ("1h20m" is a length)."""
    raw = m["h"]
    return _time(m, int(raw), int(m["m"]), exact24=raw.startswith("0") or m["sep"] == "h")


@rule(r"(?:\b(?P<at>at|around|by|from|until|till)\s+|(?P<sign>@)\s*)?(?<![\d:.])(?P<h>\d{1,2})h(?![\w:])" + TIME_PART)
def _h_hour(m: re.Match, now: datetime, text: str) -> Mention | None:
    """"at 14h", "@ 9h", "sunday 15h": the hour of a 24-hour clock, as much of Europe writes it, after "at" or
    right after a day ("14h30" is `_clock_time`; "a 4h drive" is a length)."""
    if not (m["at"] or m["sign"] or BEFORE_BARE_HOUR.search(text[:m.start()])):
        return None
    return _time(m, int(m["h"]), 0, exact24=True)


@rule(r"(?:\b(?:at|around|about|by|from|until|till)\s+|@\s*)(?:around\s+|about\s+|like\s+)?(?P<h>\d{1,2})"
      r"(?:[. ](?P<m>[0-5]\d))?(?![\d:/])(?:\s*o'clock)?" + TIME_PART)
def _bare_hour(m: re.Match, now: datetime, text: str) -> Mention | None:
    """"at 9", "at 3 30", "by 5 o'clock": an hour only when the next word does not make it an address or a count."""
    rest = text[m.end():]
    if not (m["part"] or "o'clock" in m.group() or AFTER_BARE_HOUR.match(rest) or BEFORE_BARE_HOUR.search(text[:m.start()])):
        return None
    if re.match(r"(?:st|nd|rd|th)\b|[:./]\d", rest):
        return None
    return _time(m, int(m["h"]), int(m["m"] or 0))


@rule(r"(?<![\d:.$£€/])(?P<h>\d{1,2})(?:[:.](?P<m>[0-5]\d))?(?![\d:/]|\.\d)")
def _hour_after_day(m: re.Match, now: datetime, text: str) -> Mention | None:
    """"tomorrow 9", "monday 11", "9 tonight", "saturday 10.15", "6.45 mon to fri" without an "at": a number next
    to a day is its hour when nothing around it makes it a count or a date ("tomorrow 3 people", "Friday 13 at
    9pm"); with its minutes written, also before a weekday and before "at" (a place: "wed 8.15 at kwik fit")."""
    before, rest = text[:m.start()], text[m.end():]
    after_day = BEFORE_BARE_HOUR.search(before)
    before_day = re.match(r"\s+(?:tonight|tomorrow|today" + (r"|" + WD if m["m"] else "") + r")\b", rest)
    # "at" after it: after a weekday's number or before a time, a date ("Friday 13 at 9pm"); otherwise the
    # time's place ("tonite 8 at la piazza": no day of the month follows "tonight")
    at = re.match(r"\s*(?:at|@)(?!\w)\s*(\d)?", rest)
    at_after = at and (at[1] or re.search(r"(?<![a-z])" + WD + r"s?,?\s*$", before))
    if not (after_day or before_day) or re.match(r"(?:st|nd|rd|th)\b", rest) or (at_after and not m["m"]):
        return None
    if after_day and not before_day and not (AFTER_BARE_HOUR.match(rest) or at_after):
        return None
    return _time(m, int(m["h"]), int(m["m"] or 0))


@rule(r"(?<![\d:])(?P<h>\d{1,2})\s*o'clock" + TIME_PART)
def _oclock(m: re.Match, now: datetime, text: str) -> Mention | None:
    return _time(m, int(m["h"]), 0)


@rule(AT + r"(?<!from )(?<![\d:.])(?P<q>quarter|half|\d{1,2})\s+(?P<min>minutes\s+)?(?P<dir>past|after|to|till|before)\s+(?P<h>\d{1,2})"
      r"(?!\d|:)(?:\s*" + MERIDIEM + r")?(?:\s*o'clock)?" + TIME_PART)
def _past_to(m: re.Match, now: datetime, text: str) -> Mention | None:
    """"half past 3", "quarter to 5", "20 past 4", "10 to 6"."""
    q = {"quarter": 15, "half": 30}.get(m["q"]) or int(m["q"])
    if m["q"].isdigit() and not (m["min"] or (q % 5 == 0 and 0 < q <= 30)):
        return None  # "2 to 4" is a range, not 3:58
    if m["q"] == "half" and m["dir"] != "past":
        return None
    h = int(m["h"])
    if m["dir"] in ("past", "after"):
        return _time(m, h, q, m["mer"])
    before = 12 if h == 1 else 23 if h == 0 else h - 1  # "quarter to 1" is 12:45
    return _time(m, before, 60 - q, m["mer"])


@rule(AT + r"half\s+(?P<h>\d{1,2})(?!\s*(?:hours?|minutes?|days?|weeks?|of|past|to)\b|\s*\d)(?:\s*" + MERIDIEM + ")?"
      + TIME_PART)
def _half_h(m: re.Match, now: datetime, text: str) -> Mention | None:
    """British "half 3" = 3:30 ("half 6 tomorrow" too: "to" is a word, not the start of one; "half 9 pm" 21:30)."""
    return _time(m, int(m["h"]), 30, m["mer"])


@rule(AT + r"(?:12\s+)?(?P<w>noon|midnight|lunchtime|lunch\s+time)\b")
def _named_time(m: re.Match, now: datetime, text: str) -> Mention | None:
    if m["w"] == "midnight":
        return _time(m, 0, 0, midnight=True)
    return _time(m, 12, 0, exact24=True)


@rule(AT + r"(?<![\d.])(?P<h>[01]\d|2[0-3])(?P<m>[0-5]\d)\s*(?:hours|h)\b")
def _military(m: re.Match, now: datetime, text: str) -> Mention | None:
    """"1500 hours"."""
    return _time(m, int(m["h"]), int(m["m"]), exact24=True)


# ---- datetimes said relative to now
@rule(r"\b(?:in|within|after)\s+(?P<n>\d{1,4})\s*(?P<unit>hours?|minutes?|h|m)\b(?:\s+(?:and\s+)?(?P<n2>\d{1,2})\s*minutes?\b)?"
      r"(?:'s|')?(?:\s+time)?|(?P<n3>\d{1,4})\s+(?P<unit3>hours?|minutes?)\s+from\s+now\b")
def _in_clock(m: re.Match, now: datetime, text: str) -> Mention:
    """"in 2 hours", "in 45 minutes", "in 1 hour and 30 minutes", "3 hours from now"."""
    n, unit = int(m["n"] or m["n3"]), (m["unit"] or m["unit3"])[0]
    minutes = n * 60 + int(m["n2"] or 0) if unit == "h" else n
    exact = now + timedelta(minutes=minutes)
    return Mention(m.start(), m.end(), "exact", values=(exact.replace(second=0, microsecond=0), exact.replace(microsecond=0)))


@rule(r"\bthis\s+time\s+(?P<when>tomorrow|next\s+week)")
def _this_time(m: re.Match, now: datetime, text: str) -> Mention:
    """"this time tomorrow": now's time of day, a day (or a week) later."""
    exact = now + timedelta(days=1 if m["when"] == "tomorrow" else 7)
    return Mention(m.start(), m.end(), "exact", values=(exact.replace(second=0, microsecond=0), exact.replace(microsecond=0)))


# ------------------------------------------------------------------------------------------ finding
def _quoted_spans(text: str) -> list[tuple[int, int]]:
    """Quoted titles and messages ("'Friday drinks' tomorrow at 6"): their dates are names, not the event's time."""
    spans = [m.span() for m in re.finditer(r'"[^"]*"', text)]
    spans += [m.span() for m in re.finditer(r"(?<![a-z0-9])'[^']+'(?![a-z0-9])", text)]
    return spans


def mentions(text: str, now: datetime) -> list[Mention]:
    """Every date/time expression in normalised text, longest first where patterns overlap, in text order."""
    found = [mention for pattern, handler in RULES for m in pattern.finditer(text)
             if (mention := handler(m, now, text)) is not None]
    kept: list[Mention] = []
    for mention in sorted(found, key=lambda x: (x.start - x.end, x.start)):
        if all(mention.end <= k.start or mention.start >= k.end for k in kept):
            kept.append(mention)
    quotes = _quoted_spans(text)
    kept = sorted((replace(k, quoted=any(a <= k.start < b for a, b in quotes)) for k in kept), key=lambda x: x.start)
    return _merge_weekdays(kept, text)


def _merge_weekdays(found: list[Mention], text: str) -> list[Mention]:
    """"Friday the 14th", "tomorrow (Friday)": the date decides; the weekday only lends its part of day."""
    out = list(found)
    for a, b in pairwise(found):
        if a.kind == b.kind == "day" and a.weekday != b.weekday and re.fullmatch(r"[\s,()]*(?:the\s+)?", text[a.end:b.start]):
            weekday, other = (a, b) if a.weekday else (b, a)
            if weekday in out and other in out:
                out[out.index(other)] = replace(other, part=other.part or weekday.part)
                out.remove(weekday)
    return out
