"""Evaluation: greedy generation, parsing (bad output counted, not fatal), scoring, files, CLI."""
from __future__ import annotations

import argparse
import json

from mobile_actions.caller.evaluate import EvalConfig, evaluate, to_prediction, write_report
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
    from mobile_actions.cli import caller as caller_cli

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


# ------------------------------------------------------------------ grammar-constrained decoding (PyTorch)
NOW_DEV = {"role": "developer", "content": "Current date and time given in YYYY-MM-DDTHH:MM:SS format: "
           "2025-03-14T09:00:00\nDay of week is Friday\nYou are a model that can do function calling with the "
           "following functions"}


def _steer(model):
    """Make a tiny random model start every answer with <start_function_call> and like closing things
    (escape, end of call, end of turn): unconstrained, that writes a broken call; the grammar must turn
    it into a valid one. Returns the hook handle."""
    from mobile_actions import wire

    start = wire.CONTROL_TOKEN_IDS[wire.START_CALL]
    closers = [wire.CONTROL_TOKEN_IDS[wire.ESCAPE], wire.CONTROL_TOKEN_IDS[wire.END_CALL], 106]
    seen: set[int] = set()

    def hook(_module, _inputs, logits):
        logits = logits.clone()
        logits[..., closers] += 20.0
        if not seen:   # the prompt's forward: the answer's first token
            logits[..., start] += 50.0
        seen.add(1)
        return logits

    return model.lm_head.register_forward_hook(hook)


def test_torch_caller_decodes_under_the_grammar(tiny_ckpt):
    from mobile_actions.catalog import load_catalogue
    from mobile_actions.caller.greedy import TorchCaller

    cat = load_catalogue("mobile_actions")
    msgs = [NOW_DEV, {"role": "user", "content": "turn on the flashlight"}]
    results = {}
    for constrained in (False, True):
        caller = TorchCaller(str(tiny_ckpt), constrained=constrained, max_new_tokens=200)
        handle = _steer(caller.model)
        results[constrained] = caller.call_messages(msgs, cat)
        handle.remove()
    assert results[False].problems, results[False].raw          # the steered model alone writes junk
    good = results[True]
    assert good.calls and not good.problems, (good.raw, good.problems)


def test_eval_grammar_keeps_every_emitted_token_legal(tiny_ckpt, rows_file):
    """Batched `generate` with one automaton per row: replaying each output through a fresh
    constraint never meets a token the grammar forbids (unconstrained, the first row already does)."""
    from mobile_actions.dataset import load_rows, prompt_completion
    from mobile_actions.caller.evaluate import generate, hf_constraints
    from mobile_actions.caller.model import load_caller

    rows, _ = load_rows(rows_file)
    rows = rows[:4]
    model, tok = load_caller(str(tiny_ckpt))
    prompts = [prompt_completion(r, layout="cache")[0] for r in rows]
    cons = hf_constraints(tok)

    def legal(text: str, tools) -> bool:
        con = cons.for_tools(tools)
        try:
            for tid in tok(text, add_special_tokens=False)["input_ids"]:
                con.advance(tid)
        except ValueError:
            return False
        return True

    outputs = {}
    for grammar in (False, True):
        handle = _steer(model)  # a fresh hook: it steers the first forward it sees
        cfg = EvalConfig(batch_size=4, max_new_tokens=40, progress=False, grammar=grammar)
        outputs[grammar] = generate(model, tok, prompts, cfg, [r.tools for r in rows])
        handle.remove()
    free, bound = outputs[False], outputs[True]
    assert not all(legal(t, r.tools) for t, r in zip(free, rows)), free
    assert all(t.startswith("<start_function_call>call:") for t in bound), bound
    assert all(legal(t, r.tools) for t, r in zip(bound, rows)), bound


def test_eval_grammar_needs_a_catalogue_per_prompt(tiny_ckpt):
    import pytest

    from mobile_actions.caller.evaluate import generate
    from mobile_actions.caller.model import load_caller

    model, tok = load_caller(str(tiny_ckpt))
    with pytest.raises(ValueError, match="one catalogue per prompt"):
        generate(model, tok, ["<bos>x"], EvalConfig(grammar=True, progress=False))
