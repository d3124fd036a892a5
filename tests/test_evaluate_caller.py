"""Evaluation: greedy generation, parsing (bad output counted, not fatal), scoring, files, CLI."""
from __future__ import annotations

import argparse
import json

from mobile_actions.evaluate import EvalConfig, evaluate, to_prediction, write_report
from tests.test_train_fixtures import rows_file, tiny_ckpt, tiny_run  # noqa: F401  (fixtures)


def test_to_prediction_keeps_raw_text_of_bad_output():
    ok = to_prediction("<start_function_call>call:show_map{query:<escape>x<escape>}<end_function_call>")
    assert ok.error is None and ok.calls[0].arguments == {"query": "x"}
    bad = to_prediction("<start_function_call>call:show_map{query:")
    assert bad.calls == [] and bad.error and bad.raw.endswith("query:")


def test_evaluate_tiny_model_and_write_report(tiny_ckpt, rows_file, tmp_path):
    from mobile_actions.dataset import load_rows

    rows, _ = load_rows(rows_file)
    report, preds = evaluate(str(tiny_ckpt), rows, limit=3, cfg=EvalConfig(batch_size=2, max_new_tokens=8,
                                                                          progress=False))
    assert report.n == 3 and len(preds) == 3
    assert report.exact_match == 0.0  # random weights
    path = write_report(tmp_path, report, preds, rows[:3])
    lines = [json.loads(x) for x in (tmp_path / "predictions.jsonl").read_text().splitlines()]
    assert len(lines) == 3 and lines[0]["where"].endswith(":1") and "raw" in lines[0] and "gold" in lines[0]
    assert json.loads(path.read_text())["n"] == 3


def test_eval_cli_on_trained_adapter(tiny_run, rows_file, tmp_path, capsys):
    from mobile_actions import caller_cli

    _, res = tiny_run
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    caller_cli.register(sub)
    args = parser.parse_args(["eval", "--model", str(res.out), "--data", str(rows_file), "--limit", "2",
                              "--json", "--out", str(tmp_path / "ev"), "--max-new-tokens", "8"])
    assert args.func(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n"] == 2 and out["layout"] == "cache"   # the layout recorded by training
    assert (tmp_path / "ev" / "predictions.jsonl").is_file()
