"""onnxruntime sessions' optimised graphs, with their weights already packed for this CPU, kept on disk.

Creating a session of the caller's decode graph runs onnxruntime's graph optimisers and repacks every 8-bit
weight into the layout of the CPU's kernels: ~0.5 s of a one-shot `call` on a 2-core AVX2 EPYC, and while it
runs the process holds both the file's weights and the packed copies. onnxruntime can write what it made
(`optimized_model_filepath` with prepacked initializers saved beside it) and load that with its optimisers
off: the packed weights are then mapped from the file. Measured on that CPU: a session in 0.31 s instead of
0.48 s, the logits bit for bit the same (a stored prompt prefix stays valid), and a lower peak.

The packed layout depends on the CPU's instruction set and on onnxruntime's version, and the graph on the
export; an entry's key hashes all three (the source graph and its data by path, size and modification time, so a
re-export gets a new entry), and writing one removes the older entries of the same graph. Writes are atomic (a
temporary folder renamed), so a concurrent process never loads half an entry; one that fails to load is
removed and the session made from the source graph, as when no entry exists. A new entry is used only once a
session loaded from it has given the source session's outputs bit for bit (`check`; the caller runs the probe).
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from mobile_actions.runtime.cpu import cpu_signature

if TYPE_CHECKING:
    import onnxruntime as ort

ENV = "MOBILE_ACTIONS_SESSION_CACHE"    # a folder, or "off"
GRAPH, SOURCE = "graph.onnx", "source"
UNCHECKED, REFUSED = ".unchecked", ".refused"   # an entry written, not yet checked; a graph whose entry failed
# graphs kept at once, ~450 MB each for the 270M caller: the two callers' and the navigator's decode graphs, the
# prefill graph a long catalogue's first fill loads, and room for an export of the user's own
MAX_ENTRIES = 6


def default_session_dir() -> Path | None:
    """`$MOBILE_ACTIONS_SESSION_CACHE` ("off": none), else `<cache>/sessions` beside the prepared exports."""
    from mobile_actions.caller.model import cache_folder  # torch-free

    return cache_folder(ENV, "sessions")


@dataclass
class StoredSession:
    """A session, the external-data file its weights are mapped from (see `MappedWeights`), and the entry it
    wrote when it was made from the source graph (None: loaded from the store, or nothing written), which
    the caller checks (`SessionStore.check`) before any process loads it."""
    session: "ort.InferenceSession"
    data: Path
    written: Path | None = None


@dataclass(frozen=True)
class SessionStore:
    root: Path

    @staticmethod
    def source(graph: Path) -> str:
        """Which files an entry is made from: the graph's and its external data's real paths."""
        return "\n".join(str(p.resolve()) for p in (graph, graph.with_name(graph.name + ".data")))

    @classmethod
    def key(cls, graph: Path) -> str:
        import onnxruntime as ort

        h = hashlib.sha256(cls.source(graph).encode())
        for path in (graph, graph.with_name(graph.name + ".data")):
            try:
                st = path.stat()
            except OSError:
                continue
            h.update(f"|{st.st_size}|{st.st_mtime_ns}".encode())
        h.update(f"\nonnxruntime {ort.__version__}\n{cpu_signature()}".encode())
        return h.hexdigest()[:32]

    def session(self, graph: Path, make_options: Callable[[], "ort.SessionOptions"]) -> StoredSession:
        """A session of `graph` with the options `make_options` makes (optimisation level ENABLE_ALL): loaded
        from this store's entry when there is one, else made from `graph` while an entry is written (unless an
        earlier check refused this graph's entry on this CPU)."""
        graph = Path(graph)
        data = graph.with_name(graph.name + ".data")
        entry = self.root / self.key(graph)
        if entry.with_suffix(REFUSED).exists():
            return StoredSession(_create(graph, make_options()), data)
        if (entry / GRAPH).is_file():
            try:
                return StoredSession(self.load(entry, make_options), entry / (GRAPH + ".data"))
            except Exception:      # onnxruntime's own errors (a truncated or foreign file): write it again
                shutil.rmtree(entry, ignore_errors=True)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=self.root))
        except OSError:
            return StoredSession(_create(graph, make_options()), data)
        options = make_options()
        options.optimized_model_filepath = str(tmp / GRAPH)
        for key, value in (("session.save_external_prepacked_constant_initializers", "1"),
                           ("session.optimized_model_external_initializers_file_name", GRAPH + ".data"),
                           ("session.optimized_model_external_initializers_min_size_in_bytes", "1024")):
            options.add_session_config_entry(key, value)
        try:
            session = _create(graph, options)
        except Exception:          # the entry could not be written (a full disk ...): a session without it
            shutil.rmtree(tmp, ignore_errors=True)
            return StoredSession(_create(graph, make_options()), data)
        try:
            (tmp / SOURCE).write_text(self.source(graph), encoding="utf-8")
            self._make_room(graph)
            os.rename(tmp, entry.with_suffix(UNCHECKED))
        except OSError:            # another process wrote the entry first, or the disk is full: not kept
            shutil.rmtree(tmp, ignore_errors=True)
            return StoredSession(session, data)
        return StoredSession(session, data, entry.with_suffix(UNCHECKED))

    @staticmethod
    def load(entry: Path, make_options: Callable[[], "ort.SessionOptions"]) -> "ort.InferenceSession":
        import onnxruntime as ort

        options = make_options()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        return _create(entry / GRAPH, options)

    def check(self, written: Path, make_options: Callable[[], "ort.SessionOptions"],
              same: Callable[["ort.InferenceSession"], bool]) -> "ort.InferenceSession | None":
        """A session loaded from the entry `session` wrote, kept (and the entry with it) if it gives what
        `same` expects: the source session's outputs, bit for bit. Else None, and the entry is refused for this
        graph on this CPU: onnxruntime 1.31 wrote packed weights that read back as NaN for a test model's 16-
        and 64-wide projections, and a caller's keys must not depend on whether its session came from here."""
        entry = written.with_suffix("")
        try:
            session = self.load(written, make_options)
            ok = same(session)
        except Exception:          # (onnxruntime's errors: it could not load what it wrote)
            session, ok = None, False
        try:
            if ok:
                os.rename(written, entry)   # (the session's mappings follow the folder)
            else:
                shutil.rmtree(written, ignore_errors=True)
                entry.with_suffix(REFUSED).touch()
        except OSError:
            shutil.rmtree(written, ignore_errors=True)
        return session if ok else None

    def _make_room(self, graph: Path) -> None:
        """Remove the entries of an older export (or CPU) of `graph`, and the oldest beyond `MAX_ENTRIES`."""
        source = self.source(graph)
        entries = [p for p in self.root.iterdir() if p.is_dir() and not p.name.startswith(".tmp-")]
        keep = []
        for p in entries:
            try:
                same = (p / SOURCE).read_text(encoding="utf-8") == source
            except OSError:
                same = False
            if same:
                shutil.rmtree(p, ignore_errors=True)
            else:
                keep.append(p)
        keep.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        for p in keep[MAX_ENTRIES - 1:]:
            shutil.rmtree(p, ignore_errors=True)


def _create(graph: Path, options):
    import onnxruntime as ort

    return ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
