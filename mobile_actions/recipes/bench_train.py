"""``mobile-actions bench train``: training tokens/s of recipes over the same steps, taken in turn.

The flags of the bench; the bench itself (why in turn, the table) is `mobile_actions.training.bench`.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mobile_actions.training.bench import DEFAULT_RECIPES, BenchTrainConfig, run_bench


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", required=True, help="training rows (Mobile Actions JSONL)")
    parser.add_argument("--out", default="runs/bench-train")
    parser.add_argument("--steps", type=int, default=20, help="optimizer steps each recipe trains")
    parser.add_argument("--chunk", type=int, default=10, help="steps a recipe runs before handing the turn on")
    parser.add_argument("--recipe", action="append", metavar="NAME=FLAGS",
                        help="a recipe: its name and its `train` flags (repeat; the first is the one the others are "
                             "compared with; default: " + "; ".join(f"{k}={v}" for k, v in DEFAULT_RECIPES.items()) + ")")
    parser.add_argument("train_flags", nargs=argparse.REMAINDER,
                        help="after --: flags for every recipe's `train` (e.g. -- --init-adapter default --threads 2)")
    parser.epilog = "Flags after -- go to every recipe's `train`."


def config_from_args(args: argparse.Namespace) -> BenchTrainConfig:
    recipes = dict(DEFAULT_RECIPES)
    if args.recipe:
        recipes = {}
        for spec in args.recipe:
            name, sep, flags = spec.partition("=")
            if not sep or not name.isidentifier():
                raise ValueError(f"--recipe {spec!r}: expected NAME=FLAGS with a plain name")
            recipes[name] = flags
    common = list(args.train_flags)
    if common[:1] == ["--"]:
        common = common[1:]
    return BenchTrainConfig(data=args.data, out=args.out, steps=args.steps, chunk=args.chunk, recipes=recipes,
                            train_flags=common)


def run(args: argparse.Namespace) -> int:
    """`bench train`: print the table; a recipe that fails or bad options give a one-line error."""
    try:
        res = run_bench(config_from_args(args))
    except (RuntimeError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(res.table)
    print(f"\n{Path(args.out) / 'bench-train.md'}, {Path(args.out) / 'loss.png'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mobile_actions.recipes.bench_train", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
