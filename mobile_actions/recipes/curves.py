"""Compare the loss curves of training runs: ``python -m mobile_actions.recipes.curves NAME=RUN/loss.csv ...``."""
from __future__ import annotations

import argparse
from pathlib import Path

from mobile_actions.training.curves import compare_loss_curves


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mobile_actions.recipes.curves",
                                     description="compare the loss curves of runs (NAME=RUN_DIR/loss.csv ...)")
    parser.add_argument("runs", nargs="+", help="NAME=PATH/loss.csv")
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--window", type=int, default=25)
    parser.add_argument("--out", required=True, help="the plot (.png)")
    args = parser.parse_args(argv)
    runs = {}
    for spec in args.runs:
        name, sep, path = spec.partition("=")
        if not sep or not Path(path).is_file():
            parser.error(f"{spec!r}: expected NAME=PATH to an existing loss.csv")
        runs[name] = Path(path)
    print(compare_loss_curves(runs, Path(args.out), args.steps, args.window))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
