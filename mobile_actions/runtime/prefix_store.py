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


def _array_header(f) -> tuple[tuple[int, ...], np.dtype]:
    """The shape and dtype of the .npy file `f` is at the start of, leaving `f` at its data (ValueError: not
    a C-ordered .npy array). Read without pickle: the header is a literal."""
    fmt = np.lib.format
    read = {(1, 0): fmt.read_array_header_1_0, (2, 0): fmt.read_array_header_2_0}.get(fmt.read_magic(f))
    if read is None:
        raise ValueError("not an .npy file of version 1 or 2")
    shape, fortran, dtype = read(f)
    if fortran or dtype.hasobject:
        raise ValueError("not a C-ordered array of numbers")
    return tuple(shape), dtype


def default_prefix_dir() -> Path | None:
    """`$MOBILE_ACTIONS_PREFIX_CACHE` ("off": none), else `<cache>/prefix-kv` beside the prepared exports."""
    from mobile_actions.caller.model import cache_folder  # torch-free

    return cache_folder(ENV, "prefix-kv")


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

    def read_into(self, key: str, shape: tuple[int, ...], buffers: Sequence[np.ndarray],
                  starts: Sequence[int]) -> bool:
        """Copy the stored array for `key`, which must have exactly `shape` ([buffers, kv_heads, positions,
        head_dim], float32), into the KV `buffers` ([1, kv_heads, capacity, head_dim]): buffer i's positions
        from `starts[i]` on (what later tokens attend to). False when there is none; a bad file is removed.

        With `readinto`, not through a memory map: the kernel copies each run of positions straight into the
        buffer's pages; mapped and copied, the 74 MB a 100-tool catalogue needs took 25 to 200 ms by the page
        faults of the two mappings."""
        path = self.path(key)
        try:
            with open(path, "rb", buffering=0) as f:
                stored = _array_header(f)
                if stored != (tuple(shape), np.dtype(np.float32)):
                    raise ValueError(f"{stored} is not {shape} float32")
                _, n_heads, n, width = shape
                head = f.tell()
                row = width * np.dtype(np.float32).itemsize
                for i, (dst, start) in enumerate(zip(buffers, starts)):
                    for h in range(n_heads):
                        view = memoryview(dst[0, h, start:n]).cast("B")
                        f.seek(head + ((i * n_heads + h) * n + start) * row)
                        if f.readinto(view) != len(view):
                            raise ValueError("the file is shorter than its header says")
        except (ValueError, EOFError):      # not an array file of ours (damaged, cut short, another shape)
            self._remove(path)
            return False
        except OSError:                     # absent, or the folder cannot be read
            return False
        try:
            os.utime(path)      # recently used: evicted last
        except OSError:
            pass
        return True

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
