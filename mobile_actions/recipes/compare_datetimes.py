"""Score date/time parsers on the datetime expression table (tests/fixtures/datetimes.tsv).

Why: before writing our own rules (`mobile_actions.decoding.datetimes`) we check whether a maintained
library already turns the requests' date phrases into the generator's gold values. A row counts as
found when any datetime a parser returns equals the gold value to the minute (for date-only rows,
kind "date", the day alone). Each library gets its best entry point and settings (several are tried).

    # the comparison (ctparse/timefhuman and an old `emoji` for recognizers-text live in .compare-libs,
    # see docs/datetimes.md for why they are not in the venv)
    PYTHONPATH=.compare-libs:. python -m mobile_actions.recipes.compare_datetimes
    # rewrite the generator-derived rows of the table (hand-written rows are kept)
    PYTHONPATH=. python -m mobile_actions.recipes.compare_datetimes --derive

Table columns (tab-separated, one header line): source, kind, now, gold, text.
source: "gen" (the generator's own phrase for a datetime), "gen-date" (its date-only phrase),
"row" (a whole generated request with a calendar event), "hand" (written the way people type).
"""
from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from random import Random

TABLE = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "datetimes.tsv"
FORMAT = "%Y-%m-%dT%H:%M:%S"
HEADER = ("source", "kind", "now", "gold", "text")
# Nows next to month, year and leap-day boundaries: where hand arithmetic (and the model) slips.
BOUNDARY_NOWS = tuple(datetime.strptime(s, FORMAT) for s in (
    "2024-12-31T22:10:05", "2025-12-30T09:00:40", "2024-02-28T20:00:00", "2024-02-29T08:12:00", "2025-02-28T23:30:10",
    "2025-01-31T12:00:00", "2025-04-30T19:45:00", "2026-06-30T07:15:30", "2026-08-31T16:59:00", "2024-11-30T21:05:00"))


@dataclass(frozen=True)
class Row:
    source: str
    kind: str          # "datetime" or "date" (only a day was said; gold is that day at 00:00)
    now: datetime
    gold: str
    text: str


def load_table(path: Path = TABLE) -> list[Row]:
    lines = path.read_text(encoding="utf-8").splitlines()
    assert tuple(lines[0].split("\t")) == HEADER, lines[0]
    rows = []
    for line in lines[1:]:
        source, kind, now, gold, text = line.split("\t")
        rows.append(Row(source, kind, datetime.strptime(now, FORMAT), gold, text))
    return rows


def write_table(rows: Iterable[Row], path: Path = TABLE) -> None:
    lines = ["\t".join(HEADER)]
    lines += ["\t".join((r.source, r.kind, r.now.strftime(FORMAT), r.gold, r.text)) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# ------------------------------------------------------------------------------------------ deriving
def derive_rows(n_phrases: int = 120, n_dates: int = 30, n_requests: int = 80, seed: int = 0) -> list[Row]:
    """Rows whose gold comes from the generator itself: its date phrases and whole calendar requests."""
    from mobile_actions.catalog import load_catalogue
    from mobile_actions.datagen.dates import random_now, sample_when
    from mobile_actions.datagen.generate import DEFAULT_END, DEFAULT_START, generate_rows

    rows = []
    for i in range(n_phrases + n_dates):
        rng = Random(f"datetimes/{seed}/{i}")
        now = BOUNDARY_NOWS[i // 3 % len(BOUNDARY_NOWS)] if i % 3 == 0 else random_now(rng, DEFAULT_START, DEFAULT_END)
        with_time = i < n_phrases
        when = sample_when(rng, now, with_time=with_time)
        rows.append(Row("gen" if with_time else "gen-date", "datetime" if with_time else "date", now, when.iso, when.text))
    requests = []
    for row in generate_rows(load_catalogue("mobile_actions"), 8 * n_requests, seed=seed):
        user, assistant = row["messages"][1], row["messages"][2]
        now = datetime.strptime(row["messages"][0]["content"].split(": ", 1)[1][:19], FORMAT)
        for call in assistant.get("tool_calls", []):
            if call["function"]["name"] == "create_calendar_event":
                requests.append(Row("row", "datetime", now, call["function"]["arguments"]["datetime"], user["content"]))
    return rows + requests[:n_requests]


# ------------------------------------------------------------------------------------------ parsers
# Each parser: (text, now) -> every datetime it reads in the text. Imports are inside, so a missing
# library only removes its own lines from the table.
def ours(text: str, now: datetime) -> list[datetime]:
    from mobile_actions.decoding.datetimes import resolve
    return [datetime.strptime(v, FORMAT) for v in resolve(text, now)]


def dateparser_search(text: str, now: datetime, prefer: str = "future") -> list[datetime]:
    from dateparser.search import search_dates
    settings = {"RELATIVE_BASE": now, "PREFER_DATES_FROM": prefer, "RETURN_AS_TIMEZONE_AWARE": False}
    return [d for _, d in search_dates(text, languages=["en"], settings=settings) or []]


def dateparser_parse(text: str, now: datetime) -> list[datetime]:
    import dateparser
    d = dateparser.parse(text, languages=["en"], settings={"RELATIVE_BASE": now, "PREFER_DATES_FROM": "future"})
    return [d] if d else []


def parsedatetime_nlp(text: str, now: datetime) -> list[datetime]:
    import parsedatetime
    cal = parsedatetime.Calendar(version=parsedatetime.VERSION_CONTEXT_STYLE)
    return [hit[0] for hit in cal.nlp(text, sourceTime=now) or ()]


def parsedatetime_parse(text: str, now: datetime) -> list[datetime]:
    import parsedatetime
    cal = parsedatetime.Calendar(version=parsedatetime.VERSION_CONTEXT_STYLE)
    value, ctx = cal.parseDT(text, sourceTime=now)
    return [value] if ctx.hasDate or ctx.hasTime else []


def ctparse_parse(text: str, now: datetime, latent_time: bool = True) -> list[datetime]:
    from ctparse import ctparse
    from ctparse.types import Interval, Time
    hit = ctparse(text, ts=now, timeout=2, latent_time=latent_time)
    if hit is None:
        return []
    t = hit.resolution
    if isinstance(t, Interval):
        t = t.t_from
    if not isinstance(t, Time) or t is None or t.year is None:
        return []
    return [datetime(t.year, t.month, t.day, t.hour or 0, t.minute or 0)]


def recognizers_parse(text: str, now: datetime) -> list[datetime]:
    from recognizers_date_time import Culture, DateTimeOptions, recognize_datetime
    out = []
    for result in recognize_datetime(text, Culture.English, DateTimeOptions.NONE, now):
        for v in (result.resolution or {}).get("values", []):
            value = v.get("value") or v.get("start")
            if not value:
                continue
            for fmt in ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d", "%H:%M:%S"):
                try:
                    d = datetime.strptime(value, fmt)
                except ValueError:
                    continue
                if fmt == "%H:%M:%S":  # a time alone: its next occurrence
                    d = datetime.combine(now.date(), d.time())
                    d += timedelta(days=1) if d <= now else timedelta()
                out.append(d)
                break
    return out


def timefhuman_parse(text: str, now: datetime) -> list[datetime]:
    from timefhuman import tfhConfig, timefhuman
    out = []

    def flatten(x) -> Iterable:
        if isinstance(x, (list, tuple)):
            for y in x:
                yield from flatten(y)
        else:
            yield x

    for v in flatten(timefhuman(text, config=tfhConfig(now=now))):
        if isinstance(v, datetime):
            out.append(v)
        elif isinstance(v, date):
            out.append(datetime.combine(v, datetime.min.time()))
    return out


def dateutil_fuzzy(text: str, now: datetime) -> list[datetime]:
    from dateutil import parser
    try:
        return [parser.parse(text, fuzzy=True, default=datetime.combine(now.date(), datetime.min.time()))]
    except (ValueError, OverflowError):
        return []


# library -> [(settings, parser)]: the best settings' score is the library's score.
PARSERS: dict[str, list[tuple[str, Callable[[str, datetime], list[datetime]]]]] = {
    "ours (mobile_actions.decoding.datetimes)": [("resolve(text, now)", ours)],
    "dateparser 1.5.0": [("search_dates, RELATIVE_BASE=now, PREFER_DATES_FROM=future", dateparser_search),
                         ("search_dates, PREFER_DATES_FROM=current_period", lambda t, n: dateparser_search(t, n, "current_period")),
                         ("parse(whole text), future", dateparser_parse)],
    "parsedatetime 2.6": [("Calendar.nlp, sourceTime=now", parsedatetime_nlp), ("Calendar.parseDT", parsedatetime_parse)],
    "ctparse 0.3.6": [("ctparse(ts=now, latent_time=True)", ctparse_parse),
                      ("ctparse(ts=now, latent_time=False)", lambda t, n: ctparse_parse(t, n, False))],
    "recognizers-text-suite 1.0.2a2": [("recognize_datetime(reference=now), all values", recognizers_parse)],
    "timefhuman 0.1.5": [("timefhuman(config=tfhConfig(now=now))", timefhuman_parse)],
    "python-dateutil (fuzzy)": [("parser.parse(fuzzy=True, default=today 00:00)", dateutil_fuzzy)],
}


def found(row: Row, values: list[datetime]) -> bool:
    gold = datetime.strptime(row.gold, FORMAT)
    if row.kind == "date":
        return any(v.date() == gold.date() for v in values)
    return any(v.replace(second=0, microsecond=0, tzinfo=None) == gold.replace(second=0) for v in values)


@dataclass
class Score:
    library: str
    settings: str
    hits: list[bool]
    outputs: float     # mean number of datetimes returned per row
    seconds: float
    error: str = ""

    @property
    def accuracy(self) -> float:
        return sum(self.hits) / max(len(self.hits), 1)


def score(rows: list[Row], name: str, settings: str, parse: Callable[[str, datetime], list[datetime]]) -> Score:
    hits, outputs, start = [], 0, time.perf_counter()
    for row in rows:
        try:
            values = parse(row.text, row.now)
        except ImportError:
            raise
        except Exception:  # noqa: BLE001 - a third-party parser crashing on a row misses that row
            values = []
        hits.append(found(row, values))
        outputs += len(values)
    return Score(name, settings, hits, outputs / max(len(rows), 1), time.perf_counter() - start)


def compare(rows: list[Row]) -> list[Score]:
    best = []
    for name, options in PARSERS.items():
        scores = []
        for settings, parse in options:
            try:
                scores.append(score(rows, name, settings, parse))
            except ImportError as e:
                scores.append(Score(name, settings, [], 0.0, 0.0, error=f"not installed ({e.name})"))
            print(f"  {name:40s} {settings:60s} {scores[-1].accuracy:6.1%}", flush=True)
        best.append(max(scores, key=lambda s: s.accuracy))
    return best


def report(rows: list[Row], best: list[Score]) -> str:
    sources = sorted({r.source for r in rows})
    head = "| library | best settings | all | " + " | ".join(sources) + " | outputs/row | s/row |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for s in best:
        if s.error:
            lines.append(f"| {s.library} | {s.error} |" + " |" * (len(sources) + 3))
            continue
        per = [sum(h for h, r in zip(s.hits, rows) if r.source == src) / sum(r.source == src for r in rows) for src in sources]
        lines.append(f"| {s.library} | {s.settings} | {s.accuracy:.1%} | " + " | ".join(f"{p:.0%}" for p in per)
                     + f" | {s.outputs:.1f} | {s.seconds / len(rows):.3f} |")
    libraries = [s for s in best if not s.error and not s.library.startswith("ours")]
    missed = [r for i, r in enumerate(rows) if libraries and not any(s.hits[i] for s in libraries)]
    lines += ["", f"Rows no library found ({len(missed)} of {len(rows)}):", ""]
    lines += [f"- `{r.text}` (now {r.now:%a %Y-%m-%d %H:%M}, gold {r.gold})" for r in missed]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--table", type=Path, default=TABLE)
    ap.add_argument("--derive", action="store_true", help="rewrite the generator-derived rows, keep the hand-written ones")
    args = ap.parse_args(argv)
    if args.derive:
        hand = [r for r in load_table(args.table) if r.source == "hand"] if args.table.exists() else []
        write_table(derive_rows() + hand, args.table)
        print(f"wrote {args.table}")
        return
    rows = load_table(args.table)
    print(f"{len(rows)} rows")
    print(report(rows, compare(rows)))


if __name__ == "__main__":
    main()
