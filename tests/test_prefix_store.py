"""Filled prompt prefixes: kept on disk across processes, and filled on the prefix graph when an export has one."""
from __future__ import annotations

from datetime import datetime

import numpy as np
import pytest

from mobile_actions.runtime.prefix_store import PrefixStore
from tests.test_export_support import tiny_export

NOW = datetime(2025, 3, 14, 9, 26, 53)


def _caller(folder, store, **kw):
    from mobile_actions.runtime import Caller

    return Caller.from_pretrained(folder, threads=1, prefix_dir=store, constrained=False, max_new_tokens=10, **kw)


def test_a_new_caller_reads_the_prefix_from_disk_and_decodes_the_same(tmp_path):
    folder = tiny_export("fp32")
    first = _caller(folder, tmp_path).call("turn on the flashlight", now=NOW)
    assert first.timings["prefix_from"] == "filled"
    assert len(list(tmp_path.glob("*.kv.npy"))) == 1
    again = _caller(folder, tmp_path).call("turn on the flashlight", now=NOW)
    assert again.timings["prefix_from"] == "disk"
    assert again.raw == first.raw
    unstored = _caller(folder, None).call("turn on the flashlight", now=NOW)
    assert unstored.timings["prefix_from"] == "filled" and unstored.raw == first.raw



def test_a_prefix_read_from_disk_holds_what_later_tokens_attend_to_and_gives_the_same_logits(tmp_path):
    """The tiny model's layer 0 has a sliding window of 8, layer 1 attends to everything: read from the store,
    layer 0 gets its last 8 positions only, and a request after the prefix gets the filled cache's logits exactly."""
    folder = tiny_export("fp32")
    filled = _caller(folder, tmp_path)
    filled.warm()
    read = _caller(folder, tmp_path)
    read.warm()
    assert (filled.prefix_from, read.prefix_from) == ("filled", "disk")
    full, part = filled._prefixes[0].cache, read._prefixes[0].cache
    n = part.length
    assert n == full.length > 8 and part.windowed == n and full.windowed == 0
    assert not part.buffers[0][0, :, : n - 8].any() and not part.buffers[1][0, :, : n - 8].any()
    for k in range(4):
        lo = 0 if k >= 2 else n - 8
        assert np.array_equal(part.buffers[k][0, :, lo:n], full.buffers[k][0, :, lo:n])
    ids = read.encode("<start_of_turn>user\nturn on the flashlight<end_of_turn>\n<start_of_turn>model\n")
    a, _ = filled.decoder.forward(ids, full.prefix(n, room=len(ids) + 4))
    b, _ = read.decoder.forward(ids, part.prefix(n, room=len(ids) + 4))
    assert np.array_equal(a, b)
    with pytest.raises(ValueError, match="sliding-window"):
        part.prefix(n - 1)

def test_a_damaged_or_foreign_file_is_filled_again(tmp_path):
    folder = tiny_export("fp32")
    _caller(folder, tmp_path).call("turn on the flashlight", now=NOW)
    (path,) = tmp_path.glob("*.kv.npy")
    path.write_bytes(b"\x93NUMPY not really")
    r = _caller(folder, tmp_path).call("turn on the flashlight", now=NOW)
    assert r.timings["prefix_from"] == "filled"
    np.save(path, np.zeros((2, 2), np.float32))      # the right name, the wrong shape
    assert _caller(folder, tmp_path).call("turn on the flashlight", now=NOW).timings["prefix_from"] == "filled"
    assert np.load(path).ndim == 4                  # replaced by a real one
    path.write_bytes(path.read_bytes()[:-100])     # the right header, the data cut short
    assert _caller(folder, tmp_path).call("turn on the flashlight", now=NOW).timings["prefix_from"] == "filled"
    np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)   # a pickle is never loaded
    assert _caller(folder, tmp_path).call("turn on the flashlight", now=NOW).timings["prefix_from"] == "filled"


def test_keys_depend_on_export_graph_and_tokens():
    k = PrefixStore.key("e", "decode", (2, 1, 3, 4), [1, 2, 3])
    assert k != PrefixStore.key("f", "decode", (2, 1, 3, 4), [1, 2, 3])
    assert k != PrefixStore.key("e", "prefill", (2, 1, 3, 4), [1, 2, 3])
    assert k != PrefixStore.key("e", "decode", (2, 1, 3, 4), [1, 2, 4])


def test_the_store_evicts_the_least_recently_used(tmp_path):
    import os

    arrays = [np.zeros((1, 4, 256), np.float32)]
    size = PrefixStore(tmp_path).save("size", arrays).stat().st_size
    store = PrefixStore(tmp_path, max_bytes=3 * size)
    store.path("size").unlink()
    for i, name in enumerate("abc"):
        store.save(name, arrays)
        os.utime(store.path(name), (1000 + i, 1000 + i))
    into = [np.zeros((1, 1, 8, 256), np.float32)]
    assert store.read_into("a", (1, 1, 4, 256), into, [0])    # read: now the most recent
    store.save("d", arrays)
    assert {p.name.split(".")[0] for p in tmp_path.glob("*.kv.npy")} == {"a", "c", "d"}


def test_an_unwritable_store_costs_a_fill_not_an_error(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    r = _caller(tiny_export("fp32"), blocked / "kv").call("turn on the flashlight", now=NOW)
    assert r.timings["prefix_from"] == "filled"


def test_the_prefill_graph_fills_keys_close_to_the_decode_graphs(monkeypatch):
    import mobile_actions.runtime.onnx as rt
    from mobile_actions.recipes.export_prefill import PREFILL_ONNX

    folder = tiny_export("q8")
    assert (folder / PREFILL_ONNX).is_file()     # a q8 export comes with its prefill graph
    monkeypatch.setattr(rt, "PREFILL_GRAPH_MIN", 1)
    graph, plain = rt.Decoder(folder, 1), rt.Decoder(folder, 1, prefill_graph=False)
    assert graph.fill_graph(600) == "prefill" and plain.fill_graph(600) == "decode"
    ids = list(range(2, 302))
    a, b = graph.fill(ids, graph.new_cache(len(ids))), plain.fill(ids, plain.new_cache(len(ids)))
    assert a.length == b.length == len(ids)
    for x, y in zip(a.buffers, b.buffers):
        x, y = x[:, :, :len(ids)], y[:, :, :len(ids)]
        assert np.sqrt(((x - y) ** 2).mean()) <= 0.1 * np.sqrt((y ** 2).mean()) + 1e-6
    monkeypatch.setattr(rt, "PREFILL_GRAPH_MIN", 10_000)
    assert graph.fill_graph(600) == "decode"


def test_the_prefill_graphs_keys_do_not_depend_on_the_planners_buffer_reuse(monkeypatch):
    """Its session is created without the planner's buffer reuse (fast to create); the keys a stored prefix
    holds were filled with it, and must be bit for bit the same."""
    import mobile_actions.runtime.onnx as rt

    monkeypatch.setattr(rt, "PREFILL_GRAPH_MIN", 1)
    folder = tiny_export("q8")
    fast, planned = rt.Decoder(folder, 1), rt.Decoder(folder, 1)
    made = []
    session = planned._session
    planned._session = lambda path, plan_reuse=True: made.append(plan_reuse) or session(path, plan_reuse=True)
    ids = list(range(2, 302))
    a, b = fast.fill(ids, fast.new_cache(len(ids))), planned.fill(ids, planned.new_cache(len(ids)))
    assert made == [False]                       # the runtime's own fill asked for none
    for x, y in zip(a.buffers, b.buffers):
        assert np.array_equal(x[:, :, :len(ids)], y[:, :, :len(ids)])


@pytest.mark.parametrize("bits", [7, 8])
def test_requantised_columns_stay_close_to_the_blocks(bits):
    from mobile_actions.recipes.export_prefill import requantize_columns

    rng = np.random.default_rng(0)
    q = rng.integers(0, 256, size=(8, 2, 16), dtype=np.uint8)
    scales = rng.uniform(0.01, 0.02, size=16).astype(np.float32)
    w = ((q.astype(np.float32) - 128) * scales.reshape(8, 2, 1)).reshape(8, 32).T
    qi, col = requantize_columns(q, scales, bits)
    assert qi.shape == (32, 8) and qi.dtype == np.int8 and np.abs(qi).max() <= (1 << (bits - 1)) - 1
    assert np.abs(qi * col[None, :] - w).max() <= col.max() / 2 + 1e-6
