"""Export of the tiny random Gemma 3: ONNX fp32 greedy == PyTorch, folder contents, int4/int8 run."""
from __future__ import annotations

import json

import numpy as np
import onnx

from tests.test_export_support import check_of, tiny_export


def test_fp32_greedy_matches_pytorch_beyond_the_sliding_window():
    check = check_of("fp32")
    assert check["equal"], check
    # the tiny model's window is 8 tokens; prompts are hundreds, so the sliding mask is exercised
    assert all(p["prompt_tokens"] > 100 for p in check["prompts"])


def test_folder_has_everything_the_runtime_needs():
    out = tiny_export("fp32")
    m = json.loads((out / "manifest.json").read_text())
    for f in ("model.onnx", "tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "token_table.npz",
              "genai_config.json"):
        assert (out / f).is_file(), f
    assert m["quant"] == "fp32" and m["layout"] == "cache" and len(m["source_sha256"]) == 64
    assert m["format_version"] == 3
    assert m["control_token_ids"]["<escape>"] == 52 and 106 in m["stop_token_ids"] and 50 in m["stop_token_ids"]
    g = onnx.load(str(out / "model.onnx"), load_external_data=False).graph
    names = [i.name for i in g.input]
    assert names[:5] == ["input_ids", "attention_mask", "position_ids", "past_key_values.0.key",
                         "past_key_values.0.value"]
    outs = {o.name: o for o in g.output}
    assert "present.1.value" in outs
    # a fixed logits shape [batch, 1, width]: onnxruntime-genai then reads the head as pruned to the last
    # position; the width is the vocabulary, or the rows asked for through the sparse head's optional input
    dims = outs["logits"].type.tensor_type.shape.dim
    assert (dims[0].dim_param, dims[1].dim_value, dims[2].dim_param) == ("batch", 1, "vocab_or_head_rows")
    assert "head_ids" in names and m["sparse_head"]["input"] == "head_ids"
    # attention is onnxruntime's fused op, one per layer, sliding layers with the window
    gqa = [n for n in g.node if n.op_type == "GroupQueryAttention"]
    assert len(gqa) == m["num_layers"] and all(n.domain == "com.microsoft" for n in gqa)
    windows = [next(a.i for a in n.attribute if a.name == "local_window_size") for n in gqa]
    assert windows == [m["sliding_window"] if t == "sliding_attention" else -1 for t in m["layer_types"]]


def _first_logits(folder):
    from mobile_actions.runtime import Decoder

    d = Decoder.from_folder(folder)
    logits, cache = d.forward([2, 105, 10, 20, 30])
    assert cache.length == 5
    return logits


def test_int4_and_int8_run_and_stay_close():
    ref = _first_logits(tiny_export("fp32"))
    for quant, op in (("int4", "MatMulNBits"), ("int8", "MatMulInteger")):
        out = tiny_export(quant)
        ops = {n.op_type for n in onnx.load(str(out / "model.onnx"), load_external_data=False).graph.node}
        assert op in ops and "GatherBlockQuantized" in ops, (quant, ops)
        got = _first_logits(out)
        assert np.corrcoef(ref, got)[0, 1] > 0.9, quant


def test_int4_tied_embedding_is_stored_once_with_identical_logits(tmp_path):
    from mobile_actions.recipes.export_onnx import quantize

    shared = tiny_export("int4")
    unshared = tmp_path / "model.onnx"
    quantize(tiny_export("fp32") / "model.onnx", unshared, "int4", tied=False)
    for f in ("manifest.json", "tokenizer.json"):
        (tmp_path / f).write_bytes((shared / f).read_bytes())
    assert np.array_equal(_first_logits(shared), _first_logits(tmp_path))
    size = lambda d: sum(f.stat().st_size for f in d.glob("model.onnx*"))  # noqa: E731
    assert size(shared) < size(tmp_path)


def test_int8_layers_get_8bit_blocks_and_stay_closer(tmp_path):
    """`int8_layers`: those layers' 7 projections become 8-bit MatMulNBits, the rest stay 4-bit, and
    the logits move towards fp32's. Unknown layers are refused by number."""
    import pytest

    from mobile_actions.recipes.export_onnx import layer_projections, quantize

    fp32 = tiny_export("fp32") / "model.onnx"
    int4 = tiny_export("int4")
    for f in ("manifest.json", "tokenizer.json"):
        (tmp_path / f).write_bytes((int4 / f).read_bytes())
    quantize(fp32, tmp_path / "model.onnx", "int4", tied=True, int8_layers=(-1,))   # the 2nd of 2 layers
    g = onnx.load(str(tmp_path / "model.onnx"), load_external_data=False).graph
    bits = {n.name: next((a.i for a in n.attribute if a.name == "bits"), None) for n in g.node
            if n.op_type == "MatMulNBits"}
    eight = {name for name, b in bits.items() if b == 8}
    assert len(eight) == 7 and all("proj_1/" in name for name in eight), eight
    assert {b for name, b in bits.items() if name not in eight} == {4}
    assert any("proj/" in name for name in bits if name not in eight)              # layer 0 stays 4-bit
    ref, mixed, plain = _first_logits(tiny_export("fp32")), _first_logits(tmp_path), _first_logits(int4)
    assert np.abs(mixed - ref).mean() < np.abs(plain - ref).mean()
    with pytest.raises(ValueError, match=r"layer\(s\) \[7\] not found \(the graph has layers 0-1\)"):
        layer_projections(onnx.load(str(fp32), load_external_data=False), [7])


def test_mixed_is_4bit_table_and_head_with_8bit_decoder_layers():
    out = tiny_export("mixed")
    g = onnx.load(str(out / "model.onnx"), load_external_data=False).graph
    bits = {n.name: {a.name: a.i for a in n.attribute} for n in g.node if n.op_type in ("MatMulNBits",
                                                                                       "GatherBlockQuantized")}
    proj = [a for name, a in bits.items() if "proj" in name]
    assert len(proj) == 14 and all(a["bits"] == 8 and a["block_size"] == 128 for a in proj)
    rest = [a for name, a in bits.items() if "proj" not in name]
    assert rest and all(a.get("bits", 4) == 4 and a["block_size"] == 32 for a in rest), bits
    m = json.loads((out / "manifest.json").read_text())
    assert m["quant"] == "mixed" and m["quant_params"]["int8_block_size"] == 128
    branches = {a.name: a.g for n in g.node if n.name == "sparse_head_if" for a in n.attribute}
    head = next(n for n in branches["else_branch"].node if n.op_type == "MatMulNBits" and "lm_head" in n.name)
    sparse = next(n for n in branches["then_branch"].node if n.op_type == "GatherBlockQuantized")
    assert sparse.input[0] == head.input[1]                                        # the sparse head reads it too
    table = next(n for n in g.node if n.op_type == "GatherBlockQuantized")
    assert table.input[0] == head.input[1]                                         # the tied table, stored once
    assert np.corrcoef(_first_logits(tiny_export("fp32")), _first_logits(out))[0, 1] > 0.9


def test_q8_is_8bit_blocks_everywhere_with_the_table_stored_once():
    """q8 (the default): every projection and the head as 8-bit MatMulNBits blocks (128; 64 for the tiny model's
    hidden size); the embedding
    gathers the head's 8-bit table (one copy), and the logits stay close to fp32's. With the lean full head (the
    default) the full-vocabulary branch is a 4-bit copy whose top rows are gathered from that 8-bit table."""
    out = tiny_export("q8", lean_head=False)
    g = onnx.load(str(out / "model.onnx"), load_external_data=False).graph
    branches = {a.name: a.g for n in g.node if n.name == "sparse_head_if" for a in n.attribute}
    nodes = list(g.node) + list(branches["else_branch"].node)
    mm = [{a.name: a.i for a in n.attribute} for n in nodes if n.op_type == "MatMulNBits"]
    assert len(mm) == 2 * 7 + 1 and all(a["bits"] == 8 and a["block_size"] == 64 for a in mm)   # 128 for 270M
    head = next(n for n in branches["else_branch"].node if "lm_head" in n.name)
    table = next(n for n in g.node if n.op_type == "GatherBlockQuantized")
    assert table.input[0] == head.input[1] and {a.name: a.i for a in table.attribute}["bits"] == 8
    assert not any(n.op_type == "Gather" and "input_ids" in n.input for n in g.node)
    m = json.loads((out / "manifest.json").read_text())
    assert m["quant"] == "q8" and m["quant_params"]["bits"] == 8 and m["sparse_head"]
    ref = _first_logits(tiny_export("fp32"))
    got = _first_logits(out)
    assert np.abs(got - ref).mean() < np.abs(_first_logits(tiny_export("mixed")) - ref).mean()
    assert m["lean_full_head"] is None

    lean = tiny_export("q8", split_table=False)
    g = onnx.load(str(lean / "model.onnx"), load_external_data=False).graph
    els = next(a.g for n in g.node if n.name == "sparse_head_if" for a in n.attribute if a.name == "else_branch")
    four = next(n for n in els.node if n.op_type == "MatMulNBits")
    assert four.name == "lean_head" and {a.name: a.i for a in four.attribute}["bits"] == 4
    rescore = next(n for n in els.node if n.op_type == "GatherBlockQuantized")
    assert rescore.input[0] == head.input[1] and [n.op_type for n in els.node][-1] == "ScatterElements"
    assert json.loads((lean / "manifest.json").read_text())["lean_full_head"]["bits"] == 4

    # the split table (the default): every gather reads the hot 8-bit rows or the lean head's 4-bit copy
    split = tiny_export("q8")
    g = onnx.load(str(split / "model.onnx"), load_external_data=False).graph
    gathers = [n for n in g.node if n.op_type == "GatherBlockQuantized"]
    assert {n.input[0] for n in gathers} == {"split_hot_table", "lean_head_weight"}
    assert head.input[1] not in {t.name for t in g.initializer}          # no whole 8-bit table left
    assert json.loads((split / "manifest.json").read_text())["split_table"]["cold_bits"] == 4


def test_the_tokenizer_file_is_written_compact_and_tokenizes_the_same(tmp_path):
    from tokenizers import Tokenizer

    from mobile_actions.recipes.export_onnx import compact_tokenizer_file
    from tests.tiny import build_tokenizer

    path = tmp_path / "tokenizer.json"
    build_tokenizer().save(str(path))
    before = Tokenizer.from_file(str(path))
    assert isinstance(json.loads(path.read_text())["model"]["merges"][0], list)
    compact_tokenizer_file(path)
    assert isinstance(json.loads(path.read_text())["model"]["merges"][0], str)
    after = Tokenizer.from_file(str(path))
    for text in ("Email ana@example.com: the Louvre's address, 99 Rue de Rivoli!", "turn on the flashlight\n\n",
                 "<start_function_call>call:show_map{query:<escape>Zürich HB<escape>}<end_function_call>"):
        assert after.encode(text).ids == before.encode(text).ids


def test_a_quantised_export_that_garbles_free_text_fails_its_self_check():
    from mobile_actions.recipes.export_onnx import check_ok, check_problem, garbled

    # what step 1,600's q8 export wrote after the apostrophe, against its fp32 export's answer
    assert garbled("Sorry, I can'\u0d9c\u1a2b\u0f40", "Sorry, I can't help with that. Book me a taxi")
    assert not garbled("Sorry, I can’t do that.", "Sorry, I can't help with that.")
    assert not garbled("Désolé, je ne peux pas.", "Réserve-moi un taxi, désolé")   # the request's own letters
    ok = {"fp32": {"equal": True}, "accuracy": {"garbled_texts": 0}}
    bad = {"fp32": {"equal": True}, "accuracy": {"garbled_texts": 3}}
    assert check_ok(ok) and not check_ok(bad)
    assert "garbled 3" in check_problem(bad)
    assert "PyTorch" in check_problem({"fp32": {"equal": False}})
