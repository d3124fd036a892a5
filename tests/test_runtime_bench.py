"""`bench caller` on the tiny export: per-request e2e/TTFT/steps/ms per model step, the sparse-head pair."""
from __future__ import annotations

import json

import pytest

from tests.test_export_support import tiny_export


def test_ms_per_step_counts_model_steps_after_the_prefill():
    from mobile_actions.recipes.bench_caller import ms_per_step

    per = [{"steps": 11, "decode_ms": 200.0}, {"steps": 1, "decode_ms": 0.0}, {"steps": 6, "decode_ms": 100.0}]
    assert ms_per_step(per) == 300.0 / 15
    assert ms_per_step([{"steps": 1, "decode_ms": 0.0}]) is None


def test_bench_caller_runs_the_default_pair_on_an_export(tmp_path):
    from mobile_actions.recipes.bench_caller import COLUMNS, BenchConfig, run

    pair = ["onnx-mixed +prefix +grammar -sparse", "onnx-mixed +prefix +grammar"]
    rows = run(BenchConfig(onnx={"mixed": str(tiny_export("mixed"))}, n=2, max_new_tokens=12, variants=pair,
                           out=str(tmp_path)))
    assert [r["variant"] for r in rows] == pair
    for r in rows:
        assert r["requests"] == 2 and r["steps_p50"] >= 1 and r["e2e_ms_p90"] >= r["e2e_ms_p50"] > 0
        assert r["peak_rss_mb"] > 0 and r["size_mb"] > 0 and "decode_tok_s_p50" not in r
    assert rows[0]["sparse_pct"] == 0
    header = next(ln for ln in (tmp_path / "bench.md").read_text().splitlines() if ln.startswith("| variant"))
    assert header == "| " + " | ".join(COLUMNS) + " |"
    per = json.loads((tmp_path / "onnx-mixed_+prefix_+grammar.json").read_text())["per_request"]
    assert all({"e2e_ms", "ttft_ms", "steps", "decode_ms", "sparse_steps"} <= set(r) for r in per)


def test_bench_caller_runs_onnxruntime_genai_on_the_same_export(tmp_path):
    pytest.importorskip("onnxruntime_genai")
    from mobile_actions.recipes.bench_caller import BenchConfig, run

    rows = run(BenchConfig(onnx={"q8": str(tiny_export("q8"))}, n=2, max_new_tokens=8,
                           variants=["onnxruntime-genai q8"], out=str(tmp_path), prefill_sizes=()))
    assert [r["variant"] for r in rows] == ["onnxruntime-genai q8"]
    r = rows[0]
    assert r["requests"] == 2 and r["prefill_tokens_p50"] > 500 and r["steps_p50"] >= 2 and r["ttft_ms_p50"] > 0


def test_the_default_requests_are_stored_and_stay_put():
    """The benchmark's requests come from a file, so a generator that learns new phrasings does not move them;
    they are what the generator's rule drew (held-out families, all 7 tools, 10-40 words, 1-2 calls)."""
    from mobile_actions.dataset import parse_row
    from mobile_actions.recipes.bench_caller import STORED_SEED, bench_rows

    rows = bench_rows(20, STORED_SEED)
    assert len(rows) == 21 and rows == bench_rows(40, STORED_SEED)[:21]
    for row in rows:
        first_calls = row["messages"][2].get("tool_calls") or []
        assert len(parse_row(row).tools) == 7 and 1 <= len(first_calls) <= 2
        assert 10 <= len(row["messages"][1]["content"].split()) <= 40 and row["meta"]["split"] == "heldout"
    assert len(bench_rows(3, STORED_SEED + 1)) == 4                 # another seed: drawn now
    more = bench_rows(42, STORED_SEED)                             # past the stored 41: drawn after them
    assert len(more) == 43 and more[:41] == bench_rows(40, STORED_SEED)


def test_the_toolkit_policy_runs_unchanged_on_another_engine():
    """`bench caller`'s equal-policy rows put another engine under `Caller` (llama.cpp, `LlamaEngine`); an engine
    that only holds token lists, as that one does, must give the same output as our own decoder."""
    from datetime import datetime

    from mobile_actions.recipes.bench_caller import TokenKV
    from mobile_actions.runtime import Caller, Decoder

    folder = tiny_export("q8")

    class Recompute:
        """Every forward recomputes the whole sequence on a fresh ONNX cache (a stateless engine)."""
        sparse_head, max_sparse_rows = False, 0

        def __init__(self):
            self.d, self.steps = Decoder(folder, 1), 0

        def new_cache(self, capacity=0):
            return TokenKV()

        def forward(self, ids, cache=None, rows=None):
            cache = cache if cache is not None else TokenKV()
            cache.tokens = cache.tokens + list(ids)
            logits, _ = self.d.forward(cache.tokens)
            self.steps += 1
            return (logits[rows] if rows is not None else logits), cache

        def fill(self, ids, cache):
            return self.forward(ids, cache)[1]

    now = datetime(2025, 3, 14, 9, 26, 53)
    ours = Caller.from_pretrained(folder, threads=1, max_new_tokens=16, sparse_head=False, prefix_dir=None)
    other = Caller.from_pretrained(folder, threads=1, max_new_tokens=16, sparse_head=False, prefix_dir=None,
                                   decoder=Recompute())
    for request in ("turn on the flashlight", "email ana@example.com the agenda"):
        a, b = ours.call(request, now=now), other.call(request, now=now)
        assert a.raw == b.raw and a.timings["model_steps"] == b.timings["model_steps"]


def test_the_prefill_section_reports_rates_beside_a_floor_and_first_requests(tmp_path):
    from mobile_actions.recipes.bench_prefill import markdown, run

    folder = tiny_export("q8")
    rates, firsts = run(str(folder), threads=1, sizes=(7, 10_000), runs=1)
    engines = [r["engine"] for r in rates if r["catalogue"] == "mobile_actions"]
    assert any("decode graph" in e for e in engines) and any("prefill graph" in e for e in engines)
    for r in rates[:2]:
        assert r["tok_s"] > 0 and r["floor_tok_s"] > 0 and r["prefix_tokens"] > 400
    assert rates[-1]["note"] == "no seed catalogues here"      # more tools than the seed catalogues hold
    assert firsts[0]["first_token_s"] > 0 and firsts[0]["prefix_from"] == "disk"
    assert "floor tok/s" in markdown(rates, firsts)
