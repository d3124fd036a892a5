"""The on-device caller: an exported ONNX decoder run by onnxruntime, without torch.

Imports onnxruntime, sentencepiece and numpy only (tokenizers to build the piece model once; plus the
project's core modules), so a phone-side or CLI process starts fast and small; `tests/test_runtime.py` proves
torch is never imported.

- `Decoder`: one ONNX session (I/O names: onnxruntime-genai's, see recipes/export_onnx.py) over a
  `KVCache` it advances in place; greedy steps, prefill of any chunk on top of a given cache.
- `Caller`: renders the Mobile Actions developer turn for `now` in the layout the model was trained
  with (its folder's manifest says which), reuses the KV cache of the longest cached prompt prefix
  (in the ``cache`` and ``calendar`` layouts: instruction + tool declarations, so a request pays prefill
  only for its datetime lines, the calendar table if any, and its own words), decodes greedily under
  the call grammar (mobile_actions.decoding.grammar) with forced tokens appended without a model step, parses (wire.parse) and validates
  (calls.validate_call).
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from mobile_actions import wire
from mobile_actions.acting import Refusal, gate_messages, left_out
from mobile_actions.calls import Problem, ToolCall, turn_calls, validate_call
from mobile_actions.catalog import Catalogue, load_catalogue
from mobile_actions.errors import ExportFormatError, PromptTooLongError
from mobile_actions.runtime.session_store import GRAPH, SessionStore, StoredSession, default_session_dir

DEFAULT_THREADS = 2
FILL_CHUNK = 256          # positions per run when a prompt prefix is filled (`Decoder.fill`): bounds a run's buffers
# Prefixes this long are filled on the prefill graph (when the export has one): loading it costs ~0.3 s, which
# its ~2x faster runs repay from ~900 positions on (measured on 2 cores; `bench caller` prints the rates)
PREFILL_GRAPH_MIN = 1024
TABLE_BYTES = 8 << 20     # mapped weights this large are dropped after every step (`MappedWeights`)
PROBE_TOKENS = 40         # a run that checks a session written to the session store (`Decoder._checked`)
# The export's I/O names (onnxruntime-genai's); folders exported before (manifest format 1, `past_key_i`)
# are refused with a message to re-export.
PAST_NAME = "past_key_values.{i}.{kv}"
SPARSE_INPUT, SPARSE_MAX_ROWS = "head_ids", 512
# Where the sliding-window layers' buffers start in a run (recipes/export_onnx.add_window_start): exports without
# it still run, their local layers computing every masked key.
WINDOW_INPUT = "window_start"
# 3: GroupQueryAttention writing into preallocated past/present buffers (2: the graph concatenated past and
# new KV every step; 1: `past_key_i` names). Older folders are refused with a message to re-export.
FORMAT_VERSION = 3
CACHE_ROOM = 160          # positions a new cache holds beyond its prompt (max new tokens + forced runs)
# Positions a stable prefix's cache holds beyond the prefix, for the request after it (datetime lines, the
# person's words: ~60-280 tokens) and its answer: the first request continues in that cache instead of
# growing it (a copy of the whole prefix into a buffer twice its size: ~1 s of a 100-tool first request).
# Unwritten positions cost no memory (zeroed pages are mapped on first write).
REQUEST_ROOM = 512
# Positions (prompt and answer) a KV cache may hold, whatever the model's context: ~37 KB each for the 270M
# caller (605 MB at the cap). Mobile Actions prompts are ~600 tokens; a 100-tool catalogue's are ~11,000.
MAX_POSITIONS = 16384
GENAI_CONFIG = "genai_config.json"
REEXPORT = ("re-export it: `mobile-actions model prepare --force` (the default caller's export) or "
            "`mobile-actions export --model SPEC --out DIR`")


# ============================================================================================ decoder
@dataclass
class KVCache:
    """The decoder's keys and values: one preallocated buffer per layer and kind (k0, v0, k1, v1, ...;
    each [1, kv_heads, capacity, head_dim]), of which positions [0, length) are filled.

    The export's GroupQueryAttention gets the same buffer as past and present and writes a run's keys and
    values after `length` in place, so a decode step copies nothing (the graph used to concatenate the
    whole cache into a new present every step: ~3.5 ms of a ~27 ms step at 600 tokens). A cache is
    advanced by `Decoder.forward`; `prefix` copies the first positions out (prefix reuse), `reserve` grows
    it when a run would pass its capacity."""

    buffers: list[np.ndarray]
    length: int = 0
    # A prefix read from the store fills a sliding-window layer's last window of positions only (`Decoder.
    # first_attended`; the rest stay zero and untouched, so unresident): positions before `windowed` are not all
    # there, and the cache is continued at `windowed` or beyond, never cut shorter.
    windowed: int = 0
    # (session, IOBinding with the buffers bound as past and present, the window start the local layers' buffers
    # are bound from): a run binds the 36 buffers once per cache and graph (decode or prefill), not every step,
    # and the local layers' again when their window moves on; replaced buffers (`reserve`) drop it
    binding: tuple | None = field(default=None, repr=False, compare=False)

    @classmethod
    def empty(cls, n_buffers: int, n_kv: int, head_dim: int, capacity: int) -> "KVCache":
        return cls([np.zeros((1, n_kv, capacity, head_dim), dtype=np.float32) for _ in range(n_buffers)])

    @property
    def capacity(self) -> int:
        return self.buffers[0].shape[2]

    def reserve(self, n: int) -> None:
        """Room for `n` positions in all (the filled ones kept); grows by at least doubling."""
        if n <= self.capacity:
            return
        grown = self.prefix(self.length, room=max(n, 2 * self.capacity) - self.length)
        self.buffers, self.binding = grown.buffers, None

    def bind(self, session, past_names: Sequence[str], present_names: Sequence[str],
             local: Sequence[bool] = (), start: int = 0):
        """`session`'s IOBinding with these buffers as its past and present (made once per session); the
        buffers flagged `local` bound from position `start` on (their first `start` positions out of sight).
        A buffer is [1, kv_heads, capacity, head_dim], so with one KV head a position's row is contiguous and
        a later start is a pointer into the same memory."""
        if start and self.buffers[0].shape[1] != 1:
            raise ValueError("a window start needs one KV head: with more, a later position is no single pointer")
        fresh = self.binding is None or self.binding[0] is not session
        if fresh or self.binding[2] != start:
            io = session.io_binding() if fresh else self.binding[1]
            for j, (past, present, buf) in enumerate(zip(past_names, present_names, self.buffers)):
                moved = j < len(local) and local[j]
                if not (fresh or moved):
                    continue
                skip = start if moved else 0
                shape = [1, buf.shape[1], buf.shape[2] - skip, buf.shape[3]]
                at = buf.ctypes.data + skip * buf.strides[2]
                io.bind_input(past, "cpu", 0, np.float32, shape, at)
                io.bind_output(present, "cpu", 0, np.float32, shape, at)
            self.binding = (session, io, start)
        return self.binding[1]

    def _check_cut(self, n: int) -> None:
        if n > self.length:
            raise ValueError(f"the cache holds {self.length} positions, not {n}")
        if n < self.windowed:
            raise ValueError(f"the cache's sliding-window layers hold only the last positions before {self.windowed}")

    def truncate(self, n: int) -> None:
        """Keep the first `n` positions (the rest are written over by the next run)."""
        self._check_cut(n)
        self.length = n

    def prefix(self, n: int, room: int = CACHE_ROOM) -> "KVCache":
        """A new cache holding a copy of the first `n` positions, with room for `room` more."""
        self._check_cut(n)
        out = KVCache([np.zeros(b.shape[:2] + (n + room,) + b.shape[3:], dtype=b.dtype) for b in self.buffers], n,
                      windowed=self.windowed)
        for dst, src in zip(out.buffers, self.buffers):
            dst[:, :, :n] = src[:, :, :n]
        return out


def layer_windows(manifest: dict, n_layers: int) -> list[int | None]:
    """Each layer's sliding window from an export's manifest (None: the layer attends to the whole past)."""
    window = manifest.get("sliding_window")
    return [window if window and kind == "sliding_attention" else None
            for kind in manifest.get("layer_types", [None] * n_layers)]


class Decoder:
    """An exported model folder's ONNX session, run over a `KVCache` it advances in place."""

    def __init__(self, folder: str | Path, threads: int = DEFAULT_THREADS, spin: bool | None = None,
                 prefill_graph: bool = True, keep_prefill: bool = False, session_dir: str | Path | None = "default",
                 integer_decode: bool | None = None):
        """`spin`: ORT's worker threads busy-wait between the ops of a run and stop when the run ends
        (`session.force_spinning_stop`), so they never spin while the grammar works or between requests.
        None: `spin_by_default` decides from the machine's load. `prefill_graph`: `fill` runs on the export's
        prefill graph when it has one (False: on the decode graph, as exports without one do). `keep_prefill`:
        keep that graph's session loaded between fills (~100 MB; a benchmark of its rate wants it).
        `session_dir`: where the graphs' optimised, prepacked sessions are kept across processes
        (`runtime.session_store`; "default": `$MOBILE_ACTIONS_SESSION_CACHE` or the cache folder; None: not kept).
        `integer_decode`: run on the export's integer decode graph (recipes/export_prefill.py) when it has one,
        which runs a request's tokens ~2x faster on CPUs without an 8-bit dot product; None: as
        `$MOBILE_ACTIONS_INTEGER_DECODE` says (`use_integer_decode`)."""
        root = default_session_dir() if str(session_dir) == "default" else session_dir
        self.sessions = SessionStore(Path(root)) if root is not None else None
        self.folder = Path(folder)
        self.manifest = read_manifest(self.folder)
        self.spin = spin_by_default(threads) if spin is None else spin
        self.threads = threads
        m = self.manifest
        integer = (m.get("integer_decode_graph") or {}).get("onnx")
        self.integer_decode = bool(integer) and (use_integer_decode() if integer_decode is None else integer_decode)
        onnx_path = self.folder / (integer if self.integer_decode else m.get("onnx", "model.onnx"))
        # (the planner's search for buffers to share took 3 s of the integer graph's 3,065 nodes: see `_options`)
        plan_reuse = not self.integer_decode
        stored = self._session(onnx_path, plan_reuse)
        self.n_layers, self.n_kv, self.head_dim = m["num_layers"], m["num_kv_heads"], m["head_dim"]
        self.vocab_size = int(m["vocab_size"])
        # the graph's GroupQueryAttention masks keys with query - key >= window on these layers (Gemma 3's mask)
        self.windows = layer_windows(m, self.n_layers)
        self.past_names = [PAST_NAME.format(i=i, kv=kv) for i in range(self.n_layers) for kv in ("key", "value")]
        self.local_buffers = [w is not None for w in self.windows for _ in ("key", "value")]
        self.present_names = [n.replace("past_key_values.", "present.") for n in self.past_names]
        names = {i.name for i in stored.session.get_inputs()}
        if "past_key_0" in names or not set(self.past_names) <= names:
            raise ExportFormatError(f"{self.folder}: the ONNX graph has the old input names (past_key_i); {REEXPORT}")
        # The sparse head (recipes/export_onnx.add_sparse_head): logits for given vocabulary rows only (no
        # rows: the full head).
        self.sparse_head = SPARSE_INPUT in names
        # the local layers' buffers bound from their window (one KV head: a later position is a pointer into the
        # same buffer); the prefill graph, derived from this one, has the input when it has
        self.window_input = WINDOW_INPUT in names and self.n_kv == 1 and any(self.windows)
        self.local_window = next((w for w in self.windows if w), None) if self.window_input else None
        self.max_sparse_rows = int((m.get("sparse_head") or {}).get("max_rows", SPARSE_MAX_ROWS))
        self.steps = 0  # model invocations, for statistics
        info = m.get("prefill_graph") or {}
        self.prefill_path = (self.folder / info["onnx"]) if prefill_graph and info.get("onnx") else None
        self.keep_prefill = keep_prefill
        self._prefill_session = None
        stored = self._checked(stored, onnx_path, plan_reuse=plan_reuse, logits=True)
        self.session = stored.session
        # after a load from the source graph its weights are read no more (they were packed into copies) but
        # for the table's rows (in the decode graph's file, which the integer graph points at); from a stored
        # session the packed weights are mapped from the file: the table only
        source = stored.data == onnx_path.with_name(onnx_path.name + ".data")
        decode_data = self.folder / (m.get("onnx", "model.onnx") + ".data")
        self.weights = MappedWeights(stored.data, *([decode_data] if source else []))
        self.weights.evict(0 if source else TABLE_BYTES)

    def _session(self, path: Path, plan_reuse: bool = True) -> StoredSession:
        """The session of graph `path`, from the session store when there is one."""
        import onnxruntime as ort

        make = functools.partial(self._options, plan_reuse)
        if self.sessions is not None:
            return self.sessions.session(path, make)
        return StoredSession(ort.InferenceSession(str(path), make(), providers=["CPUExecutionProvider"]),
                             path.with_name(path.name + ".data"))

    def _checked(self, stored: StoredSession, path: Path, plan_reuse: bool, logits: bool) -> StoredSession:
        """The session to run graph `path` with: a store entry `stored` wrote is kept, and its session used,
        only if it computes what the source graph's does (`SessionStore.check`). The source session goes
        first, so the two never add up in the process's peak."""
        if stored.written is None or self.sessions is None:
            return stored
        expected = self._probe(stored.session, logits)
        stored.session = None
        release_free_memory()
        make = functools.partial(self._options, plan_reuse)
        session = self.sessions.check(stored.written, make,
                                      lambda s: all(np.array_equal(a, b) for a, b in zip(self._probe(s, logits), expected)))
        if session is not None:
            return StoredSession(session, stored.written.with_suffix("") / (GRAPH + ".data"))
        return self._session(path, plan_reuse)   # (refused now: from the source graph)

    def _probe(self, session, logits: bool) -> list[np.ndarray]:
        """The keys, values (and with `logits`, the full head's logits) of a run of `PROBE_TOKENS` and a step
        after it: both the many-row and the one-row kernels."""
        ids = [2 + (7 * i) % (self.vocab_size - 2) for i in range(PROBE_TOKENS + 1)]
        cache = self.new_cache(len(ids))
        if not logits:
            self._run(session, ids, cache, {})
            return [b[:, :, :len(ids)].copy() for b in cache.buffers]
        rows = (lambda n: {SPARSE_INPUT: np.zeros(n, np.int64)}) if self.sparse_head else (lambda n: {})  # noqa: E731
        first = np.empty((1, 1, 1 if self.sparse_head else self.vocab_size), np.float32)
        self._run(session, ids[:-1], cache, rows(1), first)
        last = np.empty((1, 1, self.vocab_size), np.float32)
        self._run(session, ids[-1:], cache, rows(0), last)
        return [b[:, :, :len(ids)].copy() for b in cache.buffers] + [first, last]

    def _options(self, plan_reuse: bool):
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = self.threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.add_session_config_entry("session.intra_op.allow_spinning", "1" if self.spin else "0")
        opts.add_session_config_entry("session.force_spinning_stop", "1")
        opts.log_severity_level = 3  # errors only: load-time notices (e.g. unused initializers) are not the user's
        # `plan_reuse=False`: onnxruntime's planner does not search for buffers to share, a search that grows
        # faster than the graph (the prefill graph's 3,500 nodes: 1.5 of its 1.9 s to create on an AVX2 EPYC,
        # 0.4 s without; its arena still hands a freed buffer to the next tensor, and the peak was no higher).
        # The decode graph keeps it: 0.1 s to create, and its 16-token runs were 4 % faster with it.
        opts.enable_mem_reuse = plan_reuse
        return opts

    def fill_graph(self, n: int) -> str:
        """Which graph `fill` runs `n` positions on ("prefill" or "decode"): part of what a stored prefix's
        keys depend on. A function of the prefix alone, so one prompt always gets the same keys."""
        if self.prefill_path is not None and n >= PREFILL_GRAPH_MIN:
            return "prefill"
        return "decode-int" if self.integer_decode else "decode"

    def fill(self, ids: Sequence[int], cache: KVCache) -> KVCache:
        """Write the keys and values of `ids` into `cache` (advanced in place), computing no logits: a prompt
        prefix that is cached for later requests. On the prefill graph when the export has one and the
        prefix is long (`PREFILL_GRAPH_MIN`; recipes/export_prefill.py says why it is faster), loaded for this
        call and released after it, so a process that reuses a stored prefix never holds its ~100 MB of packed
        weights; in runs of `FILL_CHUNK` positions. A prefix is always filled this way (stored or not), so its keys never depend on
        whether it came from memory, disk or this call."""
        if self.fill_graph(len(ids)) != "prefill":
            for i in range(0, len(ids), FILL_CHUNK):
                # one head row: the logits are not read, and the full head would cost a ~6 ms step each run
                self.forward(ids[i:i + FILL_CHUNK], cache, np.zeros(1, np.int64) if self.sparse_head else None)
            return cache
        session = self._prefill_session
        if session is None:
            session = self._checked(self._session(self.prefill_path, plan_reuse=False), self.prefill_path,
                                    plan_reuse=False, logits=False).session
        try:
            for i in range(0, len(ids), FILL_CHUNK):
                self._run(session, ids[i:i + FILL_CHUNK], cache, {})
        finally:
            cache.binding = None
            if self.keep_prefill:
                self._prefill_session = session
            else:
                del session
                release_free_memory()
        return cache

    @classmethod
    def from_folder(cls, folder: str | Path, threads: int = DEFAULT_THREADS, spin: bool | None = None) -> "Decoder":
        return cls(folder, threads, spin)

    def first_attended(self, layer: int, n: int) -> int:
        """The first of `n` positions that a token after them attends to on `layer`: the window's on a
        sliding-window layer, else the first."""
        window = self.windows[layer]
        return max(0, n - window) if window else 0

    def window_start(self, p: int) -> int:
        """Where the local layers' buffers are bound from in a run after `p` positions (graphs with
        `WINDOW_INPUT`; else 0): at most a window behind the run's first query, which attends to no key
        before it, moved on in half windows so that the binding changes every few hundred steps."""
        if not self.local_window:
            return 0
        start = max(0, p - self.local_window)
        return start - start % max(1, self.local_window // 2)

    def new_cache(self, capacity: int) -> KVCache:
        return KVCache.empty(2 * self.n_layers, self.n_kv, self.head_dim, capacity)

    def forward(self, ids: Sequence[int], cache: KVCache | None = None,
                rows: np.ndarray | None = None) -> tuple[np.ndarray, KVCache]:
        """Run `ids` on top of `cache`, which is advanced in place (a new one when None): (logits of the
        last position, the cache). The logits are the full vocabulary's, or with `rows` (and a graph with
        the sparse head) those rows' only, in that order."""
        cache = cache if cache is not None else self.new_cache(len(ids) + CACHE_ROOM)
        if rows is not None and not self.sparse_head:
            raise ValueError(f"{self.folder}: this export has no sparse head (re-export for `{SPARSE_INPUT}`)")
        extra = {SPARSE_INPUT: np.asarray(rows if rows is not None else (), dtype=np.int64)} if self.sparse_head else {}
        logits = np.empty((1, 1, len(rows) if rows is not None else self.vocab_size), dtype=np.float32)
        self._run(self.session, ids, cache, extra, logits)
        self.weights.release(TABLE_BYTES)   # the table rows this step read (MappedWeights says why)
        return logits[0, -1], cache

    def _run(self, session, ids: Sequence[int], cache: KVCache, extra: dict, logits: np.ndarray | None = None) -> None:
        """One run of `session` (the decode or the prefill graph) over `ids` after the cache's positions, its
        keys and values written into the cache in place; the last position's logits into `logits` if given."""
        p, s = cache.length, len(ids)
        cache.reserve(p + s)
        start = self.window_start(p)
        io = cache.bind(session, self.past_names, self.present_names, self.local_buffers, start)
        # (the arrays stay referenced here until the run: a binding points at their memory)
        feeds = {"input_ids": np.asarray(ids, dtype=np.int64)[None],
                 "attention_mask": np.ones((1, p + s), dtype=np.int64),
                 "position_ids": np.arange(p, p + s, dtype=np.int64)[None], **extra}
        if self.window_input:
            feeds[WINDOW_INPUT] = np.array(start, dtype=np.int32)
        for name, arr in feeds.items():
            io.bind_cpu_input(name, arr)
        if logits is not None:
            io.bind_output("logits", "cpu", 0, np.float32, list(logits.shape), logits.ctypes.data)
        session.run_with_iobinding(io)
        cache.length = p + s
        self.steps += 1

    def greedy(self, ids: Sequence[int], n: int, stop: Sequence[int] = ()) -> list[int]:
        """Plain greedy decoding (the export's self-check)."""
        logits, cache = self.forward(ids)
        out: list[int] = []
        for _ in range(n):
            nxt = int(np.argmax(logits))
            out.append(nxt)
            if nxt in stop:
                break
            logits, cache = self.forward([nxt], cache)
        return out


INTEGER_ENV = "MOBILE_ACTIONS_INTEGER_DECODE"   # on | auto (on CPUs without an 8-bit dot product) | off (default)


def use_integer_decode() -> bool:
    """Whether `$MOBILE_ACTIONS_INTEGER_DECODE` asks for the integer decode graph: "on", or "auto" on a CPU
    without an 8-bit dot product. Off by default: on the acting benchmark's two newest pairs it decoded 30 of
    480 requests differently, 1 point less exact in all (docs/runtime.md), for ~0.2 s a request."""
    env = os.environ.get(INTEGER_ENV, "").strip().lower()
    if env == "auto":
        from mobile_actions.runtime.cpu import slow_int8_matmul

        return slow_int8_matmul()
    return env in ("on", "1", "yes")


def spin_by_default(threads: int, since: "CpuTimes | None" = None) -> bool:
    """Spin (see `Decoder`) unless the other cores are busy. A decode step is ~600 small ops, and waking a
    sleeping worker for each cost a third of the step here (2 threads, 573-token prompt: 12.0 -> 8.1 ms
    per sparse step, 18.6 -> 14.6 per full-head step); but with another job on both cores, spinning
    threads steal the CPU the next op needs (15.7 -> 31.6 ms). What other processes use now (`busy_cores`,
    since `since` when given, else over a tenth of a second from now) tells the two apart; the 1-minute load
    average did not: it still counts a job that ended seconds ago (a benchmark's previous engine), and this
    process's own model load. Without /proc: spin."""

    busy = busy_cores(since=since)
    return busy is None or busy < (os.cpu_count() or threads) - threads + 0.5


@dataclass(frozen=True)
class CpuTimes:
    """The machine's busy and total CPU ticks and this process's own CPU seconds at one instant."""
    busy: int
    total: int
    own: float
    at: float

    @classmethod
    def now(cls) -> "CpuTimes | None":
        """None where there is no /proc/stat."""
        try:
            with open("/proc/stat", encoding="ascii") as f:
                fields = [int(v) for v in f.readline().split()[1:8]]
        except (OSError, ValueError):
            return None
        if len(fields) < 5:
            return None
        idle = fields[3] + fields[4]                    # idle + iowait, in clock ticks
        return cls(sum(fields) - idle, sum(fields), time.process_time(), time.perf_counter())


# When this module was imported: a process that loads a caller soon after (a one-shot `call`: ~0.3 s later)
# has its window for `busy_cores` behind it already, instead of waiting a tenth of a second for one.
IMPORTED = CpuTimes.now()
RECENT_S = 2.0


def recent_cpu_times() -> CpuTimes | None:
    """`IMPORTED` while it is at most `RECENT_S` old (what other processes use now, not minutes ago), else now."""
    if IMPORTED is not None and time.perf_counter() - IMPORTED.at <= RECENT_S:
        return IMPORTED
    return CpuTimes.now()


def busy_cores(window_s: float = 0.1, since: CpuTimes | None = None) -> float | None:
    """Cores' worth of CPU time that other processes spend over the next `window_s`, or since `since` (taken
    before other work of this process, e.g. loading the tokenizer, so the answer costs little wait of its own)
    and over `window_s` at least: /proc/stat counts in ticks of 10 ms. From /proc/stat, less this process's own.
    None where there is no /proc/stat."""
    start = since or CpuTimes.now()
    if start is None:
        return None
    time.sleep(max(0.0, window_s - (time.perf_counter() - start.at)))
    end = CpuTimes.now()
    if end is None:
        return None
    ticks, seconds = end.total - start.total, end.at - start.at
    if ticks <= 0 or seconds <= 0:
        return 0.0
    cores = os.cpu_count() or 1
    return max(0.0, (end.busy - start.busy) / ticks * cores - (end.own - start.own) / seconds)


def context_length(folder: Path) -> int:
    """The model's context in positions, from the export's genai_config.json (MAX_POSITIONS without one)."""
    try:
        config = json.loads((folder / GENAI_CONFIG).read_text(encoding="utf-8"))
        return int(config["model"]["context_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return MAX_POSITIONS


def read_manifest(folder: str | Path) -> dict:
    """An exported folder's manifest.json, refusing folders of an older export format."""
    folder = Path(folder)
    path = folder / "manifest.json"
    if not path.is_file():
        raise FileNotFoundError(f"{folder}: not an exported model folder (no manifest.json)")
    m = json.loads(path.read_text(encoding="utf-8"))
    if int(m.get("format_version", 1)) < FORMAT_VERSION:
        raise ExportFormatError(f"{folder}: exported by an older mobile-actions (export format "
                                f"{m.get('format_version', 1)}; this runtime reads format {FORMAT_VERSION}: fused "
                                f"attention over a KV buffer it writes in place); {REEXPORT}")
    return m


def release_free_memory() -> None:
    """Give freed heap pages back to the OS (glibc only; elsewhere a no-op)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


MADV_DONTNEED = 4  # Linux (and Android)


class MappedWeights:
    """The clean pages of this process's memory mappings of a weights file, dropped on request.

    onnxruntime maps the export's external data (one private mapping per initializer) and then prepacks
    every MatMulNBits weight into a copy of its own, reading the mappings once: afterwards ~190 MB of
    file pages sit in the process's RSS though a step reads only a few rows of the 8-bit table again (the
    embedding, the sparse head, the lean full head's rescored rows). Those reads fault pages back in with
    their neighbours, so dropping them after every model step keeps the RSS at what one step reads (`evict`
    says why that needs the page cache dropped once too). A private mapping with no page copied on write
    holds exactly the file's bytes, which the kernel reloads on the next access, so dropping it is safe; a
    mapping with any written page is left alone. Linux only (elsewhere nothing is dropped).

    A session loaded from the session store (`runtime.session_store`) maps its packed weights from that file
    too, and reads them every step: there only the table's mappings are dropped."""

    def __init__(self, *paths: str | Path):
        import ctypes
        import os

        self.ranges: list[tuple[int, int, int, str]] = []   # (address, bytes, offset in the file, the file)
        try:
            self._libc = ctypes.CDLL("libc.so.6", use_errno=True)
            self._libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
            targets = {os.path.realpath(p) for p in paths}
            with open("/proc/self/smaps", encoding="utf-8") as f:
                text = f.read()
        except (OSError, AttributeError):
            return
        for block in re.split(r"\n(?=[0-9a-f]+-[0-9a-f]+ )", text):   # one block per mapping
            head = block.split("\n", 1)[0].split(None, 5)
            copied = re.search(r"^Anonymous:\s+(\d+)", block, re.MULTILINE)   # pages copied on write
            if len(head) < 6 or head[5] not in targets or copied is None or int(copied.group(1)):
                continue
            start, end = (int(x, 16) for x in head[0].split("-"))
            self.ranges.append((start, end - start, int(head[2], 16), head[5]))

    def evict(self, min_bytes: int = 0) -> None:
        """Drop the pages of the mappings of at least `min_bytes`, then their part of the file's page cache:
        loading read the file front to back, which the kernel caches in large folios (up to 2 MB here, ext4
        on Linux 6.18), and a fault maps a whole folio, so one step reading 64 scattered rows mapped ~50 MB.
        Read again afterwards, the file is cached in pages near what is read (measured: 1-5 MB mapped per
        step)."""
        import os

        if not self.ranges or not hasattr(os, "posix_fadvise"):
            return
        self.release(min_bytes)
        for path in {p for _, n, _, p in self.ranges if n >= min_bytes}:
            fd = os.open(path, os.O_RDONLY)
            try:
                for _, n, offset, p in self.ranges:
                    if n >= min_bytes and p == path:
                        os.posix_fadvise(fd, offset, n, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)

    def release(self, min_bytes: int = 0) -> int:
        """Drop the resident pages of the clean mappings of at least `min_bytes`; returns the bytes of the
        ranges dropped. (Per step only the table's: onnxruntime maps each of ~240 initializers on its own,
        and the small ones a step reads, such as norm weights, would only be faulted in again.)"""
        return sum(n for start, n, _, _ in self.ranges
                   if n >= min_bytes and self._libc.madvise(start, n, MADV_DONTNEED) == 0)


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


# ============================================================================================ caller
@dataclass
class CallResult:
    calls: list[ToolCall] = field(default_factory=list)   # as decoded; after `gated`, only what the request asks for
    text: str = ""
    problems: list[Problem] = field(default_factory=list)
    raw: str = ""
    timings: dict = field(default_factory=dict)
    refused: list[Refusal] = field(default_factory=list)   # calls the request does not ask for (`acting.gate`)
    rules: list[str] = field(default_factory=list)   # the toolkit's rules that changed this turn (`decoding.turn`)
    # clauses the turn left out that the model, asked about each alone, still made no call for (`with_left_out`):
    # a part of the request nothing was done for, which a run reports as not done rather than finished
    unanswered: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict:
        return {"calls": [c.to_json() for c in self.calls], "text": self.text,
                "problems": [str(p) for p in self.problems], "refused": [r.to_json() for r in self.refused],
                "rules": list(self.rules), "raw": self.raw, "timings": self.timings,
                "unanswered": list(self.unanswered)}

    def gated(self, messages: Sequence[dict], tools: Catalogue) -> "CallResult":
        """This result with the calls the conversation's request does not ask for moved to `refused`
        (`acting.gate_messages`); the problems are those of the output and of the calls kept."""
        from mobile_actions.decoding.turn import GATE   # the decoder's modules load on the first decoded turn

        notes: list[str] = []
        kept, refused = gate_messages(self.calls, messages, tools, notes)
        problems = [p for p in self.problems if p.tool == "<output>"] + [p for c in kept for p in validate_call(c, tools)]
        return CallResult(kept, self.text, problems, self.raw, self.timings, [*self.refused, *refused],
                          [*self.rules, *(f"{GATE.name}: {n}" for n in notes)], list(self.unanswered))


def with_left_out(res: CallResult, messages: Sequence[dict], tools: Catalogue,
                  ask: Callable[[list[dict]], CallResult]) -> CallResult:
    """`res` with the calls the model makes when asked about each clause the turn left out (`acting.left_out`)
    on its own: the same conversation with that clause as the person's message. Decoding never forces a call
    that changes something; here the model sees the clause alone and decides (a text reply adds nothing). Its
    raw output is appended to `raw` (the trace shows it) and `timings["asked_again"]` lists the clauses; those
    the model still made no call for are `unanswered`."""
    from mobile_actions.decoding.turn import LEFT_OUT   # the decoder's modules load on the first decoded turn

    clauses = left_out(messages, res.calls, tools)
    if not clauses:
        return res
    calls, problems, raw, rules = list(res.calls), list(res.problems), res.raw, list(res.rules)
    unanswered = list(res.unanswered)
    for clause in clauses:   # only the clause's own tools: "email Giulia ..." with no address is no map search
        more = ask([*messages[:-1], {"role": "user", "content": clause.text}])
        answers = [c for c in more.calls if c.name in clause.tools]
        if not answers:
            unanswered.append(clause.text)
        calls += [c for c in answers if c not in calls]
        problems += [p for p in more.problems if p.tool in clause.tools and p not in problems]
        raw += more.raw
        rules += [f"{LEFT_OUT.name}: asked again about {clause.text!r}", *more.rules]
    return CallResult(calls, res.text, problems, raw, {**res.timings, "asked_again": [c.text for c in clauses]},
                      list(res.refused), rules, unanswered)


def result_from_raw(raw: str, tools: Catalogue, timings: dict, rules: Sequence[str] = ()) -> CallResult:
    """Parse and validate raw model output: the one place a caller's text becomes a `CallResult` (each
    call once, no argument echoing another: `turn_calls`). Not gated: `CallResult.gated` does that for a
    person's request."""
    problems: list[Problem] = []
    try:
        parsed = wire.parse(raw)
        calls, text = turn_calls(parsed.calls, tools), parsed.text
    except wire.WireParseError as e:
        calls, text = [], ""
        problems.append(Problem("<output>", None, f"not a well-formed call: {e}"))
    for c in calls:
        problems += validate_call(c, tools)
    return CallResult(list(calls), text, problems, raw, timings, rules=list(rules))


@dataclass
class _Prefix:
    ids: tuple
    cache: KVCache   # its first len(ids) positions are those ids'


class Caller:
    """Tool caller over an exported folder. Not thread-safe (one request at a time)."""

    def __init__(self, folder: str | Path, *, threads: int = DEFAULT_THREADS, constrained: bool = True,
                 prefix_reuse: bool = True, force_tokens: bool = True, max_new_tokens: int = wire.MAX_CALL_TOKENS,
                 layout: str | None = None, tools: Catalogue | str | None = None, spin: bool | None = None,
                 sparse_head: bool = True, grounded: bool = True, off: frozenset[str] = frozenset(),
                 prefix_dir: str | Path | None = "default", prefill_graph: bool = True, decoder=None,
                 deterministic: bool = True):
        """`grounded`: values narrowed to the request (`decoding.grounding`, the folder's grounding.json);
        False keeps the call grammar only; `constrained=False` decodes the bare model. `off`: names of the
        toolkit's rules not to apply (`decoding.turn.RULES`; to measure what each does). `prefix_dir`: where
        filled catalogue prefixes are kept across processes (`runtime.prefix_store`; "default":
        `$MOBILE_ACTIONS_PREFIX_CACHE` or the cache folder; None: not kept). `prefill_graph`: fill prefixes
        on the export's prefill graph when it has one. `decoder`: another engine with `Decoder`'s methods
        (`forward`, `new_cache`, `fill`) to run this caller's policy on (`bench caller` drives llama.cpp so);
        default the folder's ONNX session. `deterministic`: a request reuses only a catalogue's stable prefix,
        so it decodes the same whatever was decoded before; False also continues from the previous request's
        cache where the prompts agree (a follow-up turn prefills less, but a token computed while generating
        is not bit for bit the one a prefill computes, and a greedy choice can flip)."""
        loading = recent_cpu_times()   # what other processes use since decides `spin`
        self.folder = Path(folder)
        m = read_manifest(self.folder)
        # the catalogue before the model: a bad or oversized one is refused at once, nothing loaded for it
        self.tools = tools if isinstance(tools, Catalogue) else load_catalogue(tools or "mobile_actions")
        tokenizer_json = self.folder / m.get("tokenizer", "tokenizer.json")
        # The session loads on a thread of its own (onnxruntime lets go of the GIL while it reads and packs the
        # weights, on one core) while this one reads the tokenizer and the token table and compiles the lexicon:
        # ~0.3 s of a one-shot `call`.
        from concurrent.futures import ThreadPoolExecutor

        def load() -> Decoder:
            return Decoder(folder, threads, spin_by_default(threads, loading) if spin is None else spin,
                           prefill_graph=prefill_graph)

        with ThreadPoolExecutor(1, thread_name_prefix="session") as pool:
            loaded = pool.submit(load) if decoder is None else None
            self._read_tokens(tokenizer_json, constrained, force_tokens, grounded, off)
        decoder = decoder if loaded is None else loaded.result()
        self.decoder = decoder
        release_free_memory()
        from mobile_actions.runtime.prefix_store import PrefixStore, default_prefix_dir

        root = default_prefix_dir() if str(prefix_dir) == "default" else prefix_dir
        self.store = PrefixStore(Path(root)) if root is not None and prefix_reuse else None
        self.export_id = hashlib.sha256((self.folder / "manifest.json").read_bytes()).hexdigest()
        self.prefix_from = ""   # where the last warmed prefix came from: memory | disk | filled
        self.max_positions = min(MAX_POSITIONS, context_length(self.folder))   # prompt and answer
        self.layout = layout or m.get("layout", "official")
        self.routes = bool(m.get("routes"))   # trained to route GUI steps (operate_screen)
        self.stop_ids = tuple(m["stop_token_ids"])
        self.constrained, self.prefix_reuse, self.force_tokens = constrained, prefix_reuse, force_tokens
        # logits for the grammar's allowed ids only, when they are few and the export has the sparse head
        self.sparse_head = sparse_head and constrained and self.decoder.sparse_head
        self.max_new_tokens = max_new_tokens
        self._prefixes: list[_Prefix] = []   # stable prefixes (cache layout), one per tool set
        self._last: _Prefix | None = None      # the previous request's prompt (when not `deterministic`)
        self.deterministic = deterministic
        self._rules: list[str] = []            # the rules that changed the last decoded turn

    def _read_tokens(self, tokenizer_json: Path, constrained: bool, force_tokens: bool, grounded: bool,
                     off: frozenset[str]) -> None:
        """The tokenizer, the grounding policies, (for constrained decoding) the token table, and the reading
        lexicon's patterns, which every request reads with."""
        from mobile_actions import lexicon
        from mobile_actions.decoding.grounding import read_policies
        from mobile_actions.decoding.tokens import TokenTable
        from mobile_actions.decoding.turn import Constraints
        from mobile_actions.runtime.pieces import load_tokenizer

        self.tokenizer = load_tokenizer(tokenizer_json)
        self.policies = read_policies(self.folder) if grounded else None
        self.off = frozenset(off)
        self._constraints = Constraints(TokenTable.from_folder(self.folder), self.tokenizer if force_tokens else None,
                                        policies=self.policies, off=self.off) if constrained else None
        lexicon.load().compile()

    @classmethod
    def from_pretrained(cls, folder: str | Path = "auto", **kwargs) -> "Caller":
        """``auto``, ``default``, ``general``: a bundled caller's export that `mobile-actions model prepare` built
        (``auto``: the one for ``tools``, `runtime.prepared.auto_caller`); else a folder."""
        from mobile_actions.runtime.prepared import CALLER_SPECS, prepared_caller

        if str(folder) in CALLER_SPECS:
            tools = kwargs.get("tools")
            if isinstance(tools, str):
                from mobile_actions.catalog import load_catalogue

                tools = kwargs["tools"] = load_catalogue(tools)
            folder = prepared_caller(str(folder), tools.names if tools is not None else ())
        return cls(folder, **kwargs)

    # ------------------------------------------------------------------ prompts
    def developer_text(self, now: datetime | None = None) -> str:
        from mobile_actions.dataset import DEVELOPER_TEMPLATE

        now = (now or datetime.now()).replace(microsecond=0)
        return DEVELOPER_TEMPLATE.format(now=now.strftime("%Y-%m-%dT%H:%M:%S"), weekday=now.strftime("%A"))

    def messages(self, request: str, now: datetime | None = None) -> list[dict]:
        return [{"role": "developer", "content": self.developer_text(now)}, {"role": "user", "content": request}]

    def prompt(self, request: str, tools: Catalogue | None = None, now: datetime | None = None) -> str:
        return self.render(self.messages(request, now), tools)

    def render(self, messages: list[dict], tools: Catalogue | None = None) -> str:
        return wire.render(messages, tools if tools is not None else self.tools, add_generation_prompt=True,
                           layout=self.layout)

    def encode(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=False).ids

    # ------------------------------------------------------------------ prefix cache
    def warm(self, tools: Catalogue | None = None, developer: str | None = None) -> int:
        """Prefill the stable prefix for `tools` now (the first request then pays nothing extra). `developer`:
        the developer turn the prompts start with when it is not the caller's own (a navigator's instruction):
        its stable lines are part of the prefix, so without it such prompts would share none of it."""
        if not self.prefix_reuse:
            return 0
        tools = tools if tools is not None else self.tools
        developer = developer if developer is not None else self.developer_text()
        text = wire.stable_prefix(developer, tools) if self.layout in wire.PREFIX_LAYOUTS else None
        if text is None:
            return 0
        ids = tuple(self.encode(text))
        if any(p.ids == ids for p in self._prefixes):
            self.prefix_from = "memory"
            return len(ids)
        self._check_fits(len(ids), tools)
        self._remember(_Prefix(ids, self._filled(ids)))
        return len(ids)

    def _filled(self, ids: tuple) -> KVCache:
        """A cache holding `ids`: read from the prefix store when it has them, else filled (and stored)."""
        from mobile_actions.runtime.prefix_store import PrefixStore

        d = self.decoder
        cache = d.new_cache(len(ids) + REQUEST_ROOM + self.max_new_tokens + CACHE_ROOM)
        if self.store is None:
            self.prefix_from = "filled"
            return d.fill(ids, cache)
        shape = (2 * d.n_layers, d.n_kv, len(ids), d.head_dim)
        key = PrefixStore.key(self.export_id, d.fill_graph(len(ids)), shape, ids)
        # only what later tokens attend to: of a 100-tool prefix (~12k positions) that is all of the 3 global
        # layers and the last window of the 15 sliding ones, a sixth of the file
        n = len(ids)
        starts = [d.first_attended(i // 2, n) for i in range(len(cache.buffers))]
        if self.store.read_into(key, shape, cache.buffers, starts):
            cache.length = cache.windowed = n
            self.prefix_from = "disk"
            return cache
        d.fill(ids, cache)
        self.prefix_from = "filled"
        self.store.save(key, [b[0, :, :len(ids)] for b in cache.buffers])
        return cache

    def _check_fits(self, n_prompt: int, tools: Catalogue) -> None:
        """PromptTooLongError unless `n_prompt` tokens and an answer fit `max_positions`: checked before any
        KV cache is allocated, whose size follows the prompt's."""
        room = self.max_positions - self.max_new_tokens - CACHE_ROOM
        if n_prompt > room:
            raise PromptTooLongError(
                f"the prompt is {n_prompt:,} tokens; this model takes at most {room:,} with room for its answer "
                f"(the {len(tools)} tool declarations are part of it: offer fewer tools, or a shorter request)")

    def _remember(self, entry: _Prefix, keep: int = 4) -> None:
        self._prefixes = [entry] + [p for p in self._prefixes if p.ids != entry.ids][: keep - 1]

    def _reuse(self, ids: list[int]) -> tuple[int, KVCache]:
        """The longest cached prefix of `ids` (at least one token is left to run) and a cache holding it, with
        room for the rest of the prompt and the reply. The cache it came from is continued in place when
        nothing past that prefix must be kept in it (a stable prefix's own positions are), else copied: a
        catalogue's prefix can be hundreds of MB, and copying it for every request cost as much again."""
        best, source = 0, None
        for p in self._prefixes + ([self._last] if self._last is not None else []):
            n = min(common_prefix(p.ids, ids), len(ids) - 1)
            if n > best and n >= p.cache.windowed:
                best, source = n, p.cache
        room = len(ids) - best + self.max_new_tokens + CACHE_ROOM
        if source is None:
            return 0, self.decoder.new_cache(room)
        kept = max((len(p.ids) for p in self._prefixes if p.cache is source), default=0)
        if best < kept:
            return best, source.prefix(best, room)
        source.truncate(best)
        source.reserve(best + room)
        return best, source

    # ------------------------------------------------------------------ grammar
    def _constraint(self, tools: Catalogue, messages: list[dict] | None = None):
        """(A constrained caller's: its token table was read while its session loaded.)"""
        return self._constraints.for_tools(tools, messages)

    # ------------------------------------------------------------------ decoding
    def generate(self, prompt_ids: list[int], tools: Catalogue, stats: dict,
                 messages: list[dict] | None = None) -> Iterator[int]:
        """Greedy token ids after the prompt (stop token excluded); fills `stats`. `messages` (what the
        prompt was rendered from) is what grounded values may be taken from."""
        from mobile_actions.decoding.tokens import pick
        from mobile_actions.errors import GrammarDeadEnd

        self._check_fits(len(prompt_ids), tools)
        if self.prefix_reuse and self.layout in wire.PREFIX_LAYOUTS:
            t_warm = time.perf_counter()
            # the conversation's own developer text ("" without one, as `wire.render` renders it); without a
            # conversation, the caller's own
            self.warm(tools, None if messages is None else wire.developer_turn(messages) or "")
            stats.update(prefix_ms=(time.perf_counter() - t_warm) * 1e3, prefix_from=self.prefix_from)
        t0 = time.perf_counter()
        steps0 = self.decoder.steps
        reused, past = (self._reuse(prompt_ids) if self.prefix_reuse
                        else (0, self.decoder.new_cache(len(prompt_ids) + self.max_new_tokens + CACHE_ROOM)))
        self._last = None   # its cache may be the one continued now; set again below once this prompt is in it
        stats.update(prompt_tokens=len(prompt_ids), reused_tokens=reused, prefill_tokens=len(prompt_ids) - reused,
                     decode_graph="integer" if getattr(self.decoder, "integer_decode", False) else "8-bit")
        con = self._constraint(tools, messages) if self.constrained else None
        pending = prompt_ids[reused:]
        first = True
        forced = sparse_steps = 0
        n_out = 0
        sparse = self.sparse_head and self.decoder.sparse_head
        max_rows = self.decoder.max_sparse_rows
        try:
            while n_out < self.max_new_tokens:
                allowed = con.allowed() if con is not None else None
                rows = allowed if (sparse and allowed.dtype != bool and 0 < len(allowed) <= max_rows) else None
                logits, past = self.decoder.forward(pending, past, rows)
                if first:
                    stats["prefill_ms"] = (time.perf_counter() - t0) * 1e3
                if rows is not None:      # logits of the allowed ids, in their order: the same choice as pick()
                    tid = int(rows[int(np.argmax(logits))])
                    sparse_steps += 1
                else:
                    try:
                        tid = pick(logits, allowed) if con is not None else int(np.argmax(logits))
                    except GrammarDeadEnd:   # the partial call is reported as one that does not parse
                        break
                if con is not None:
                    tid = con.settle(tid, logits, rows)
                if first:
                    stats["ttft_ms"] = (time.perf_counter() - t0) * 1e3
                    t_dec = time.perf_counter()
                    first = False
                if tid in self.stop_ids:
                    break
                n_out += 1
                yield tid
                pending = [tid]
                if con is not None:
                    more = con.take(tid)
                    if more is None:
                        break
                    for f in more:
                        pending.append(f)
                        forced += 1
                        n_out += 1
                        yield f
        finally:
            self._rules = con.rules if con is not None else []
            if con is not None and con.turn is not None and con.turn.call_share is not None:
                stats["call_share"] = con.turn.call_share   # how sure the model was of a call (`bench act`)
            if self.prefix_reuse and not self.deterministic and past.length >= len(prompt_ids):
                # The last prompt is a prefix candidate too: the next request shares at least the constant
                # words before its datetime digits (in the official layout, all it can share). This request's
                # cache is kept as it is (no copy); the next request copies what it reuses out of it.
                self._last = _Prefix(tuple(prompt_ids), past)
        end = time.perf_counter()
        stats.update(new_tokens=n_out, forced_tokens=forced, model_steps=self.decoder.steps - steps0,
                     sparse_steps=sparse_steps,
                     decode_ms=(end - t_dec) * 1e3 if not first else 0.0)
        # tokens after the first, per second of decode time (forced tokens included: they are output too)
        stats["decode_tok_s"] = (n_out - 1) / (stats["decode_ms"] / 1e3) if n_out > 1 and stats["decode_ms"] > 0 else None

    def call_messages(self, messages: list[dict], tools: Catalogue | list | None = None) -> CallResult:
        """Calls for a conversation (developer + user messages as in a Mobile Actions row), as decoded: whoever
        acts on them gates them (`acting.gate_messages`; the hybrid runner does), since the conversation may
        be a navigator's screen rather than a person's request. Grounded, a clause the turn left out that only
        a call that changes something answers is asked about on its own (`with_left_out`)."""
        tools = self._catalogue(tools)
        res = self._turn(messages, tools)
        from mobile_actions.decoding.turn import LEFT_OUT

        if self.policies is not None and self.constrained and LEFT_OUT.name not in self.off:
            res = with_left_out(res, messages, tools, lambda m: self._turn(m, tools))
        return res

    def _turn(self, messages: list[dict], tools: Catalogue) -> CallResult:
        t0 = time.perf_counter()
        ids = self.encode(self.render(messages, tools))
        stats: dict = {"tokenize_ms": (time.perf_counter() - t0) * 1e3}
        out = list(self.generate(ids, tools, stats, messages))
        return self._finish(out, tools, stats, t0)

    def call(self, request: str, tools: Catalogue | list | None = None, now: datetime | None = None) -> CallResult:
        """Calls (validated) or a text reply for one person's request, with the developer turn for `now`; calls
        the request does not ask for are in `refused` (`acting.gate`), never in `calls`."""
        tools = self._catalogue(tools)
        messages = self.messages(request, now)
        return self.call_messages(messages, tools).gated(messages, tools)

    def stream(self, request: str, tools: Catalogue | list | None = None, now: datetime | None = None) -> Iterator[str]:
        """Text pieces as they are decoded (incomplete UTF-8 held back until it completes)."""
        tools = self._catalogue(tools)
        messages = self.messages(request, now)
        ids = self.encode(self.render(messages, tools))
        out: list[int] = []
        shown = ""
        for tid in self.generate(ids, tools, {}, messages):
            out.append(tid)
            text = self.tokenizer.decode(out, skip_special_tokens=False)
            if text.endswith("\ufffd"):
                continue
            if len(text) > len(shown):
                yield text[len(shown):]
                shown = text

    def _catalogue(self, tools) -> Catalogue:
        if tools is None:
            return self.tools
        if isinstance(tools, Catalogue):
            return tools
        if isinstance(tools, str):
            return load_catalogue(tools)
        return Catalogue.from_json(list(tools))

    def _finish(self, out: list[int], tools: Catalogue, stats: dict, t0: float) -> CallResult:
        raw = self.tokenizer.decode(out, skip_special_tokens=False)
        stats["total_ms"] = (time.perf_counter() - t0) * 1e3
        return result_from_raw(raw, tools, {k: (round(v, 2) if isinstance(v, float) else v)
                                            for k, v in stats.items()}, self._rules)
