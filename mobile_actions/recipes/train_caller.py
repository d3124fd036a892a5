"""Supervised fine-tuning of the caller: trl `SFTTrainer` (+ peft LoRA), loss on the model turn only.

    mobile-actions train --data train.jsonl --eval eval.jsonl --method lora --out runs/caller
    accelerate launch -m mobile_actions.recipes.train_caller --data train.jsonl --method full --out runs/full   # same code

The flags of `mobile_actions.training.caller.train`, one per field of `CallerSFTConfig`; what a run does, and
why, is said there.
"""
from __future__ import annotations

import argparse
import logging
import sys
import typing
from dataclasses import MISSING, fields
from typing import Any, Sequence

from mobile_actions.training.allocator import use_allocator
from mobile_actions.training.caller import CallerSFTConfig, TrainResult, train


def add_arguments(parser: argparse.ArgumentParser, defaults: Any = None, config: type = CallerSFTConfig,
                  required: Sequence[str] = ("data",)) -> None:
    """One flag per field of the `config` dataclass (dashes or underscores), typed from its annotations; a
    field without a default is a required flag whatever `required` says, a list field takes several values."""
    hints = typing.get_type_hints(config)
    for f in fields(config):
        flags = [f"--{f.name.replace('_', '-')}"] + ([f"--{f.name}"] if "_" in f.name else [])
        default = getattr(defaults, f.name) if defaults is not None else (
            f.default if f.default is not MISSING else f.default_factory() if f.default_factory is not MISSING
            else None)
        needed = f.name in required or (f.default is MISSING and f.default_factory is MISSING)
        helptext = f.metadata.get("help", "") + ("" if needed else f" (default: {default})")
        hint = hints[f.name]
        if hint is bool:
            parser.add_argument(*flags, dest=f.name, default=default, action=argparse.BooleanOptionalAction,
                                help=helptext)
            continue
        if typing.get_origin(hint) is list:
            parser.add_argument(*flags, dest=f.name, nargs="+", default=default, help=helptext, required=needed)
            continue
        base_type = next((t for t in typing.get_args(hint) if t is not type(None)), hint) if typing.get_args(hint) else hint
        parser.add_argument(*flags, dest=f.name, type=base_type, default=default, help=helptext, required=needed)


def config_from_args(args: argparse.Namespace, config: type = CallerSFTConfig) -> Any:
    return config(**{f.name: getattr(args, f.name) for f in fields(config)})


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mobile_actions.recipes.train_caller", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    cfg = config_from_args(parser.parse_args(argv))
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if argv is None:   # this process's own command line: it can be started again with another allocator
        use_allocator(cfg.allocator)
    res = train(cfg)
    print(format_result(res))
    return 0


def format_result(res: TrainResult) -> str:
    lines = [f"{res.method} fine-tune -> {res.out}",
             f"  {res.train_rows} rows trained, {res.too_long} too long (see too_long.txt)" if res.too_long
             else f"  {res.train_rows} rows trained",
             f"  {res.steps} steps in {res.seconds:.0f} s, {res.tokens_per_second:.0f} tokens/s, "
             f"final mean loss {res.final_loss:.4f}" if res.final_loss is not None else f"  {res.steps} steps",
             f"  loss curve: {res.out / 'loss.png'}, {res.out / 'loss.csv'}"]
    if res.report is not None:
        from mobile_actions.caller.evaluate import summary

        lines += ["final evaluation:", summary(res.report), f"  report: {res.out / 'eval' / 'report.json'}"]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
