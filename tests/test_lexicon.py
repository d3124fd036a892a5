"""The lexicon's sections that part requests into clauses and read dates: loaded typed, checked by shape."""
import json
import re

import pytest

from mobile_actions import lexicon
from mobile_actions.errors import CatalogueError


def test_the_clause_and_date_sections_load_typed():
    words = lexicon.load("en")
    assert "turn" in words.clauses.verbs and "delete" not in words.clauses.verbs
    assert words.clauses.clause_joins[0] == "and then"   # an alternation keeps the lexicon's order
    dates = words.datetimes
    assert len(dates.weekdays) == 7 and len(dates.months) == 12
    assert re.fullmatch(dates.weekdays[3], "thurs") and dates.units["nineteen"] == 19
    assert dates.part_hours["morning"] == 9 and "tmrw" in dates.day_shorthands["tomorrow"]
    assert {(s.sixty_plus, s.unit) for s in dates.spellings} >= {(30, "minutes"), (30, "seconds")}
    assert {(h.month, h.day) for h in dates.holidays} >= {(12, 24), (12, 25), (1, 1)}


def test_alternation_escapes_each_word_and_keeps_their_order():
    assert lexicon.alternation(["a.m", "and then"]) == r"a\.m|and then"
    assert lexicon.alternation(["remind me"], r"\s+") == r"remind\s+me"


@pytest.fixture
def lexicon_with(tmp_path, monkeypatch):
    """Load a copy of en.json changed by `change` as language "xx"."""
    good = json.loads((lexicon.LEXICON_DIR / "en.json").read_text(encoding="utf-8"))
    monkeypatch.setattr(lexicon, "LEXICON_DIR", tmp_path)

    def load(change):
        data = json.loads(json.dumps(good))
        change(data)
        (tmp_path / "xx.json").write_text(json.dumps(data), encoding="utf-8")
        lexicon.load.cache_clear()
        return lexicon.load("xx")

    yield load
    lexicon.load.cache_clear()


@pytest.mark.parametrize("section, key", [("clauses", "verbs"), ("clauses", "fillers"), ("clauses", "plural_suffix"),
                                          ("datetimes", "weekdays"), ("datetimes", "units"),
                                          ("datetimes", "day_shorthands"), ("datetimes", "spellings"),
                                          ("datetimes", "holidays")])
def test_a_missing_list_is_named_by_section_and_key(lexicon_with, section, key):
    with pytest.raises(CatalogueError, match=rf"xx\.json: {section}\.{key} must be"):
        lexicon_with(lambda data: data[section].pop(key))


def test_a_missing_section_and_a_bad_pattern_are_named(lexicon_with):
    with pytest.raises(CatalogueError, match="a lexicon has an object 'clauses'"):
        lexicon_with(lambda data: data.pop("clauses"))
    with pytest.raises(CatalogueError, match=r"datetimes\.weekdays\[2\] is not a regular expression"):
        lexicon_with(lambda data: data["datetimes"]["weekdays"].__setitem__(2, "wed(nesday"))
    with pytest.raises(CatalogueError, match=r"datetimes\.spellings\[0\]: a replacement is a string"):
        lexicon_with(lambda data: data["datetimes"]["spellings"][0].__setitem__(1, {"minutes": 3}))
    with pytest.raises(CatalogueError, match=r"datetimes\.holidays\[0\] must be an object"):
        lexicon_with(lambda data: data["datetimes"]["holidays"][0].__setitem__("month", 13))


def test_the_reading_language_is_a_setting(monkeypatch):
    """A language is added as a file beside en.json and chosen with $MOBILE_ACTIONS_LANGUAGE, no Python."""
    monkeypatch.setenv(lexicon.LANGUAGE_VARIABLE, "zz")
    assert lexicon.reading_language() == "zz"
    lexicon.load.cache_clear()
    try:
        with pytest.raises(CatalogueError, match="no lexicon for language 'zz'"):
            lexicon.load()
    finally:
        monkeypatch.delenv(lexicon.LANGUAGE_VARIABLE)
        lexicon.load.cache_clear()
    assert lexicon.reading_language() == "en" and lexicon.load().language == "en"


def test_phrase_patterns_compile_on_first_use_or_all_at_once():
    """A one-shot `call` compiles the ~35 lists while its model loads (`Lexicon.compile`), not at import."""
    from dataclasses import fields

    from mobile_actions.lexicon import Lexicon, Phrases, load

    fresh = Lexicon(**{f.name: getattr(load(), f.name) for f in fields(Lexicon)})
    lists = [v for f in fields(fresh.polarity) if isinstance(v := getattr(fresh.polarity, f.name), Phrases)]
    one = Phrases(("do not", "do"))
    assert "_re" not in one.__dict__
    assert one.find("please do not").group(0) == "do not" and "_re" in one.__dict__
    fresh.compile()
    assert lists and all("_re" in p.__dict__ for p in lists)
