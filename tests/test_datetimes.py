"""The datetime resolver: every gold value of the expression table is among its candidates, and lists stay short.

The table (tests/fixtures/datetimes.tsv) mixes the generator's own phrases and whole generated
requests (gold = the generator's value) with hand-written rows typed the way people type.
"""
from __future__ import annotations

from datetime import datetime
from pathlib import Path
from random import Random

import pytest

from mobile_actions.decoding.datetimes import MAX_CANDIDATES, normalise, resolve
from mobile_actions.recipes.compare_datetimes import FORMAT, load_table

TABLE = Path(__file__).parent / "fixtures" / "datetimes.tsv"
ROWS = load_table(TABLE)


def test_table_is_big_enough_and_small_in_bytes():
    assert len(ROWS) >= 250
    assert sum(r.source == "hand" for r in ROWS) >= 80
    assert TABLE.stat().st_size < 60_000


@pytest.mark.parametrize("row", ROWS, ids=[f"{i}-{r.source}" for i, r in enumerate(ROWS)])
def test_gold_is_a_candidate(row):
    candidates = resolve(row.text, row.now)
    assert row.gold in candidates, (row.text, row.now, candidates)
    assert len(candidates) <= MAX_CANDIDATES


def test_lists_stay_short_on_average():
    sizes = [len(resolve(r.text, r.now)) for r in ROWS]
    assert sum(sizes) / len(sizes) <= 2.5, sum(sizes) / len(sizes)


NOW = datetime(2024, 10, 17, 16, 5)  # a Thursday


@pytest.mark.parametrize("text, expected", [
    ("next Wednesday at 10am", ["2024-10-23T10:00:00", "2024-10-30T10:00:00"]),   # both readings of "next"
    ("at 9", ["2024-10-18T09:00:00", "2024-10-17T21:00:00"]),                    # bare hour: am and pm, each ahead
    ("tonight at 9", ["2024-10-17T21:00:00"]),
    ("2pm tomorrow", ["2024-10-18T14:00:00"]),
    ("in 2 hours", ["2024-10-17T18:05:00"]),
    ("3/4 at 14:00", ["2025-03-04T14:00:00", "2025-04-03T14:00:00"]),            # US first, then day-first
    ("lunch thursday at 12:30", ["2024-10-24T12:30:00"]),                        # a bare 12 is noon, not 00:30
    ("dentist tomorrow 9", ["2024-10-18T09:00:00", "2024-10-18T21:00:00"]),     # an hour next to a day, no "at"
    ("NYE party at 8pm", ["2024-12-31T20:00:00"]),
    ("wake me at half 6 tomorrow", ["2024-10-18T18:30:00", "2024-10-18T06:30:00"]),   # "to" of "tomorrow" is no "to"
    ("offsite 2-5pm wed", ["2024-10-23T14:00:00"]),                         # a short weekday after a time is a day
    ("timer 1h20m", []),                                                         # a length, not 1:20
    ("on the 17th at noon", ["2024-11-17T12:00:00", "2024-10-17T12:00:00"][:1]),   # today's noon has passed
    ("tyres sept 1 10am", ["2025-09-01T10:00:00"]),                          # not "1 10am" as 1:10 with no day
    ("jan 5 3pm", ["2025-01-05T15:00:00"]),
    ("sep 1 10am", ["2025-09-01T10:00:00"]),
    ("reminder for the 30th half 9 pm", ["2024-10-30T21:30:00"]),           # the pm after "half 9" is read
    ("dinner friday 7 30 pm", ["2024-10-18T19:30:00"]),                    # minutes said after a space
    ("birthday sunday 15h, at her place", ["2024-10-20T15:00:00"]),         # a 24-hour "15h" right after a day
    ("a 4h drive on sunday", ["2024-10-20T00:00:00"]),                      # "4h" alone is a length
    ("yoga wed quarter to 7 in the evening", ["2024-10-23T18:45:00"]),      # a short weekday before a time said in words
    ("sun half price deals", []),                                           # "half" that starts no time leaves "sun" a word
    ("vet for miso saturday 10.15", ["2024-10-19T10:15:00", "2024-10-19T22:15:00"]),   # minutes after a dot
    ("MOT wed 8.15 at kwik fit", ["2024-10-23T08:15:00", "2024-10-23T20:15:00"]),    # "at" a place after the time
    ("alarm 6.45 mon", ["2024-10-21T18:45:00", "2024-10-21T06:45:00"]),           # before a weekday
    ("friday 10.50 euros", ["2024-10-18T00:00:00"]),                              # a price, not 10:50
    ("party friday 13 at 9pm", ["2024-10-18T21:00:00"]),                          # "13 at": not 13:00
    ("dinner tonite 8 at la piazza", ["2024-10-17T20:00:00"]),                    # "tonight" has no day of month
    ("standup tomorrow 14 at 9", ["2024-10-18T09:00:00", "2024-10-18T21:00:00"]),  # a time after "at": 14 no hour
])
def test_readings(text, expected):
    assert resolve(text, NOW) == expected


@pytest.mark.parametrize("text", [
    "Turn on the flashlight", "Add Priya Raman, her number is 0412 555 019", "Where is 14 Baker Street?",
    "Email ops@example.org: the VPN is down", "meet at 221B Baker Street", "Save 24/7 Pharmacy as a contact",
])
def test_nothing_to_resolve(text):
    assert resolve(text, NOW) == []


def test_normalise_spells_numbers_and_shorthands():
    assert normalise("Tmrw at Nine-Thirty, in a Couple of days") == "tomorrow at 9-30, in 2 days"
    assert normalise("in an hour and a half") == "in 90 minutes"


def test_candidates_are_well_formed():
    for r in ROWS[:50]:
        for c in resolve(r.text, r.now):
            assert datetime.strptime(c, FORMAT).strftime(FORMAT) == c


def test_never_raises_on_noisy_text():
    """Token soup around every pattern's edges: out-of-range days, hours and years give no reading, not an error."""
    rng = Random(0)
    tokens = ("on", "the", "at", "in", "next", "this", "31st", "29th", "0", "00", "13", "25", "99", "12", "3", "/", "-",
              ":", ".", "pm", "am", "feb", "may", "30", "0000-00-00", "9999-12-31", "13/13", "24/7", "99:99", "fri", "sat",
              "tomorrow", "tonight", "quarter", "half", "past", "to", "999", "days", "hours", "weeks", "months", "o'clock",
              "noon", "midnight", "'", '"', "of", "next month", "2025", "0000", "the 31st of this month", "at 12am")
    now = datetime(2024, 2, 29, 23, 59, 59)
    for _ in range(2000):
        text = " ".join(rng.choice(tokens) for _ in range(rng.randint(1, 8)))
        for c in resolve(text, now):
            assert datetime.strptime(c, FORMAT)


def test_expression_spans_are_offsets_in_the_text_itself():
    from mobile_actions.decoding.datetimes import expression_spans

    text = "Tonight at 9 I have movie night  — and “lunch” on December 3rd"
    assert [text[a:b] for a, b in expression_spans(text)] == ["Tonight", "at 9", "on December 3rd"]
    assert expression_spans("155 boulevard Saint-Germain, Paris") == []
    text = "Flight to İstanbul tomorrow at 9"             # "İ" lower-cases to two characters
    assert [text[a:b] for a, b in expression_spans(text)] == ["tomorrow", "at 9"]
    text = 'add "Sunday brunch" tomorrow at 11'           # quoted: part of a title
    assert [text[a:b] for a, b in expression_spans(text)] == ["tomorrow", "at 11"]


def test_a_bare_hour_from_1_to_5_is_the_afternoon():
    from datetime import datetime

    from mobile_actions.decoding.datetimes import resolve

    assert resolve("create an event called quarterly review at 2", datetime(2024, 5, 31, 11, 25)) == [
        "2024-05-31T14:00:00"]
    assert resolve("at 2am", datetime(2024, 5, 31, 11, 25)) == ["2024-06-01T02:00:00"]
    assert set(resolve("dinner at 7", datetime(2024, 5, 31, 11, 25))) == {"2024-05-31T19:00:00", "2024-06-01T07:00:00"}


def test_a_holiday_is_the_name_of_things_too():
    """An undated title is cut at date expressions; "New Year's Eve party" must stay whole."""
    from mobile_actions.decoding.datetimes import expression_spans

    text = "put New Year's Eve party on my calendar tomorrow at 9pm"
    assert [text[a:b] for a, b in expression_spans(text)] == ["tomorrow", "at 9pm"]


def test_a_days_shorthand_is_a_date_expression_where_it_is_written():
    from mobile_actions.decoding.datetimes import expression_spans

    text = "add bday party 4 Leo 2moro 4pm & gym tmrw"
    assert [text[a:b] for a, b in expression_spans(text)] == ["2moro", "4pm", "tmrw"]


def test_an_hour_written_with_h_is_a_24_hour_clock_after_any_date():
    """"on 2025-07-02 at 14h" is 14:00 on that day (it was midnight); "a 4h drive" is a length, not a time."""
    from datetime import datetime

    from mobile_actions.decoding.datetimes import resolve

    now = datetime(2025, 6, 30, 9, 0)
    assert resolve("create an event on 2025-07-02 at 14h", now) == ["2025-07-02T14:00:00"]
    assert resolve("tomorrow at 9h", now) == ["2025-07-01T09:00:00"]
    assert resolve("the 4h drive tomorrow", now) == ["2025-07-01T00:00:00"]
