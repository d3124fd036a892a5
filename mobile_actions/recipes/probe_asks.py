"""Does the caller's own reading of a message tell an ask from a message that asks for nothing now?

    python -m mobile_actions.recipes.probe_asks --out runs/probe \
        --act mobile_actions/assets/bench/act-uu.jsonl mobile_actions/assets/bench/act-vv.jsonl \
        [--decoded BENCH_ACT_OUT/grounded.jsonl] [--train-rows 6000]

The asks-now reader (`mobile_actions.asks`) reads word n-grams, and people often frame a message by context alone
("fwd from gary: all drivers add the depot meeting ..."). A transformer reads context; this measures how much
of that a linear probe on the bundled caller's hidden states recovers, before anyone builds it into the runtime:

- messages: the asks-now reader's own data (`train_asks.rows_for`: a balanced sample of the train split, the
  held-out split whole) and the user messages of the `--act` sets (labelled by their kind);
- features: each message alone in the chat template (no tools: the probe knows no catalogue), through the
  bundled caller on PyTorch, fp32: the mean over positions of layers `MEAN_LAYERS` and the last position of the
  final layer (the one the head reads);
- a logistic regression (numpy, the classes weighted alike, L2), its threshold the lowest that refuses at most
  0.5 % of the held-out asks, alone and combined with the reader (log-odds, `READER_SHARE` the reader's);
- with `--decoded` (a `bench act` run's per-row file): of the non-requests still acted on after the gate, how
  many the combination would refuse, and of the asks still called, how many.

Slow: about 5 messages a second on 2 cores; features are kept in `--out` and reused.
"""
from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Sequence

import numpy as np

MEAN_LAYERS = (9, 15)
READER_SHARE = 0.7
ASKING_KINDS = frozenset({"act:request", "act:two", "act:aside", "act:nofit"})   # nofit asks what no tool does


def messages(part: str, rows: int | None, seed: int) -> tuple[list[str], np.ndarray]:
    """The asks-now data of `part` (`rows`: a sample, half asking for nothing now)."""
    from mobile_actions.recipes.train_asks import rows_for

    texts, labels = rows_for(part, seed, 3000 if part == "train" else 300)
    pairs = list(zip(texts, labels))
    if rows:
        random.Random(seed).shuffle(pairs)
        pairs = [p for p in pairs if p[1]][:rows // 2] + [p for p in pairs if not p[1]][:rows // 2]
    return [t for t, _ in pairs], np.array([lab for _, lab in pairs], dtype=bool)


def act_messages(paths: Sequence[str]) -> tuple[list[str], np.ndarray]:
    texts, labels = [], []
    for path in paths:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            texts.append(next(m["content"] for m in row["messages"] if m.get("role") == "user"))
            labels.append(row.get("metadata") not in ASKING_KINDS)
    return texts, np.array(labels, dtype=bool)


def features(texts: Sequence[str], batch: int = 16) -> np.ndarray:
    """One row per message: the layers' means over its prompt and the final layer at its last position."""
    import torch

    from mobile_actions.caller.model import load_model

    model, tok = load_model("default")
    tok.padding_side = "right"
    out: list[np.ndarray | None] = [None] * len(texts)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))   # like lengths batched: less padding
    with torch.no_grad():
        for s in range(0, len(order), batch):
            idx = order[s:s + batch]
            prompts = [f"<start_of_turn>user\n{texts[i]}<end_of_turn>\n<start_of_turn>model\n" for i in idx]
            enc = tok(prompts, return_tensors="pt", padding=True, truncation=True, max_length=256)
            hidden = model(**enc, output_hidden_states=True).hidden_states
            for j, i in enumerate(idx):
                at = enc["attention_mask"][j].nonzero().flatten()
                parts = [hidden[layer][j][at].mean(0) for layer in MEAN_LAYERS] + [hidden[-1][j][at[-1]]]
                out[i] = torch.cat(parts).float().numpy()
            if s // batch % 25 == 0:
                print(f"  features {s}/{len(texts)}", flush=True)
    return np.stack(out)


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1e-3, steps: int = 300, lr: float = 0.05):
    """Logistic regression by full-batch Adam on standardised features; returns p(asks nothing now)."""
    mu, sd = x.mean(0), x.std(0) + 1e-6
    z = (x - mu) / sd
    w, b = np.zeros(z.shape[1]), 0.0
    weight = np.where(y, 0.5 / y.mean(), 0.5 / (1 - y.mean()))
    m, v, mb, vb = np.zeros_like(w), np.zeros_like(w), 0.0, 0.0
    for t in range(1, steps + 1):
        err = (1 / (1 + np.exp(-(z @ w + b))) - y) * weight / len(y)
        g, gb = z.T @ err + l2 * w, float(err.sum())
        m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
        mb, vb = 0.9 * mb + 0.1 * gb, 0.999 * vb + 0.001 * gb * gb
        w -= lr * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
        b -= lr * (mb / (1 - 0.9 ** t)) / (np.sqrt(vb / (1 - 0.999 ** t)) + 1e-8)
    return lambda x: 1 / (1 + np.exp(-(((x - mu) / sd) @ w + b)))


def log_odds(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def threshold(score: np.ndarray, not_asking: np.ndarray, asks_refused: float = 0.005) -> float:
    asks = np.sort(score[~not_asking])
    return float(asks[len(asks) - 1 - int(asks_refused * len(asks))]) + 1e-9


def cached(out: Path, name: str, texts: Sequence[str]) -> np.ndarray:
    path = out / f"{name}.npy"
    if path.is_file():
        return np.load(path)
    x = features(texts)
    np.save(path, x)
    return x


def main(argv: list[str] | None = None) -> int:
    from mobile_actions.asks import shipped

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="folder for the features and report.json")
    ap.add_argument("--act", nargs="+", required=True, help="act sets (Mobile Actions JSONL with act:* kinds)")
    ap.add_argument("--decoded", help="a `bench act` run's grounded.jsonl for the same sets")
    ap.add_argument("--train-rows", type=int, default=6000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    reader = shipped()
    if reader is None:
        raise SystemExit("no asks-now reader is bundled: the probe is measured beside it")
    sets = {"train": messages("train", args.train_rows, args.seed), "held": messages("heldout", None, args.seed),
            "act": act_messages(args.act)}
    x = {name: cached(out, name, texts) for name, (texts, _) in sets.items()}
    probe = fit(x["train"], sets["train"][1])
    both = {n: (1 - READER_SHARE) * log_odds(probe(x[n])) + READER_SHARE * log_odds(
        np.array([reader.p_not_asking(t) for t in sets[n][0]])) for n in ("held", "act")}
    alone = {n: log_odds(probe(x[n])) for n in ("held", "act")}
    report: dict = {"reader threshold": reader.threshold}
    held_y, act_y = sets["held"][1], sets["act"][1]
    for name, score in (("probe", alone), ("reader+probe", both)):
        t = threshold(score["held"], held_y)
        report[name] = {"held-out non-requests caught %": round(100 * float((score["held"][held_y] >= t).mean()), 1),
                        "act non-requests caught": f"{int((score['act'][act_y] >= t).sum())}/{int(act_y.sum())}",
                        "act asks refused": f"{int((score['act'][~act_y] >= t).sum())}/{int((~act_y).sum())}"}
    reader_p = np.array([reader.p_not_asking(t) for t in sets["act"][0]])
    report["reader"] = {"act non-requests caught": f"{int((reader_p[act_y] >= reader.threshold).sum())}/{int(act_y.sum())}",
                        "act asks refused": f"{int((reader_p[~act_y] >= reader.threshold).sum())}/{int((~act_y).sum())}"}
    if args.decoded:
        t = threshold(both["held"], held_y)
        score = dict(zip(sets["act"][0], both["act"]))
        acted = caught = asks_lost = 0
        for line in Path(args.decoded).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            called = len(row["decoded"]) > len(row["refused"])
            refuses = score.get(row["request"], -np.inf) >= t
            if row["kind"] not in ASKING_KINDS and called:
                acted, caught = acted + 1, caught + int(refuses)
            elif row["kind"] in ASKING_KINDS and called:
                asks_lost += int(refuses)
        report["after the gate"] = {"non-requests acted on": acted, "reader+probe would refuse": caught,
                                    "asks still called it would refuse": asks_lost}
    (out / "report.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
