"""Prompt prefixes' keys and values on disk, so a new process pays no prefill for a catalogue it has seen.

A caller's prompt starts with the instruction and the tool declarations (the ``cache`` layouts): the same
tokens for every request to one catalogue, hundreds to thousands of them. `Caller.warm` fills them once per
process; this store keeps the result per exact prefix, so an app's first request after start (or a one-shot
`mobile-actions call`) reads ~37 KB per position from disk instead of running the model over them.

A stored prefix is valid for one export and one fill graph only: its key hashes the export's manifest (which
changes with every re-export, adapter or quantisation), the graph the keys came from, the array layout and the
token ids. Files are plain ``.npy`` arrays read without pickle; one that does not have the expected shape is
removed and filled again, never trusted. The store holds at most `max_bytes`; the least recently used
prefixes go first. Writes are atomic (a temporary file renamed), so concurrent processes never read half a file.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

ENV = "MOBILE_ACTIONS_PREFIX_CACHE"       # a folder, or "off"
MAX_BYTES = 2 << 30
SUFFIX = ".kv.npy"


def default_prefix_dir() -> Path | None:
    """`$MOBILE_ACTIONS_PREFIX_CACHE` ("off": none), else `<cache>/prefix-kv` beside the prepared exports."""
    env = os.environ.get(ENV)
    if env is not None:
        return None if env.strip().lower() in ("", "off", "none", "0") else Path(env).expanduser()
    from mobile_actions.caller.model import cache_dir  # torch-free

    return cache_dir(None) / "prefix-kv"


@dataclass
class PrefixStore:
    root: Path
    max_bytes: int = MAX_BYTES

    @staticmethod
    def key(export_id: str, graph: str, shape: Sequence[int], ids: Sequence[int]) -> str:
        h = hashlib.sha256()
        h.update(f"{export_id}\0{graph}\0{tuple(shape)}\0".encode())
        h.update(np.asarray(ids, dtype=np.int64).tobytes())
        return h.hexdigest()

    def path(self, key: str) -> Path:
        return self.root / (key + SUFFIX)

    def load(self, key: str, shape: tuple[int, ...]) -> np.ndarray | None:
        """The stored array for `key` if it has exactly `shape` (float32), else None (a bad file is removed)."""
        path = self.path(key)
        try:
            arr = np.load(path, mmap_mode="r", allow_pickle=False)
        except (ValueError, EOFError):      # not an array file (damaged, or not ours)
            self._remove(path)
            return None
        except OSError:                     # absent, or the folder cannot be read
            return None
        if arr.shape != shape or arr.dtype != np.float32:
            del arr
            self._remove(path)
            return None
        try:
            os.utime(path)      # recently used: evicted last
        except OSError:
            pass
        return arr

    @staticmethod
    def _remove(path: Path) -> None:
        try:
            path.unlink(missing_ok=True)
        except OSError:
            pass

    def save(self, key: str, arrays: Sequence[np.ndarray]) -> Path | None:
        """Store `arrays` (one per KV buffer, equal shapes) stacked under `key`; None when the folder cannot
        be written (a read-only or full disk costs the next process a prefill, nothing else)."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".partial-", suffix=SUFFIX, dir=self.root)
            try:
                with os.fdopen(fd, "wb") as f:
                    np.save(f, np.stack(arrays), allow_pickle=False)
                os.replace(tmp, self.path(key))
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
        except OSError:
            return None
        self.evict()
        return self.path(key)

    def evict(self) -> None:
        """Remove the least recently used prefixes until the store holds at most `max_bytes`."""
        try:
            files = [(p.stat().st_mtime, p.stat().st_size, p) for p in self.root.glob("*" + SUFFIX)]
        except OSError:
            return
        total = sum(size for _, size, _ in files)
        for _, size, p in sorted(files):
            if total <= self.max_bytes:
                break
            self._remove(p)
            total -= size
