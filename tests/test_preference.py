"""Preference pairs from the caller's own answers, and a preference step on the tiny model."""
import json

import pytest

from mobile_actions.calls import ToolCall
from mobile_actions.dataset import load_rows, prompt_completion
from mobile_actions.training.preference import CallerDPOConfig, preference_pairs, read_pairs, train_preference, write_pairs
from tests.test_train_fixtures import DEV, TOOLS, make_row, tiny_ckpt, tiny_run, rows_file  # noqa: F401  (fixtures)


def _rows(tmp_path):
    rows = [make_row(i) for i in range(4)]
    rows.append({"metadata": "act:negated", "tools": TOOLS, "messages": [
        {"role": "developer", "content": DEV}, {"role": "user", "content": "no light needed, thanks"},
        {"role": "assistant", "content": "Okay, I'll leave it off."}]})
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return load_rows(path)[0]


def test_pairs_set_the_rows_turn_against_the_callers_own_and_keep_calls_wanted(tmp_path):
    rows = _rows(tmp_path)
    torch = ToolCall("turn_on_flashlight", {})
    answers = {r.where: list(r.calls) for r in rows[:4]}
    answers[rows[4].where] = [torch]                                     # a call where none is asked
    answers[rows[0].where] = [ToolCall("show_map", {"query": "place 9"})]  # a wrong value
    pairs = preference_pairs(rows, answers, layout="cache")
    acted = {p.where: p for p in pairs if p.kind == "acted"}
    assert set(acted) == {rows[4].where, rows[0].where}
    negated = acted[rows[4].where]
    assert (negated.prompt, negated.chosen) == prompt_completion(rows[4], layout="cache")
    assert "turn_on_flashlight" in negated.rejected and "turn_on_flashlight" not in negated.chosen
    held = [p for p in pairs if p.kind == "held"]
    assert len(held) == 2 and all("<start_function_call>" in p.chosen and "<start_function_call>" not in p.rejected
                                  for p in held)
    assert "Okay, I'll leave it off." in held[0].rejected      # the reply a row that asks for nothing says
    write_pairs(pairs, tmp_path / "pairs.jsonl")
    assert read_pairs(tmp_path / "pairs.jsonl") == pairs


def test_a_broken_pairs_file_names_its_line(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text('{"prompt": "a", "chosen": "b", "rejected": "c", "where": "x:1", "kind": "acted"}\n{"prompt": 1}\n')
    with pytest.raises(ValueError, match=r"pairs.jsonl:2: not a preference pair"):
        read_pairs(path)


def test_the_reference_is_the_adapter_it_goes_on_from(tiny_run):
    """trl's "ref" copy of the adapter, control-token rows included: the same function as "default" at the start."""
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    from mobile_actions.training.preference import same_reference

    cfg, res = tiny_run
    model = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(cfg.base), str(res.out), is_trainable=True)
    model.add_adapter("ref", model.peft_config["default"])
    model.eval()
    ids = torch.tensor([[2, 46, 48, 52, 60, 49, 47]])     # control tokens among them
    model.set_adapter("default")
    with torch.no_grad():
        want = model(input_ids=ids).logits
    same_reference(model)
    model.set_adapter("ref")
    with torch.no_grad():
        assert torch.equal(model(input_ids=ids).logits, want)


def test_a_preference_step_goes_on_from_the_adapter(tiny_run, tmp_path):
    """Two DPO steps on the tiny run's adapter: the adapter it writes loads like ours and has moved."""
    from safetensors.torch import load_file

    cfg, res = tiny_run
    rows = _rows(tmp_path)
    answers = {r.where: [ToolCall("turn_on_flashlight", {})] for r in rows}
    write_pairs(preference_pairs(rows, answers, layout="cache"), tmp_path / "pairs.jsonl")
    out = tmp_path / "dpo"
    result = train_preference(CallerDPOConfig(pairs=str(tmp_path / "pairs.jsonl"), adapter=str(res.out),
                                              out=str(out), max_steps=2, batch_size=2, grad_accum=1, lr=1e-2,
                                              max_length=600, threads=2, save_steps=10))
    assert result.steps == 2
    before, after = load_file(str(res.out / "adapter_model.safetensors")), load_file(str(out / "adapter_model.safetensors"))
    assert before.keys() == after.keys()
    assert any((before[k] - after[k]).abs().max() > 0 for k in before if "lora_" in k)
    marker = json.loads((out / "mobile_actions.json").read_text())
    assert marker["preference"]["pairs"] == result.pairs and marker["base"] == str(cfg.base)
    assert len((out / "loss.csv").read_text().splitlines()) == 1 + 2 and (out / "loss.png").is_file()   # the curve


def test_the_recipe_makes_pairs_from_bench_act_answers_and_names_a_bad_line(tmp_path, capsys):
    from mobile_actions.recipes.train_preference import main

    rows = _rows(tmp_path)
    answers = tmp_path / "grounded.jsonl"
    answers.write_text("".join(json.dumps({"where": r.where, "decoded": [{"name": "turn_on_flashlight",
                                                                         "arguments": {}}]}) + "\n" for r in rows))
    out = tmp_path / "pairs.jsonl"
    assert main(["pairs", "--rows", str(tmp_path / "rows.jsonl"), "--answers", str(answers), "--out", str(out)]) == 0
    assert len(read_pairs(out)) == 3 + 2      # three rows answered wrongly; the two answered rightly, held
    answers.write_text('{"where": "x:1", "decoded": []}\nnot json\n')
    assert main(["pairs", "--rows", str(tmp_path / "rows.jsonl"), "--answers", str(answers), "--out", str(out)]) == 2
    assert "grounded.jsonl:2" in capsys.readouterr().err
