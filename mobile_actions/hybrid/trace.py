"""A run folder: `trace.jsonl` (one JSON record per step, append-only) plus `screens/NNN.png`.

Why append-only JSONL with a flush + fsync per record: a run can die at any moment (a phone unplugged,
Ctrl-C, a crash); every step that finished is on disk before the next one starts, so `replay` can show
it and `resume` can skip it. A half-written last line (the process died mid-write) is ignored by the
reader, never fatal. Screenshots are files next to the trace, referenced by relative path, so the folder
can be moved, zipped or opened in a browser as it is.

Record shape (see docs/hybrid.md): ``{"seq", "t", "type", "key"?, "status"?, ..., "mac"}``. ``type`` is one of
``run`` (header: request, config), ``caller`` (a caller turn), ``intent`` (a call or navigator action about
to act on the phone), ``dispatch`` (one tool call's outcome), ``nav`` (one navigator step), ``nav_end`` (a
navigator task's outcome), ``interrupted``, ``resume``, ``report``. Steps that can be skipped on resume carry
a ``key``; the last record for a key decides whether it is finished (``FINISHED``) or has to run again.
An ``intent`` with no outcome after it is *in doubt*: the phone may or may not have acted (`Trace.in_doubt`).

Why every line carries ``mac`` (an HMAC-SHA256 chained over all lines before it, keyed by the user's run key):
`resume` acts on what a folder says, so it only reads folders this user's own runs wrote (`Trace.read_own`).
`replay` only shows, and reads any folder (`Trace.read`).
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import stat
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
RUN_KEY_ENV = "MOBILE_ACTIONS_RUN_KEY"   # path of the run key file (default: under $XDG_CONFIG_HOME or ~/.config)
MAC_FIELD = "mac"
NOT_OURS = "not resuming (`mobile-actions replay` can still show it)"


# ============================================================================================ the run key
def run_key_path() -> Path:
    if os.environ.get(RUN_KEY_ENV):
        return Path(os.environ[RUN_KEY_ENV])
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "mobile-actions" / "run-key"


def run_key(create: bool = True) -> bytes:
    """This user's secret for signing run folders (32 random bytes, a 0600 file made on first use).

    Why a secret of the user's own: a folder's records decide what `resume` does next; one copied from
    elsewhere or edited must not be able to choose them. A key file others can read is refused, not used."""
    path = run_key_path()
    try:
        if not path.exists() and create:
            _make_key(path)
        if not path.is_file():
            raise TraceError(f"{path}: no run key (set ${RUN_KEY_ENV} to use another file)")
        st = path.stat()
        if st.st_uid != _uid() or st.st_mode & 0o077:
            raise TraceError(f"{path}: the run key must be yours and private (chmod 600 {path})")
        key = path.read_bytes()
    except OSError as e:
        raise TraceError(f"{path}: cannot make or read the run key: {e.strerror} (set ${RUN_KEY_ENV} to use "
                         "another file)") from e
    if len(key) < 32:
        raise TraceError(f"{path}: the run key is damaged ({len(key)} bytes); remove it to make a new one")
    return key


def _make_key(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    with _private(tmp, "wb") as f:
        f.write(secrets.token_bytes(32))
        f.flush()
        os.fsync(f.fileno())
    try:
        os.link(tmp, path)            # never replaces a key another process made meanwhile
    except FileExistsError:
        pass
    finally:
        tmp.unlink()


def _uid() -> int:
    return os.geteuid() if hasattr(os, "geteuid") else -1


def _mac(key: bytes, prev: str, body: str) -> str:
    return hmac.new(key, f"{prev}\n{body}".encode("utf-8"), hashlib.sha256).hexdigest()


def _check_own(path: Path) -> None:
    """A run-folder path resume will act on: yours, not a symlink, and writable by nobody else."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise TraceError(f"{path}: a symbolic link; {NOT_OURS}")
    if st.st_uid != _uid():
        raise TraceError(f"{path}: owned by another user (uid {st.st_uid}); {NOT_OURS}")
    if st.st_mode & 0o022:
        raise TraceError(f"{path}: others can write it (mode {stat.S_IMODE(st.st_mode):o}); {NOT_OURS}")


def verify_records(path: Path, key: bytes) -> tuple[list[dict[str, Any]], str]:
    """The records of a trace whose every line carries the right chained MAC, and the last MAC.

    A line that is not JSON at all is a torn write (the process died mid-line) and is skipped, as the
    reader does; any other line must be signed, else the whole folder is refused (file:line named)."""
    records, prev = [], ""
    for n, raw in enumerate(path.read_bytes().split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8")
            rec = json.loads(text)
        except ValueError:
            continue
        mac = rec.get(MAC_FIELD) if isinstance(rec, dict) else None
        suffix = f', "{MAC_FIELD}": "{mac}"}}'
        if not isinstance(mac, str) or not text.endswith(suffix) or not hmac.compare_digest(
                mac, _mac(key, prev, text[:-len(suffix)] + "}")):
            raise TraceError(f"{path}:{n}: not signed by your run key (made elsewhere, by an older version, or "
                             f"edited); {NOT_OURS}")
        prev = mac
        del rec[MAC_FIELD]
        records.append(rec)
    return records, prev


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
    """Appends signed records to `RUN/trace.jsonl` and screenshots to `RUN/screens/`; safe to reopen (resume),
    but only a trace this user's runs wrote (its chain is checked and continued)."""

    def __init__(self, run_dir: str | Path) -> None:
        self.dir = Path(run_dir)
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        (self.dir / SCREENS_DIR).mkdir(exist_ok=True, mode=0o700)
        self.path = self.dir / TRACE_NAME
        self.key = run_key()
        existing, self.mac = verify_records(self.path, self.key) if self.path.exists() else ([], "")
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
        """Write one record, signed, and wait until it is on disk (fsync): a record that `append` returned
        for survives any crash after it (the write-ahead `intent` records rely on this)."""
        self.seq += 1
        rec = {"seq": self.seq, "t": round(time.time(), 3), **record}
        rec.pop(MAC_FIELD, None)
        body = json.dumps(rec, ensure_ascii=False, default=_jsonable)
        self.mac = _mac(self.key, self.mac, body)
        line = f'{body[:-1]}, "{MAC_FIELD}": "{self.mac}"}}\n'
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
        """Write RUN/name; returns the sha256 of what was written, for a signed record to vouch for it."""
        text = json.dumps(data, ensure_ascii=False, indent=1, default=_jsonable) + "\n"
        with _private(self.dir / name, "w") as f:
            f.write(text)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


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
                rec.pop(MAC_FIELD, None)
                out.append(rec)
    return out


def _trace_path(run_dir: str | Path) -> Path:
    d = Path(run_dir)
    path = d / TRACE_NAME if d.is_dir() else d
    if not path.is_file():
        raise TraceError(f"{run_dir}: no {TRACE_NAME} (not a run folder)")
    return path


@dataclass
class Trace:
    """A run folder read back: records in order, with lookups used by replay and resume."""

    dir: Path
    records: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def read(cls, run_dir: str | Path) -> "Trace":
        """Any run folder, for display: nothing read here is acted on."""
        path = _trace_path(run_dir)
        return cls(path.parent, read_records(path))._checked(path)

    @classmethod
    def read_own(cls, run_dir: str | Path) -> "Trace":
        """A run folder this user's runs made, for `resume` to act on: the folder and its trace yours and
        writable by nobody else, every record signed by your run key; anything else is refused."""
        trace = _trace_path(run_dir)
        folder = trace.parent.resolve()
        path = folder / trace.name
        _check_own(folder)
        _check_own(path)
        return cls(folder, verify_records(path, run_key(create=False))[0])._checked(path)

    def _checked(self, path: Path) -> "Trace":
        if not self.records or self.records[0].get("type") != "run":
            raise TraceError(f"{path}: no run header (first record must have type 'run')")
        return self

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

    def in_doubt(self, key: str) -> dict[str, Any] | None:
        """The `intent` record of a step that set out to act on the phone and has no outcome after it (the
        run stopped while the phone acted): it may or may not have happened. None otherwise."""
        found = None
        for r in self.records:
            if r.get("key") == key:
                if r.get("type") == "intent":
                    found = r
                elif r.get("status") in FINISHED:
                    found = None
        return found

    def saved_phone_state(self) -> dict[str, Any] | None:
        """RUN/phone_state.json (the virtual phone's state at the last stop), only as the run's last report
        recorded it (its sha256); None when there is none. A file changed since is refused."""
        path = self.dir / "phone_state.json"
        if not path.is_file():
            return None
        data = path.read_bytes()
        want = (self.report or {}).get("phone_state_sha256")
        if want != hashlib.sha256(data).hexdigest():
            raise TraceError(f"{path}: not the phone state this run recorded; {NOT_OURS}")
        return json.loads(data)

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
