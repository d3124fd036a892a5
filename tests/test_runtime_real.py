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
    from mobile_actions.decoding.grammar import CallGrammar, TokenTable, constrain_sequence

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
