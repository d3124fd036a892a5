"""The session store: a graph's session packed for this CPU on disk, used only where it computes what the
source graph does, bit for bit (so a stored prompt prefix's keys never depend on where the session came from)."""
import numpy as np

from mobile_actions.runtime.onnx import Decoder
from mobile_actions.runtime.session_store import GRAPH, REFUSED, SessionStore
from tests.test_export_support import tiny_export

IDS = list(range(2, 60))


def _keys_and_logits(decoder: Decoder) -> list[np.ndarray]:
    cache = decoder.new_cache(len(IDS) + 1)
    logits, _ = decoder.forward(IDS, cache)
    return [logits.copy()] + [b[:, :, :len(IDS)].copy() for b in cache.buffers]


def _same(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


def test_a_stored_session_is_used_only_where_it_computes_what_the_source_does(tmp_path):
    """fp32 entries check out and are loaded by the next decoder; onnxruntime 1.31 writes the tiny q8 model's
    packed 8-bit weights so that they read back as NaN: that entry is refused, and the decoder runs the source."""
    for quant in ("fp32", "q8"):
        folder = tiny_export(quant)
        expected = _keys_and_logits(Decoder(folder, 1, session_dir=None))
        store = SessionStore(tmp_path / quant)
        first = Decoder(folder, 1, session_dir=store.root)     # writes and checks the entry
        entry = store.root / store.key(folder / "model.onnx")
        kept = (entry / GRAPH).is_file()
        assert kept != entry.with_suffix(REFUSED).exists()
        assert kept == (quant == "fp32")
        again = Decoder(folder, 1, session_dir=store.root)     # loads it (or, refused, the source)
        for d in (first, again):
            assert _same(_keys_and_logits(d), expected), quant
        mapped = {path for *_, path in again.weights.ranges}
        assert (str((entry / (GRAPH + ".data")).resolve()) in mapped) == kept


def test_a_damaged_entry_is_written_again_and_an_unwritable_store_costs_nothing(tmp_path):
    folder = tiny_export("fp32")
    expected = _keys_and_logits(Decoder(folder, 1, session_dir=None))
    store = SessionStore(tmp_path / "s")
    Decoder(folder, 1, session_dir=store.root)
    entry = store.root / store.key(folder / "model.onnx")
    (entry / GRAPH).write_bytes(b"not a graph")
    assert _same(_keys_and_logits(Decoder(folder, 1, session_dir=store.root)), expected)
    assert (entry / GRAPH).stat().st_size > 100                # written again
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    assert _same(_keys_and_logits(Decoder(folder, 1, session_dir=blocked / "sessions")), expected)


def test_writing_an_entry_removes_the_older_entries_of_the_same_graph(tmp_path):
    import os

    folder = tiny_export("fp32")
    store = SessionStore(tmp_path / "s")
    Decoder(folder, 1, session_dir=store.root)
    old = store.key(folder / "model.onnx")
    graph = folder / "model.onnx"
    st = graph.stat()
    os.utime(graph, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))   # as a re-export would
    try:
        Decoder(folder, 1, session_dir=store.root)
        assert sorted(p.name for p in store.root.iterdir()) == [store.key(graph)] != [old]
    finally:
        os.utime(graph, ns=(st.st_atime_ns, st.st_mtime_ns))
