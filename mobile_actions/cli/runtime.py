"""`mobile-actions export | call | bench caller`: thin wrappers over recipes/ and mobile_actions.runtime.

`call` imports only the torch-free runtime (unless --torch); `export` and `bench` import torch lazily.
"""
from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from mobile_actions.catalog import Catalogue


def register(subparsers) -> None:
    p = subparsers.add_parser("export", help="export a caller to an ONNX folder (q8/mixed/int4/int8/fp32) and self-check it")
    from mobile_actions.recipes.export_onnx import add_arguments

    add_arguments(p)
    p.set_defaults(func=cmd_export)

    p = subparsers.add_parser("call", help="tool calls for a request (the default caller's ONNX export; no torch)")
    p.add_argument("request")
    p.add_argument("--model", default=None,
                   help="auto (default: the Mobile Actions caller for its tools, the general caller for any other "
                        "catalogue) | default ($MOBILE_ACTIONS_ONNX overrides its export) | general | an exported "
                        "folder (mobile-actions export --out DIR) | with --torch: any PyTorch model spec")
    p.add_argument("--torch", action="store_true",
                   help="run the model on PyTorch (needs the `model` extra) instead of its ONNX export")
    p.add_argument("--tools", default="mobile_actions", help="catalogue name or JSON file")
    p.add_argument("--json", action="store_true", help="print calls, text, problems and timings as JSON")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--now", help="datetime for the developer turn, YYYY-MM-DDTHH:MM:SS (default: now)")
    p.add_argument("--no-constrain", dest="constrained", action="store_false", help="plain greedy decoding")
    p.add_argument("--no-grounding", dest="grounded", action="store_false",
                   help="the call grammar only: values not narrowed to the request")
    p.add_argument("--no-prefix-reuse", dest="prefix_reuse", action="store_false")
    p.add_argument("--no-sparse-head", dest="sparse_head", action="store_false",
                   help="full 262k-row head at every step (default: only the grammar's allowed rows when <= 512)")
    p.add_argument("--stream", action="store_true", help="print the raw output as it is decoded")
    p.add_argument("--server", nargs="?", const="default", default=None, metavar="SOCKET",
                   help="ask a running `mobile-actions serve` (its socket; default $MOBILE_ACTIONS_SOCKET or the "
                        "per-user one) instead of loading the model here")
    p.set_defaults(func=cmd_call)

    p = subparsers.add_parser("serve", help="keep the caller loaded on a local socket for `call --server` and apps")
    p.add_argument("--model", default=None, help="auto | default | general | an exported folder (as `call --model`)")
    p.add_argument("--socket", default=None, help="Unix socket path (default $MOBILE_ACTIONS_SOCKET, else "
                                                   "$XDG_RUNTIME_DIR/mobile-actions/caller.sock)")
    p.add_argument("--tools", default="mobile_actions",
                   help="catalogues to fill before the first request, '+'-free names or files, comma-separated")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--max-requests", type=int, default=None, help="stop after N answers (default: until Ctrl-C)")
    p.set_defaults(func=cmd_serve, constrained=True, prefix_reuse=True, sparse_head=True, grounded=True)


def add_bench_subcommand(bench_subparsers) -> None:
    """`bench caller`: the `bench` group itself lives in mobile_actions.cli.main."""
    from mobile_actions.recipes.bench_caller import add_arguments as bench_args

    p = bench_subparsers.add_parser("caller", help="PyTorch / ONNX fp32,int8,int4,mixed,q8 / llama.cpp side by side")
    bench_args(p)
    p.set_defaults(func=cmd_bench)


def cmd_export(args: argparse.Namespace) -> int:
    from mobile_actions.recipes.export_onnx import check_ok, config_from_args, run, summary

    args.out = args.out or default_onnx_dir(args.quant)
    res = run(config_from_args(args), progress=lambda m: print(m, file=sys.stderr, flush=True))
    print(summary(res))
    return 0 if check_ok(res.check) else 1


def default_onnx_dir(quant: str | None = None) -> str:
    """`$MOBILE_ACTIONS_ONNX`, else `<mobile-actions cache>/onnx-<quant>` (default `q8`, what
    `mobile-actions model prepare` builds and `export` writes without --out). Torch-free."""
    from mobile_actions.runtime.prepared import default_onnx_dir as _dir

    return str(_dir(quant))


def _print_result(res: dict, as_json: bool) -> int:
    """A `CallResult.to_json()` as `call` shows it (the same whether decoded here or by a server)."""
    from mobile_actions.acting import Refusal

    if as_json:
        print(json.dumps(res, ensure_ascii=False, indent=2))
    else:
        for c in res["calls"]:
            print(f"{c['name']}({json.dumps(c['arguments'], ensure_ascii=False)})")
        if res["text"]:
            print(res["text"])
        for p in res["problems"]:
            print(f"problem: {p}", file=sys.stderr)
        for r in res["refused"]:
            print(Refusal.from_json(r), file=sys.stderr)
        for rule in res["rules"]:
            print(f"rule {rule}", file=sys.stderr)
    return 1 if res["problems"] else 0


def cmd_call(args: argparse.Namespace) -> int:
    from mobile_actions.catalog import CatalogueError, load_catalogue
    from mobile_actions.errors import PromptTooLongError
    from mobile_actions.runtime.onnx import release_free_memory

    now = datetime.fromisoformat(args.now) if args.now else None
    try:   # first: a bad or oversized catalogue is refused before any model is loaded for it
        tools = load_catalogue(args.tools)
    except CatalogueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.server is not None:
        return _call_server(args, tools)
    if args.torch:
        return _call_torch(args, now, tools)
    caller = _onnx_caller(args, tools, tools.names)
    if caller is None:
        return 2
    try:
        if args.stream:
            for piece in caller.stream(args.request, now=now):
                print(piece, end="", flush=True)
            print()
            return 0
        # `Caller.call` in two halves: a one-shot process lets the caller's ~300 MB go before the gate loads
        # its asks-now classifier, so the two never add up in its peak RSS
        messages = caller.messages(args.request, now)
        res = caller.call_messages(messages, tools)
        del caller
        release_free_memory()
        return _print_result(res.gated(messages, tools).to_json(), args.json)
    except PromptTooLongError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


def _onnx_caller(args: argparse.Namespace, tools: Catalogue | None, names: Sequence[str]):
    """The ONNX caller `--model` names (None after printing why it cannot load); `auto` picks it for the tool
    `names` it will be asked about."""
    from pathlib import Path

    from mobile_actions.runtime import Caller, ExportFormatError
    from mobile_actions.runtime.prepared import CALLER_SPECS, NotPreparedError, prepared_caller

    try:
        if args.model in (None, *CALLER_SPECS):
            model = prepared_caller(args.model or "auto", names)
        else:
            model = Path(args.model)
            if not (model / "manifest.json").is_file():
                print(f"error: {model}: not an exported model folder (mobile-actions export --model SPEC --out "
                      f"{model}); for a PyTorch checkpoint or adapter add --torch", file=sys.stderr)
                return None
        return Caller.from_pretrained(model, threads=args.threads, constrained=args.constrained,
                                      prefix_reuse=args.prefix_reuse, tools=tools, sparse_head=args.sparse_head,
                                      grounded=args.grounded)
    except (NotPreparedError, ExportFormatError) as e:
        print(f"error: {e}", file=sys.stderr)
        return None


def _call_server(args: argparse.Namespace, tools: Catalogue) -> int:
    """`call --server`: the request to a running `serve`; prints what a local `call` prints."""
    from pathlib import Path

    from mobile_actions.catalog import CATALOGS_DIR
    from mobile_actions.runtime.server import CallMessage, ServerError, ask

    if args.torch or args.stream:
        print("error: --server takes neither --torch nor --stream", file=sys.stderr)
        return 2
    bundled = (CATALOGS_DIR / f"{args.tools}.json").is_file()
    message = CallMessage(args.request, args.tools if bundled else tools.to_mobile_actions(), args.now)
    try:
        result = ask(message, None if args.server == "default" else Path(args.server))
    except ServerError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return _print_result(result, args.json)


def cmd_serve(args: argparse.Namespace) -> int:
    from pathlib import Path

    from mobile_actions.catalog import CatalogueError, load_catalogue
    from mobile_actions.errors import PromptTooLongError
    from mobile_actions.runtime.server import ServerError, default_socket, serve

    try:
        catalogues = [load_catalogue(name) for name in args.tools.split(",") if name]
    except CatalogueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    caller = _onnx_caller(args, catalogues[0] if catalogues else None, [n for c in catalogues for n in c.names])
    if caller is None:
        return 2
    try:
        for tools in catalogues:
            caller.warm(tools)
        serve(caller, Path(args.socket) if args.socket else default_socket(), max_requests=args.max_requests)
    except (ServerError, PromptTooLongError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


def _call_torch(args: argparse.Namespace, now: datetime | None, tools: Catalogue) -> int:
    """`call --torch`: the same request through the PyTorch caller (grammar-constrained unless --no-constrain)."""
    from mobile_actions.dataset import developer_message
    from mobile_actions.hybrid.models import resolve_caller

    if args.stream:
        print("error: --stream is for the ONNX runtime", file=sys.stderr)
        return 2

    caller = resolve_caller(args.model or "auto", torch=True, constrained=args.constrained, tool_names=tools.names)
    messages = [developer_message(now),
                {"role": "user", "content": args.request}]
    return _print_result(caller.call_messages(messages, tools).gated(messages, tools).to_json(), args.json)   # as `call`


def cmd_bench(args: argparse.Namespace) -> int:
    from mobile_actions.recipes.bench_caller import config_from_args, run

    run(config_from_args(args))
    return 0
