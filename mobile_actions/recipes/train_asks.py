"""Train the model of whether a request asks for anything (`mobile_actions.asking`), and choose its threshold.

    python -m mobile_actions.recipes.train_asks --rows mobile_actions/assets/bench/act-[a-j].jsonl \
        --dev mobile_actions/assets/bench/act-[k-m].jsonl

Rows: `datasets/seed-catalogues`, requests written for ~120 catalogues. Which rows ask for nothing is known from
how they were written (see that folder's README): in the first 98 catalogues the last 14 rows are 10 that ask for
nothing and 4 that ask; in the catalogues of 32 rows every row without a call asks for nothing. A row with a call
asks. `--rows` adds rows written to ask or not (`assets/bench/act-*.jsonl`). The other seed rows without a call (nothing fits, a value missing, a question about the app) are left out: some
ask for something the tools cannot do, which is still asking.

The model is a logistic regression (classes weighted equally) over the n-grams of `asking.features` that occur in
the rows of at least `--min-catalogues` catalogues. Its threshold is chosen on `--dev` rows (gold without calls:
asks for nothing; with calls: asks) as the lowest score that refuses at most `--max-false-refusals` of the dev
requests. Written to `mobile_actions/lexicon/en.asks.json` (`--out`).
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from mobile_actions.asking import AskModel, features, model_path

SEEDS = Path(__file__).resolve().parents[2] / "datasets" / "seed-catalogues"


def seed_rows(folder: Path = SEEDS) -> list[tuple[str, str, int]]:
    """(catalogue, request, 1 if it asks for nothing else 0) for every seed row whose label is known."""
    out = []
    for path in sorted(folder.glob("*.rows.jsonl")):
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        short = len(rows) <= 40       # the catalogues written with 32 rows each
        for i, row in enumerate(rows):
            request = next(m["content"] for m in row["messages"] if m["role"] == "user")
            calls = bool(row["messages"][-1].get("tool_calls"))
            if calls:
                out.append((path.name, request, 0))
            elif short or i >= len(rows) - 14:
                out.append((path.name, request, 1))
    return out


def labelled_rows(paths: list[str]) -> list[tuple[str, str, int]]:
    """(catalogue, request, label) for Mobile Actions rows whose gold says it: no call asks for nothing (rows
    written to ask or not, as `assets/bench/act-*.jsonl`); a row's catalogue is its tools' names."""
    from mobile_actions.dataset import load_rows

    out = []
    for p in paths:
        rows, problems = load_rows(p)
        if problems:
            raise SystemExit(f"error: {problems[0]}")
        out += [(" ".join(sorted(r.tools.names)), r.user_text, 0 if r.calls else 1) for r in rows]
    return out


def fit(rows: list[tuple[str, str, int]], min_catalogues: int, l2: float, steps: int = 600,
        lr: float = 0.05) -> AskModel:
    """Adam on the mean class-weighted log loss plus `l2` times the squared weights."""
    where: dict[str, set[str]] = defaultdict(set)
    feats = [features(r) for _, r, _ in rows]
    for (cat, _, _), fs in zip(rows, feats):
        for f in fs:
            where[f].add(cat)
    vocab = sorted(f for f, cats in where.items() if len(cats) >= min_catalogues)
    index = {f: i for i, f in enumerate(vocab)}
    row_ids = np.concatenate([np.full(len(fs & index.keys()), k) for k, fs in enumerate(feats)]).astype(np.int64)
    col_ids = np.concatenate([[index[f] for f in fs if f in index] for fs in feats]).astype(np.int64)
    y = np.array([lab for _, _, lab in rows], dtype=np.float64)
    cw = np.where(y == 1, 0.5 / y.mean(), 0.5 / (1 - y.mean())) / len(y)
    w, b = np.zeros(len(vocab)), 0.0
    m, v, mb, vb = np.zeros_like(w), np.zeros_like(w), 0.0, 0.0
    for t in range(1, steps + 1):
        z = np.bincount(row_ids, weights=w[col_ids], minlength=len(y)) + b
        g = cw * (1 / (1 + np.exp(-z)) - y)
        gw = np.bincount(col_ids, weights=g[row_ids], minlength=len(w)) + 2 * l2 * w
        gb = g.sum()
        m, v = 0.9 * m + 0.1 * gw, 0.999 * v + 0.001 * gw ** 2
        mb, vb = 0.9 * mb + 0.1 * gb, 0.999 * vb + 0.001 * gb ** 2
        w -= lr * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
        b -= lr * (mb / (1 - 0.9 ** t)) / (np.sqrt(vb / (1 - 0.999 ** t)) + 1e-8)
    weights = {f: round(float(x), 4) for f, x in zip(vocab, w) if abs(x) >= 1e-3}
    return AskModel(weights, round(float(b), 4), 1.0)


def threshold_for(model: AskModel, dev: list[tuple[str, int]], max_false: float) -> tuple[float, dict]:
    """The lowest threshold that refuses at most `max_false` of the dev requests, and what it does on dev."""
    asks = sorted(model.p_nothing(r) for r, lab in dev if lab == 0)
    nothing = [model.p_nothing(r) for r, lab in dev if lab == 1]
    k = int(max_false * len(asks))   # this many requests may score at or above it
    tau = min(1.0, round(asks[len(asks) - 1 - k] + 1e-6, 6)) if asks else 0.5
    caught = sum(p >= tau for p in nothing)
    refused = sum(p >= tau for p in asks)
    return tau, {"dev requests": len(asks), "dev requests refused": refused,
                 "dev non-requests": len(nothing), "dev non-requests refused": caught}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default=str(SEEDS), help="folder of DOMAIN.rows.jsonl")
    ap.add_argument("--rows", nargs="*", default=[], help="more training rows: Mobile Actions JSONL written to ask "
                                                          "or not (a row without a call asks for nothing)")
    ap.add_argument("--dev", nargs="+", required=True, help="rows the threshold is chosen on (never the test rows)")
    ap.add_argument("--min-catalogues", type=int, default=6, help="keep n-grams written in this many catalogues")
    ap.add_argument("--l2", type=float, nargs="+", default=[1e-4, 3e-4], help="tried in turn; the best on dev")
    ap.add_argument("--max-false-refusals", type=float, default=0.01)
    ap.add_argument("--out", default=str(model_path("en")))
    args = ap.parse_args(argv)
    rows = seed_rows(Path(args.seeds)) + labelled_rows(args.rows)
    dev = [(r, lab) for _, r, lab in labelled_rows(args.dev)]
    print(f"{len(rows)} training rows ({sum(r[2] for r in rows)} ask for nothing), {len(dev)} dev rows", file=sys.stderr)
    best = None
    for l2 in args.l2:
        model = fit(rows, args.min_catalogues, l2)
        tau, report = threshold_for(model, dev, args.max_false_refusals)
        print(f"l2 {l2}: {len(model.weights)} n-grams, threshold {tau}: {report}", file=sys.stderr)
        if best is None or report["dev non-requests refused"] > best[2]["dev non-requests refused"]:
            best = (model, tau, report, l2)
    model, tau, report, l2 = best
    trained_on = {"rows": len(rows), "rows asking for nothing": sum(r[2] for r in rows),
                  "row files": [Path(p).name for p in args.rows],
                  "min catalogues per n-gram": args.min_catalogues, "l2": l2,
                  "dev": [Path(p).name for p in args.dev], **report}
    out = AskModel(model.weights, model.bias, tau, trained_on=trained_on)
    Path(args.out).write_text(json.dumps(out.to_json(), ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(json.dumps(trained_on, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
