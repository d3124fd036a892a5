"""The words the toolkit reads requests with, as data: one JSON file per language, one loader.

Why data: which words say "don't", "should I ...?" or "never mind" is a property of a language, not of the
code that acts on it. Keeping them in `en.json` lets a reader see every word that changes what the phone
does, lets a language be added without touching Python, and keeps the reading code free of English.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from mobile_actions.errors import CatalogueError

LEXICON_DIR = Path(__file__).resolve().parent


def normalise(text: str) -> str:
    """Lower case with curly apostrophes read as straight ones: the form lexicon phrases are matched in. Of the
    same length as `text` (a character whose lower case is longer, "İ", stays), so a position in one is a
    position in the other."""
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    return "".join(c if len(low := c.lower()) != 1 else low for c in text)


def alternation(words: Iterable[str], space: str = " ") -> str:
    r"""`words` as the body of a regular-expression alternation, each escaped, in their order (Python's `re` takes
    the first alternative that matches, so the lexicon's order is kept); a space inside a phrase becomes `space`
    (r"\s+" for any whitespace)."""
    return "|".join(space.join(map(re.escape, w.split(" "))) for w in words)


@lru_cache(maxsize=1024)
def whole_words(words: tuple[str, ...]) -> re.Pattern | None:
    """A pattern that finds any of `words` whole in `normalise`d text, longest first ("flash light" before
    "light"); None for no words. Cached: the gate asks it for every tool of a catalogue for every call."""
    alts = "|".join(re.escape(normalise(k)) for k in sorted(set(words), key=len, reverse=True) if k)
    return re.compile(rf"(?<!\w)(?:{alts})(?!\w)") if alts else None


_WORD = r"[\w'@.+-]+"
_CLOCK_WORD = r"(?!\d{1,2}(?:[:.]\d\d)?(?:am|pm|h)?(?![\w'@.+-]))"   # never a time: "2pm", "10:30", "7"


@dataclass(frozen=True)
class Phrases:
    """A list of phrases matched whole-word (longest first), e.g. "do not" before "do"; in a phrase, "*" stands
    for one word other than `excluded` and other than a clock time ("* told me": "Ana told me", not "I told
    me"; "* goes": "she goes", not "haircut at 2pm goes in the calendar")."""
    words: tuple[str, ...]
    excluded: tuple[str, ...] = ()

    @property
    def pattern(self) -> re.Pattern:
        """Compiled on first use: a lexicon's ~35 lists cost a one-shot `call` 0.1 s to compile, which a caller
        spends while its model loads instead (`Lexicon.compile`)."""
        compiled = self.__dict__.get("_re")
        if compiled is None:
            other = (rf"(?!(?:{'|'.join(map(re.escape, self.excluded))})(?![\w']))" if self.excluded else "") \
                + _CLOCK_WORD + _WORD
            alts = "|".join(re.escape(w).replace(r"\*", other) for w in sorted(self.words, key=len, reverse=True))
            compiled = re.compile(rf"(?<![\w'@./-])(?:{alts})(?![\w'@/-]|\.\w)" if alts else r"(?!)")
            object.__setattr__(self, "_re", compiled)
        return compiled

    def find(self, text: str, start: int = 0) -> re.Match | None:
        """The first phrase in `text` (already `normalise`d) at or after `start`."""
        return self.pattern.search(text, start)

    def all(self, text: str) -> list[re.Match]:
        return list(self.pattern.finditer(text))

    def __contains__(self, word: object) -> bool:
        return word in self.words


@dataclass(frozen=True)
class PolarityWords:
    """The phrase lists that tell how a piece of a request stands to its action (en.json says what each means)."""
    split: Phrases
    split_before: Phrases
    interjections: Phrases
    fillers: Phrases
    content_markers: Phrases
    speech_openers: Phrases     # '*' is one word other than `wildcard_excludes` and `not_addressees`
    not_addressees: Phrases
    addressee_pronouns: Phrases  # "text him ...": who was named before in the request (`acting.named_addressee`)
    still_asks: Phrases
    request_openers: Phrases
    cancelled: Phrases
    negated: Phrases
    reported: Phrases
    past: Phrases
    past_subjects: Phrases
    past_verbs: Phrases
    past_adverbs: Phrases
    hypothetical: Phrases
    question_openers: Phrases
    question_words: Phrases
    governs_next: Phrases
    back_references: Phrases
    determiners: Phrases
    trailing: Phrases
    cancel_verbs: Phrases
    wildcard_excludes: Phrases
    past_verbs_base_form: Phrases
    not_past: Phrases
    statement_openers: Phrases
    names: Phrases
    abbreviations: Phrases      # a period after one ends no sentence ("Dr. Nakamura")
    take_back_not_after: Phrases  # "bc i always forget it": someone forgets, nothing is taken back
    take_back_between: Phrases
    cue_within_words: int
    past_suffix: str

    def take_backs(self, text: str) -> list[re.Match]:
        """The `cancelled` phrases of `text` that take something back: not those said of someone, after a
        `take_back_not_after` word with only `take_back_between` words between ("bc i always forget it", "he
        forget it at home", "so she doesn't forget that")."""
        return [m for m in self.cancelled.all(text) if not self._said_of_someone(text[:m.start()])]

    def _said_of_someone(self, before: str) -> bool:
        words = before.split()
        while words and words[-1] in self.take_back_between:
            words.pop()
        return bool(words) and words[-1] in self.take_back_not_after


@dataclass(frozen=True)
class EffectWords:
    """Words of a tool's name that say what calling it does when its catalogue does not say (``x-effect``)."""
    sends: frozenset[str]
    none: frozenset[str]
    contact_names: frozenset[str]   # a phone-number argument whose description says one may take a contact's name
    removes: Phrases = Phrases(())  # a tool's name that removes something; a request that asks for a removal


@dataclass(frozen=True)
class ValueWords:
    """Words that tell where a value copied from the request may start and end (en.json says what each means)."""
    joins: frozenset[str]
    no_start: frozenset[str]
    goes_on: tuple[str, ...]
    not_going_on: tuple[str, ...]
    cue_ends: tuple[str, ...]


_REGEX = {"regex": True}   # a field whose entries are regular expressions, checked when the lexicon is loaded


@dataclass(frozen=True)
class ClauseWords:
    """Words that part a request into clauses and tell which ask the phone for something (`decoding.coverage`;
    en.json says what each means)."""
    verbs: frozenset[str]
    generic: frozenset[str]
    synonyms: Mapping[str, tuple[str, ...]]
    plural_suffix: str
    particles: frozenset[str]
    field_words: frozenset[str]
    fillers: tuple[str, ...]
    clause_joins: tuple[str, ...]
    subjects: tuple[str, ...]
    to_assistant: tuple[str, ...]
    reminders: tuple[str, ...]
    schedule_verbs: tuple[str, ...]
    store_verbs: tuple[str, ...]
    show_me: tuple[str, ...]
    result_words: tuple[str, ...]
    result_owners: tuple[str, ...]
    result_fields: tuple[str, ...]
    result_where: tuple[str, ...]
    field_labels: tuple[str, ...]
    field_owners: tuple[str, ...]
    list_joins: tuple[str, ...]
    sentence_words: frozenset[str]
    capitalised_words: frozenset[str]
    not_a_title: frozenset[str]
    fragment_asks: frozenset[str]
    fragment_other_words: frozenset[str]
    ellipsis_joins: tuple[str, ...]
    verb_tail: frozenset[str]
    switch_verbs: tuple[str, ...]
    switched_on: tuple[str, ...]
    switched_off: tuple[str, ...]
    switches_on: tuple[str, ...]
    switches_off: tuple[str, ...]
    opens: tuple[str, ...]
    before_lamp: tuple[str, ...]
    lamps: tuple[str, ...]
    switched_things: tuple[str, ...]


@dataclass(frozen=True)
class Spelling:
    """A rewrite that gives a date phrase its one spelling: `pattern` becomes `replacement` (a `re.sub` template),
    or, with `sixty_plus`, the number in the pattern's first group read in the larger unit and that many of
    `unit` more, written in `unit` ("2 and a half hours": "150 minutes", "3 and a half minutes": "210 seconds")."""
    pattern: str
    replacement: str = ""
    sixty_plus: int | None = None
    unit: str = "minutes"


_PLUS = {"hours_plus_minutes": "minutes", "minutes_plus_seconds": "seconds"}   # a spelling's key -> what it writes


@dataclass(frozen=True)
class Holiday:
    """A holiday with a fixed date, and the forms of its name (regular expressions)."""
    name: str
    month: int
    day: int
    forms: tuple[str, ...]


@dataclass(frozen=True)
class NumberWords:
    """Words that say a number's unit or multiply it (`decoding.numbers`; en.json says what each means)."""
    units: Mapping[str, Mapping[str, float]]
    multipliers: Mapping[str, int]
    unit_counts: Mapping[str, float]
    clock_parts: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class DateWords:
    """The words of dates and times (`decoding.datetimes`, `decoding.datewords`; en.json says what each means)."""
    weekdays: tuple[str, ...] = field(metadata=_REGEX)
    months: tuple[str, ...] = field(metadata=_REGEX)
    short_weekdays: frozenset[str]
    part_hours: Mapping[str, int]
    part_of_day_after: tuple[str, ...]
    meridiem: tuple[str, ...] = field(metadata=_REGEX)
    at: tuple[str, ...]
    approximately: tuple[str, ...]
    after_bare_hour: tuple[str, ...]
    calendar_units: tuple[str, ...]
    before_bare_hour: tuple[str, ...]
    units: Mapping[str, int]
    tens: Mapping[str, int]
    ordinals: Mapping[str, int]
    day_shorthands: Mapping[str, tuple[str, ...]]
    shorthands: Mapping[str, tuple[str, ...]]
    spellings: tuple[Spelling, ...]
    holidays: tuple[Holiday, ...]
    day_groups: Mapping[str, tuple[str, ...]]
    day_joins: tuple[str, ...]
    day_ranges: tuple[str, ...]
    day_cues: tuple[str, ...]


@dataclass(frozen=True)
class NavigatorWords:
    """The word lists the text navigator reads a GUI goal with (en.json's ``navigator`` says what each means).
    Plain words, not `Phrases`: `navigator.goals` builds its own patterns from them."""
    request_verbs: tuple[str, ...]
    switch_verbs: tuple[str, ...]
    on_words: tuple[str, ...]
    off_words: tuple[str, ...]
    on_verbs: tuple[str, ...]
    off_verbs: tuple[str, ...]
    switch_object_ends: tuple[str, ...]
    value_stops: tuple[str, ...]
    value_leads: tuple[str, ...]
    value_joins: tuple[str, ...]
    text_cues: tuple[str, ...]
    final_verbs: tuple[str, ...]
    silent_verbs: tuple[str, ...]
    home_words: tuple[str, ...]
    politeness: tuple[str, ...]
    open_verbs: tuple[str, ...]
    open_articles: tuple[str, ...]
    open_app_words: tuple[str, ...]
    back_verbs: tuple[str, ...]
    back_not_before: tuple[str, ...]
    remove_verbs: tuple[str, ...]
    goal_remove_verbs: tuple[str, ...]
    new_item_words: tuple[str, ...]
    confirm_buttons: tuple[str, ...]
    save_buttons: tuple[str, ...]
    verb_endings: tuple[str, ...]
    every_words: tuple[str, ...]
    edit_verbs: tuple[str, ...]
    level_max_words: tuple[str, ...]
    picker_time_words: tuple[str, ...]
    level_min_words: tuple[str, ...]
    made_entry_goal: tuple[str, ...]


@dataclass(frozen=True)
class Lexicon:
    language: str
    polarity: PolarityWords
    effect: EffectWords
    values: ValueWords
    navigator: NavigatorWords
    clauses: ClauseWords
    datetimes: DateWords
    numbers: NumberWords

    def compile(self) -> None:
        """Compile every phrase list's pattern now rather than on first use."""
        for section in (getattr(self, f.name) for f in fields(self)):
            if is_dataclass(section):
                for value in (getattr(section, f.name) for f in fields(section)):
                    if isinstance(value, Phrases):
                        value.pattern


def _section(path: Path, data: dict, section: str, cls: type) -> Any:
    """The object `section` of a lexicon file as `cls`, each field read by its declared type (`_READERS`)."""
    body = data.get(section)
    if not isinstance(body, dict):
        raise CatalogueError(f"{path}: a lexicon has an object {section!r}")
    read = {}
    for f in fields(cls):
        where = f"{path}: {section}.{f.name}"
        read[f.name] = _READERS[f.type](body.get(f.name), where)
        if f.metadata.get("regex"):
            _check_patterns(read[f.name], where)
    return cls(**read)


def _words(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(w, str) and w.strip() for w in value):
        raise CatalogueError(f"{where} must be a list of non-empty strings")
    return tuple(value)


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise CatalogueError(f"{where} must be a string")
    return value


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _numbers(value: Any, where: str) -> Mapping[str, int]:
    if not isinstance(value, dict) or not all(k.strip() and _integer(n) for k, n in value.items()):
        raise CatalogueError(f"{where} must be an object of words and integers")
    return MappingProxyType(dict(value))


def _factors(value: Any, where: str) -> Mapping[str, float]:
    ok = lambda n: isinstance(n, (int, float)) and not isinstance(n, bool) and n > 0   # noqa: E731
    if not isinstance(value, dict) or not all(isinstance(w, str) and w.strip() and ok(n) for w, n in value.items()):
        raise CatalogueError(f"{where} must be an object of words and positive numbers")
    return MappingProxyType(dict(value))


def _unit_tables(value: Any, where: str) -> Mapping[str, Mapping[str, float]]:
    if not isinstance(value, dict) or not all(isinstance(k, str) and k.strip() for k in value):
        raise CatalogueError(f"{where} must be an object of kinds, each an object of words and positive numbers")
    return MappingProxyType({k: _factors(t, f"{where}.{k}") for k, t in value.items()})


def _word_lists(value: Any, where: str) -> Mapping[str, tuple[str, ...]]:
    if not isinstance(value, dict) or not all(k.strip() for k in value):
        raise CatalogueError(f"{where} must be an object of words and lists of words")
    return MappingProxyType({k: _words(v, f"{where}.{k}") for k, v in value.items()})


def _check_patterns(patterns: Iterable[str], where: str) -> None:
    for i, pattern in enumerate(patterns):
        try:
            re.compile(pattern)
        except re.error as e:
            raise CatalogueError(f"{where}[{i}] is not a regular expression ({e})") from None


def _spellings(value: Any, where: str) -> tuple[Spelling, ...]:
    if not isinstance(value, list):
        raise CatalogueError(f"{where} must be a list of [pattern, replacement] pairs")
    out = []
    for i, entry in enumerate(value):
        here = f"{where}[{i}]"
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)):
            raise CatalogueError(f"{here} must be a [pattern, replacement] pair")
        pattern, replacement = entry
        _check_patterns([pattern], here)
        if isinstance(replacement, str):
            out.append(Spelling(pattern, replacement))
        elif (isinstance(replacement, dict) and len(replacement) == 1 and next(iter(replacement)) in _PLUS
              and _integer(next(iter(replacement.values())))):
            (key, n), = replacement.items()
            out.append(Spelling(pattern, sixty_plus=n, unit=_PLUS[key]))
        else:
            raise CatalogueError(f'{here}: a replacement is a string, {{"hours_plus_minutes": <integer>}} or '
                                 f'{{"minutes_plus_seconds": <integer>}}')
    return tuple(out)


def _holidays(value: Any, where: str) -> tuple[Holiday, ...]:
    if not isinstance(value, list):
        raise CatalogueError(f"{where} must be a list of holidays")
    out = []
    for i, entry in enumerate(value):
        here = f"{where}[{i}]"
        if not (isinstance(entry, dict) and isinstance(entry.get("name"), str) and _integer(entry.get("month"))
                and _integer(entry.get("day")) and 1 <= entry["month"] <= 12 and 1 <= entry["day"] <= 31):
            raise CatalogueError(f"{here} must be an object with a 'name', a 'month' (1-12) and a 'day' (1-31)")
        forms = _words(entry.get("forms"), f"{here}.forms")
        _check_patterns(forms, f"{here}.forms")
        out.append(Holiday(entry["name"], entry["month"], entry["day"], forms))
    return tuple(out)


_READERS = {"frozenset[str]": lambda value, where: frozenset(_words(value, where)), "tuple[str, ...]": _words,
            "str": _text, "Mapping[str, int]": _numbers, "Mapping[str, Mapping[str, float]]": _unit_tables,
            "Mapping[str, float]": _factors, "Mapping[str, tuple[str, ...]]": _word_lists,
            "tuple[Spelling, ...]": _spellings, "tuple[Holiday, ...]": _holidays}


LANGUAGE_VARIABLE = "MOBILE_ACTIONS_LANGUAGE"


def reading_language() -> str:
    """The language requests are read in: ``$MOBILE_ACTIONS_LANGUAGE`` (a ``<language>.json`` beside this
    module), else English. Read once, when the reading modules load: a process reads one language."""
    return os.environ.get(LANGUAGE_VARIABLE) or "en"


@lru_cache(maxsize=None)
def load(name: str | None = None) -> Lexicon:
    """The lexicon of a language (default: `reading_language()`; `<name>.json` beside this module), checked
    against its shape."""
    language = name or reading_language()
    path = LEXICON_DIR / f"{language}.json"
    if not re.fullmatch(r"[a-z]{2,3}(?:-[A-Za-z0-9]+)?", language) or not path.is_file():
        raise CatalogueError(f"no lexicon for language {language!r} (looked for {path})")
    data = json.loads(path.read_text(encoding="utf-8"))
    pol, eff, val = data.get("polarity"), data.get("effect"), data.get("values")
    if not all(isinstance(x, dict) for x in (pol, eff, val)):
        raise CatalogueError(f"{path}: a lexicon has objects 'polarity', 'effect' and 'values'")
    lists = [f.name for f in fields(PolarityWords) if f.type == "Phrases"]
    pol = {"names": [], "question_words": [], "speech_openers": [], "not_addressees": [], "addressee_pronouns": [],
           "take_back_not_after": [], "take_back_between": [], **pol}
    #        (optional: a lexicon written before it had them)
    value_lists = [f.name for f in fields(ValueWords)]
    for section, names, where in ((pol, lists, "polarity"), (eff, ("sends", "none", "contact_names"), "effect"),
                                  (val, value_lists, "values")):
        for name in names:
            words = section.get(name)
            if not isinstance(words, list) or not all(isinstance(w, str) and w.strip() for w in words):
                raise CatalogueError(f"{path}: {where}.{name} must be a list of non-empty strings")
    within, suffix = pol.get("cue_within_words"), pol.get("past_suffix")
    if not isinstance(within, int) or within < 0:
        raise CatalogueError(f"{path}: polarity.cue_within_words must be a non-negative integer")
    if not isinstance(suffix, str):
        raise CatalogueError(f"{path}: polarity.past_suffix must be a string")
    excluded = tuple(normalise(w) for w in pol["wildcard_excludes"])
    phrases = {n: Phrases(tuple(normalise(w) for w in pol[n]), excluded) for n in lists}
    phrases["speech_openers"] = Phrases(phrases["speech_openers"].words,
                                        excluded + phrases["not_addressees"].words)
    polarity = PolarityWords(**phrases, cue_within_words=within, past_suffix=normalise(suffix))
    removes = eff.get("removes", [])
    if not isinstance(removes, list) or not all(isinstance(w, str) and w.strip() for w in removes):
        raise CatalogueError(f"{path}: effect.removes must be a list of non-empty strings")
    effect = EffectWords(**{n: frozenset(normalise(w) for w in eff[n]) for n in ("sends", "none", "contact_names")},
                         removes=Phrases(tuple(normalise(w) for w in removes)))
    values = ValueWords(frozenset(val["joins"]), frozenset(val["no_start"]), tuple(val["goes_on"]),
                        tuple(val["not_going_on"]), tuple(val["cue_ends"]))
    navigator = _navigator_words(data.get("navigator"), path)
    clauses = _section(path, data, "clauses", ClauseWords)
    datetimes = _section(path, data, "datetimes", DateWords)
    numbers = _section(path, data, "numbers", NumberWords)
    return Lexicon(str(data.get("language", language)), polarity, effect, values, navigator, clauses, datetimes,
                   numbers)


def _navigator_words(section: object, path: Path) -> NavigatorWords:
    """The ``navigator`` section, checked: an object of lists of non-empty strings, in their order (a list's
    first cue found wins)."""
    if not isinstance(section, dict):
        raise CatalogueError(f"{path}: a lexicon has an object 'navigator'")
    lists: dict[str, tuple[str, ...]] = {}
    for f in fields(NavigatorWords):
        words = section.get(f.name)
        if not isinstance(words, list) or not all(isinstance(w, str) and w.strip() for w in words):
            raise CatalogueError(f"{path}: navigator.{f.name} must be a list of non-empty strings")
        lists[f.name] = tuple(normalise(w) for w in words)
    return NavigatorWords(**lists)
