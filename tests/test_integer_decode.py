"""The integer decode graph: a request's tokens on the integer GEMM, smoothed from a calibration on the decode graph
itself; run when asked for (or, asked for "auto", on CPUs without an 8-bit dot product), and said in each answer's
timings."""
import shutil

import numpy as np
import pytest

from mobile_actions.runtime import onnx as rt
from tests.test_export_support import tiny_export


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A copy of the tiny q8 export with its integer decode graph (the shared export stays without)."""
    from mobile_actions.recipes.export_prefill import INT_DECODE_ONNX, add_integer_decode_graph

    out = tmp_path_factory.mktemp("int") / "q8"
    shutil.copytree(tiny_export("q8"), out)
    info = add_integer_decode_graph(out, rows=2)
    assert info["onnx"] == INT_DECODE_ONNX and info["replaced_matmuls"] > 0 and (out / INT_DECODE_ONNX).is_file()
    return out


def _run(decoder: rt.Decoder) -> tuple[np.ndarray, list[np.ndarray]]:
    cache = decoder.new_cache(64)
    logits, _ = decoder.forward(list(range(2, 40)), cache)
    return logits.copy(), [b[:, :, :38].copy() for b in cache.buffers]


def test_it_computes_what_the_decode_graph_does_within_its_quantisation(folder):
    integer, plain = rt.Decoder(folder, 1, integer_decode=True), rt.Decoder(folder, 1, integer_decode=False)
    assert integer.integer_decode and not plain.integer_decode
    assert integer.fill_graph(10) == "decode-int" and plain.fill_graph(10) == "decode"   # stored prefixes apart
    (a, keys_a), (b, keys_b) = _run(integer), _run(plain)
    assert not np.array_equal(a, b)                                   # it is another graph ...
    assert np.sqrt(((a - b) ** 2).mean()) <= 0.1 * np.sqrt((b ** 2).mean())       # ... close to the first
    for x, y in zip(keys_a, keys_b):
        assert np.sqrt(((x - y) ** 2).mean()) <= 0.1 * np.sqrt((y ** 2).mean()) + 1e-6


def test_it_is_chosen_by_the_cpu_or_the_environment_and_only_where_the_export_has_it(folder, monkeypatch):
    from mobile_actions.runtime import cpu

    monkeypatch.delenv(rt.INTEGER_ENV, raising=False)
    monkeypatch.setattr(cpu, "slow_int8_matmul", lambda: True)
    assert not rt.Decoder(folder, 1).integer_decode                    # off unless asked for
    monkeypatch.setenv(rt.INTEGER_ENV, "auto")
    for slow in (True, False):
        monkeypatch.setattr(cpu, "slow_int8_matmul", lambda slow=slow: slow)
        assert rt.Decoder(folder, 1).integer_decode == slow
    monkeypatch.setenv(rt.INTEGER_ENV, "on")
    assert rt.Decoder(folder, 1).integer_decode
    assert not rt.Decoder(tiny_export("q8"), 1).integer_decode         # an export without the graph


def test_a_caller_says_which_graph_decoded(folder):
    from datetime import datetime

    caller = rt.Caller(folder, threads=1, decoder=rt.Decoder(folder, 1, integer_decode=True), max_new_tokens=8)
    res = caller.call("turn on the flashlight", now=datetime(2025, 3, 3, 9, 0))
    assert res.timings["decode_graph"] == "integer"


def test_the_cpu_flags_tell_a_slow_int8_matmul(monkeypatch):
    from mobile_actions.runtime import cpu

    monkeypatch.setattr(cpu.platform, "machine", lambda: "x86_64")
    for flags, slow in (("fpu avx2 fma", True), ("avx2 avx512f avx512_vnni", False), ("avx2 avx_vnni", False)):
        monkeypatch.setattr(cpu, "_first_processor", lambda flags=flags: (("flags", flags),))
        assert cpu.slow_int8_matmul() == slow
    monkeypatch.setattr(cpu.platform, "machine", lambda: "aarch64")
    assert not cpu.slow_int8_matmul()
