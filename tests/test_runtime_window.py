"""The local layers' window: their buffers bound from a window behind the query (`window_start`), so they no longer
compute the keys their mask hides, with the logits and the cache exactly as when they see the whole past."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.test_export_support import tiny_export


def _pair(quant: str):
    from mobile_actions.runtime.onnx import Decoder

    folder = tiny_export(quant)
    windowed, whole = Decoder(folder, 1, prefill_graph=False), Decoder(folder, 1, prefill_graph=False)
    whole.window_start = lambda p: 0  # the same graph from position 0: every local key computed, then masked
    return windowed, whole


def test_the_export_adds_the_window_start_to_its_graphs():
    import onnx

    from mobile_actions.recipes.export_onnx import GENAI_ONNX
    from mobile_actions.recipes.export_prefill import PREFILL_ONNX
    from mobile_actions.runtime.onnx import WINDOW_INPUT

    folder = tiny_export("q8")
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["window_start"]["layers"] == 1          # the tiny model's layer 0; layer 1 attends to all
    for name in ("model.onnx", PREFILL_ONNX, GENAI_ONNX):
        graph = onnx.load(str(folder / name), load_external_data=False).graph
        assert WINDOW_INPUT in [i.name for i in graph.input], name
    genai = onnx.load(str(folder / GENAI_ONNX), load_external_data=False).graph
    assert WINDOW_INPUT in [t.name for t in genai.initializer]    # genai never feeds it: a default of 0


def test_the_window_moves_in_half_windows_and_never_past_a_query_s_keys():
    windowed, whole = _pair("fp32")
    assert windowed.window_input and whole.window_start(500) == 0 and windowed.window_start(500) > 0
    for p in range(0, 60):
        start = windowed.window_start(p)
        assert start % 4 == 0 and 0 <= start <= max(0, p - 8)
    assert windowed.window_start(8) == 0 and windowed.window_start(13) == 4


@pytest.mark.parametrize("quant", ["fp32", "q8"])
def test_logits_and_cache_are_those_of_the_whole_past(quant):
    windowed, whole = _pair(quant)
    prompt = list(range(2, 42))                  # 40 positions: five windows of the tiny model
    a_cache, b_cache = windowed.new_cache(80), whole.new_cache(80)
    for i in range(0, len(prompt), 16):          # runs of several tokens after a past longer than the window
        a, _ = windowed.forward(prompt[i:i + 16], a_cache)
        b, _ = whole.forward(prompt[i:i + 16], b_cache)
        assert np.array_equal(a, b)
    assert a_cache.binding[2] > 0                # the last run did bind the local layer from its window
    tokens = []
    for _ in range(12):                          # single steps, across a move of the window
        nxt = int(np.argmax(a))
        tokens.append(nxt)
        a, _ = windowed.forward([nxt], a_cache)
        b, _ = whole.forward([nxt], b_cache)
        assert np.array_equal(a, b)
    n = a_cache.length
    assert n == b_cache.length == len(prompt) + len(tokens)
    for x, y in zip(a_cache.buffers, b_cache.buffers):
        assert np.array_equal(x[:, :, :n], y[:, :, :n])
