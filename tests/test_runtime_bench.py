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
                           variants=["onnxruntime-genai q8"], out=str(tmp_path)))
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
