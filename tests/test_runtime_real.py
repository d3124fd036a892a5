"""Real-model runtime checks (slow): point MOBILE_ACTIONS_ONNX at an exported folder
(`mobile-actions export --model default --out DIR`) and run `pytest -m slow`."""
from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

FOLDER = os.environ.get("MOBILE_ACTIONS_ONNX")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not FOLDER or not Path(FOLDER).is_dir(), reason="set MOBILE_ACTIONS_ONNX")]
NOW = datetime(2025, 3, 14, 9, 26, 53)


def test_prefix_reuse_same_tokens_on_the_real_model():
    from mobile_actions.runtime import Caller

    a = Caller.from_pretrained(FOLDER, layout="cache", prefix_reuse=False, constrained=False, max_new_tokens=12)
    b = Caller.from_pretrained(FOLDER, layout="cache", prefix_reuse=True, constrained=False, max_new_tokens=12)
    for req in ("turn on the flashlight", "add Maria Lopez to my contacts, her number is 555 0199"):
        assert a.call(req, now=NOW).raw == b.call(req, now=NOW).raw


def test_grammar_on_the_real_vocabulary_only_emits_valid_calls():
    from tokenizers import Tokenizer

    from mobile_actions import wire
    from mobile_actions.calls import validate_call
    from mobile_actions.catalog import load_catalogue
    from mobile_actions.decoding.constraint import constrain_sequence
    from mobile_actions.decoding.grammar import CallGrammar
    from mobile_actions.decoding.tokens import TokenTable

    table = TokenTable.from_folder(FOLDER)
    tok = Tokenizer.from_file(str(Path(FOLDER) / "tokenizer.json"))
    cat = load_catalogue("mobile_actions")
    for seed in range(8):
        rng = np.random.default_rng(seed)
        logits = [rng.normal(size=table.size).astype(np.float32) for _ in range(48)]
        logits[0][48] += 100
        for row in logits:
            row[[52, 106]] += 3
        ids = constrain_sequence(CallGrammar(cat), table, logits, tokenizer=tok, max_tokens=120)
        if ids[-1] not in table.stop_ids:
            continue
        parsed = wire.parse(tok.decode(ids[:-1], skip_special_tokens=False))
        assert parsed.calls
        for call in parsed.calls:
            assert not validate_call(call, cat)


REQUESTS = ("turn on the flashlight", "Email ana@example.com with the subject Lunch tomorrow",
            "add Maria Lopez to my contacts, her number is 555 0199",
            "Create a calendar event called Team sync tomorrow at 3pm")


def test_sparse_head_gives_the_same_outputs_on_the_real_model():
    from mobile_actions.runtime import Caller

    on = Caller.from_pretrained(FOLDER)
    off = Caller.from_pretrained(FOLDER, sparse_head=False)
    assert on.decoder.sparse_head
    steps = 0
    for req in REQUESTS:
        a, b = on.call(req, now=NOW), off.call(req, now=NOW)
        assert a.raw == b.raw
        steps += a.timings["sparse_steps"]
    assert steps > 0


def test_onnxruntime_genai_runs_the_real_export():
    og = pytest.importorskip("onnxruntime_genai")
    from mobile_actions.runtime import Caller

    caller = Caller.from_pretrained(FOLDER)
    model = og.Model(FOLDER)
    tok = og.Tokenizer(model)
    for req in REQUESTS[:2]:
        text = caller.prompt(req, now=NOW)
        ids = caller.encode(text)
        assert [int(i) for i in tok.encode(text)] == ids
        ours = caller.decoder.greedy(ids, 24, caller.stop_ids)
        params = og.GeneratorParams(model)
        params.set_search_options(max_length=len(ids) + 24, do_sample=False)
        gen = og.Generator(model, params)
        gen.append_tokens(ids)
        got: list[int] = []
        while not gen.is_done() and len(got) < 24:
            gen.generate_next_token()
            got.append(int(gen.get_next_tokens()[0]))
        assert got[:len(ours)] == ours
