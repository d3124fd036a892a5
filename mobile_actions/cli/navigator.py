"""``mobile-actions navigator …``: thin commands over the navigator library (parse, call, print).

``eval`` imports neither torch nor transformers, so it starts fast.
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import sys
from typing import Any

from mobile_actions.errors import NavigatorError


def _err(msg: str) -> None:
    print(msg, file=sys.stderr)


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def _print_score(s: Any) -> None:
    avg = "mean over task categories" if s.averaging == "category" else "over all steps"
    print(f"  {s.mode:<9}  AMS {_fmt(s.ams):>6}  SR {_fmt(s.sr):>6}   ({avg}; {s.correct}/{s.steps} steps, "
          f"{s.episodes_succeeded}/{s.episodes_counted} episodes, {s.episodes_skipped} skipped, "
          f"{s.missing_predictions} predictions missing)")
    print(f"             action type {_fmt(s.action_type_accuracy)}   text {_fmt(s.text_accuracy)}")
    for c in s.per_category:
        print(f"             {c.category:<24} AMS {_fmt(c.ams):>6}  SR {_fmt(c.sr):>6}  ({c.steps} steps, {c.episodes_counted} episodes)")
    for n in s.notes:
        print(f"             note: {n}")


def cmd_eval(args: argparse.Namespace) -> int:
    from mobile_actions.navigator.episodes import load_episodes, OdysseyDir
    from mobile_actions.navigator.metrics import evaluate_both, read_predictions

    try:
        split = args.split
        has_split = (OdysseyDir.at(args.episodes).splits / f"{split}_split.json").is_file()
        episodes = load_episodes(args.episodes, split if has_split else None, "test")
        report = evaluate_both(episodes, read_predictions(args.pred), split=split)
    except NavigatorError as e:
        _err(f"error: {e}")
        return 2
    if args.json:
        print(json.dumps(report.to_json(with_steps=args.steps), indent=2))
        return 0
    scope = f"{split} split, test part" if has_split else f"all episodes (no splits/{split}_split.json; {split} averaging)"
    print(f"{args.episodes}: {len(episodes)} episodes, {scope}")
    _print_score(report.official)
    _print_score(report.corrected)
    if report.differences:
        print(f"  {len(report.differences)} step(s) judged differently:")
        for o, c in report.differences[: args.show]:
            was = "absent" if o is None else ("correct" if o.correct else "wrong")
            print(f"    {c.episode_id}#{c.step}: gold {c.gt!r} pred {c.pred!r}: official {was}, corrected {c.reason}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from mobile_actions.navigator.episodes import load_episodes, screenshot_report

    try:
        episodes = load_episodes(args.episodes, args.split, args.part)
    except NavigatorError as e:
        _err(f"error: {e}")
        return 2
    report = screenshot_report(args.episodes, episodes)
    print(json.dumps(report.to_json(), indent=2) if args.json else report.describe())
    return 0 if report.ok else 1


def cmd_predict(args: argparse.Namespace) -> int:
    from mobile_actions.navigator.data import build_examples
    from mobile_actions.navigator.episodes import load_episodes
    from mobile_actions.navigator.infer import Navigator, predict_examples

    if args.model == "text" or args.model.startswith("text:"):
        return _predict_text(args)
    try:
        episodes = load_episodes(args.episodes, args.split, args.part)
        examples, report = build_examples(args.episodes, episodes, on_missing=args.missing)
        nav = Navigator(args.model, device=args.device)
        n = 0
        with open(args.out, "w", encoding="utf-8") as f:
            for (eid, step), p in predict_examples(nav, examples):
                f.write(json.dumps({"episode_id": eid, "step": step, "pred": p.text}, ensure_ascii=False) + "\n")
                n += 1
                if args.progress and n % 10 == 0:
                    _err(f"  {n}/{len(examples)}")
    except (NavigatorError, FileNotFoundError, ValueError) as e:
        _err(f"error: {e}")
        return 2
    print(f"{args.out}: {n} predictions ({report.steps_missing} steps without screenshots not predicted)")
    return 0


def _predict_text(args: argparse.Namespace) -> int:
    """`navigator predict --model text[:SPEC]`: the text navigator over the recorded hierarchy dumps."""
    from mobile_actions.errors import HybridError
    from mobile_actions.hybrid.models import TextNavigator, resolve_navigator
    from mobile_actions.navigator.text import predict_recording

    try:
        nav, _ = resolve_navigator(args.model)
        assert isinstance(nav, TextNavigator)
        n = 0
        with open(args.out, "w", encoding="utf-8") as f:
            for eid, step, pred in predict_recording(nav.caller, args.episodes, args.split, args.part):
                f.write(json.dumps({"episode_id": eid, "step": step, "pred": pred}, ensure_ascii=False) + "\n")
                n += 1
                if args.progress and n % 10 == 0:
                    _err(f"  {n} steps")
    except (NavigatorError, HybridError, OSError) as e:
        _err(f"error: {e}")
        return 2
    print(f"{args.out}: {n} predictions (text navigator, gold history)")
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    from mobile_actions.training.allocator import use_allocator
    from mobile_actions.recipes.train_navigator import config_from_args, main

    try:
        cfg = config_from_args(args)
        if getattr(args, "own_process", False):
            use_allocator(cfg.allocator)
        result = main(cfg)
    except (NavigatorError, FileNotFoundError, ValueError) as e:
        _err(f"error: {e}")
        return 2
    print(json.dumps(vars(result), indent=2))
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from mobile_actions.navigator.service import TOKEN_ENV, make_server

    token = args.token or os.environ.get(TOKEN_ENV)
    if args.token_file:
        try:   # a file (or $MOBILE_ACTIONS_NAVIGATOR_TOKEN) keeps the token out of `ps`
            token = Path(args.token_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as e:
            _err(f"error: --token-file {args.token_file}: {getattr(e, 'strerror', None) or e}")
            return 2
    try:
        server = make_server(args.model, args.host, args.port, token, device=args.device)
    except (NavigatorError, FileNotFoundError, ValueError, OSError) as e:
        _err(f"error: {e}")
        return 2
    print(f"navigator serving {args.model} on {server.url} (POST /v1/act, GET /v1/health)"
          + (" — bearer token required" if token else ""), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def cmd_record(args: argparse.Namespace) -> int:
    from mobile_actions.datagen.navigator_demos import record_tasks

    try:
        summary = record_tasks(args.out, seed=args.seed, repeats=args.repeats, templates=args.templates)
    except (NavigatorError, ImportError) as e:
        _err(f"error: {e}")
        return 2
    print(json.dumps(summary, indent=2))
    return 0


def cmd_rows(args: argparse.Namespace) -> int:
    from mobile_actions.dataset import write_rows
    from mobile_actions.navigator.text import recording_examples

    try:
        examples = recording_examples(args.episodes, args.split, args.part)
    except NavigatorError as e:
        _err(f"error: {e}")
        return 2
    n = write_rows([x.row(metadata=args.part) for x in examples], args.out)
    print(f"wrote {n} text-navigator rows (one per recorded step) to {args.out}")
    return 0


def register(subparsers: Any) -> None:
    """Add the ``navigator`` command group to the main CLI."""
    nav = subparsers.add_parser("navigator", help="GUI navigator: GUI Odyssey data, AMS/SR, OdysseyAgent training and serving")
    sub = nav.add_subparsers(dest="navigator_command", required=True, metavar="SUBCOMMAND")

    p = sub.add_parser("eval", help="AMS/SR of a prediction file, official and corrected")
    p.add_argument("--episodes", required=True, help="GUI Odyssey root (annotations/, splits/) or a flat directory")
    p.add_argument("--pred", required=True, help="PRED.jsonl: {episode_id, step, pred} per line")
    p.add_argument("--split", default="random", choices=("random", "task", "device", "app"))
    p.add_argument("--json", action="store_true")
    p.add_argument("--steps", action="store_true", help="with --json: every step's verdict")
    p.add_argument("--show", type=int, default=10, help="differences to list")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("check", help="report missing screenshots")
    p.add_argument("--episodes", required=True)
    p.add_argument("--split", default=None)
    p.add_argument("--part", default="test", choices=("train", "test"))
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("predict", help="run a navigator over episodes (gold history) → PRED.jsonl")
    p.add_argument("--model", required=True, help="an OdysseyAgent folder, or text / text:SPEC for the text navigator "
                                                  "(over the recording's hierarchy dumps)")
    p.add_argument("--episodes", required=True)
    p.add_argument("--split", default=None)
    p.add_argument("--part", default="test", choices=("train", "test"))
    p.add_argument("--out", required=True)
    p.add_argument("--missing", default="skip-step", choices=("error", "skip-step", "skip-episode"))
    p.add_argument("--device", default=None)
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True)
    p.set_defaults(func=cmd_predict)

    p = sub.add_parser("train", help="fine-tune an OdysseyAgent (HF Trainer; runs under accelerate launch)")
    from mobile_actions.recipes.train_navigator import add_arguments

    add_arguments(p)
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("serve", help="HTTP navigator service")
    p.add_argument("--model", required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--token", default=None,
                   help="bearer token, required off loopback; visible in `ps`: prefer --token-file or "
                        "$MOBILE_ACTIONS_NAVIGATOR_TOKEN")
    p.add_argument("--token-file", default=None, help="read the bearer token from this file")
    p.add_argument("--device", default=None)
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("rows", help="text-navigator training rows (Mobile Actions JSONL) from recorded episodes")
    p.add_argument("--episodes", required=True, help="a recording (`navigator record --out`)")
    p.add_argument("--split", choices=["random", "task"], default=None, help="use one part of this split (default: all)")
    p.add_argument("--part", choices=["train", "test"], default="train")
    p.add_argument("--out", required=True, help="JSONL to write")
    p.set_defaults(func=cmd_rows)

    p = sub.add_parser("record", help="record scripted virtual-phone demonstrations as GUI Odyssey episodes")
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--templates", choices=("main", "look-alike", "saved-items", "edits", "texts-timers", "entry-details", "blind"),
                   default="main",
                   help="look-alike: only the changes among look-alike items; saved-items: only the changes to saved "
                        "items asked as people ask; edits: alarms, notes and settings changed in few words; "
                        "texts-timers: texts as people write them and timers in few words (each to weight them "
                        "in a training mix); entry-details: an event a tool just made, given the details the tool "
                        "took no argument for (its place, notes, length) as people say them; "
                        "blind: the evaluation-only templates, never trained on (all in the task split's test part)")
    p.set_defaults(func=cmd_record)
