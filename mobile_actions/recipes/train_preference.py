"""Preference tuning of the caller against its own answers (trl `DPOTrainer`, peft LoRA).

    mobile-actions bench act --data rows.jsonl --out answers/          # the caller's answers, per row
    python -m mobile_actions.recipes.train_preference pairs --rows rows.jsonl --answers answers/grounded.jsonl --out pairs.jsonl
    python -m mobile_actions.recipes.train_preference train --pairs pairs.jsonl --out runs/caller-dpo
    accelerate launch -m mobile_actions.recipes.train_preference train --pairs pairs.jsonl ...   # same code

The answers are the calls the caller decoded before the gate (`decoded`): what the model does, which is what
the step moves. What a run does, and why: `mobile_actions.training.preference`.
"""
from __future__ import annotations

import argparse
import collections
import logging
import sys
from typing import Sequence

from mobile_actions.recipes.train_caller import add_arguments, config_from_args
from mobile_actions.training.preference import CallerDPOConfig


def read_answers(paths: Sequence[str]) -> dict:
    """`Row.where` -> the calls decoded, from `bench act --out` files (`grounded.jsonl`)."""
    from mobile_actions import jsontext
    from mobile_actions.calls import ToolCall

    out = {}
    for path in paths:
        for n, data, problem in jsontext.read_jsonl(path):
            if problem is not None or not isinstance(data, dict) or "where" not in data:
                raise ValueError(f"{path}:{n}: not a bench act answer ({problem or 'no where'})")
            out[data["where"]] = [ToolCall(c["name"], c.get("arguments") or {}) for c in data.get("decoded", [])]
    return out


def pairs_main(args: argparse.Namespace) -> int:
    from mobile_actions.dataset import load_rows
    from mobile_actions.training.preference import preference_pairs, write_pairs

    rows = [r for path in args.rows for r in load_rows(path)[0]]
    pairs = preference_pairs(rows, read_answers(args.answers), layout=args.layout, held_share=args.held_share,
                             seed=args.seed)
    write_pairs(pairs, args.out)
    kinds = collections.Counter(p.kind for p in pairs)
    print(f"{len(pairs)} pairs from {len(rows)} rows -> {args.out}: " + ", ".join(f"{k} {n}" for k, n in kinds.items()))
    return 0


def train_main(args: argparse.Namespace) -> int:
    from mobile_actions.training.allocator import use_allocator
    from mobile_actions.training.preference import train_preference

    cfg = config_from_args(args, CallerDPOConfig)
    use_allocator("auto")
    res = train_preference(cfg)
    print(f"preference tuning -> {res.out}: {res.pairs} pairs, {res.steps} steps in {res.seconds:.0f} s")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mobile_actions.recipes.train_preference", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="action", required=True)
    p = sub.add_parser("pairs", help="preference pairs from rows and the caller's answers to them")
    p.add_argument("--rows", nargs="+", required=True)
    p.add_argument("--answers", nargs="+", required=True, help="bench act --out files (grounded.jsonl)")
    p.add_argument("--out", required=True)
    p.add_argument("--layout", default="cache")
    p.add_argument("--held-share", type=float, default=1.0,
                   help="rows answered rightly with calls, as a share of the pairs against an answer")
    p.add_argument("--seed", type=int, default=0)
    t = sub.add_parser("train", help="go on from an adapter on the pairs (trl DPOTrainer)")
    add_arguments(t, config=CallerDPOConfig, required=("pairs",))
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        return pairs_main(args) if args.action == "pairs" else train_main(args)
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
