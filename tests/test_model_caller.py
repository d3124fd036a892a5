"""The caller model: control tokens on ids 46-52, model specs, and (slow) the real base conversion."""
from __future__ import annotations

import json

import pytest

from mobile_actions.caller import model as M
from mobile_actions import wire
from tests.test_train_fixtures import tiny_ckpt  # noqa: F401  (fixture)


def test_tiny_tokenizer_has_control_tokens_as_single_ids(tiny_ckpt):
    tok = M.load_tokenizer(str(tiny_ckpt))
    for text, i in wire.CONTROL_TOKEN_IDS.items():
        assert tok.encode(text, add_special_tokens=False) == [i]
        assert tok.convert_ids_to_tokens(i) == text
    assert list(wire.CONTROL_TOKEN_IDS.values()) == list(range(46, 53))
    text = f"<bos><start_of_turn>model\n{wire.render_call(wire.ToolCall('show_map', {'query': 'a b'}))}<end_of_turn>\n"
    ids = tok.encode(text, add_special_tokens=False)
    assert ids[:2] == [2, 105] and ids.count(52) == 2 and 48 in ids and 49 in ids
    assert tok.decode(ids, skip_special_tokens=False) == text
    assert tok.chat_template == wire.CHAT_TEMPLATE


def test_finish_tokenizer_is_idempotent(tiny_ckpt):
    tok = M.load_tokenizer(str(tiny_ckpt))
    again = M.finish_tokenizer(tok)
    assert again.encode("<escape>", add_special_tokens=False) == [52]


def test_add_control_tokens_refuses_a_foreign_vocabulary():
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast

    vocab = {f"t{i}": i for i in range(200)}
    tok = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel(vocab, unk_token="t0")))
    with pytest.raises(M.ModelError, match="not a Gemma 3 vocabulary"):
        M.add_control_tokens(tok)


def test_resolve_model_specs(tmp_path, tiny_ckpt):
    assert M.resolve_model(str(tiny_ckpt)) == tiny_ckpt
    assert M.resolve_model("google/functiongemma-270m-it") == "google/functiongemma-270m-it"
    with pytest.raises(M.ModelError, match="no such directory"):
        M.resolve_model(str(tmp_path / "missing"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(M.ModelError, match="neither a checkpoint"):
        M.resolve_model(str(tmp_path / "empty"))
    with pytest.raises(M.ModelError, match="expected 'default'"):
        M.resolve_model("nonsense")


def test_cache_dir_follows_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("MOBILE_ACTIONS_CACHE", str(tmp_path))
    assert M.base_dir() == tmp_path / "base" / M.BASE_NAME
    assert not M.is_prepared(M.base_dir())


def test_tiny_checkpoint_loads_and_generates(tiny_ckpt):
    import torch

    model, tok = M.load_caller(str(tiny_ckpt))
    ids = tok("<bos><start_of_turn>user\nhi<end_of_turn>\n<start_of_turn>model\n", add_special_tokens=False,
              return_tensors="pt")
    with torch.inference_mode():
        out = model.generate(**ids, max_new_tokens=3, do_sample=False)
    assert out.shape[1] <= ids["input_ids"].shape[1] + 3
    assert json.loads((tiny_ckpt / M.MARKER).read_text())["kind"] == "base"


@pytest.mark.slow
def test_prepare_real_base(tmp_path):
    """The real conversion (~2 min): GGUF from PyPI -> safetensors with FunctionGemma's control ids."""
    import torch

    path = M.prepare_base(tmp_path)
    assert M.is_prepared(path)
    marker = M.read_marker(path)
    assert marker["source_sha256"] == "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
    assert M.prepare_base(tmp_path) == path  # cached: no second conversion
    model, tok = M.load_caller(str(path))
    for text, i in wire.CONTROL_TOKEN_IDS.items():
        assert tok.encode(text, add_special_tokens=False) == [i]
    assert model.config.vocab_size == 262144 and model.config.num_hidden_layers == 18
    ids = tok("The capital of France is", return_tensors="pt")
    with torch.inference_mode():
        out = model.generate(**ids, max_new_tokens=4, do_sample=False)
    assert "Paris" in tok.decode(out[0]) or "capital" in tok.decode(out[0])


def test_adapters_name_their_base_portably_and_the_hub_cache_resolves_it(tiny_ckpt, tmp_path):
    """An adapter trained on the prepared base names it `mobile-actions/gemma-3-270m` (never a path of
    the training machine), and `model prepare`'s hub-cache entry makes that id load offline."""
    import json

    from huggingface_hub import try_to_load_from_cache

    from mobile_actions.caller import model as M

    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": str(M.base_dir())}))
    M.write_portable_base(adapter, "some/other-base")
    assert json.loads((adapter / "adapter_config.json").read_text())["base_model_name_or_path"] == M.BASE_ID
    (adapter / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": "google/gemma-3-270m"}))
    M.write_portable_base(adapter, "google/gemma-3-270m")
    assert json.loads((adapter / "adapter_config.json").read_text())["base_model_name_or_path"] == "google/gemma-3-270m"

    hub = tmp_path / "hub"
    M.register_in_hf_cache(tiny_ckpt, hub)
    M.register_in_hf_cache(tiny_ckpt, hub)  # idempotent
    found = try_to_load_from_cache(M.BASE_ID, "config.json", cache_dir=hub)
    assert isinstance(found, str) and json.loads(open(found).read())["hidden_size"] == 64


def test_the_bundled_adapter_is_portable():
    import json

    from mobile_actions.caller import model as M

    cfg = json.loads((M.BUNDLED_ADAPTER / "adapter_config.json").read_text())
    assert cfg["base_model_name_or_path"] == M.BASE_ID
    assert (M.BUNDLED_ADAPTER / "tokenizer.json").is_file() and (M.BUNDLED_ADAPTER / "tokenizer_config.json").is_file()


@pytest.mark.slow
def test_autopeft_loads_the_bundled_adapter_offline_after_prepare(tmp_path):
    import os
    import subprocess
    import sys

    from mobile_actions.caller import model as M

    M.prepare_base()
    script = ("from peft import AutoPeftModelForCausalLM; from transformers import AutoTokenizer\n"
              f"m = AutoPeftModelForCausalLM.from_pretrained({str(M.BUNDLED_ADAPTER)!r})\n"
              f"t = AutoTokenizer.from_pretrained({str(M.BUNDLED_ADAPTER)!r})\n"
              "assert t.convert_tokens_to_ids('<start_function_call>') == 48\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, cwd=tmp_path,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert out.returncode == 0, out.stderr[-2000:]
