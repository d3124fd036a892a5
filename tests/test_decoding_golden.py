"""Decoded outputs of the on-device caller, grounded and constrained, pinned byte for byte (slow).

Restructuring the decoder (grammar engine, turn controller, reading of the request) must not change what it
decodes. `tests/fixtures/decoding-golden.jsonl` holds the raw text the prepared export decoded for the README's
held-out rows and the hand-written sets, one Caller, rows in file order (prefix reuse depends on the order).

    python -m tests.test_decoding_golden --record     # after a change that is meant to change outputs
    pytest -m slow tests/test_decoding_golden.py      # checks every pinned row
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "fixtures" / "decoding-golden.jsonl"
BENCH = ROOT / "mobile_actions" / "assets" / "bench"
SETS = ("caller-requests", "people-a", "people-b", "people-c", "people-d", "people-e",
        "act-a", "act-b", "act-c", "act-d")
HELD_OUT = dict(n=400, seed=2, families="heldout", limit=200)   # the README's held-out rows


def _rows():
    """(set, index, row) in the pinned order: the held-out rows first, then each hand-written set."""
    from mobile_actions.catalog import load_catalogue
    from mobile_actions.datagen.generate import generate_rows
    from mobile_actions.dataset import parse_row, read_rows

    held = generate_rows(load_catalogue("mobile_actions"), HELD_OUT["n"], seed=HELD_OUT["seed"],
                         families=HELD_OUT["families"], refusal_rate=0.1, chain_rate=0.1,
                         call_count_weights=(0.70, 0.22, 0.08))   # `generate`'s defaults
    for i, data in enumerate(held[:HELD_OUT["limit"]]):
        yield "heldout", i, parse_row(data)
    for name in SETS:
        for i, row in enumerate(read_rows(BENCH / f"{name}.jsonl")):
            yield name, i, row


def _decode(rows):
    from mobile_actions.runtime import Caller

    caller = Caller.from_pretrained("default")
    for name, i, row in rows:
        res = caller.call_messages(row.prompt_messages, row.tools)
        yield {"set": name, "i": i, "raw": res.raw}


def _prepared() -> bool:
    from mobile_actions.errors import NotPreparedError
    from mobile_actions.runtime.prepared import prepared_export

    try:
        prepared_export()
    except NotPreparedError:
        return False
    return True


@pytest.mark.slow
def test_decoded_outputs_are_unchanged():
    if not GOLDEN.exists() or not _prepared():
        pytest.skip("needs `mobile-actions model prepare` and the pinned outputs")
    want = [json.loads(line) for line in GOLDEN.read_text().splitlines()]
    got = list(_decode(_rows()))
    diff = [(w["set"], w["i"], w["raw"], g["raw"]) for w, g in zip(want, got) if w["raw"] != g["raw"]]
    assert len(got) == len(want)
    assert not diff, f"{len(diff)} rows decode differently, first: {diff[:3]}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--record", action="store_true", help="decode every row and write the pinned file")
    args = p.parse_args(argv)
    if not args.record:
        p.print_help()
        return 2
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with GOLDEN.open("w") as f:
        for rec in _decode(_rows()):
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
            n += 1
            if n % 50 == 0:
                print(f"{n} rows", file=sys.stderr, flush=True)
    print(f"wrote {n} rows to {GOLDEN}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
