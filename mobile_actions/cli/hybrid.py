"""`mobile-actions run | replay` and the `bench hybrid` sub-command: parse arguments, call the library, print.

`bench` is owned by `mobile_actions.cli.runtime` (the caller benchmark), so this module does not register
it: `add_bench_subcommand(bench_subparsers)` adds ``hybrid`` under it, and
(`mobile-actions bench hybrid`).
"""
from __future__ import annotations

import argparse
import json
import sys

EXIT_OK, EXIT_NOT_ALL_DONE, EXIT_SETUP, EXIT_INTERRUPTED = 0, 1, 2, 3
RUN_EXIT_CODES = """exit status:
  0  every item done (a GUI goal only when the phone shows it: its state or screen changed to fit the goal)
  1  an item not done, unknown (e.g. the navigator said COMPLETE and the phone shows no such change) or
     refused; or nothing was done
  2  bad arguments, no device, a run folder that cannot be resumed
  3  interrupted (continue with --resume RUN)"""


def register(subparsers) -> None:
    p = subparsers.add_parser("run", help="do a request on a phone: tool calls, then GUI navigation where needed",
                              epilog=RUN_EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("request", nargs="?", help="what to do, in words (omit with --resume)")
    p.add_argument("--serial", help="device (default $ANDROID_SERIAL, the only device, else the virtual phone)")
    p.add_argument("--model", default="auto",
                   help="caller: auto (the Mobile Actions caller for its tools, the general caller for any other "
                        "catalogue) | default | general (their ONNX exports, built by `mobile-actions model prepare`) "
                        "| exported ONNX folder | checkpoint/adapter DIR (PyTorch)")
    p.add_argument("--torch", action="store_true", help="run the caller on PyTorch instead of its ONNX export")
    p.add_argument("--navigator", default="default",
                   help="default (the bundled text navigator) | text:SPEC (your own: ONNX export or adapter) | an OdysseyAgent DIR | "
                        "http(s)://URL of 'navigator serve' | none")
    p.add_argument("--route", default="auto", choices=("auto", "always", "never"),
                   help="offer the caller operate_screen(goal) for GUI steps: auto = if it was trained to (default)")
    p.add_argument("--navigate", default="auto", choices=("auto", "always", "never"),
                   help="auto: GUI only when the caller makes no valid call or a GUI-bound tool's steps fail; "
                        "always: also hand the request to the navigator after the tool calls")
    p.add_argument("--dry-run", action="store_true", help="ask the caller and plan the device commands; run nothing")
    p.add_argument("--yes", action="store_true", help="do not ask before a call that changes the phone or sends something (the tool's x-effect in the catalogue: none | changes | sends; without it, read from its name) nor before a navigator tap on a send/delete-type button; calls the request does not ask for are refused even so")
    p.add_argument("--max-steps", type=int, default=15, help="navigator actions per GUI task (default 15)")
    p.add_argument("--max-turns", type=int, default=3, help="caller turns incl. follow-ups with tool results")
    p.add_argument("--tools", default="mobile_actions", help="catalogue name or JSON file")
    p.add_argument("--bindings", metavar="FILE", help="how each tool is done on Android (default: the tools' own)")
    p.add_argument("--now", help="the caller's clock, YYYY-MM-DDTHH:MM:SS (default: now)")
    p.add_argument("--phone", metavar="FILE", help="the virtual phone's starting state: a JSON object of flags, "
                   "levels and items, as a benchmark task's setup (contacts, notes, alarms...; docs/hybrid.md)")
    p.add_argument("--runs-dir", default="runs", help="where run folders go (default ./runs)")
    p.add_argument("--resume", metavar="RUN", help="continue an interrupted run of yours from its trace (with the "
                                                   "same --tools, --bindings, --model, --navigator, --serial)")
    p.add_argument("--html", action="store_true", help="also write RUN/replay.html")
    p.add_argument("--json", action="store_true", help="print the final report as JSON")
    p.add_argument("--quiet", action="store_true", help="no step-by-step progress on stderr")
    p.set_defaults(func=cmd_run)

    p = subparsers.add_parser("replay", help="show a run folder step by step (text, or --html page with screenshots)")
    p.add_argument("run", help="run folder (runs/...)")
    p.add_argument("--html", nargs="?", const="", metavar="OUT", help="write an HTML page (default RUN/replay.html)")
    p.set_defaults(func=cmd_replay)


def add_bench_subcommand(bench_subparsers) -> None:
    """Adds ``bench hybrid`` to the ``bench`` sub-parsers that mobile_actions.cli.main owns."""
    p = bench_subparsers.add_parser("hybrid", help="online hybrid benchmark on the virtual phone (state checks)")
    add_bench_arguments(p)
    p.set_defaults(func=cmd_bench_hybrid)


def add_bench_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", dest="hybrid_model", metavar="MODEL", default="auto",
                   help="caller: auto | default | general | DIR | oracle (the tasks' gold calls: a harness check, not a model)")
    p.add_argument("--torch", dest="hybrid_torch", action="store_true",
                   help="run the caller on PyTorch instead of its ONNX export")
    p.add_argument("--navigator", dest="hybrid_navigator", metavar="NAV", default="default",
                   help="default | text:SPEC | DIR | URL | none | oracle (scripted GUI steps: a harness check, not a model)")
    p.add_argument("--navigate", dest="hybrid_navigate", default="auto", choices=("auto", "always", "never"),
                   help="as `run --navigate` (default auto, what `run` does: the navigator gets the request when the "
                        "caller made no valid call; always: also after the tool calls)")
    p.add_argument("--max-steps", dest="hybrid_max_steps", metavar="N", type=int, default=15)
    p.add_argument("--limit", dest="hybrid_limit", metavar="N", type=int, default=None, help="first N tasks only")
    p.add_argument("--only", dest="hybrid_only", metavar="IDS", default=None,
                   help="comma list of task ids or categories (tool,gui,mixed)")
    p.add_argument("--out", dest="hybrid_out", metavar="DIR", default="out/bench-hybrid",
                   help="results.csv/.md/.json and runs/ go here")
    p.add_argument("--list", dest="hybrid_list", action="store_true", help="list the tasks and exit")
    p.add_argument("--tasks", dest="hybrid_tasks", metavar="FILE", default=None,
                   help="JSONL of your own tasks (request, category, setup, check, optional gold; "
                        "docs/hybrid.md); default: the 42 built-in ones")


# ============================================================================================ run
def torch_spec(model: str, torch: bool) -> str:
    """`--torch`: the caller spec as ``torch:SPEC`` (resolve_caller runs it on PyTorch; kept in the trace)."""
    from mobile_actions.hybrid.models import TORCH_PREFIX

    return TORCH_PREFIX + model if torch and model not in ("oracle",) and not model.startswith(TORCH_PREFIX) else model


def _progress(quiet: bool):
    from mobile_actions.hybrid.replay import describe

    def show(rec: dict) -> None:
        if rec.get("type") == "message":
            print(f"· {rec['text']}", file=sys.stderr, flush=True)
            return
        if quiet or rec.get("type") in ("run", "report", "intent"):
            return
        kind, status, summary = describe(rec)
        print(f"  {kind:<18} {status:<9} {summary}", file=sys.stderr, flush=True)
    return show


def _sigterm_as_interrupt() -> None:
    """SIGTERM behaves like Ctrl-C: the run is recorded as interrupted (resumable) and the virtual phone's
    private adb server is stopped instead of being orphaned."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, signal.default_int_handler)


def cmd_run(args: argparse.Namespace) -> int:
    from mobile_actions.android.device import DeviceError
    from mobile_actions.cli import ask_on_tty
    from mobile_actions.hybrid.runner import HybridError, RunConfig, Runner
    from mobile_actions.hybrid.trace import TraceError

    if not args.request and not args.resume:
        print("error: give a REQUEST, or --resume RUN", file=sys.stderr)
        return EXIT_SETUP
    if args.now:
        from datetime import datetime
        try:
            datetime.strptime(args.now, "%Y-%m-%dT%H:%M:%S")
        except ValueError:
            print(f"error: --now {args.now!r} is not YYYY-MM-DDTHH:MM:SS", file=sys.stderr)
            return EXIT_SETUP
    phone = None
    if args.phone:
        from mobile_actions.android.phone.setup import load_setup
        from mobile_actions.errors import PhoneSetupError
        try:
            phone = load_setup(args.phone)
        except PhoneSetupError as e:
            print(f"error: --phone {e}", file=sys.stderr)
            return EXIT_SETUP
    cfg = RunConfig(model=torch_spec(args.model, args.torch), navigator=None if args.navigator == "none" else args.navigator,
                    serial=args.serial, tools=args.tools, bindings=args.bindings, dry_run=args.dry_run, yes=args.yes,
                    max_steps=args.max_steps, max_turns=args.max_turns, navigate=args.navigate, route=args.route, now=args.now,
                    runs_dir=args.runs_dir, phone=phone)
    runner = None
    _sigterm_as_interrupt()
    try:
        runner = Runner(cfg, confirm=ask_on_tty(), on_event=_progress(args.quiet))  # --yes: cfg.yes
        report = runner.resume(args.resume) if args.resume else runner.run(args.request)
    except KeyboardInterrupt:
        print("\ninterrupted; the trace is kept: mobile-actions run --resume RUN", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (HybridError, TraceError, DeviceError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_SETUP
    finally:
        if runner is not None:
            runner.close()
    if args.html:
        from mobile_actions.hybrid.replay import write_html
        write_html(report.run_dir)
    if args.json:
        print(json.dumps(report.to_json(), indent=1, ensure_ascii=False))
    else:
        print_report(report)
    return run_exit_code(report)


def run_exit_code(report) -> int:
    """`run`'s exit status for a report (`RUN_EXIT_CODES`): 0 only when every item is done."""
    if report.status == "interrupted":
        return EXIT_INTERRUPTED
    if report.status == "dry_run":
        return EXIT_NOT_ALL_DONE if report.refused else EXIT_OK
    return EXIT_OK if report.all_done else EXIT_NOT_ALL_DONE


STATE_KEYS = ("screen", "torch", "wifi", "bluetooth", "airplane")


def print_report(report) -> None:
    """The final report: what was done, not done and refused, with reasons; the virtual phone's state."""
    print(f"{report.status}: {report.request!r} ({report.steps} steps, {report.seconds:.1f} s)")
    if report.error:
        print(f"  stopped: {report.error}")
    for title, items in (("done", report.done), ("not done", report.not_done), ("refused", report.refused)):
        print(f"{title} ({len(items)}):")
        for i in items:
            tag = f" [{i.status}]" if i.status not in ("done", "not_done", "refused") else ""
            print(f"  - {i.what}{tag}" + (f" — {i.reason}" if i.reason else ""))
    if not report.items:
        print("nothing was done: the caller made no call and no GUI task ran")
    st = report.phone_state
    if st:
        flags = ", ".join(f"{k}={st.get(k)}" for k in STATE_KEYS)
        print(f"phone: {flags}")
        for m in st.get("outbox", []):
            print(f"  outbox: to {m['to']!r} subject {m['subject']!r} body {m['body']!r}")
        for c in st.get("contacts", []):
            print(f"  contact: {c}")
        for e in st.get("events", []):
            print(f"  event: {e.get('title')!r} at {e.get('begin_ms')}")
        for n in st.get("notes", []):
            print(f"  note: {n!r}")
        for key in ("alarms", "timers", "messages"):
            for item in st.get(key, []):
                print(f"  {key.rstrip('s')}: {item!r}")
        if st.get("map_searches"):
            print(f"  map searches: {st['map_searches']}")
    print(f"trace: {report.run_dir}  (mobile-actions replay {report.run_dir} [--html])")
    if report.status == "interrupted":
        print(f"resume: mobile-actions run --resume {report.run_dir}")


# ============================================================================================ replay
def cmd_replay(args: argparse.Namespace) -> int:
    from mobile_actions.hybrid.replay import replay_lines, write_html
    from mobile_actions.hybrid.trace import TraceError

    try:
        if args.html is not None:
            path = write_html(args.run, args.html or None)
            print(f"wrote {path}")
            return EXIT_OK
        for line in replay_lines(args.run):
            print(line)
    except TraceError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_SETUP
    return EXIT_OK


# ============================================================================================ bench hybrid
def cmd_bench_hybrid(args: argparse.Namespace) -> int:
    from mobile_actions.android.device import DeviceError
    from mobile_actions.hybrid.runner import HybridError
    from mobile_actions.recipes.bench_hybrid import (
        TASKS, BenchConfig, load_tasks, markdown, run_bench, select_tasks, write_outputs,
    )

    tasks = TASKS
    if args.hybrid_tasks:
        try:
            tasks, problems = load_tasks(args.hybrid_tasks)
        except OSError as e:
            print(f"error: {args.hybrid_tasks}: {e.strerror}", file=sys.stderr)
            return EXIT_SETUP
        for line in problems:
            print(line, file=sys.stderr)
        if problems:
            print(f"error: {len(problems)} task(s) above cannot be run; nothing was run", file=sys.stderr)
            return EXIT_SETUP

    navigator = None if args.hybrid_navigator == "none" else args.hybrid_navigator
    cfg = BenchConfig(model=torch_spec(args.hybrid_model, args.hybrid_torch), navigator=navigator,
                      navigate=args.hybrid_navigate, max_steps=args.hybrid_max_steps, limit=args.hybrid_limit,
                      only=args.hybrid_only, out=args.hybrid_out)
    if args.hybrid_list:
        for t in select_tasks(tasks, cfg.only, cfg.limit):
            print(f"{t['id']}  {t['category']:<6} {t['request']}")
        return EXIT_OK

    title = f"hybrid benchmark: caller {cfg.model}, navigator {cfg.navigator or 'none'}, navigate {cfg.navigate}"
    done: list = []

    def progress(n: int, total: int, r) -> None:
        done.append(r)
        write_outputs(done, cfg.out, title + ("" if n == total else f" (partial: {n}/{total})"))
        why = "" if r.success else " — " + "; ".join(r.failures + ([r.error] if r.error else []))
        print(f"[{n}/{total}] {r.id} {r.category:<6} {r.kind} {r.steps} steps {r.seconds:.1f} s"
              + (" (reported done)" if r.false_done else "") + why, file=sys.stderr, flush=True)

    def message(rec: dict) -> None:
        if rec.get("type") == "message":
            print(f"· {rec['text']}", file=sys.stderr, flush=True)

    _sigterm_as_interrupt()
    try:
        results = run_bench(cfg, tasks=tasks, on_result=progress, on_event=message)
    except KeyboardInterrupt:
        print(f"interrupted; partial results in {cfg.out}/results.md", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (HybridError, DeviceError) as e:     # a model or phone the benchmark cannot start with
        print(f"error: {e}", file=sys.stderr)
        return EXIT_SETUP
    csv_path, md_path, _ = write_outputs(results, cfg.out, title)
    print(markdown(results, title))
    print(f"false done: {sum(r.false_done for r in results)} of {len(results)} tasks (the run reported every item "
          "done, the task's state check failed)")
    print(f"wrote {csv_path} and {md_path}")
    return EXIT_OK
