"""The export also runs under onnxruntime-genai: same folder, same greedy tokens as our runtime."""
from __future__ import annotations

import json

import pytest

from tests.test_export_support import tiny_export


def test_genai_config_names_the_graph_io():
    out = tiny_export("fp32")
    cfg = json.loads((out / "genai_config.json").read_text())
    m = json.loads((out / "manifest.json").read_text())
    dec = cfg["model"]["decoder"]
    # genai's own graph: the sparse head's rows input with its default (genai never feeds it), same weights file
    assert cfg["model"]["type"] == "gemma3_text" and dec["filename"] == m["genai_onnx"] == "model.genai.onnx"
    import onnx

    genai = onnx.load(str(out / dec["filename"]), load_external_data=False).graph
    ours = onnx.load(str(out / m["onnx"]), load_external_data=False).graph
    assert "head_ids" in {t.name for t in genai.initializer} - {t.name for t in ours.initializer}
    assert {t.external_data[0].value for t in genai.initializer if t.external_data} == {"model.onnx.data"}
    assert dec["inputs"]["past_key_names"] == "past_key_values.%d.key"
    assert dec["outputs"]["present_value_names"] == "present.%d.value"
    assert (dec["num_hidden_layers"], dec["num_key_value_heads"], dec["head_size"]) == (
        m["num_layers"], m["num_kv_heads"], m["head_dim"])
    assert cfg["model"]["eos_token_id"] == m["stop_token_ids"] and cfg["model"]["vocab_size"] == m["vocab_size"]
    # GroupQueryAttention writes into the past buffer: genai preallocates it once (max_length)
    assert cfg["search"]["past_present_share_buffer"] is True and cfg["search"]["do_sample"] is False


def _genai_greedy(folder, ids, n):
    og = pytest.importorskip("onnxruntime_genai")
    model = og.Model(str(folder))
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=len(ids) + n, do_sample=False)
    gen = og.Generator(model, params)
    gen.append_tokens(ids)
    out: list[int] = []
    while not gen.is_done() and len(out) < n:
        gen.generate_next_token()
        out.append(int(gen.get_next_tokens()[0]))
    return out


@pytest.mark.parametrize("quant", ["fp32", "mixed", "q8"])
def test_onnxruntime_genai_greedy_equals_our_runtime(quant):
    pytest.importorskip("onnxruntime_genai")
    from mobile_actions.runtime import Caller

    folder = tiny_export(quant)
    caller = Caller.from_pretrained(folder, threads=1)
    for request in ("turn on the flashlight", "email bob@example.com that I am late"):
        ids = caller.encode(caller.prompt(request))
        assert len(ids) > 500                                          # a prefill of hundreds of tokens
        ours = caller.decoder.greedy(ids, 12, caller.stop_ids)
        assert _genai_greedy(folder, ids, 12)[:len(ours)] == ours
