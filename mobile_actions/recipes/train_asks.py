"""Train the asks-now readers (`mobile_actions.asks`) from the repository's own data.

    python -m mobile_actions.recipes.train_asks --out mobile_actions/assets/asks-now.npz      # word n-grams, ~2 min
    python -m mobile_actions.recipes.train_asks --model lm --out runs/asks-lm [--resume]   # 35-100 min on 2 cores
    accelerate launch -m mobile_actions.recipes.train_asks --model lm --out runs/asks-lm

`--model lm` trains the classifier on the base's first layers (`mobile_actions.training.asks_reader`), exports
it (`recipes/export_asks.py`, into OUT/onnx) and sets its threshold on the exported model's held-out scores. To
ship it, its adapter_config.json, adapter_model.safetensors, head.safetensors and reader.json go to
`mobile_actions/assets/asks-now-lm/` (`model prepare` exports them again).

Rows, all from the train split (the held-out split is scored at the end):
- the seed catalogues' asked requests, each alone and wrapped in words people put around an ask (asks:
  `generate --variants wrapped`), and written into a framing (asks nothing now: `--variants framed`), so every
  request is on both sides;
- people's Mobile Actions rows the same way, and those written as questions, negations, supposings, reports,
  past events, take-backs and small talk with no call (asks nothing now);
- generator rows, whose every request asks (a request no tool serves asks too), a quarter of them with a clause
  the person declines beside the ask ("... and don't email Ana"): the message still asks;
- asks followed by another request framed ("add yoga saturday 9am. might email the instructor later, we'll
  see"): a message asks when any part of it does, and the gate's lexicon reads the parts;
- whole messages written as people write, each asking or not (`acting_rows`): the acting benchmark's older sets
  (`TRAINED_BENCH`). Templates teach a framing; these teach the framings people actually write. The benchmark's
  newer sets stay apart to measure on, and so does every set written later. (`datasets/people-acting/` is not
  read: with it the classifier caught fewer non-requests written apart; docs/experiments.md.)
"""
from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import numpy as np

from mobile_actions.asks import AsksNow, threshold_for, train
from mobile_actions.datagen.seeds import load_seeds, seed_rows

ROOT = Path(__file__).resolve().parents[2]
# rows of these kinds ask for something (a request no tool serves still asks)
ASKING_KINDS = frozenset({"request", "mixed", "edit", "notool", "nofit"})
VARIANTS = ("alone", "wrapped", "framed")
# `assets/bench/` sets a reader trains on: those written before act-zw (act-zw and later, and act-gh, whose catalogue
# no caller saw, are measured on). Named, not globbed, so a set written later is never trained on by accident.
TRAINED_BENCH = tuple(f"act-{s}" for s in (
    "a b c d e f g h i j k l m n o p q r s t u v w x y z aa bb cc dd ee ff hh ii jj kk ll mm nn oo pp qq rr ss tt "
    "uu vv ww xx yy zz za zb zc zd ze zf zg zh zi zj zk zl zm zn zo zp zq zr zs zt zu zv ga gb gc gd ge gf gg "
    "api api2 clock mentions").split())
# a bench row of these kinds with no call may ask for what no tool does, or for nothing: left out
UNCLEAR_KINDS = frozenset({"content", "draft"})


def _text(row: dict) -> str:
    return next(str(m.get("content", "")) for m in row["messages"] if m.get("role") == "user")


def _calls(row: dict) -> bool:
    return any(m.get("tool_calls") for m in row["messages"] if m.get("role") == "assistant")


def rows_for(part: str, seed: int, generated: int) -> tuple[list[str], list[bool]]:
    """(messages, whether each asks for nothing now) for the seed and people rows of `part`, plus `generated`
    generator rows of the matching phrasing families."""
    from mobile_actions.catalog import load_catalogue
    from mobile_actions.datagen.generate import generate_rows

    texts: list[str] = []
    labels: list[bool] = []
    seeds = load_seeds(ROOT / "datasets" / "seed-catalogues")
    for r in seed_rows(seeds, part=part, variants=VARIANTS, distractors=0, seed=seed):
        framed = r["meta"]["variant"] == "framed"
        if framed or _calls(r):   # a seed row with no call may ask for what no tool does, or for nothing
            texts.append(_text(r))
            labels.append(framed)
    people = load_seeds(ROOT / "datasets" / "people-mobile-actions")
    for r in seed_rows(people, part=part, variants=VARIANTS, distractors=0, seed=seed):
        framed = r["meta"]["variant"] == "framed"
        texts.append(_text(r))
        labels.append(framed or (r.get("kind") not in ASKING_KINDS and not _calls(r)))   # wrapped rows call
    asks = [t for t, lab in zip(texts, labels) if not lab]
    framings = [t for t, lab in zip(texts, labels) if lab]
    rng = random.Random(seed)
    for _ in range(len(framings) // 3 if asks else 0):
        a, b = rng.choice(asks).strip(), rng.choice(framings).strip()
        texts.append(f"{a}{' ' if a[-1:] in '.!?' else '. '}{b}")
        labels.append(False)
    for t, lab in acting_rows(part):
        texts.append(t)
        labels.append(lab)
    if generated:
        for r in generate_rows(load_catalogue("mobile_actions"), generated, seed, families=part,
                               declined_rate=0.25):
            texts.append(_text(r))
            labels.append(False)
    return texts, labels


def acting_rows(part: str) -> list[tuple[str, bool]]:
    """(message, whether it asks for nothing now) for the rows of the `TRAINED_BENCH` sets in `part` (split by
    `seeds.part_of`, the set's name as the domain), labelled by their gold: no call, and not a request no tool
    serves, asks for nothing."""
    from mobile_actions.datagen.seeds import part_of

    out = []
    for name in TRAINED_BENCH:
        path = ROOT / "mobile_actions" / "assets" / "bench" / f"{name}.jsonl"
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if part_of(name, row) != part:
                continue
            kind = str(row.get("metadata", "")).partition(":")[2]
            calls = _calls(row)
            if not calls and kind in UNCLEAR_KINDS:
                continue
            out.append((_text(row), not calls and kind not in ASKING_KINDS))
    return out


def heldout(seed: int = 0, generated: int = 3000) -> tuple[list[str], list[bool]]:
    """The held-out messages a threshold is set on: the held-out split's rows, a tenth as many generator rows."""
    return rows_for("heldout", seed, generated // 10)


def report(reader: AsksNow, texts: list[str], labels: list[bool]) -> str:
    p = np.array([reader.p_not_asking(t) for t in texts])
    y = np.array(labels)
    lines = [f"{len(y)} rows, {int(y.sum())} asking nothing now"]
    for t in sorted({0.5, 0.8, 0.9, 0.95, round(reader.threshold, 3)}):
        lines.append(f"  threshold {t}: non-requests caught {(p[y] >= t).mean():.1%}, asks refused {(p[~y] >= t).mean():.2%}")
    return "\n".join(lines)


def train_lm(args: argparse.Namespace, pairs: list[tuple[str, bool]]) -> int:
    from mobile_actions.training.asks_reader import AsksReaderConfig, train

    cfg = AsksReaderConfig(out=args.out, epochs=args.lm_epochs, seed=args.seed, resume=args.resume,
                           layers=args.lm_layers, lora_r=args.lm_rank, lora_alpha=2 * args.lm_rank)
    folder = train(cfg, [t for t, _ in pairs], [lab for _, lab in pairs], say=lambda m: print(m, flush=True))
    from mobile_actions.recipes.export_asks import calibrate, export
    onnx_dir = export(folder, folder / "onnx")
    held_texts, held_labels = heldout(args.seed, args.generated)
    print(calibrate(folder, onnx_dir, held_texts, held_labels, args.max_asks_refused))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--generated", type=int, default=3000, help="generator rows beside the seed and people rows")
    ap.add_argument("--bits", type=int, default=18)
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--max-asks-refused", type=float, default=None,
                    help="the threshold is the lowest at which at most this share of the held-out asks is refused "
                         "(default: as shipped, 0.005 for the word reader, 0.01 for the classifier)")
    ap.add_argument("--l2", type=float, default=1e-6)
    ap.add_argument("--model", choices=("ngram", "lm"), default="ngram")
    ap.add_argument("--resume", action="store_true", help="--model lm: continue from the run's checkpoint")
    ap.add_argument("--lm-epochs", type=float, default=1.0, help="--model lm: passes over the rows")
    ap.add_argument("--lm-layers", type=int, default=4, help="--model lm: the base's first layers it keeps")
    ap.add_argument("--lm-rank", type=int, default=16, help="--model lm: the LoRA's rank (alpha twice that)")
    args = ap.parse_args(argv)
    if args.max_asks_refused is None:
        args.max_asks_refused = 0.01 if args.model == "lm" else 0.005
    texts, labels = rows_for("train", args.seed, args.generated)
    pairs = list(zip(texts, labels))
    random.Random(args.seed).shuffle(pairs)
    print(f"training on {len(pairs)} messages, {sum(l for _, l in pairs)} asking nothing now", flush=True)
    if args.model == "lm":
        return train_lm(args, pairs)
    reader = train([t for t, _ in pairs], [lab for _, lab in pairs], bits=args.bits, epochs=args.epochs,
                   l2=args.l2, seed=args.seed,
                   trained_on=f"recipes/train_asks.py --seed {args.seed} --generated {args.generated} "
                              f"--bits {args.bits} --epochs {args.epochs} --l2 {args.l2} "
                              f"--max-asks-refused {args.max_asks_refused}")
    held_texts, held_labels = heldout(args.seed, args.generated)
    reader = reader.with_threshold(threshold_for(
        [reader.p_not_asking(t) for t, lab in zip(held_texts, held_labels) if not lab], args.max_asks_refused))
    reader.save(args.out)
    print(f"wrote {args.out} (threshold {reader.threshold:.3f})")
    print("train:", report(reader, texts, labels))
    print("held-out:", report(reader, held_texts, held_labels))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
