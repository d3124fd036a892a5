"""`adapter merge`: the merged LoRA is exactly the weighted average of the merged models."""
from __future__ import annotations

import json

import pytest

from mobile_actions import wire
from tests.test_train_fixtures import tiny_ckpt  # noqa: F401  (fixture)


def _random_adapter(base, out, *, r: int, alpha: int, seed: int, rslora: bool = False, layout: str = "cache"):
    """A LoRA on the tiny model with random (nonzero) A, B and control-token rows, saved like ours."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_pretrained(str(base))
    cfg = LoraConfig(r=r, lora_alpha=alpha, target_modules="all-linear", use_rslora=rslora,
                     trainable_token_indices={"embed_tokens": list(wire.CONTROL_TOKEN_IDS.values())})
    peft_model = get_peft_model(model, cfg)
    with torch.no_grad():
        for name, p in peft_model.named_parameters():
            if "lora_" in name or "trainable_tokens_delta" in name:
                p.copy_(torch.randn_like(p) * 0.1)
    peft_model.save_pretrained(str(out))
    marker = {"kind": "adapter", "format": 1, "base": str(base), "layout": layout, "method": "lora", "steps": seed}
    (out / "mobile_actions.json").write_text(json.dumps(marker))
    return out


def _weights(spec):
    from mobile_actions.caller.model import load_caller

    model, _ = load_caller(str(spec))
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def test_merge_is_the_weighted_average_of_the_models(tiny_ckpt, tmp_path):
    from mobile_actions.caller.adapters import merge_adapters
    from mobile_actions.caller.model import read_marker

    a = _random_adapter(tiny_ckpt, tmp_path / "a", r=4, alpha=8, seed=1)
    b = _random_adapter(tiny_ckpt, tmp_path / "b", r=2, alpha=2, seed=2, rslora=True)
    out = merge_adapters([str(a), str(b)], tmp_path / "ab", weights=[3, 1])

    wa, wb, wm = _weights(a), _weights(b), _weights(out)
    base = _weights(tiny_ckpt)
    assert wa.keys() == wm.keys()
    changed = 0
    for k in wm:
        expected = 0.75 * wa[k] + 0.25 * wb[k]
        assert (wm[k] - expected).abs().max() < 1e-5, k
        changed += not (wm[k] - base[k]).abs().max() < 1e-6
    assert changed > 10  # LoRA'd projections and the embedding rows all moved
    marker = read_marker(out)
    assert marker["rank"] == 6 and marker["layout"] == "cache" and marker["base"] == str(tiny_ckpt)
    assert [m["weight"] for m in marker["merged_from"]] == [0.75, 0.25]
    assert json.loads((out / "adapter_config.json").read_text())["r"] == 6


def test_merge_at_a_lower_rank_is_the_best_approximation_of_the_average(tiny_ckpt, tmp_path):
    import torch
    from safetensors.torch import load_file

    from mobile_actions.caller.adapters import merge_adapters
    from mobile_actions.caller.model import read_marker

    a = _random_adapter(tiny_ckpt, tmp_path / "a", r=4, alpha=8, seed=1)
    b = _random_adapter(tiny_ckpt, tmp_path / "b", r=4, alpha=8, seed=2)
    exact = load_file(str(merge_adapters([str(a), str(b)], tmp_path / "exact") / "adapter_model.safetensors"))
    small_dir = merge_adapters([str(a), str(b)], tmp_path / "r3", rank=3)
    small = load_file(str(small_dir / "adapter_model.safetensors"))
    marker = read_marker(small_dir)
    assert marker["rank"] == 3 and marker["truncated_from_rank"] == 8 and 0 < marker["energy_kept_min"] < 1
    assert json.loads((small_dir / "adapter_config.json").read_text())["r"] == 3
    for name in (n for n in exact if ".lora_A." in n):
        b_name = name.replace(".lora_A.", ".lora_B.")
        delta = (exact[b_name] @ exact[name]).double()
        approx = (small[b_name] @ small[name]).double()
        assert small[name].shape[0] == 3
        sv = torch.linalg.svdvals(delta)            # Eckart-Young: the error is the dropped singular values
        assert torch.allclose(torch.linalg.matrix_norm(delta - approx), sv[3:].norm(), rtol=1e-4, atol=1e-6)
    # at the full rank nothing is approximated
    same = merge_adapters([str(a), str(b)], tmp_path / "r8", rank=8)
    assert "truncated_from_rank" not in read_marker(same)


def test_merge_refuses_mismatches_with_the_reason(tiny_ckpt, tmp_path):
    from mobile_actions.caller.adapters import AdapterError, merge_adapters

    a = _random_adapter(tiny_ckpt, tmp_path / "a", r=2, alpha=4, seed=1)
    b = _random_adapter(tiny_ckpt, tmp_path / "b", r=2, alpha=4, seed=2, layout="official")
    with pytest.raises(AdapterError, match="prompt layout"):
        merge_adapters([str(a), str(b)], tmp_path / "x")
    with pytest.raises(AdapterError, match="not a PEFT adapter"):
        merge_adapters([str(a), str(tmp_path)], tmp_path / "x")
    with pytest.raises(AdapterError, match="positive"):
        merge_adapters([str(a), str(a)], tmp_path / "x", weights=[1, -1])
    with pytest.raises(AdapterError, match="must not be one of the inputs"):
        merge_adapters([str(a), str(a)], a)
    c = _random_adapter(tiny_ckpt, tmp_path / "c", r=2, alpha=4, seed=3)
    (a / "tokenizer.json").write_text('{"model": {"vocab": {"a": 0, "b": 1}}}')
    (c / "tokenizer.json").write_text('{"model": {"vocab": {"a": 1, "b": 0}}}')
    with pytest.raises(AdapterError, match="tokenizer.json differs"):
        merge_adapters([str(a), str(c)], tmp_path / "x")
    assert not (tmp_path / "x").exists()  # refused before anything is written


def test_merge_keeps_routing_and_grounding_and_reads_tokenizers_by_their_ids(tiny_ckpt, tmp_path):
    from mobile_actions.caller.adapters import merge_adapters
    from mobile_actions.caller.model import read_marker

    a = _random_adapter(tiny_ckpt, tmp_path / "a", r=2, alpha=4, seed=1)
    b = _random_adapter(tiny_ckpt, tmp_path / "b", r=2, alpha=4, seed=2)
    marker = json.loads((b / "mobile_actions.json").read_text())
    (b / "mobile_actions.json").write_text(json.dumps({**marker, "routes": True}))
    policies = {"arguments": {"show_map.query": {"n": 9, "verbatim": 9, "share": 1.0, "policy": "span"}}}
    (b / "grounding.json").write_text(json.dumps(policies))
    # the same pieces and ids; merges written as "a b" by one version of `tokenizers`, as pairs by another
    (a / "tokenizer.json").write_text('{"model": {"vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}}')
    (b / "tokenizer.json").write_text('{"model": {"vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]}}')
    out = merge_adapters([str(a), str(b)], tmp_path / "ab")
    assert read_marker(out)["routes"] is True
    assert json.loads((out / "grounding.json").read_text()) == policies


def test_cli_merge_reports_errors_and_writes(tiny_ckpt, tmp_path, capsys):
    from mobile_actions.cli.main import main

    a = _random_adapter(tiny_ckpt, tmp_path / "a", r=2, alpha=4, seed=1)
    b = _random_adapter(tiny_ckpt, tmp_path / "b", r=2, alpha=4, seed=2)
    assert main(["adapter", "merge", str(a), str(b), "--weights", "1,x", "--out", str(tmp_path / "m")]) == 2
    assert "--weights" in capsys.readouterr().err
    assert main(["adapter", "merge", str(a), str(b), "--out", str(tmp_path / "m")]) == 0
    assert "rank-4 LoRA" in capsys.readouterr().out
