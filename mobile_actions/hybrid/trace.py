"""A run folder: `trace.jsonl` (one JSON record per step, append-only) plus `screens/NNN.png`.

Why append-only JSONL with a flush + fsync per record: a run can die at any moment (a phone unplugged,
Ctrl-C, a crash); every step that finished is on disk before the next one starts, so `replay` can show
it and `resume` can skip it. A half-written last line (the process died mid-write) is ignored by the
reader, never fatal. Screenshots are files next to the trace, referenced by relative path, so the folder
can be moved, zipped or opened in a browser as it is.

Record shape (see docs/hybrid.md): ``{"seq", "t", "type", "key"?, "status"?, ...}``. ``type`` is one of
``run`` (header: request, config), ``caller`` (a caller turn), ``dispatch`` (one tool call), ``nav``
(one navigator step), ``nav_end`` (a navigator task's outcome), ``interrupted``, ``resume``, ``report``.
Steps that can be skipped on resume carry a ``key``; the last record for a key decides whether it is
finished (``FINISHED``) or has to run again (``interrupted``).
"""
from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

from mobile_actions.errors import TraceError

TRACE_NAME = "trace.jsonl"
SCREENS_DIR = "screens"
# The only screenshot paths a trace may name: what `TraceWriter.screen` writes. A run folder can be crafted
# (copied from elsewhere, edited), so nothing else is ever read, linked or sent to a navigator.
SCREEN_RE = re.compile(r"screens/[0-9]{3,9}\.png")
FINISHED = ("done", "failed", "refused", "skipped", "not_done", "unknown")


def slug(text: str, n: int = 40) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s[:n].rstrip("-") or "run"


def new_run_dir(root: str | Path, request: str, now: datetime | None = None) -> Path:
    """A fresh, unique folder under `root` named after the time and the request."""
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
    base = Path(root) / f"{stamp}-{slug(request)}"
    path, i = base, 1
    while path.exists():
        i += 1
        path = base.with_name(f"{base.name}-{i}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.mkdir(mode=0o700)   # emails, contacts and screenshots of someone's phone: private to its user
    return path


def screen_file(run_dir: str | Path, rel: Any) -> Path | None:
    """The screenshot a trace record names, if it is one of this run folder's own (else None)."""
    if not isinstance(rel, str) or not SCREEN_RE.fullmatch(rel):
        return None
    root = Path(run_dir).resolve()
    path = (root / rel).resolve()
    return path if path.parent == root / SCREENS_DIR and path.is_file() else None


def _private(path: Path, mode: str):
    """Open a run-folder file created 0600 (a trace holds what was sent to whom)."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | (os.O_APPEND if "a" in mode else os.O_TRUNC), 0o600),
                     mode, **({} if "b" in mode else {"encoding": "utf-8"}))


class TraceWriter:
    """Appends records to `RUN/trace.jsonl` and screenshots to `RUN/screens/`; safe to reopen (resume)."""

    def __init__(self, run_dir: str | Path) -> None:
        self.dir = Path(run_dir)
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        (self.dir / SCREENS_DIR).mkdir(exist_ok=True, mode=0o700)
        self.path = self.dir / TRACE_NAME
        existing = read_records(self.path) if self.path.exists() else []
        self.seq = max((r.get("seq", 0) for r in existing), default=0)
        self.n_screens = len(list((self.dir / SCREENS_DIR).glob("*.png")))
        self._repair_tail()

    def _repair_tail(self) -> None:
        """A torn last line (crash mid-write) would glue onto the next record: end it first."""
        if self.path.exists() and self.path.stat().st_size:
            with open(self.path, "rb") as f:
                f.seek(-1, os.SEEK_END)
                last = f.read(1)
            if last != b"\n":
                with open(self.path, "ab") as f:
                    f.write(b"\n")

    def append(self, record: dict[str, Any]) -> dict[str, Any]:
        self.seq += 1
        rec = {"seq": self.seq, "t": round(time.time(), 3), **record}
        line = json.dumps(rec, ensure_ascii=False, default=_jsonable) + "\n"
        with _private(self.path, "a") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())
        return rec

    def screen(self, png: bytes) -> str:
        """Store a screenshot; returns its path relative to the run folder (``screens/007.png``)."""
        self.n_screens += 1
        rel = f"{SCREENS_DIR}/{self.n_screens:03d}.png"
        with _private(self.dir / rel, "wb") as f:
            f.write(png)
        return rel

    def write_json(self, name: str, data: Any) -> str:
        with _private(self.dir / name, "w") as f:
            f.write(json.dumps(data, ensure_ascii=False, indent=1, default=_jsonable) + "\n")
        return name


def _jsonable(value: Any) -> Any:
    if hasattr(value, "to_json"):
        return value.to_json()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    return str(value)


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """Every complete record of a trace file; unreadable lines (a torn tail) are skipped."""
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(rec, dict):
                out.append(rec)
    return out


@dataclass
class Trace:
    """A run folder read back: records in order, with lookups used by replay and resume."""

    dir: Path
    records: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def read(cls, run_dir: str | Path) -> "Trace":
        d = Path(run_dir)
        path = d / TRACE_NAME if d.is_dir() else d
        if not path.is_file():
            raise TraceError(f"{run_dir}: no {TRACE_NAME} (not a run folder)")
        t = cls(path.parent, read_records(path))
        if not t.records or t.records[0].get("type") != "run":
            raise TraceError(f"{path}: no run header (first record must have type 'run')")
        return t

    @property
    def header(self) -> dict[str, Any]:
        return self.records[0]

    @property
    def request(self) -> str:
        return self.header.get("request", "")

    def of_type(self, *types: str) -> Iterator[dict[str, Any]]:
        return (r for r in self.records if r.get("type") in types)

    def last(self, key: str) -> dict[str, Any] | None:
        """The latest record for a step key (a resumed step has several)."""
        found = None
        for r in self.records:
            if r.get("key") == key:
                found = r
        return found

    def finished(self, key: str) -> dict[str, Any] | None:
        """The record of a step that need not run again, or None."""
        r = self.last(key)
        return r if r is not None and r.get("status") in FINISHED else None

    def nav_steps(self, task: str) -> list[dict[str, Any]]:
        """The finished navigator steps of one task, in order (latest record per step)."""
        steps: dict[int, dict[str, Any]] = {}
        for r in self.of_type("nav"):
            if r.get("task") == task and r.get("status") in FINISHED:
                steps[int(r["step"])] = r
        return [steps[k] for k in sorted(steps)]

    @property
    def report(self) -> dict[str, Any] | None:
        reps = list(self.of_type("report"))
        return reps[-1] if reps else None

    @property
    def interrupted(self) -> bool:
        """True when the run stopped early and has not finished since."""
        last_report = self.report
        return last_report is None or last_report.get("status") == "interrupted"
