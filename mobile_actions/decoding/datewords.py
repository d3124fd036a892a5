"""The words of dates and times as the resolver (`datetimes`) reads them: patterns for weekdays, months, parts of
the day and the words around a time, and `normalise`, which gives numbers and shorthands one spelling.

Why apart from the resolver: the words are a language's (the "datetimes" section of `lexicon/en.json`); here they
become the few patterns the resolver's rules are written with, and a request becomes the one spelling those rules
expect ("tmrw at nine" -> "tomorrow at 9"). Standard library only: it runs in the torch-free on-device runtime.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from mobile_actions import lexicon
from mobile_actions.lexicon import Spelling, alternation

_WORDS = lexicon.load().datetimes   # what each list means: the "datetimes" section of lexicon/en.json

# The hour a part of the day means when no time is said ("tomorrow morning"); the generator always says a time.
PART_HOURS = dict(_WORDS.part_hours)

# ------------------------------------------------------------------------------------------ vocabulary
# One pattern per weekday / month, with the abbreviations and misspellings people type.
WEEKDAY_FORMS = _WORDS.weekdays
MONTH_FORMS = _WORDS.months
WD = "(?P<wd>" + "|".join(f"(?:{f})" for f in WEEKDAY_FORMS) + ")"
MON = "(?P<mon>" + "|".join(f"(?:{f})" for f in MONTH_FORMS) + r")\.?(?![a-z])"
PART = r"(?P<part>" + alternation(PART_HOURS) + ")"
MERIDIEM = r"(?P<mer>" + "|".join(_WORDS.meridiem) + r")(?![a-z])"
_ABOUT = "|".join(rf"{re.escape(w)}\s+" for w in _WORDS.approximately)
AT = r"(?:(?:\b(?:" + alternation(_WORDS.at) + r")\s+|@\s*)(?:" + _ABOUT + r")?)?"
# "at 7 in the evening"; "this evening" is a day, not this
TIME_PART = r"(?:\s+(?:" + alternation(_WORDS.part_of_day_after, r"\s+") + r")\s+" + PART + ")?"
SHORT_WEEKDAYS = _WORDS.short_weekdays  # also common words or too short to trust alone
HOLIDAYS = _WORDS.holidays              # with a fixed date
# A bare number after "at" is an hour only in good company: before one of these words...
AFTER_BARE_HOUR = re.compile(
    r"\s*(?:$|[,;!?)\"'-]|\.(?!\d)"
    r"|(?:" + alternation(_WORDS.after_bare_hour) + r"|\d{1,3}\s+(?:" + alternation(_WORDS.calendar_units) + r")s?)\b"
    r"|" + MON + r"|" + WD + r"s?\b)")
# ...or right after a day ("thurs at 5 yoga"), whatever follows. Otherwise "at 14 Main Street" would be 14:00.
BEFORE_BARE_HOUR = re.compile(
    r"(?:" + alternation(_WORDS.before_bare_hour) + r"|\d(?:st|nd|rd|th)|(?<![a-z])" + WD + r"s?),?\s*$")


def index(forms: tuple[str, ...], word: str) -> int:
    """Which of `forms` (a weekday's, a month's) `word` is written in."""
    return next(i for i, f in enumerate(forms) if re.fullmatch(f, word))


# ------------------------------------------------------------------------------------------ normalising
# Numbers and shorthands become one spelling, so the patterns of the rules stay few. Lower case, straight quotes.
UNITS, TENS, ORDINALS = _WORDS.units, _WORDS.tens, _WORDS.ordinals
_TENS_UNITS = "|".join(w for w, n in UNITS.items() if 1 <= n <= 9)
_NUMBER_WORDS = "|".join([*(w for w, n in UNITS.items() if n >= 1), *TENS])
_DAY_TENS = "|".join(w for w, n in TENS.items() if n <= 30)   # tens of a day of the month: "twenty-first"


def _shorthand(words: tuple[str, ...]) -> str:
    return r"\b(?:" + alternation(words) + r")\b"


def _rewrite(spelling: Spelling) -> str | Callable[[re.Match], str]:
    if spelling.sixty_plus is None:
        return spelling.replacement
    return lambda m: f"{int(m[1]) * 60 + spelling.sixty_plus} {spelling.unit}"


# A shorthand for a day ("tmrw", "2nite"): normalising it changes the length, so `expression_spans` finds it as typed.
DAY_SHORTHANDS = tuple((_shorthand(words), day) for day, words in _WORDS.day_shorthands.items())
SPELLINGS: tuple[tuple[str, str | Callable[[re.Match], str]], ...] = (
    *DAY_SHORTHANDS, *((_shorthand(words), word) for word, words in _WORDS.shorthands.items()),
    *((s.pattern, _rewrite(s)) for s in _WORDS.spellings))

PUNCTUATION = str.maketrans("\u2018\u2019\u201c\u201d\u2013\u2014\u00a0", "''\"\"-- ")   # one for one


def normalise(text: str) -> str:
    """Lower case, straight quotes, single spaces, digits for number words, one spelling per shorthand."""
    text = text.lower().translate(PUNCTUATION)
    text = re.sub(r"\s+", " ", text)
    text = _ordinal_words(text)
    text = re.sub(rf"\b({'|'.join(TENS)})[- ]?({_TENS_UNITS})\b", lambda m: str(TENS[m[1]] + UNITS[m[2]]), text)
    text = re.sub(rf"\b({_NUMBER_WORDS})\b", lambda m: str(UNITS.get(m[1]) or TENS[m[1]]), text)
    for pattern, repl in SPELLINGS:
        text = re.sub(pattern, repl, text)
    return text


def ordinal(n: int) -> str:
    """1 -> "1st", 22 -> "22nd": how the patterns expect day numbers."""
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _ordinal_words(text: str) -> str:
    """"the twenty-first" -> "the 21st", but only where an ordinal names a day ("the second one" stays)."""
    number = rf"(?:(?P<tens>{_DAY_TENS})[- ]?)?(?P<ord>{'|'.join(ORDINALS)})"
    month = MON.replace("(?P<mon>", "(?:")
    day_follows = rf"(?=\s+of\s|\s+at\b|\s+in\b|\s*[,.;!?]|\s*$|\s+{month})"

    def digits(m: re.Match) -> str:
        n = ORDINALS[m["ord"]] + TENS.get(m["tens"] or "", 0)
        return m["the"] + ordinal(n) if n <= 31 else m.group()

    text = re.sub(rf"\b(?P<the>the\s+){number}\b{day_follows}", digits, text)
    return re.sub(rf"\b(?P<the>){number}(?=\s+of\s+{month})", digits, text)
