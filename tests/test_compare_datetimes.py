"""The date-parser comparison recipe: it imports, and `--derive` rewrites a table's generator rows."""
from __future__ import annotations

from datetime import datetime

from mobile_actions.recipes import compare_datetimes as cd


def test_derived_rows_carry_the_generators_gold():
    rows = cd.derive_rows(n_phrases=3, n_dates=2, n_requests=2)
    assert [r.source for r in rows] == ["gen"] * 3 + ["gen-date"] * 2 + ["row"] * 2
    for r in rows:
        gold = datetime.strptime(r.gold, cd.FORMAT)
        assert gold.date() >= r.now.date() and r.text   # the requests speak of days to come
        assert r.kind == "date" or r.source != "gen-date"
    assert rows[0].now == cd.BOUNDARY_NOWS[0]                # every third phrase starts next to a boundary
    assert cd.derive_rows(n_phrases=3, n_dates=2, n_requests=2) == rows


def test_derive_keeps_the_hand_written_rows(tmp_path, capsys):
    table = tmp_path / "datetimes.tsv"
    hand = cd.Row("hand", "datetime", datetime(2025, 3, 3, 10, 0), "2025-03-04T09:00:00", "tomorrow at 9")
    cd.write_table([cd.Row("gen", "datetime", datetime(2025, 3, 3, 10, 0), "2025-03-05T09:00:00", "old"), hand], table)
    cd.main(["--derive", "--table", str(table)])
    rows = cd.load_table(table)
    assert rows[-1] == hand and sum(r.source == "hand" for r in rows) == 1
    assert {r.source for r in rows} == {"gen", "gen-date", "row", "hand"} and "old" not in {r.text for r in rows}
    assert f"wrote {table}" in capsys.readouterr().out
