"""The `mobile-actions` command: parse arguments, call the library, print.

Each job registers its own sub-commands (`register(subparsers)` in its `mobile_actions.cli` module);
this file holds the data commands (validate, score, generate, render) and stays thin.
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
import time

from mobile_actions.wire import LAYOUTS

# Parts that add sub-commands: each module's `register(subparsers)` adds the commands named here (a test holds
# the two together), and `add_bench_subcommand(bench)`, where it has one, a `bench` kind. Naming them lets a
# command build only its own part's parser: registering every part imports the recipes their options come from,
# a third of a second that `call` would pay before loading anything.
PART_CLIS = {
    "mobile_actions.cli.caller": ("model", "train", "adapt", "eval", "adapter"),
    "mobile_actions.cli.runtime": ("export", "call", "serve"),
    "mobile_actions.cli.android": ("phone", "dispatch"),
    "mobile_actions.cli.navigator": ("navigator",),
    "mobile_actions.cli.hybrid": ("run", "replay"),
}
OWN_COMMANDS = ("validate", "score", "spans", "generate", "render", "bench", "rules")
ONE_SHOT = ("call",)   # commands whose process ends without tearing the interpreter down (`main`)


def _err(msg: str) -> None:
    print(msg, file=sys.stderr)


# ---------------------------------------------------------------------------------------------- validate
def cmd_validate(args: argparse.Namespace) -> int:
    from mobile_actions.calls import validate_call
    from mobile_actions.catalog import CatalogueError, load_catalogue
    from mobile_actions.dataset import Reader

    try:
        override = load_catalogue(args.tools) if args.tools is not None else None
    except CatalogueError as e:
        _err(f"error: {e}")
        return 2
    reader = Reader(args.file, strict=False, tools=override)
    n_rows = n_calls = n_bad_calls = 0
    try:
        for row in reader:
            n_rows += 1
            tools = row.tools if override is None else override
            for call in row.calls:
                n_calls += 1
                problems = validate_call(call, tools)
                n_bad_calls += bool(problems)
                for p in problems:
                    print(f"{row.where}: {p}")
    except OSError as e:
        _err(f"error: {args.file}: {e.strerror or e}")
        return 2
    for p in reader.problems:
        print(p)
    bad = n_bad_calls + len(reader.problems)
    print(f"{args.file}: {n_rows} rows, {n_calls} calls; {len(reader.problems)} unreadable lines, "
          f"{n_bad_calls} invalid calls" + ("" if bad else " — all valid"))
    return 1 if bad else 0


# ---------------------------------------------------------------------------------------------- spans
def cmd_spans(args: argparse.Namespace) -> int:
    from mobile_actions.cli import read_rows
    from mobile_actions.decoding.grounding import (AFTER_RESULTS, ENDS_BEFORE, UNBROKEN, UNDATED, learn_policies,
                                                   write_policies)

    read = read_rows(args.file)
    if read is None:
        return 2
    rows, problems = read
    learned = learn_policies(rows, args.threshold)
    print(f"{'tool.argument':<40} {'gold':>6} {'verbatim':>9} {'share':>7}  policy")
    for key, v in learned["arguments"].items():
        for name, row in ((key, v), ("  after tool results", v.get(AFTER_RESULTS))):
            if row:
                notes = "".join(note for flag, note in ((UNDATED, ", never a date"), (UNBROKEN, ", never cut short"))
                                if row.get(flag))
                if row.get(ENDS_BEFORE) is not None:
                    notes += ", ends before punctuation, joins" + "".join(f", {c.lower()}" for c in row[ENDS_BEFORE])
                print(f"{name:<40} {row['n']:>6} {row['verbatim']:>9} {row['share']:>7.1%}  {row['policy']}{notes}")
    if args.out:
        print(f"written {write_policies(args.out, learned, str(args.file), len(rows))}")
    return 1 if problems else 0


# ---------------------------------------------------------------------------------------------- score
def cmd_score(args: argparse.Namespace) -> int:
    from mobile_actions.dataset import load_rows
    from mobile_actions.scoring import read_predictions, score

    try:
        rows, problems = load_rows(args.gold, strict=False)
        preds, pred_problems = read_predictions(args.pred)
    except OSError as e:
        _err(f"error: {e.filename}: {e.strerror or e}")
        return 2
    for p in [*problems, *pred_problems]:
        _err(str(p))
    if problems or pred_problems:
        _err("error: unreadable lines above; scores would be misaligned")
        return 1
    try:
        report = score(rows, preds)
    except ValueError as e:
        _err(f"error: {e}")
        return 1
    if args.json:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        print_report(report)
    return 0


def print_report(report, title: str = "scores") -> None:
    from rich.console import Console
    from rich.table import Table

    from mobile_actions.scoring import confusion_table

    console = Console()
    t = Table(title=f"{title} (n={report.n})")
    for col in ("exact match (official)", "lenient (BFCL-style)", "schema-valid", "refusal accuracy"):
        t.add_column(col, justify="right")
    ra = "n/a" if report.refusal_accuracy is None else f"{report.refusal_accuracy:.1%} of {report.n_refusal_rows}"
    t.add_row(f"{report.exact_match:.1%}", f"{report.lenient_match:.1%}", f"{report.schema_valid:.1%}", ra)
    console.print(t)
    pt = Table(title="per tool (names)")
    for col in ("tool", "gold", "predicted", "precision", "recall"):
        pt.add_column(col, justify="right" if col != "tool" else "left")
    for name, st in sorted(report.per_tool.items()):
        pt.add_row(name, str(st.gold), str(st.predicted), f"{st.precision:.1%}", f"{st.recall:.1%}")
    console.print(pt)
    labels, matrix = confusion_table(report.confusion)
    ct = Table(title="confusion (rows: gold, columns: predicted)")
    ct.add_column("gold \\ pred")
    for lab in labels:
        ct.add_column(lab[:12], justify="right")
    for lab, row in zip(labels, matrix):
        ct.add_row(lab, *[str(v) if v else "." for v in row])
    console.print(ct)
    if report.errors:
        et = Table(title="rows not exact, by first reason; wrong arguments by tool.argument (calls)")
        et.add_column("reason")
        et.add_column("count", justify="right")
        for kind, count in report.errors.items():
            et.add_row(kind, str(count))
        for arg, count in report.argument_errors.items():
            et.add_row(f"  {arg}", str(count))
        console.print(et)


# ---------------------------------------------------------------------------------------------- generate
def _tool_weights(spec: str) -> dict[str, float]:
    """`NAME=W,NAME=W` -> {NAME: W}; a malformed item is a ValueError that quotes it."""
    out: dict[str, float] = {}
    for item in filter(None, (s.strip() for s in spec.split(","))):
        name, _, w = item.partition("=")  # no "=" leaves w empty, which float() refuses too
        try:
            weight = float(w)
        except ValueError:
            weight = None
        if weight is None or not name.strip():
            raise ValueError(f"--tool-weights: {item!r} is not NAME=WEIGHT (e.g. create_calendar_event=2.5)")
        out[name.strip()] = weight
    return out


def cmd_generate(args: argparse.Namespace) -> int:
    from mobile_actions.catalog import CatalogueError, load_catalogue
    from mobile_actions.dataset import write_rows
    from mobile_actions.datagen.generate import diversity, generate_rows

    if args.seeds:
        return _generate_from_seeds(args)
    try:
        catalogue = load_catalogue(args.tools)
    except CatalogueError as e:
        _err(f"error: {e}")
        return 2
    t0 = time.perf_counter()
    try:
        weights = [float(w) for w in args.call_weights.split(",")]
        rows = generate_rows(catalogue, args.n, seed=args.seed, families=args.families, refusal_rate=args.refusal_rate,
                             tool_order=args.tool_order, chain_rate=args.chain_rate, call_count_weights=weights,
                             tool_weights=_tool_weights(args.tool_weights), declined_rate=args.declined_rate)
    except ValueError as e:
        _err(f"error: {e}")
        return 2
    n = write_rows(rows, args.out)
    dt = time.perf_counter() - t0
    d = diversity(rows)
    print(f"wrote {n} rows to {args.out} in {dt:.1f} s (seed {args.seed}, families {args.families})")
    print(d.summary())
    return 0


def _generate_from_seeds(args: argparse.Namespace) -> int:
    from mobile_actions.dataset import write_rows
    from mobile_actions.datagen.seeds import load_seeds, seed_rows
    from mobile_actions.errors import DatasetError

    part = {"all": "all", "train": "train", "heldout": "heldout"}[args.families]
    try:
        variants = [v.strip() for v in args.variants.split(",") if v.strip()]
        rows = seed_rows(load_seeds(args.seeds), part=part, variants=variants, seed=args.seed)
    except (DatasetError, ValueError) as e:
        _err(f"error: {e}")
        return 2
    rows = rows[:args.n] if args.n else rows
    n = write_rows(rows, args.out)
    print(f"wrote {n} rows to {args.out} from the seed catalogues in {args.seeds} ({part} requests; catalogue "
          f"variants: {', '.join(variants)})")
    return 0


# ---------------------------------------------------------------------------------------------- render
def cmd_render(args: argparse.Namespace) -> int:
    """Show exactly what a caller sees for a request: the FunctionGemma prompt text."""
    from mobile_actions import wire
    from mobile_actions.catalog import load_catalogue
    from mobile_actions.dataset import developer_message

    catalogue = load_catalogue(args.tools)
    messages = [developer_message(), {"role": "user", "content": args.request}]
    print(wire.render(messages, catalogue, add_generation_prompt=True, layout=args.layout), end="")
    return 0


# ---------------------------------------------------------------------------------------------- main
def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or (`command`: a known command's name) one whose sub-commands are that command's
    part only, which parses that command's arguments the same."""
    known = command in OWN_COMMANDS or any(command in names for names in PART_CLIS.values())
    command = command if known else None
    parser = argparse.ArgumentParser(
        prog="mobile-actions", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Let a small model run a phone: a 270M caller turns requests into validated tool calls, "
                    "which run on Android over adb; GUI steps go to a screen navigator.",
        epilog="examples:\n"
               "  mobile-actions model prepare                      # once: the base model and the on-device export\n"
               "  mobile-actions run \"turn on the flashlight\" --yes  # on a phone, or the virtual one\n"
               "  mobile-actions call \"email ana@example.com the agenda\" --json\n"
               "  mobile-actions validate rows.jsonl                # file:line: tool.arg: message\n"
               "  mobile-actions COMMAND --help                     # each command's options")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("validate", help="check every row's gold calls against that row's tools")
    p.add_argument("file", help="Mobile Actions JSONL")
    p.add_argument("--tools", help="check against this catalogue (name or JSON file) instead of each row's tools")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("score", help="score predictions against gold rows (official exact match, lenient, schema-valid, refusals)")
    p.add_argument("--gold", required=True, help="Mobile Actions JSONL with the expected calls")
    p.add_argument("--pred", required=True, help="JSONL in gold order: {\"calls\"|\"raw\"|\"tool_calls\"...} per line")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("spans", help="which arguments copy the request's words: learn grounding policies from rows")
    p.add_argument("file", help="Mobile Actions JSONL with gold calls")
    p.add_argument("--out", help="write the policies here (a model folder gets grounding.json)")
    p.add_argument("--threshold", type=float, default=0.95,
                   help="share of verbatim gold values above which an argument is copied (default 0.95)")
    p.set_defaults(func=cmd_spans)

    p = sub.add_parser("generate", help="synthetic Mobile Actions rows for any catalogue")
    p.add_argument("--tools", default="mobile_actions", help="catalogue name or JSON file")
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--families", default="all", choices=("all", "train", "heldout"),
                   help="phrasing families to draw from (held-out families make an honest eval set)")
    p.add_argument("--refusal-rate", type=float, default=0.1)
    p.add_argument("--chain-rate", type=float, default=0.1,
                   help="share of address-chain rows (show_map now, send_email once the map's answer is back); "
                        "half are first turns, half follow-ups with tool results")
    p.add_argument("--declined-rate", type=float, default=0.0,
                   help="share of rows where a clause names an action without asking for it (\"don't email Ana\", "
                        "\"should I ...?\", \"... never mind\"): its call is left out of the gold")
    p.add_argument("--call-weights", default="0.70,0.22,0.08",
                   help="relative weights of 1, 2, 3, ... calls per request")
    p.add_argument("--tool-weights", default="",
                   help="NAME=W,... sampling weights of single tools (the rest keep their defaults), e.g. "
                        "create_calendar_event=2.8 to drill dates, refusal/sms=3 to drill a refusal topic; the phrasing "
                        "families and held-out split stay the same")
    p.add_argument("--tool-order", default="shuffled", choices=("shuffled", "catalogue"),
                   help="tool and property order per row: shuffled (as in the real data) or catalogue order "
                        "(as the runtime renders it; lets training run the shared prompt prefix once per batch)")
    p.add_argument("--seeds", help="a folder of seed catalogues (DOMAIN.tools.json + DOMAIN.rows.jsonl, e.g. "
                                    "datasets/seed-catalogues): their hand-written rows instead of templates; "
                                    "--families picks train or held-out requests, --n caps the count (0: all)")
    p.add_argument("--variants", default="alone,distractors",
                   help="with --seeds, the catalogues each request is written against, comma list of: alone (its "
                        "domain's tools), distractors (beside another domain's), missing (without the tools it "
                        "calls, answered with no call), framed (written into a message that passes it on, notes it for later, "
                        "asks about it ...: datagen/framings.json, answered with no call), wrapped (in words people put "
                        "around an ask: datagen/wrappings.json, the same call), details (a scheduling request "
                        "with details its tool cannot hold: datagen/details.json, the same call) (default: %(default)s)")
    p.add_argument("--out", default="data/generated.jsonl")
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser("render", help="print the FunctionGemma prompt a caller sees for a request")
    p.add_argument("request")
    p.add_argument("--tools", default="mobile_actions")
    p.add_argument("--layout", default="official", choices=LAYOUTS)
    p.set_defaults(func=cmd_render)

    if command in (None, "bench", "rules"):
        bench = _add_bench_and_rules(sub)
    for name, commands in PART_CLIS.items():
        if command is not None and command not in commands and command != "bench":
            continue
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name != name:
                raise
            continue
        if command is None or command in commands:
            module.register(sub)
        if command in (None, "bench") and hasattr(module, "add_bench_subcommand"):
            module.add_bench_subcommand(bench)
    return parser


def _add_bench_and_rules(sub) -> argparse._SubParsersAction:
    """`bench` (its own kinds; the parts add theirs) and `rules`; returns the `bench` kinds' subparsers."""
    p = sub.add_parser("bench", help="benchmarks that print a table: caller | act | bfcl | hybrid | android | train")
    bench = p.add_subparsers(dest="bench_kind", required=True, metavar="KIND")
    p = bench.add_parser("android", help="latency of one dispatched call through the real adb server")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the android benchmark's own options (bench android -- --help)")
    p.set_defaults(func=lambda a: importlib.import_module("mobile_actions.recipes.bench_android").main(a.args))
    p = bench.add_parser("act", help="whether the caller acts only when asked: unrequested calls, before and after the gate")
    bench_act = importlib.import_module("mobile_actions.recipes.bench_act")
    bench_act.add_arguments(p)
    p.set_defaults(func=bench_act.run)
    p = bench.add_parser("bfcl", help="BFCL categories (Berkeley Function Calling Leaderboard), scored by bfcl-eval's checker")
    bench_bfcl = importlib.import_module("mobile_actions.recipes.bench_bfcl")
    bench_bfcl.add_arguments(p)
    p.set_defaults(func=bench_bfcl.run)
    p = sub.add_parser("rules", help="the toolkit's rules around the model: counted, and what each changes on rows")
    rules = importlib.import_module("mobile_actions.recipes.rules")
    rules.add_arguments(p)
    p.set_defaults(func=rules.run)
    return bench


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(words[0] if words else None)
    args = parser.parse_args(argv)
    args.own_process = argv is None   # the command is this process's own: a job may start it again (allocator)
    from mobile_actions.errors import MobileActionsError

    try:
        code = int(args.func(args) or 0)
    except BrokenPipeError:   # `... | head` closed the output: not an error of the command
        sys.stderr.close()
        return 0
    except MobileActionsError as e:   # a command that did not say it itself: the message, never a traceback
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.own_process and args.command in ONE_SHOT:
        # its answer is out and its files written: tearing down the interpreter's objects (the token table's
        # 500k strings, the tokenizer, the sessions) would cost a one-shot `call` another 0.1 s
        import logging
        import os

        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BrokenPipeError:   # (the reader went away: nothing left to say)
            pass
        logging.shutdown()
        os._exit(code)
    return code


if __name__ == "__main__":
    sys.exit(main())
