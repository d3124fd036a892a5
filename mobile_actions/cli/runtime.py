"""`mobile-actions export | call | bench caller`: thin wrappers over export/ and mobile_actions.runtime.

`call` imports only the torch-free runtime; `export` and `bench` import torch lazily.
"""
from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime


def register(subparsers) -> None:
    p = subparsers.add_parser("export", help="export a caller to an ONNX folder (mixed/int4/int8/fp32) and self-check it")
    from mobile_actions.recipes.export_onnx import add_arguments

    add_arguments(p)
    p.set_defaults(func=cmd_export)

    p = subparsers.add_parser("call", help="tool calls for a request with an exported ONNX model (no torch)")
    p.add_argument("request")
    p.add_argument("--model", default=None,
                   help="exported folder (mobile-actions export --out DIR); default $MOBILE_ACTIONS_ONNX, "
                        "else the folder `mobile-actions export` (quant mixed) writes without --out")
    p.add_argument("--tools", default="mobile_actions", help="catalogue name or JSON file")
    p.add_argument("--json", action="store_true", help="print calls, text, problems and timings as JSON")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--now", help="datetime for the developer turn, YYYY-MM-DDTHH:MM:SS (default: now)")
    p.add_argument("--no-constrain", dest="constrained", action="store_false", help="plain greedy decoding")
    p.add_argument("--no-prefix-reuse", dest="prefix_reuse", action="store_false")
    p.add_argument("--stream", action="store_true", help="print the raw output as it is decoded")
    p.set_defaults(func=cmd_call)



def add_bench_subcommand(bench_subparsers) -> None:
    """`bench caller`: the `bench` group itself lives in mobile_actions.cli.main."""
    from mobile_actions.recipes.bench_caller import add_arguments as bench_args

    p = bench_subparsers.add_parser("caller", help="PyTorch / ONNX fp32,int8,int4,mixed / llama.cpp side by side")
    bench_args(p)
    p.set_defaults(func=cmd_bench)


def cmd_export(args: argparse.Namespace) -> int:
    from mobile_actions.recipes.export_onnx import config_from_args, run, summary

    args.out = args.out or default_onnx_dir(args.quant)
    res = run(config_from_args(args))
    print(summary(res))
    c = res.check
    return 0 if c.get("equal", True) and c.get("fp32", {}).get("equal", True) else 1


def default_onnx_dir(quant: str | None = None) -> str:
    """`$MOBILE_ACTIONS_ONNX`, else `<mobile-actions cache>/onnx-<quant>` (torch-free import). Without a
    quant (`call`): the `mixed` folder, or an `int4` one exported before `mixed` became the default."""
    import os

    from mobile_actions.caller.model import cache_dir

    if os.environ.get("MOBILE_ACTIONS_ONNX"):
        return os.environ["MOBILE_ACTIONS_ONNX"]
    if quant is None:
        older = cache_dir() / "onnx-int4"
        quant = "int4" if not (cache_dir() / "onnx-mixed").is_dir() and older.is_dir() else "mixed"
    return str(cache_dir() / f"onnx-{quant}")


def cmd_call(args: argparse.Namespace) -> int:
    from pathlib import Path

    from mobile_actions.runtime import Caller, ExportFormatError

    model = args.model or default_onnx_dir()
    if not (Path(model) / "manifest.json").is_file():
        print(f"{model}: not an exported model folder (mobile-actions export --model default "
              f"--out {model})", file=sys.stderr)
        return 2
    try:
        caller = Caller.from_pretrained(model, threads=args.threads, constrained=args.constrained,
                                        prefix_reuse=args.prefix_reuse, tools=args.tools)
    except ExportFormatError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    now = datetime.fromisoformat(args.now) if args.now else None
    if args.stream:
        for piece in caller.stream(args.request, now=now):
            print(piece, end="", flush=True)
        print()
        return 0
    res = caller.call(args.request, now=now)
    if args.json:
        print(json.dumps(res.to_json(), ensure_ascii=False, indent=2))
    else:
        for c in res.calls:
            print(f"{c.name}({json.dumps(c.arguments, ensure_ascii=False)})")
        if res.text:
            print(res.text)
        for p in res.problems:
            print(f"problem: {p}", file=sys.stderr)
    return 1 if res.problems else 0


def cmd_bench(args: argparse.Namespace) -> int:
    from mobile_actions.recipes.bench_caller import config_from_args, run

    run(config_from_args(args))
    return 0
