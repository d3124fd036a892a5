"""The `mobile-actions` command: one module per job, each with `register(subparsers)`; `main` builds it.

Shared here: reading a rows file for a command, and the one confirmation prompt every command that sends
or deletes uses.
"""
from __future__ import annotations

import sys
from typing import Callable, Sequence


def ask_on_tty(yes: bool = False, stream_in=None, stream_out=None) -> Callable[[str, Sequence[str]], bool]:
    """Confirm a send-type action: ``yes`` → always; a terminal → ask y/N; no terminal (a pipe, a closed or
    missing stdin) → refuse, so nothing is sent without someone saying so."""
    def confirm(what: str, details: Sequence[str]) -> bool:
        if yes:
            return True
        sin = stream_in or sys.stdin
        try:
            if sin is None or sin.closed or not sin.isatty():
                return False
        except (OSError, ValueError):
            return False
        out = stream_out or sys.stderr
        print(f"{what}:", file=out)
        for line in details:
            print(f"  {line}", file=out)
        print("Go ahead? [y/N] ", end="", file=out, flush=True)
        try:
            return sin.readline().strip().lower() in ("y", "yes")
        except (OSError, ValueError):   # stdin closed while asking
            return False
    return confirm


def read_rows(path: str) -> tuple[list, list] | None:
    """(rows, unreadable-line problems, already printed to stderr), or None when the file cannot be read
    (said on stderr; the command exits 2)."""
    from mobile_actions.dataset import load_rows

    try:
        rows, problems = load_rows(path, strict=False)
    except OSError as e:
        print(f"error: {path}: {e.strerror or e}", file=sys.stderr)
        return None
    for p in problems:
        print(p, file=sys.stderr)
    return rows, problems
