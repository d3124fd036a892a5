"""Prefill on this CPU: how fast a catalogue's declarations fill the KV cache, beside the CPU's floor, and what
a new process waits before its first token. Part of `mobile-actions bench caller` (`--no-prefill` skips it).

- **Rates**: tokens per second filling a catalogue's stable prefix (`Decoder.fill`, runs of `FILL_CHUNK`) on
  the export's decode graph (8-bit `MatMulNBits`), on its prefill graph (integer GEMM, recipes/export_prefill.py),
  and on llama.cpp (its batched decode of the same ids) when a GGUF is given; median of `--prefill-runs`.
- **Floor**: the fastest a prefill made of this model's integer GEMMs could go here: the model's multiply-adds
  per token (projections from the export's shapes, plus attention over the positions a token sees, a window at
  most on the sliding-window layers) divided by the best integer GEMM rate onnxruntime reaches on this CPU
  (`MatMulInteger`, uint8 x int8, a
  [256 x hidden] x [hidden x 4 hidden] product, median of runs). Elementwise ops, norms and the attention's
  softmax are not in it, so no engine reaches it; it says how far from the hardware a rate is.
- **First request**: a fresh process per catalogue size (the bundled 7 tools, then 30 and 100 tools from
  ``datasets/seed-catalogues`` when present) with the prefix store warm: process start to the first token,
  median of `--prefill-runs` processes.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

SEED_CATALOGUES = Path(__file__).resolve().parents[2] / "datasets" / "seed-catalogues"
GEMM_M = 256


@dataclass
class PrefillRow:
    catalogue: str
    tools: int
    prefix_tokens: int
    engine: str
    tok_s: float | None
    floor_tok_s: float | None = None
    note: str = ""


@dataclass
class FirstRequestRow:
    catalogue: str
    tools: int
    prefix_tokens: int
    first_token_s: float | None     # process start -> first token (prefix store warm)
    prefix_from: str = ""
    imports_s: float | None = None  # of which: interpreter and imports,
    load_s: float | None = None     # and the caller's load (tokenizer, ONNX session)
    note: str = ""


def catalogue_of(size: int, seeds: Path = SEED_CATALOGUES):
    """The bundled catalogue (7 tools), or the first `size` distinct tools of the seed catalogues in file order."""
    from mobile_actions.catalog import Catalogue, load_catalogue

    if size <= 7:
        return load_catalogue("mobile_actions")
    tools: list = []
    names: set = set()
    for path in sorted(seeds.glob("*.tools.json")):
        for entry in json.loads(path.read_text(encoding="utf-8")):
            name = (entry.get("function") or entry).get("name")
            if name not in names:
                names.add(name)
                tools.append(entry)
    if len(tools) < size:
        return None
    return Catalogue.from_json(tools[:size], source=f"{size} seed tools")


def model_shape(folder: Path) -> dict:
    """The decoder's size from its export: every projection's K x N (the decode graph's `MatMulNBits` nodes, the
    vocabulary head left out), layers, heads and head size (genai_config.json), and each layer's window."""
    import onnx
    from onnx import helper

    from mobile_actions.runtime.onnx import layer_windows

    m = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    graph = onnx.load(str(folder / m.get("onnx", "model.onnx")), load_external_data=False).graph
    proj = 0
    for node in graph.node:
        if node.op_type == "MatMulNBits":
            a = {x.name: helper.get_attribute_value(x) for x in node.attribute}
            if a["N"] < m["vocab_size"]:
                proj += a["K"] * a["N"]
    d = json.loads((folder / "genai_config.json").read_text(encoding="utf-8"))["model"]["decoder"]
    return {"projection_macs": proj, "layers": d["num_hidden_layers"], "heads": d["num_attention_heads"],
            "head_size": d["head_size"], "hidden": d["hidden_size"],
            "windows": layer_windows(m, d["num_hidden_layers"])}


def macs_per_token(shape: dict, n: int) -> float:
    """Multiply-adds per token of a prefix of `n` tokens: the projections, and attention's two products over
    the positions a token sees, on average over the prefix (a sliding-window layer: its window at most)."""
    def mean_context(window: int | None) -> float:
        if not window or window >= n:
            return (n - 1) / 2
        return (window * (window - 1) / 2 + (n - window) * window) / n
    attention = sum(mean_context(w) for w in shape.get("windows") or [None] * shape["layers"])
    return float(shape["projection_macs"] + 2 * shape["heads"] * shape["head_size"] * attention)


def gemm_rate(hidden: int, threads: int, runs: int = 7) -> float:
    """Multiply-adds per second of onnxruntime's integer GEMM here (uint8 x int8 `MatMulInteger`)."""
    import numpy as np
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    n = 4 * hidden
    rng = np.random.default_rng(0)
    w = rng.integers(-63, 64, size=(hidden, n), dtype=np.int8)
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["x", "w", "zp"], ["y"])], "gemm",
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [GEMM_M, hidden])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [GEMM_M, n])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array(128, np.uint8), "zp")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads, opts.inter_op_num_threads, opts.log_severity_level = threads, 1, 3
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    x = rng.integers(0, 256, size=(GEMM_M, hidden), dtype=np.uint8)
    sess.run(None, {"x": x})
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(10):
            sess.run(None, {"x": x})
        times.append((time.perf_counter() - t0) / 10)
    return GEMM_M * hidden * n / statistics.median(times)


def progress(line: str) -> None:
    """A finished row, on stderr as it comes: the section takes minutes (a 100-tool prefix is ~12,000 tokens
    per fill) and would otherwise be silent until its table."""
    print(f"[prefill] {line}", file=sys.stderr, flush=True)


def _fill_rate(fill, ids: Sequence[int], new_cache, runs: int) -> float:
    fill(list(ids[:64]), new_cache(64))     # warm-up: sessions and weights loaded, not timed
    times = []
    for _ in range(runs):
        cache = new_cache(len(ids))
        t0 = time.perf_counter()
        fill(list(ids), cache)
        times.append(time.perf_counter() - t0)
    return len(ids) / statistics.median(times)


def rates_worker(spec: dict) -> list[dict]:
    """In its own process: fill rates per catalogue and engine, and the floor."""
    from tokenizers import Tokenizer

    import mobile_actions.runtime.onnx as rt
    from mobile_actions import wire
    from mobile_actions.runtime.onnx import Decoder

    folder = Path(spec["folder"])
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    m = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    shape = model_shape(folder)
    rate = gemm_rate(shape["hidden"], spec["threads"])
    decode = Decoder(folder, spec["threads"], prefill_graph=False)
    graph = Decoder(folder, spec["threads"], keep_prefill=True) if m.get("prefill_graph") else None
    catalogues = {size: catalogue_of(size) for size in spec["sizes"]}
    prefixes = {size: tok.encode(wire.stable_prefix("x", cat), add_special_tokens=False).ids
                for size, cat in catalogues.items() if cat is not None}
    engines: list[tuple[str, Any]] = [("onnxruntime q8, decode graph (MatMulNBits)", decode)]
    if graph is not None:
        engines.append(("onnxruntime, prefill graph (integer GEMM)", graph))
    if spec.get("gguf"):
        from mobile_actions.recipes.bench_caller import LlamaEngine

        longest = max((len(ids) for ids in prefixes.values()), default=0)
        engines.append((f"llama.cpp {Path(spec['gguf']).stem}",
                        LlamaEngine(spec["gguf"], spec["threads"], spec.get("llama_repack", True), n_ctx=longest + 256)))
    rows = []
    for size, cat in catalogues.items():
        if cat is None:
            rows.append(asdict(PrefillRow(f"{size} tools", size, 0, "-", None, note="no seed catalogues here")))
            continue
        ids = prefixes[size]
        floor = rate / macs_per_token(shape, len(ids))
        name = "mobile_actions" if size <= 7 else f"{size} seed tools"
        for label, engine in engines:
            old = rt.PREFILL_GRAPH_MIN
            rt.PREFILL_GRAPH_MIN = 0     # the prefill graph's rate at every size (the runtime uses it from PREFILL_GRAPH_MIN)
            try:
                fill = engine.fill
                if hasattr(engine, "llm"):
                    def fill(ids, cache, engine=engine):
                        engine.llm.reset()      # not its prompt cache: the rate of filling
                        return engine.fill(ids, cache)
                tok_s = _fill_rate(fill, ids, engine.new_cache, spec["runs"])
                rows.append(asdict(PrefillRow(name, len(cat), len(ids), label, tok_s, floor)))
                progress(f"{name}, {len(ids)} tokens, {label}: {tok_s:,.0f} tokens/s (floor {floor:,.0f})")
            except Exception as e:   # noqa: BLE001  one engine failing is a row saying why, not a lost table
                rows.append(asdict(PrefillRow(name, len(cat), len(ids), label, None, floor,
                                              note=f"failed: {type(e).__name__}: {e}")))
            finally:
                rt.PREFILL_GRAPH_MIN = old
    return rows


FIRST_REQUEST = """
import json, sys, time
t_start = float(sys.argv[1])
from mobile_actions.recipes.bench_prefill import catalogue_of
from mobile_actions.runtime import Caller
cat = catalogue_of(int(sys.argv[3]))
t_imported = time.time()
c = Caller.from_pretrained(sys.argv[2], threads=int(sys.argv[4]), tools=cat)
t_loaded = time.time()
request = "turn on the flashlight"
stats = {}
ids = c.encode(c.prompt(request, cat))
next(iter(c.generate(ids, cat, stats, c.messages(request))))
print(json.dumps({"first_token_s": time.time() - t_start, "prefix_tokens": stats.get("reused_tokens"),
                  "prefix_from": stats.get("prefix_from", ""), "imports_s": t_imported - t_start,
                  "load_s": t_loaded - t_imported}))
"""


def first_request(folder: str, size: int, threads: int, runs: int = 3) -> FirstRequestRow:
    """A fresh process asks once, then `runs` more: the first fills the prefix store, the others are timed
    (medians)."""
    cat = catalogue_of(size)
    name = "mobile_actions" if size <= 7 else f"{size} seed tools"
    if cat is None:
        return FirstRequestRow(name, size, 0, None, note="no seed catalogues here")
    timed: list[dict] = []
    for i in range(1 + max(1, runs)):
        proc = subprocess.run([sys.executable, "-c", FIRST_REQUEST, repr(time.time()), folder, str(size), str(threads)],
                              capture_output=True, text=True, env={**os.environ, "TOKENIZERS_PARALLELISM": "false"})
        if proc.returncode != 0:
            why = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
            return FirstRequestRow(name, len(cat), 0, None, note=f"failed: {why}")
        if i:
            timed.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    med = {k: statistics.median(r[k] for r in timed) for k in ("first_token_s", "imports_s", "load_s")}
    return FirstRequestRow(name, len(cat), timed[-1]["prefix_tokens"] or 0, med["first_token_s"],
                           timed[-1]["prefix_from"], med["imports_s"], med["load_s"])


def run(folder: str, *, threads: int, sizes: Sequence[int] = (7, 30, 100), runs: int = 3,
        gguf: str | None = None, llama_repack: bool = True) -> tuple[list[dict], list[dict]]:
    spec = {"folder": folder, "threads": threads, "sizes": list(sizes), "runs": runs, "gguf": gguf,
            "llama_repack": llama_repack}
    # the worker's stderr passes through (its progress lines); its rows come on stdout at the end
    proc = subprocess.run([sys.executable, "-m", "mobile_actions.recipes.bench_prefill", "--worker"],
                          input=json.dumps(spec), stdout=subprocess.PIPE, text=True,
                          env={**os.environ, "TOKENIZERS_PARALLELISM": "false"})
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        rates = [asdict(PrefillRow("-", 0, 0, "-", None, note=f"failed: exit {proc.returncode} (its error is above)"))]
    else:
        rates = json.loads(lines[-1])
    firsts = []
    for size in sizes:
        first = first_request(folder, size, threads, runs)
        took = first.first_token_s
        progress(f"first request, {size} tools: " + (f"{took:.2f} s to the first token" if took else first.note))
        firsts.append(asdict(first))
    return rates, firsts


def markdown(rates: list[dict], firsts: list[dict]) -> str:
    def f(v: Any) -> str:
        return "-" if v is None else f"{v:,.0f}" if isinstance(v, float) and v >= 100 else \
            f"{v:.2f}" if isinstance(v, float) else str(v)

    lines = ["| catalogue | tools | prefix tokens | engine | prefill tok/s | floor tok/s | note |", "|---|---:|---:|---|---:|---:|---|"]
    lines += [f"| {r['catalogue']} | {r['tools']} | {r['prefix_tokens']} | {r['engine']} | {f(r['tok_s'])} | "
              f"{f(r['floor_tok_s'])} | {r['note']} |" for r in rates]
    lines += ["", "| catalogue | tools | prefix tokens | first token (s, new process, prefix on disk) | of which imports | "
                  "and loading | prefix from | note |", "|---|---:|---:|---:|---:|---:|---|---|"]
    lines += [f"| {r['catalogue']} | {r['tools']} | {r['prefix_tokens']} | {f(r['first_token_s'])} | {f(r['imports_s'])} "
              f"| {f(r['load_s'])} | {r['prefix_from']} | {r['note']} |" for r in firsts]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        print(json.dumps(rates_worker(json.loads(sys.stdin.read()))))
