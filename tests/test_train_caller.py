"""The fine-tuning recipe on a tiny random Gemma 3: data encoding, LoRA run, curves, resume, adapter."""
from __future__ import annotations

import csv
import json

import pytest

from mobile_actions import wire
from tests.test_train_fixtures import rows_file, tiny_ckpt, tiny_run, write_rows  # noqa: F401  (fixtures)


def test_encode_rows_masks_the_prompt_and_reports_long_rows(tiny_ckpt, rows_file):
    from mobile_actions.dataset import load_rows
    from mobile_actions.caller.model import load_tokenizer
    from mobile_actions.training.caller import encode_rows, report_too_long

    rows, _ = load_rows(rows_file)
    tok = load_tokenizer(str(tiny_ckpt))
    enc = encode_rows(rows, tok, layout="cache", max_length=600)
    assert len(enc.input_ids) == 6 and len(enc.too_long) == 1
    assert enc.too_long[0][0] == f"{rows_file}:7"
    ids, mask = enc.input_ids[0], enc.completion_mask[0]
    assert ids[0] == 2 and ids[1] != 2                      # exactly one <bos>
    completion = [t for t, m in zip(ids, mask) if m]
    assert completion[0] == wire.CONTROL_TOKEN_IDS[wire.START_CALL]
    assert 106 in completion and 1 not in completion         # ends the turn; no <eos> appended
    assert tok.decode(completion).startswith("<start_function_call>call:show_map{query:<escape>place 0")
    msg = report_too_long(enc, 600, None)
    assert "1 row(s) longer than max_length=600" in msg and f"{rows_file}:7" in msg


def test_config_flags_round_trip():
    import argparse

    from mobile_actions.recipes.train_caller import add_arguments, config_from_args

    p = argparse.ArgumentParser()
    add_arguments(p)
    cfg = config_from_args(p.parse_args(["--data", "x.jsonl", "--lora-r", "8", "--no-gradient-checkpointing",
                                         "--method", "full", "--eval_limit", "5", "--lr", "3e-5"]))
    assert (cfg.data, cfg.lora_r, cfg.gradient_checkpointing, cfg.method, cfg.eval_limit, cfg.lr) == \
        ("x.jsonl", 8, False, "full", 5, 3e-5)
    assert cfg.resolved_method(has_gpu=False) == "full"
    assert config_from_args(p.parse_args(["--data", "x"])).resolved_method(has_gpu=False) == "lora"


def test_lora_run_writes_adapter_curves_and_eval(tiny_run):
    cfg, res = tiny_run
    out = res.out
    assert res.method == "lora" and res.steps == 2 and res.train_rows == 6 and res.too_long == 1
    assert (out / "too_long.txt").read_text().count(":7:") == 1
    for name in ("adapter_config.json", "adapter_model.safetensors", "tokenizer.json", "loss.png", "loss.csv",
                 "mobile_actions.json", "checkpoint-1", "checkpoint-2", "eval/report.json", "eval/predictions.jsonl"):
        assert (out / name).exists(), name
    logged = [r for r in csv.DictReader(open(out / "loss.csv")) if r["loss"]]
    assert [int(r["step"]) for r in logged] == [1, 2]
    assert all(float(r["seconds"]) > 0 for r in logged)                # each step's time, for tokens/s
    marker = json.loads((out / "mobile_actions.json").read_text())
    assert marker["kind"] == "adapter" and marker["layout"] == "cache" and marker["base"] == cfg.base
    # Checkpoints carry the marker too (their step count), so they load like the final adapter.
    ckpt_marker = json.loads((out / "checkpoint-1" / "mobile_actions.json").read_text())
    assert ckpt_marker == {**marker, "steps": 1} and marker["steps"] == 2
    from mobile_actions.caller.evaluate import model_layout

    assert model_layout(out / "checkpoint-1") == "cache"
    # ...and the grounding policies learned from the run's rows, so an export of any of them decodes grounded.
    from mobile_actions.decoding.grounding import read_policies

    assert read_policies(out) == read_policies(out / "checkpoint-1") and read_policies(out)
    assert json.loads((out / "grounding.json").read_text())["rows"] == 7
    report = json.loads((out / "eval" / "report.json").read_text())
    assert report["n"] == 2
    # The control-token rows are trained and stored in the adapter (peft trainable tokens).
    from safetensors import safe_open

    with safe_open(str(out / "adapter_model.safetensors"), "pt") as f:
        keys = list(f.keys())
    assert any("trainable_tokens_delta" in k for k in keys), keys


def test_adapter_loads_with_trained_control_rows(tiny_run, tiny_ckpt):
    import torch
    from transformers import AutoModelForCausalLM

    from mobile_actions.caller.model import load_caller

    _, res = tiny_run
    merged, tok = load_caller(str(res.out))
    base = AutoModelForCausalLM.from_pretrained(str(tiny_ckpt))
    ids = list(wire.CONTROL_TOKEN_IDS.values())
    w_new, w_old = merged.get_input_embeddings().weight, base.get_input_embeddings().weight
    assert not torch.allclose(w_new[ids], w_old[ids])          # initialised + trained
    assert torch.equal(w_new[100:104], w_old[100:104])         # other rows untouched
    assert merged.get_output_embeddings().weight.data_ptr() == w_new.data_ptr()  # still tied


def test_resume_continues_from_the_last_checkpoint(tiny_run, tmp_path):
    import shutil

    from mobile_actions.training.caller import CallerSFTConfig, train

    cfg, res = tiny_run
    out = tmp_path / "resumed"
    shutil.copytree(res.out, out)
    shutil.rmtree(out / "checkpoint-2")  # pretend the run stopped after step 1
    cfg2 = CallerSFTConfig(**{**cfg.__dict__, "out": str(out), "max_steps": 3, "resume": "last",
                              "final_eval": False})
    res2 = train(cfg2)
    assert res2.steps == 3
    logged = [r for r in csv.DictReader(open(out / "loss.csv")) if r["loss"]]
    assert [int(r["step"]) for r in logged] == [1, 2, 3]  # history restored from checkpoint-1, no duplicates
    tokens = [float(r["num_tokens"]) for r in logged]
    assert tokens[0] < tokens[1] < tokens[2]               # counted on across the resume, not from 0 again


def test_head_min_prob_out_of_range_is_an_error_before_loading(tmp_path):
    from mobile_actions.training.caller import CallerSFTConfig, train

    with pytest.raises(ValueError, match=r"--head-min-prob must be in \[0, 1\), got 1.5"):
        train(CallerSFTConfig(data=str(tmp_path / "none.jsonl"), out=str(tmp_path / "out"), head_min_prob=1.5))
    with pytest.raises(ValueError, match="--prompt-gradients own needs --shared-prefix"):
        train(CallerSFTConfig(data=str(tmp_path / "none.jsonl"), out=str(tmp_path / "out"), shared_prefix=False,
                              prompt_gradients="own"))
    with pytest.raises(ValueError, match="--prompt-gradients must be one of all, own, none, got 'some'"):
        train(CallerSFTConfig(data=str(tmp_path / "none.jsonl"), out=str(tmp_path / "out"), prompt_gradients="some"))


def test_resuming_with_other_trained_weights_is_an_error_before_loading(tmp_path):
    """A checkpoint whose run trained other tensors (here the top 6 layers) names the flags that differ, before
    anything loads, rather than failing in the optimizer's state load; a missing checkpoint is named too."""
    from mobile_actions.caller.model import write_marker
    from mobile_actions.training.caller import CallerSFTConfig, train

    ckpt = tmp_path / "out" / "checkpoint-40"
    ckpt.mkdir(parents=True)
    write_marker(ckpt, {"method": "lora", "config": {"method": "auto", "lora_r": 16, "lora_top_layers": 6,
                                                    "lora_targets": "all-linear"}})
    cfg = CallerSFTConfig(data=str(tmp_path / "none.jsonl"), out=str(tmp_path / "out"), resume="last")
    with pytest.raises(ValueError, match=r"checkpoint-40: .*\(--lora-top-layers 6 there, 0 here\)"):
        train(cfg)
    with pytest.raises(FileNotFoundError, match="--resume .*nowhere: no such checkpoint directory"):
        train(CallerSFTConfig(data=cfg.data, out=cfg.out, resume=str(tmp_path / "nowhere")))
    base = tmp_path / "base"
    base.mkdir()
    (base / "config.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match="none.jsonl"):   # the same settings: on to the data
        train(CallerSFTConfig(data=cfg.data, out=cfg.out, base=str(base), resume="last", lora_top_layers=6))


def test_all_rows_too_long_is_an_error(tiny_ckpt, tmp_path):
    from mobile_actions.training.caller import CallerSFTConfig, train

    data = write_rows(tmp_path / "rows.jsonl", 2)
    with pytest.raises(ValueError, match="no training rows left"):
        train(CallerSFTConfig(data=str(data), base=str(tiny_ckpt), out=str(tmp_path / "o"), max_length=50))


def test_shared_prefix_gives_the_plain_forwards_loss_and_gradients(tiny_ckpt, rows_file):
    """Loss and gradients with the shared prefix run once equal the plain forward's, padding and the
    sliding-window layers (window 64, rows of several hundred tokens) included."""
    import torch
    from transformers import AutoModelForCausalLM
    from trl.trainer.sft_trainer import DataCollatorForLanguageModeling

    from mobile_actions.dataset import load_rows
    from mobile_actions.caller.model import load_tokenizer
    from mobile_actions.training.caller import encode_rows
    from mobile_actions.training.shared_prefix import MIN_SHARED_PREFIX, shared_prefix_inputs, shared_prefix_length

    def collate(enc):  # trl's collator, as the trainer feeds it: labels -100 outside the model turn
        return DataCollatorForLanguageModeling(pad_token_id=0)(
            [{"input_ids": i, "labels": [t if m else -100 for t, m in zip(i, mask)]}
             for i, mask in zip(enc.input_ids, enc.completion_mask)])

    rows, _ = load_rows(rows_file)
    tok = load_tokenizer(str(tiny_ckpt))
    enc = encode_rows(rows[:4], tok, layout="cache", max_length=4000)
    batch = collate(enc)
    assert (batch["attention_mask"] == 0).any()                      # rows of different lengths: padding
    n = shared_prefix_length(batch["input_ids"], batch["attention_mask"], batch["labels"])
    assert n >= MIN_SHARED_PREFIX and n > 64                          # past the sliding window

    model = AutoModelForCausalLM.from_pretrained(str(tiny_ckpt), dtype=torch.float32).train()

    def grads(loss):
        model.zero_grad()
        loss.backward()
        return [p.grad.clone() for p in model.parameters() if p.grad is not None]

    plain = model(**batch).loss
    g_plain = grads(plain)
    suffix = shared_prefix_inputs(model, batch)
    assert suffix["input_ids"].shape[1] == batch["input_ids"].shape[1] - n
    shared = model(**suffix).loss
    g_shared = grads(shared)
    assert torch.allclose(plain, shared, atol=1e-5), (plain, shared)
    assert len(g_plain) == len(g_shared)
    for a, b in zip(g_plain, g_shared):
        assert torch.allclose(a, b, atol=1e-5, rtol=1e-4)

    # Rows that part early (the official layout opens with the datetime) take the plain forward.
    batch["input_ids"][1, MIN_SHARED_PREFIX // 2] += 1
    assert shared_prefix_inputs(model, batch) is None


def test_step_prefix_gives_each_microbatchs_own_prefix_gradients(tiny_ckpt, rows_file):
    """One prefix pass for the two microbatches of a step, its backward after both, accumulates the
    gradients of running the prefix in each microbatch."""
    import torch
    from transformers import AutoModelForCausalLM
    from trl.trainer.sft_trainer import DataCollatorForLanguageModeling

    from mobile_actions.caller.model import load_tokenizer
    from mobile_actions.dataset import load_rows
    from mobile_actions.training.caller import encode_rows
    from mobile_actions.training.shared_prefix import (MIN_SHARED_PREFIX, StepPrefix, shared_prefix_inputs,
                                                       step_prefix_length, with_prefix)

    rows, _ = load_rows(rows_file)
    enc = encode_rows(rows[:4], load_tokenizer(str(tiny_ckpt)), layout="cache", max_length=4000)
    collate = DataCollatorForLanguageModeling(pad_token_id=0)
    batches = [collate([{"input_ids": i, "labels": [t if m else -100 for t, m in zip(i, mask)]}
                        for i, mask in zip(enc.input_ids[k:k + 2], enc.completion_mask[k:k + 2])]) for k in (0, 2)]
    n = step_prefix_length(batches)
    assert n > 64 and n >= MIN_SHARED_PREFIX                            # past the sliding window
    items = sum(int((b["labels"] != -100).sum()) for b in batches)
    model = AutoModelForCausalLM.from_pretrained(str(tiny_ckpt), dtype=torch.float32).train()

    def loss(inputs):   # the step's mean over its labelled tokens, as trl normalises with num_items_in_batch
        logits = model(**{k: v for k, v in inputs.items() if k != "labels"}).logits[:, :-1]
        labels = inputs["labels"][:, 1:]
        return torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten(), reduction="sum") / items

    model.zero_grad()
    per_microbatch = [loss(shared_prefix_inputs(model, b)) for b in batches]
    for part in per_microbatch:
        part.backward()
    g_each = {k: p.grad.clone() for k, p in model.named_parameters() if p.grad is not None}

    model.zero_grad()
    prefix = StepPrefix.run(model, batches[0]["input_ids"][0, :n])
    once = [loss(with_prefix(b, prefix.leaves, n)) for b in batches]
    for part in once:
        part.backward()
    assert all(layer.keys.grad is not None for layer in prefix.leaves.layers)   # the prefix's share waits there
    prefix.backward()
    g_once = {k: p.grad.clone() for k, p in model.named_parameters() if p.grad is not None}
    for a, b in zip(per_microbatch, once):
        assert torch.allclose(a, b, atol=1e-6), (a, b)
    assert g_each.keys() == g_once.keys()
    for k in g_each:
        assert torch.allclose(g_each[k], g_once[k], atol=1e-5, rtol=1e-4), k

    # A step whose microbatches open differently shares nothing across them.
    batches[1]["input_ids"][:, 3] += 1
    assert step_prefix_length(batches) == 3


def stand_in_sft_trainer(batches: list, items: int, passes: list) -> type:
    """What the shared-prefix trainer needs of trl's SFTTrainer: the step's `batches`, and a loss over the
    step's `items` labelled tokens; each loss pass appends its input shape to `passes`."""
    import copy
    from types import SimpleNamespace

    import torch

    class Base:
        accelerator = SimpleNamespace(distributed_type=SimpleNamespace(name="NO"), num_processes=1, sync_gradients=False)

        def get_batch_samples(self, epoch_iterator, num_batches, device):
            return copy.deepcopy(batches), items

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            passes.append(inputs["input_ids"].shape)
            logits = model(**{k: v for k, v in inputs.items() if k != "labels"}).logits[:, :-1]
            labels = inputs["labels"][:, 1:]
            return torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten(), reduction="sum") / items

        def training_step(self, model, inputs, num_items_in_batch=None):
            loss = self.compute_loss(model, inputs, num_items_in_batch=num_items_in_batch)
            loss.backward()
            return loss.detach()

    return Base


def one_step(trainer, model) -> list:
    """The microbatch losses of one optimizer step of `trainer`, the last one marked as the step's end."""
    step, _ = trainer.get_batch_samples(None, 2, None)
    losses = []
    for k, b in enumerate(step):
        trainer.accelerator.sync_gradients = k == len(step) - 1
        losses.append(trainer.training_step(model, b))
    return losses


def test_step_prefixes_run_each_catalogues_declarations_once_with_the_plain_gradients(tiny_ckpt, tmp_path, monkeypatch):
    """A step mixing two catalogues (microbatches of both): the prefix all rows share runs once, the longer
    one the rows with the extra tool share runs once after it, each microbatch is split by prefix, and loss
    and gradients equal the plain forward's."""
    import json

    import torch
    from transformers import AutoModelForCausalLM
    from trl.trainer.sft_trainer import DataCollatorForLanguageModeling

    from mobile_actions.caller.model import load_tokenizer
    from mobile_actions.dataset import load_rows
    from mobile_actions.training import shared_prefix
    from mobile_actions.training.caller import encode_rows
    from mobile_actions.training.shared_prefix import MIN_SHARED_PREFIX, step_prefixes
    from tests.test_train_fixtures import TOOLS, make_row

    extra = {"function": {"name": "zoom_screen", "description": "Zooms the screen in on what the user names.",
                          "parameters": {"type": "OBJECT", "properties": {
                              "target": {"type": "STRING", "description": "What to zoom in on."}}}}}
    rows = [make_row(i) for i in range(4)]
    for row in rows[1::2]:
        row["tools"] = TOOLS + [extra]
    data = tmp_path / "two-catalogues.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    enc = encode_rows(load_rows(data)[0], load_tokenizer(str(tiny_ckpt)), layout="cache", max_length=4000)
    collate = DataCollatorForLanguageModeling(pad_token_id=0)
    batches = [collate([{"input_ids": i, "labels": [t if m else -100 for t, m in zip(i, mask)]}
                        for i, mask in zip(enc.input_ids[k:k + 2], enc.completion_mask[k:k + 2])]) for k in (0, 2)]
    prefixes = step_prefixes(batches)
    # the step's; the extra tool's rows' (past its declaration); the others' (same datetime, "User: ")
    assert len(prefixes) == 3 and all(len(p) >= len(prefixes[0]) + MIN_SHARED_PREFIX for p in prefixes[1:])
    extra_prefix = next(p for p in prefixes[1:] if torch.equal(batches[0]["input_ids"][1, :len(p)], p))
    assert torch.equal(batches[1]["input_ids"][1, :len(extra_prefix)], extra_prefix)
    items = sum(int((b["labels"] != -100).sum()) for b in batches)
    model = AutoModelForCausalLM.from_pretrained(str(tiny_ckpt), dtype=torch.float32).train()
    passes = []
    Base = stand_in_sft_trainer(batches, items, passes)

    def gradients():
        out = {k: p.grad.clone() for k, p in model.named_parameters() if p.grad is not None}
        model.zero_grad()
        return out

    plain = sum(Base().training_step(model, b) for b in batches)
    g_plain = gradients()
    prefix_passes = []

    def run_prefix(model, ids, past=None):
        prefix_passes.append(ids.shape[1] + (past.get_seq_length() if past is not None else 0))
        return plain_run_prefix(model, ids, past)

    plain_run_prefix = shared_prefix.run_prefix
    monkeypatch.setattr(shared_prefix, "run_prefix", run_prefix)
    losses = one_step(shared_prefix.shared_prefix_trainer(Base)(), model)
    g_shared = gradients()
    assert prefix_passes[0] == len(prefixes[0]) and sorted(prefix_passes) == sorted(map(len, prefixes))   # once each
    assert [s[0] for s in passes[2:]] == [1] * 4                           # each microbatch in two suffix passes
    assert torch.allclose(plain, sum(losses), atol=1e-6), (plain, losses)
    assert g_plain.keys() == g_shared.keys()
    for k in g_plain:
        assert torch.allclose(g_plain[k], g_shared[k], atol=1e-5, rtol=1e-4), k


@pytest.mark.parametrize("held_attention", [False, True])
@pytest.mark.parametrize("prompt_gradients", ["none", "own"])
def test_held_prompt_gradients_keep_the_loss_exact_and_hold_only_the_prompts_keys_and_values(
        tiny_ckpt, rows_file, monkeypatch, held_attention, prompt_gradients):
    """`shared_prefix_trainer(..., prompt_gradients=...)`: the step's loss is the plain forward's, and its
    gradients are those of the plain forward with the held keys and values detached (and no others): "none",
    every one before each microbatch's first answer (the prompt is read, not trained through); "own", those of
    the prefix the step's rows share (each row's datetime and request still train). So with the attention that
    computes no gradient for the held keys and values (`hold_past_attention`)."""
    import torch
    from transformers import AutoModelForCausalLM
    from trl.trainer.sft_trainer import DataCollatorForLanguageModeling

    from mobile_actions.caller.model import load_tokenizer
    from mobile_actions.dataset import load_rows
    from mobile_actions.training import cpu_step, held_attention, shared_prefix
    from mobile_actions.training.caller import encode_rows
    from mobile_actions.training.shared_prefix import MIN_PROMPT_COLUMNS, step_prefixes

    rows, _ = load_rows(rows_file)
    enc = encode_rows(rows[:4], load_tokenizer(str(tiny_ckpt)), layout="cache", max_length=4000)
    collate = DataCollatorForLanguageModeling(pad_token_id=0)
    batches = [collate([{"input_ids": i, "labels": [t if m else -100 for t, m in zip(i, mask)]}
                        for i, mask in zip(enc.input_ids[k:k + 2], enc.completion_mask[k:k + 2])]) for k in (0, 2)]
    items = sum(int((b["labels"] != -100).sum()) for b in batches)
    model = AutoModelForCausalLM.from_pretrained(str(tiny_ckpt), dtype=torch.float32).train()
    held_calls = []
    if held_attention:
        assert cpu_step.hold_past_attention(model, cpu_step.Swaps()) == model.config.num_hidden_layers
        apply = held_attention.HeldPastAttention.apply
        monkeypatch.setattr(held_attention.HeldPastAttention, "apply",
                            lambda *a: held_calls.append(a[0].shape) or apply(*a))

    def loss(inputs):
        logits = model(**{k: v for k, v in inputs.items() if k != "labels"}).logits[:, :-1]
        labels = inputs["labels"][:, 1:]
        return torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten(), reduction="sum") / items

    def gradients():
        out = {k: p.grad.clone() for k, p in model.named_parameters() if p.grad is not None}
        model.zero_grad()
        return out

    plain = sum(loss(b) for b in batches).detach()
    # the reference: the plain forward, keys and values of the held columns detached
    prefixes = step_prefixes(batches)
    assert len(prefixes) == 1
    before_answer = [int((b["labels"] != -100).int().argmax(1).min()) - 1 for b in batches]
    assert min(before_answer) > len(prefixes[0]) + MIN_PROMPT_COLUMNS     # "none" holds more than the prefix
    cuts = before_answer if prompt_gradients == "none" else [len(prefixes[0])] * len(batches)
    held = []
    for b, cut in zip(batches, cuts):
        # (the keys after their norm, [batch, heads, positions, dim]; the values as projected, [batch, positions, width])
        hooks = [m.register_forward_hook(lambda mod, args, out, cut=cut, dim=2 if name.endswith("k_norm") else 1:
                                         torch.cat([out.narrow(dim, 0, cut).detach(),
                                                    out.narrow(dim, cut, out.shape[dim] - cut)], dim))
                 for name, m in model.named_modules() if name.endswith(("k_norm", "v_proj"))]
        held.append(loss(b))
        held[-1].backward()
        for h in hooks:
            h.remove()
    g_held = gradients()
    assert torch.allclose(sum(held), plain, atol=1e-6)
    sum(loss(b) for b in batches).backward()
    g_plain = gradients()

    passes = []
    losses = one_step(shared_prefix.shared_prefix_trainer(stand_in_sft_trainer(batches, items, passes),
                                                           prompt_gradients)(), model)
    g_cut = gradients()
    assert [shape[1] for shape in passes] == [b["input_ids"].shape[1] - cut for b, cut in zip(batches, cuts)]   # only what trains
    assert len(held_calls) == (len(batches) * model.config.num_hidden_layers if held_attention else 0)
    assert torch.allclose(sum(losses), plain, atol=1e-6), (plain, losses)
    assert g_cut.keys() == g_held.keys() == g_plain.keys()
    for k in g_held:
        assert torch.allclose(g_cut[k], g_held[k], atol=1e-5, rtol=1e-4), k
    assert any(not torch.allclose(g_plain[k], g_held[k], atol=1e-5, rtol=1e-4) for k in g_held)   # a different gradient


def test_train_top_layers_runs_the_layers_below_without_gradients_and_keeps_the_top_ones(tiny_ckpt, rows_file):
    """`train_top_layers`: the top layers' LoRA gradients are those of the whole model with the lower LoRA
    weights merely frozen, through a step prefix too; the layers below build no graph and keep no dropout."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM
    from trl.trainer.sft_trainer import DataCollatorForLanguageModeling

    from mobile_actions.caller.model import load_tokenizer
    from mobile_actions.dataset import load_rows
    from mobile_actions.training.caller import encode_rows, train_top_layers
    from mobile_actions.training.shared_prefix import StepPrefix, step_prefix_length, with_prefix

    rows, _ = load_rows(rows_file)
    enc = encode_rows(rows[:2], load_tokenizer(str(tiny_ckpt)), layout="cache", max_length=4000)
    batch = DataCollatorForLanguageModeling(pad_token_id=0)(
        [{"input_ids": i, "labels": [t if m else -100 for t, m in zip(i, mask)]}
         for i, mask in zip(enc.input_ids, enc.completion_mask)])
    n = step_prefix_length([batch])

    def model():
        torch.manual_seed(0)
        m = AutoModelForCausalLM.from_pretrained(str(tiny_ckpt), dtype=torch.float32)
        return get_peft_model(m, LoraConfig(r=4, lora_alpha=8, lora_dropout=0.1, target_modules="all-linear",
                                            init_lora_weights=False))

    def grads(m, inputs, prefix=None):
        m.zero_grad()
        m(**inputs).loss.backward()
        if prefix is not None:
            prefix.backward()
        return {k: p.grad.clone() for k, p in m.named_parameters() if p.grad is not None}

    plain, top = model().eval(), model().eval()   # eval: the same dropout (none) in both
    for k, p in plain.named_parameters():
        if ".layers.0." in k:
            p.requires_grad_(False)
    with pytest.raises(ValueError, match="--lora-top-layers 2: the model has 2 decoder layers"):
        train_top_layers(top, 2)
    assert train_top_layers(top, 0) == 0 and train_top_layers(top, 1) == 1
    lower = top.get_base_model().model.layers[0]
    seen = []
    lower.register_forward_hook(lambda mod, args, out: seen.append((out[0] if isinstance(out, tuple) else out).requires_grad))
    expected = grads(plain, batch)
    assert expected and all(".layers.1." in k for k in expected)
    for name, (a, b) in {k: (expected[k], v) for k, v in grads(top, batch).items()}.items():
        assert torch.allclose(a, b, atol=1e-5, rtol=1e-4), name
    assert grads(top, batch).keys() == expected.keys()
    prefix = StepPrefix.run(top, batch["input_ids"][0, :n])
    assert not prefix.leaves.layers[0].keys.requires_grad and prefix.leaves.layers[1].keys.requires_grad
    for name, (a, b) in {k: (expected[k], v) for k, v in grads(top, with_prefix(batch, prefix.leaves, n), prefix).items()}.items():
        assert torch.allclose(a, b, atol=1e-5, rtol=1e-4), name
    assert seen and not any(seen)
    assert all(isinstance(d, torch.nn.Identity) for m in lower.modules() for d in getattr(m, "lora_dropout", {}).values())
    assert any(isinstance(d, torch.nn.Dropout) for m in top.get_base_model().model.layers[1].modules()
               for d in getattr(m, "lora_dropout", {}).values())


def test_init_adapter_starts_from_saved_weights(tiny_run, tiny_ckpt):
    import torch
    from peft import LoraConfig, get_peft_model
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM

    from mobile_actions.training.caller import load_adapter_weights

    _, res = tiny_run
    saved = load_file(str(res.out / "adapter_model.safetensors"))

    def fresh(r):
        base = AutoModelForCausalLM.from_pretrained(str(tiny_ckpt))
        return get_peft_model(base, LoraConfig(r=r, lora_alpha=8, target_modules="all-linear", task_type="CAUSAL_LM",
                                               trainable_token_indices={"embed_tokens": list(wire.CONTROL_TOKEN_IDS.values())}))

    model = fresh(4)
    load_adapter_weights(model, str(res.out))
    params = dict(model.named_parameters())
    key = next(k for k in saved if "lora_B" in k)
    live = params[key.replace(".weight", ".default.weight")]
    assert torch.equal(live.detach(), saved[key]) and saved[key].abs().sum() > 0   # B starts at 0 untrained
    with pytest.raises(ValueError, match="init-adapter .* do not fit"):
        load_adapter_weights(fresh(8), str(res.out))
    with pytest.raises(FileNotFoundError, match="init-adapter"):
        load_adapter_weights(model, str(res.out / "nope"))


def test_init_adapter_brings_its_own_lora_shape(tiny_run, caplog):
    """r and alpha come from the adapter training goes on from (its scaling is part of its function);
    a different prompt layout is allowed but said."""
    import dataclasses
    import logging

    from mobile_actions.training.caller import with_init_adapter_shape

    cfg, res = tiny_run
    plain = dataclasses.replace(cfg, lora_r=16, lora_alpha=7)
    assert with_init_adapter_shape(plain) is plain
    shaped = with_init_adapter_shape(dataclasses.replace(plain, init_adapter=str(res.out)))
    assert (shaped.lora_r, shaped.lora_alpha) == (4, cfg.lora_alpha)
    assert "layout" not in caplog.text
    with caplog.at_level(logging.WARNING, logger="mobile_actions.train"):
        with_init_adapter_shape(dataclasses.replace(plain, init_adapter=str(res.out), layout="calendar"))
    assert "trained in the cache layout; this run trains in calendar" in caplog.text
    from mobile_actions.training.caller import train

    with pytest.raises(ValueError, match="--layout must be one of official, cache, calendar, got 'calender'"):
        train(dataclasses.replace(plain, layout="calender"))


def test_length_buckets_batch_similar_lengths_in_random_order():
    """Every row once per epoch; batches of similar length; no longest-first curriculum in the order."""
    import random
    import statistics

    from mobile_actions.training.buckets import length_buckets

    lengths = [random.Random(i).randint(20, 400) for i in range(2000)]
    batches = length_buckets(lengths, 8, seed=1)
    assert sorted(i for b in batches for i in b) == list(range(2000))
    assert {len(b) for b in batches} == {8}
    spread = statistics.median(max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in batches)
    assert spread < 20                                    # a random batch of 8 spans ~300
    means = [statistics.mean(lengths[i] for i in b) for b in batches]
    first, last = statistics.mean(means[:50]), statistics.mean(means[-50:])
    assert abs(first - last) < 60                         # long and short batches are mixed through the run
    assert length_buckets(lengths, 8, seed=1) == batches and length_buckets(lengths, 8, seed=2) != batches

    # rows of two kinds (caller and navigator rows open differently): batches keep to one kind
    kinds = [i % 3 == 0 for i in range(2000)]
    batches = length_buckets(lengths, 8, seed=1, kinds=kinds)
    mixed = sum(len({kinds[i] for i in b}) > 1 for b in batches)
    assert mixed <= 2 * (2000 // (8 * 50) + 1)              # at most the batches where a group's kinds meet


def test_bf16_lora_on_cpu_keeps_fp32_adapter_weights(tiny_ckpt, rows_file, tmp_path):
    """--precision bf16 on a CPU stores the frozen base in bf16 (no fp32 copy to cast every step) but
    trains and saves the adapter in fp32, and its loss stays close to the fp32 run's."""
    from safetensors.torch import load_file
    import torch

    from mobile_actions.training.caller import CallerSFTConfig, train

    losses = {}
    for precision in ("fp32", "bf16"):
        cfg = CallerSFTConfig(data=str(rows_file), base=str(tiny_ckpt), out=str(tmp_path / precision), method="lora",
                              max_steps=1, batch_size=2, grad_accum=1, save_steps=10, max_length=600, lr=1e-2,
                              lora_r=4, threads=2, precision=precision, final_eval=False)
        losses[precision] = train(cfg).final_loss
        weights = load_file(str(tmp_path / precision / "adapter_model.safetensors"))
        assert {t.dtype for t in weights.values()} == {torch.float32}
    assert abs(losses["bf16"] - losses["fp32"]) < 0.05 * losses["fp32"], losses


def test_precision_is_checked():
    from mobile_actions.training.caller import use_bf16

    assert use_bf16("fp32", has_gpu=False) is False
    assert use_bf16("bf16", has_gpu=False) is True
    with pytest.raises(ValueError, match="--precision"):
        use_bf16("fp16", has_gpu=False)


def test_cpu_fast_path_gives_the_plain_steps_loss_and_gradients_and_puts_the_model_back(tiny_ckpt, rows_file):
    """`cpu_fast_path` (frozen table, trainable control rows apart, no input casts, compiled elementwise
    chains) changes no loss, logged metric or gradient of a LoRA model with trainable control rows, shared
    prefix included; after the block the model's modules, trl and the environment are as they were."""
    import contextlib
    import os

    import torch
    import trl.trainer.utils as trl_utils
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM
    from trl.trainer.sft_trainer import DataCollatorForLanguageModeling
    from trl.trainer.utils import add_fused_lm_head

    from mobile_actions import wire
    from mobile_actions.caller.model import load_tokenizer
    from mobile_actions.dataset import load_rows
    from mobile_actions.training import cpu_step, elementwise
    from mobile_actions.training.caller import encode_rows
    from mobile_actions.training.fused_head import compact_head_on_cpu, head_bias_visible
    from mobile_actions.training.shared_prefix import shared_prefix_inputs

    rows, _ = load_rows(rows_file)
    enc = encode_rows(rows[:4], load_tokenizer(str(tiny_ckpt)), layout="cache", max_length=4000)
    batch = DataCollatorForLanguageModeling(pad_token_id=0)(
        [{"input_ids": i, "labels": [t if m else -100 for t, m in zip(i, mask)]}
         for i, mask in zip(enc.input_ids, enc.completion_mask)])
    control = list(wire.CONTROL_TOKEN_IDS.values())
    assert any(t in control for t in batch["input_ids"].flatten().tolist())   # the rows use the trained rows

    def model():
        torch.manual_seed(0)
        m = AutoModelForCausalLM.from_pretrained(str(tiny_ckpt), dtype=torch.float32)
        add_fused_lm_head(m, outputs=("log_probs", "entropy", "is_top1"))
        m = get_peft_model(m, LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0, target_modules="all-linear",
                                         init_lora_weights=False, trainable_token_indices={"embed_tokens": control}))
        for name, p in m.named_parameters():   # trained control rows: not what the table says
            if "trainable_tokens_delta" in name:
                p.data += 0.1 * torch.randn_like(p)
        return m.train()

    def step(m, inputs):
        out = m(**inputs, fused_lm_head=True)
        m.zero_grad()
        out.loss.backward()
        grads = {n: p.grad.clone() for n, p in m.named_parameters() if p.grad is not None}
        return out, grads

    def state(m):   # what the fast path may change: instance attributes and the kinds of submodules
        return [(name, sorted(vars(mod)), type(mod).__name__) for name, mod in m.named_modules()]

    plain = model()
    fast = model()
    before, use_triton = state(fast), trl_utils._use_triton
    with contextlib.ExitStack() as run:
        run.enter_context(compact_head_on_cpu())
        for m in (plain, fast):
            run.enter_context(head_bias_visible(m))
        assert run.enter_context(cpu_step.cpu_fast_path(fast, fuse=False))
        assert os.environ["TRANSFORMERS_SDPA_FORCE_GQA"] == "1" and trl_utils._use_triton is not use_triton
        layers = fast.get_base_model().config.num_hidden_layers
        swaps = cpu_step.Swaps()
        run.callback(swaps.undo)
        assert cpu_step.fuse_elementwise(fast, swaps) == layers * 8 + 1   # 6 norms, MLP, attention per layer; final norm
        for inputs in (batch, shared_prefix_inputs(plain, batch)):
            (a, ga), (b, gb) = step(plain, inputs), step(fast, {**inputs, "past_key_values": shared_prefix_inputs(
                fast, batch)["past_key_values"]} if "past_key_values" in inputs else inputs)
            assert torch.allclose(a.loss, b.loss, atol=1e-5), (a.loss, b.loss)
            assert torch.allclose(a.entropy, b.entropy, atol=1e-4)
            assert torch.equal(a.is_top1, b.is_top1) and torch.equal(a.label_mask, b.label_mask)
            assert ga.keys() == gb.keys() and any("trainable_tokens_delta" in n for n in ga)
            for n in ga:
                assert torch.allclose(ga[n], gb[n], atol=1e-5, rtol=1e-4), n
        assert all(f.compiled is not None
                   for f in (elementwise.FUSED_NORM, elementwise.FUSED_ROTARY, elementwise.FUSED_GELU_MUL))
    assert state(fast) == before
    assert "TRANSFORMERS_SDPA_FORCE_GQA" not in os.environ and trl_utils._use_triton is use_triton
    with torch.no_grad():   # the plain forward again
        assert torch.equal(fast(**batch).logits, plain(**batch).logits)


@pytest.mark.parametrize("merged", [True, False])
def test_lora_passes_without_gradients_draw_no_dropout_and_follow_each_update(tiny_ckpt, monkeypatch, merged):
    """`cpu_fast_path`: a training pass without gradients (a prompt held by `--prompt-gradients`) runs LoRA as at
    inference, without dropout: on an fp32 base as one product with W + alpha/r B A (merged), else with LoRA's
    products apart (a bf16 base). Either gives peft's output in eval mode, and follows every update of the weights."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from mobile_actions.training import cpu_step

    def model():
        torch.manual_seed(0)
        m = AutoModelForCausalLM.from_pretrained(str(tiny_ckpt), dtype=torch.float32)
        return get_peft_model(m, LoraConfig(r=4, lora_alpha=8, lora_dropout=0.3, target_modules="all-linear",
                                            init_lora_weights=False))

    if not merged:
        monkeypatch.setattr(cpu_step, "_merged_weight", lambda self: None)
    plain, fast = model().eval(), model().train()
    swaps = cpu_step.Swaps()
    assert cpu_step.swap_in_cpu_step(fast, swaps, fuse=False)
    ids = torch.randint(0, plain.config.vocab_size, (2, 12))
    loras = [m for m in fast.modules() if hasattr(m, "lora_A") and hasattr(m, "base_layer")]
    for _ in range(2):
        with torch.no_grad():
            a, b = plain(input_ids=ids).logits, fast(input_ids=ids).logits
            assert torch.allclose(a, b, atol=1e-4), (a - b).abs().max()
            assert all((getattr(m, "_merged_lora", None) is not None) == merged for m in loras)
            for m in (plain, fast):   # an update of every LoRA weight (in place, as an optimizer's): seen next pass
                for p in m.parameters():
                    if p.requires_grad:
                        p.add_(0.05)
            assert not torch.allclose(plain(input_ids=ids).logits, a, atol=1e-3)
    with torch.no_grad():
        now = plain(input_ids=ids).logits
    assert not torch.allclose(fast(input_ids=ids).logits, now, atol=1e-4)   # with gradients: dropout again


def test_fused_runs_the_plain_function_when_compiling_fails(caplog):
    """No C++ compiler (or an op inductor lacks): `Fused` warns once and runs the function op by op."""
    import torch

    from mobile_actions.training.elementwise import Fused

    def double(x):
        return x * 2

    fused = Fused(double)

    def broken(*args):
        raise RuntimeError("InvalidCxxCompiler: no working C++ compiler found\nmore")

    fused.compiled = broken
    with caplog.at_level("WARNING"):
        assert torch.equal(fused(torch.ones(3)), torch.full((3,), 2.0))
        assert torch.equal(fused(torch.ones(2)), torch.full((2,), 2.0))
    assert fused.compiled is None
    assert [r.getMessage() for r in caplog.records] == [
        "torch.compile of double failed (InvalidCxxCompiler: no working C++ compiler found); running it op by op"]


def test_frozen_head_log_prob_in_bf16_is_close_to_fp32():
    """The bf16 head (what a bf16 base trains with) stays within bf16's rounding of the fp32 one."""
    import torch

    from mobile_actions.training.frozen_head import FrozenHeadLogProb, TOKEN_CHUNK

    torch.manual_seed(0)
    n, vocab, dim = TOKEN_CHUNK + 7, 3000, 64       # two chunks
    table = torch.randn(vocab, dim) / 4
    index = torch.tensor([5, 9, 11])
    targets = torch.randint(0, vocab, (n,))
    targets[:3] = index
    out = {}
    for dtype in (torch.float32, torch.bfloat16):
        hidden = torch.randn(n, dim, generator=torch.Generator().manual_seed(1)).requires_grad_()
        rows = (table[index] + 0.5).clone().requires_grad_()
        logp, _, _ = FrozenHeadLogProb.apply(hidden, table.to(dtype), index, rows, targets)
        logp.sum().backward()
        out[dtype] = (logp.detach(), hidden.grad, rows.grad)
    for a, b in zip(out[torch.float32], out[torch.bfloat16]):
        assert torch.allclose(a, b, atol=0.05, rtol=0.05)
    # and the fp32 head is the plain softmax over the table with the rows replaced
    merged = table.index_copy(0, index, table[index] + 0.5)
    hidden = torch.randn(n, dim, generator=torch.Generator().manual_seed(1))
    assert torch.allclose(out[torch.float32][0], torch.log_softmax(hidden @ merged.T, -1)[torch.arange(n), targets],
                          atol=1e-5)


def test_frozen_head_sparse_backward_keeps_the_loss_and_moves_the_gradient_by_less_than_the_left_out_mass():
    """With `min_prob`, the head's backward runs over the softmax entries >= min_prob only: the loss and the
    control rows' gradient are unchanged, the hidden state's moves by at most the left-out mass times the
    largest table row, and rows where most entries are kept (flat, early in training) are kept whole."""
    import torch

    from mobile_actions.training.frozen_head import DENSE_ROW, FrozenHeadLogProb

    torch.manual_seed(0)
    n, vocab, dim = 300, 5000, 32
    table = torch.randn(vocab, dim)
    index = torch.tensor([5, 9, 11])
    targets = torch.randint(0, vocab, (n,))
    targets[:4] = index[0]
    peaked = table[targets] * 4 + torch.randn(n, dim) * 0.3       # nearly certain of their targets
    flat = torch.randn(n, dim) * 0.01                             # nearly uniform: kept whole
    base = torch.cat([peaked[:250], flat[250:]])
    upstream = torch.randn(n)
    out = {}
    for min_prob in (0.0, 1e-4):
        hidden = base.clone().requires_grad_()
        rows = (table[index] + 0.5).clone().requires_grad_()
        logp, entropy, _ = FrozenHeadLogProb.apply(hidden, table, index, rows, targets, min_prob)
        (logp * upstream).sum().backward()
        out[min_prob] = (logp.detach(), entropy, hidden.grad, rows.grad)
    (la, ea, ha, ra), (lb, eb, hb, rb) = out[0.0], out[1e-4]
    assert torch.equal(la, lb) and torch.equal(ea, eb)
    assert torch.allclose(ra, rb, atol=1e-5)
    merged = table.index_copy(0, index, table[index] + 0.5)
    p = torch.softmax(base @ merged.T, -1)
    left = (p * (p < 1e-4)).index_fill(1, index, 0)
    left[250:] = 0                                                 # flat rows keep all (more than DENSE_ROW) ...
    assert ((p[250:] >= 1e-4).float().mean(1) > DENSE_ROW).all()
    moved = -upstream[:, None] * (left @ merged)                   # ... the others lose exactly what they leave out
    assert torch.allclose(ha - hb, moved, atol=1e-5)
    assert moved[:250].norm(dim=1).max() > 1e-4                   # (10x the tolerance above)
    bound = upstream.abs() * left.sum(1) * merged.norm(dim=1).max() + 1e-5
    assert ((ha - hb).norm(dim=1) <= bound).all()
    # a bf16 table takes the same path, within bf16's rounding
    hidden = base.clone().requires_grad_()
    rows = (table[index] + 0.5).clone().requires_grad_()
    logp, _, _ = FrozenHeadLogProb.apply(hidden, table.bfloat16(), index, rows, targets, 1e-4)
    (logp * upstream).sum().backward()
    assert torch.allclose(logp.detach(), lb, atol=0.1, rtol=0.05) and torch.allclose(hidden.grad, hb, atol=0.1, rtol=0.05)
    # the plain gradient, for min_prob 0
    hidden = base.clone().requires_grad_()
    (torch.log_softmax(hidden @ merged.T, -1)[torch.arange(n), targets] * upstream).sum().backward()
    assert torch.allclose(ha, hidden.grad, atol=1e-4)


def test_gap_dropout_drops_each_element_with_probability_p_independently():
    import torch

    from mobile_actions.training.gap_dropout import GapDropout

    torch.manual_seed(0)
    drop = GapDropout(0.05).train()
    x = torch.ones(4000, 64, dtype=torch.bfloat16)
    y = drop(x)
    dropped = (y == 0).float()
    assert abs(dropped.mean().item() - 0.05) < 0.002
    assert abs(dropped[:, :32].mean().item() - dropped[:, 32:].mean().item()) < 0.004     # no position favoured
    pairs = (dropped.view(-1)[:-1] * dropped.view(-1)[1:]).mean().item()                  # neighbours independent
    assert abs(pairs - 0.05 ** 2) < 0.0008
    assert torch.allclose(y[y != 0].float(), torch.tensor(1 / 0.95), rtol=1e-2)
    assert torch.equal(drop.eval()(x), x)
    small = GapDropout(0.5).train().dropped(3)                # draws on until the positions pass the end
    assert small.tolist() == sorted(set(small.tolist())) and all(0 <= i < 3 for i in small.tolist())
    x = torch.ones(7, requires_grad=True)                    # an odd size; gradients through the kept ones
    drop.train()(x).sum().backward()
    assert all(g == 0 or abs(g - 1 / 0.95) < 1e-6 for g in x.grad.tolist())


def test_compare_loss_curves_tables_mean_loss_per_window(tmp_path):
    from mobile_actions.training.curves import compare_loss_curves

    for name, scale in (("a", 1.0), ("b", 2.0)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "loss.csv").write_text(
            "step,epoch,loss,eval_loss,learning_rate,grad_norm,num_tokens\n"
            + "".join(f"{s},0,{scale * s},,0,0,0\n" for s in range(1, 7)))
    table = compare_loss_curves({"a": tmp_path / "a" / "loss.csv", "b": tmp_path / "b" / "loss.csv"},
                                tmp_path / "ab.png", steps=4, window=2)
    assert table.splitlines()[2:] == ["| 1–2 | 1.5000 | 3.0000 |", "| 3–4 | 3.5000 | 7.0000 |"]
    assert (tmp_path / "ab.png").stat().st_size > 0
    # Runs that logged their steps' seconds: tokens per second over the same steps (a resumed run's included).
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "loss.csv").write_text(
        "step,epoch,loss,eval_loss,learning_rate,grad_norm,num_tokens,seconds\n"
        + "".join(f"{s},0,{s},,0,0,{1000 * s},{0.5 if s % 2 else 1.5}\n" for s in range(1, 7)))
    table = compare_loss_curves({"a": tmp_path / "a" / "loss.csv", "c": tmp_path / "c" / "loss.csv"},
                                tmp_path / "ac.png", steps=4, window=2)
    assert table.splitlines()[-1] == "| training tokens/s, steps 1–4 | – | 1,000 |"


def test_faster_matmul_gives_the_same_product_through_either_blas():
    """The head's matmuls pick torch's or numpy's BLAS by timing their first full-size call; both give a @ b."""
    import torch

    from mobile_actions.training.frozen_head import FasterMatmul

    a, table = torch.randn(130, 64), torch.randn(300, 64)
    mm = FasterMatmul(min_rows=128)
    small = mm(a[:5], table.T, out=torch.empty(5, 300))        # below min_rows: torch's, nothing measured
    assert mm.choice is None and torch.allclose(small, a[:5] @ table.T, atol=1e-5)
    out = mm(a, table.T, out=torch.empty(130, 300))            # the first full-size call measures both
    assert mm.choice in ("torch", "numpy") and set(mm.seconds) == {"torch", "numpy"}
    assert torch.allclose(out, a @ table.T, atol=1e-5)
    for choice in ("torch", "numpy"):
        mm.choice = choice
        assert torch.allclose(mm(a, table.T, out=torch.empty(130, 300)), a @ table.T, atol=1e-5)
        g = torch.randn(130, 300)
        assert torch.allclose(mm(g, table, out=torch.empty(130, 64)), g @ table, atol=1e-4)
    bf16 = mm(a.bfloat16(), table.T.bfloat16(), out=torch.empty(130, 300, dtype=torch.bfloat16))
    assert torch.allclose(bf16.float(), a @ table.T, atol=0.3)  # other dtypes: torch's, in that dtype


@pytest.mark.parametrize("kv_heads", [1, 2])
@pytest.mark.parametrize("masked", [False, True])
def test_held_past_attention_gives_sdpas_output_and_gradients_of_the_query_and_new_positions(kv_heads, masked):
    """`HeldPastAttention` is SDPA (grouped heads, a boolean mask or causal) with no gradient for the cached
    keys and values; a query row that may attend to nothing reads zeros, not NaN."""
    import torch
    import torch.nn.functional as F

    from mobile_actions.training.held_attention import HeldPastAttention

    torch.manual_seed(0)
    b, heads, n, past, dim = 3, 4, 5, 7, 8
    q = torch.randn(b, heads, n, dim, requires_grad=True)
    k_new, v_new = (torch.randn(b, kv_heads, n, dim, requires_grad=True) for _ in range(2))
    k_past, v_past = (torch.randn(b, kv_heads, past, dim) for _ in range(2))
    mask = torch.ones(b, 1, n, past + n, dtype=torch.bool).tril(past)
    mask[0, :, :, :2] = False        # padding on the left of one row
    mask[1, :, 3, :] = False         # a query that sees nothing
    grad = torch.randn(b, heads, n, dim)

    def run(attention):
        for t in (q, k_new, v_new):
            t.grad = None
        out = attention(q, torch.cat([k_past, k_new], 2), torch.cat([v_past, v_new], 2))
        out.backward(grad)
        return out.detach(), [t.grad.clone() for t in (q, k_new, v_new)]

    m = mask if masked else None
    sdpa = run(lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, attn_mask=m if masked else torch.ones(n, past + n, dtype=torch.bool).tril(past),
        enable_gqa=True, scale=0.3))
    held = run(lambda q, k, v: HeldPastAttention.apply(q, k, v, m, 0.3))
    if masked:   # SDPA's NaN row aside (it has no defined answer), the same values
        assert not held[0].isnan().any() and torch.equal(held[0][1, :, 3], torch.zeros(heads, dim))
        sdpa = (sdpa[0].nan_to_num(0.0), sdpa[1])
    assert torch.allclose(held[0], sdpa[0], atol=1e-5)
    for a, e in zip(held[1], sdpa[1]):
        assert not a.isnan().any() and torch.allclose(a, e.nan_to_num(0.0), atol=1e-5)
