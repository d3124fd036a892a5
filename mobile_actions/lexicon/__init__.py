"""The words the toolkit reads requests with, as data: one JSON file per language, one loader.

Why data: which words say "don't", "should I ...?" or "never mind" is a property of a language, not of the
code that acts on it. Keeping them in `en.json` lets a reader see every word that changes what the phone
does, lets a language be added without touching Python, and keeps the reading code free of English.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path

from mobile_actions.errors import CatalogueError

LEXICON_DIR = Path(__file__).resolve().parent


def normalise(text: str) -> str:
    """Lower case with curly apostrophes read as straight ones: the form lexicon phrases are matched in. Of the
    same length as `text` (a character whose lower case is longer, "İ", stays), so a position in one is a
    position in the other."""
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    return "".join(c if len(low := c.lower()) != 1 else low for c in text)


_WORD = r"[\w'@.+-]+"


@dataclass(frozen=True)
class Phrases:
    """A list of phrases matched whole-word (longest first), e.g. "do not" before "do"; in a phrase, "*" stands
    for one word other than `excluded` ("* told me": "Ana told me", not "I told me")."""
    words: tuple[str, ...]
    excluded: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        other = (rf"(?:(?!(?:{'|'.join(map(re.escape, self.excluded))})(?![\w'])){_WORD})" if self.excluded
                 else _WORD)
        alts = "|".join(re.escape(w).replace(r"\*", other) for w in sorted(self.words, key=len, reverse=True))
        pattern = rf"(?<![\w'@./-])(?:{alts})(?![\w'@/-]|\.\w)" if alts else r"(?!)"
        object.__setattr__(self, "_re", re.compile(pattern))

    def find(self, text: str, start: int = 0) -> re.Match | None:
        """The first phrase in `text` (already `normalise`d) at or after `start`."""
        return self._re.search(text, start)  # type: ignore[attr-defined]

    def all(self, text: str) -> list[re.Match]:
        return list(self._re.finditer(text))  # type: ignore[attr-defined]

    @property
    def pattern(self) -> re.Pattern:
        return self._re  # type: ignore[attr-defined]

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
    governs_next: Phrases
    back_references: Phrases
    trailing: Phrases
    cancel_verbs: Phrases
    wildcard_excludes: Phrases
    past_verbs_base_form: Phrases
    not_past: Phrases
    statement_openers: Phrases
    cue_within_words: int
    past_suffix: str


@dataclass(frozen=True)
class EffectWords:
    """Words of a tool's name that say what calling it does when its catalogue does not say (``x-effect``)."""
    sends: frozenset[str]
    none: frozenset[str]


@dataclass(frozen=True)
class ValueWords:
    """Words that tell where a value copied from the request may start and end (en.json says what each means)."""
    joins: frozenset[str]
    no_start: frozenset[str]
    goes_on: tuple[str, ...]
    not_going_on: tuple[str, ...]


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


@dataclass(frozen=True)
class Lexicon:
    language: str
    polarity: PolarityWords
    effect: EffectWords
    values: ValueWords
    navigator: NavigatorWords


@lru_cache(maxsize=None)
def load(language: str = "en") -> Lexicon:
    """The lexicon of `language` (`<language>.json` beside this module), checked against its shape."""
    path = LEXICON_DIR / f"{language}.json"
    if not re.fullmatch(r"[a-z]{2,3}(?:-[A-Za-z0-9]+)?", language) or not path.is_file():
        raise CatalogueError(f"no lexicon for language {language!r} (looked for {path})")
    data = json.loads(path.read_text(encoding="utf-8"))
    pol, eff, val = data.get("polarity"), data.get("effect"), data.get("values")
    if not all(isinstance(x, dict) for x in (pol, eff, val)):
        raise CatalogueError(f"{path}: a lexicon has objects 'polarity', 'effect' and 'values'")
    lists = [f.name for f in fields(PolarityWords) if f.type == "Phrases"]
    value_lists = [f.name for f in fields(ValueWords)]
    for section, names, where in ((pol, lists, "polarity"), (eff, ("sends", "none"), "effect"),
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
    polarity = PolarityWords(**{n: Phrases(tuple(normalise(w) for w in pol[n]), excluded) for n in lists},
                             cue_within_words=within, past_suffix=normalise(suffix))
    effect = EffectWords(**{n: frozenset(normalise(w) for w in eff[n]) for n in ("sends", "none")})
    values = ValueWords(frozenset(val["joins"]), frozenset(val["no_start"]), tuple(val["goes_on"]),
                        tuple(val["not_going_on"]))
    navigator = _navigator_words(data.get("navigator"), path)
    return Lexicon(str(data.get("language", language)), polarity, effect, values, navigator)


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
