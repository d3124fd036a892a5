"""The sparse head: logits for the grammar's few allowed ids give the same greedy choice as the full head."""
from __future__ import annotations

from datetime import datetime

import numpy as np
import pytest

from tests.test_export_support import tiny_export

NOW = datetime(2025, 3, 14, 9, 26, 53)
REQUESTS = ("turn on the flashlight", "email bob@example.com that I am late for dinner",
            "add Ann Lee to my contacts, her number is 555 0199", "show me the nearest pharmacy on the map",
            "schedule a dentist appointment tomorrow at 3pm")


def _compare_along_a_call(caller, request: str) -> int:
    """Decode `request` into a call (the first token forced to <start_function_call>: the random tiny model
    would often write text) under the grammar; at every step whose allowed set is small, run the step with
    and without the sparse head from the same past and compare. Returns how many steps were compared."""
    from mobile_actions import wire
    from mobile_actions.decoding.tokens import pick

    dec = caller.decoder
    con = caller._constraint(caller.tools)
    _, past = dec.forward(caller.encode(caller.prompt(request, now=NOW)))
    tid = wire.CONTROL_TOKEN_IDS[wire.START_CALL]
    compared = 0
    for _ in range(60):
        con.advance(tid)
        if con.state is None:
            break
        pending = [tid] + con.forced_tokens()
        for f in pending[1:]:
            con.advance(f)
        allowed = con.allowed()
        full, nxt = dec.forward(pending, past.prefix(past.length))
        if allowed.dtype != bool and len(allowed) <= dec.max_sparse_rows:
            sparse, sparse_past = dec.forward(pending, past.prefix(past.length), allowed)
            assert sparse.shape == (len(allowed),)
            np.testing.assert_allclose(sparse, full[allowed], rtol=1e-4, atol=1e-5)
            assert int(allowed[int(np.argmax(sparse))]) == pick(full, allowed)
            assert sparse_past.length == nxt.length
            n = nxt.length
            assert all(np.array_equal(a[:, :, :n], b[:, :, :n]) for a, b in zip(sparse_past.buffers, nxt.buffers))
            compared += 1
        tid = pick(full, allowed)
        past = nxt
        if tid in caller.stop_ids:
            break
    return compared


@pytest.mark.parametrize("quant", ["fp32", "int4", "mixed", "q8"])
def test_sparse_head_picks_what_the_full_head_picks(quant):
    from mobile_actions.runtime import Caller

    # q8's lean full head is 4-bit outside its rescored rows: the sparse rows are compared with the 8-bit head
    caller = Caller.from_pretrained(tiny_export(quant, lean_head=False), threads=1)
    assert caller.decoder.sparse_head
    assert sum(_compare_along_a_call(caller, r) for r in REQUESTS) >= 20


def test_lean_full_head_picks_what_the_8_bit_head_picks():
    """q8's full head runs at 4 bits and recomputes its top rows from the 8-bit table: along greedy decoding
    (every step on the full head), the choice and its logit are the 8-bit head's."""
    from mobile_actions.runtime import Caller

    lean = Caller.from_pretrained(tiny_export("q8", split_table=False), threads=1)
    ref = Caller.from_pretrained(tiny_export("q8", lean_head=False), threads=1)
    assert lean.decoder.manifest["lean_full_head"]["rescored_rows"] == 64
    assert ref.decoder.manifest["lean_full_head"] is None
    steps = 0
    for r in REQUESTS:
        ids = lean.encode(lean.prompt(r, now=NOW))
        (got, past), (want, _) = lean.decoder.forward(ids), ref.decoder.forward(ids)
        for _ in range(8):
            best = int(np.argmax(want))
            assert int(np.argmax(got)) == best
            assert abs(float(got[best]) - float(want[best])) < 1e-4
            assert np.abs(got - want).max() > 1e-3      # elsewhere it is the 4-bit head (this is not the 8-bit graph)
            (got, past), (want, _) = lean.decoder.forward([best], past), ref.decoder.forward(ids := ids + [best])
            steps += 1
    assert steps == 8 * len(REQUESTS)


def test_split_table_keeps_the_common_rows_at_8_bits():
    """The split table gathers common rows at 8 bits and the rest from the 4-bit copy: after common pieces the
    sparse logits of common rows are the whole table's, uncommon rows differ a little, and an uncommon piece in
    the input moves the logits a little."""
    import onnx
    from onnx import numpy_helper

    from mobile_actions.runtime import Caller

    folder = tiny_export("q8", split_first_rows=64)
    split = Caller.from_pretrained(folder, threads=1)
    whole = Caller.from_pretrained(tiny_export("q8", split_table=False), threads=1)
    info = split.decoder.manifest["split_table"]
    assert whole.decoder.manifest["split_table"] is None
    index = next(numpy_helper.to_array(t) for t in onnx.load(str(folder / "model.onnx")).graph.initializer
                 if t.name == "split_hot_index")
    hot, cold = np.nonzero(index >= 0)[0], np.nonzero(index < 0)[0]
    assert info["hot_rows"] == len(hot) >= 64 and len(cold) > 100 and info["cold_bits"] == 4
    ids = [int(i) for i in hot[:40]]
    common, uncommon = hot[40:60].astype(np.int64), cold[:20].astype(np.int64)
    (a, _), (b, _) = split.decoder.forward(ids, rows=common), whole.decoder.forward(ids, rows=common)
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    (a, _), (b, _) = split.decoder.forward(ids, rows=uncommon), whole.decoder.forward(ids, rows=uncommon)
    assert not np.allclose(a, b, rtol=1e-5, atol=1e-6) and np.allclose(a, b, atol=0.25 * np.abs(b).max())
    (a, _), (b, _) = (split.decoder.forward(ids + [int(cold[0])], rows=common),
                      whole.decoder.forward(ids + [int(cold[0])], rows=common))
    assert not np.allclose(a, b, rtol=1e-5, atol=1e-6)


def test_hot_rows_keep_common_pieces_their_variants_and_latin_characters():
    from mobile_actions.recipes.export_onnx import hot_rows

    pieces = ["<pad>", "\u2581the", "the", "The", "\u2581Zyx", "Zyx", ",", "é", "漢", ".”", "\u2581Hannah"]
    encode = {"Hannah": [10]}.get
    hot = hot_rows(pieces, lambda t: encode(t, []), texts=["Hannah"], first=2)
    assert [p for p, h in zip(pieces, hot) if h] == ["<pad>", "\u2581the", "the", "The", ",", "é", ".”", "\u2581Hannah"]


def test_caller_output_is_the_same_with_and_without_the_sparse_head():
    from mobile_actions.runtime import Caller

    on = Caller.from_pretrained(tiny_export("mixed"), threads=1, max_new_tokens=40)
    off = Caller.from_pretrained(tiny_export("mixed"), threads=1, max_new_tokens=40, sparse_head=False)
    for r in REQUESTS:
        a, b = on.call(r, now=NOW), off.call(r, now=NOW)
        assert a.raw == b.raw and b.timings["sparse_steps"] == 0


def test_an_export_without_the_sparse_head_still_runs(tmp_path):
    """An export without the sparse head (a head it does not handle, e.g. int8's): the runtime uses the full head."""
    import shutil

    import onnx

    from mobile_actions.recipes.export_onnx import _load, _save, strip_sparse_head
    from mobile_actions.runtime import Caller

    src = tiny_export("fp32")
    for f in src.iterdir():
        if not f.name.startswith("model.onnx"):
            shutil.copy(f, tmp_path / f.name)
    model = _load(src / "model.onnx")
    assert strip_sparse_head(model)
    _save(model, tmp_path / "model.onnx")
    assert "head_ids" not in [i.name for i in onnx.load(str(tmp_path / "model.onnx"), load_external_data=False).graph.input]
    plain = Caller.from_pretrained(tmp_path, threads=1, max_new_tokens=12, constrained=False)
    assert not plain.decoder.sparse_head
    ref = Caller.from_pretrained(src, threads=1, max_new_tokens=12, constrained=False)
    assert plain.call(REQUESTS[0], now=NOW).raw == ref.call(REQUESTS[0], now=NOW).raw
