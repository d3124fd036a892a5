"""The caller's tokenizer as a SentencePiece copy: Gemma's ids and text exactly, or not used at all."""
from __future__ import annotations

import json
import random
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from mobile_actions import wire
from mobile_actions.catalog import load_catalogue
from mobile_actions.runtime import pieces
from mobile_actions.runtime.pieces import PieceTokenizer, agreement_texts, build_piece_model, load_tokenizer

GEMMA = Path(__file__).parents[1] / "mobile_actions" / "assets" / "caller-lora" / "tokenizer.json"


@pytest.fixture(scope="module")
def gemma(tmp_path_factory):
    """Gemma 3's tokenizer.json in a folder of its own, its piece model built there once."""
    d = tmp_path_factory.mktemp("gemma")
    shutil.copy(GEMMA, d / "tokenizer.json")
    return d / "tokenizer.json"


def test_the_piece_copy_gives_gemmas_ids_and_text(gemma):
    from tokenizers import Tokenizer

    path = build_piece_model(gemma)
    assert path is not None and path.name.startswith("tokenizer.") and path.suffix == ".spm"
    ours, theirs = load_tokenizer(gemma), Tokenizer.from_file(str(gemma))
    assert isinstance(ours, PieceTokenizer)
    cat = load_catalogue("mobile_actions")
    prompt = wire.render([{"role": "developer", "content": f"Now: {datetime(2026, 3, 1, 9, 30)}"},
                          {"role": "user", "content": "email  ana@example.com the agenda 📎, then torch ON!!"}],
                         cat, add_generation_prompt=True, layout="cache")
    answer = '<start_function_call>call:send_email{to:<escape>ana@example.com<escape>,subject:<escape>x<escape>}'
    for text in [prompt, answer, *agreement_texts(seed=7, n=300)]:   # other strings than the build checked
        ids = theirs.encode(text, add_special_tokens=False).ids
        assert ours.encode(text).ids == ids, text
        assert ours.decode(ids) == theirs.decode(ids, skip_special_tokens=False) == text or "\ufffd" in text
    rng = random.Random(3)
    for _ in range(300):    # any ids: byte pieces that make no character, control tokens, <unk>
        ids = [rng.randrange(300 if rng.random() < 0.5 else 262144) for _ in range(rng.randint(1, 12))]
        assert ours.decode(ids) == theirs.decode(ids, skip_special_tokens=False)


def test_a_copy_that_disagrees_is_not_used(tmp_path, monkeypatch):
    """A piece model whose merge order is off gives other ids: the check finds it and tokenizers stays."""
    shutil.copy(GEMMA, tmp_path / "tokenizer.json")
    right = pieces.piece_model_bytes

    def off(spec):
        spec["model"]["merges"] = spec["model"]["merges"][::-1]
        return right(spec)

    monkeypatch.setattr(pieces, "piece_model_bytes", off)
    assert build_piece_model(tmp_path / "tokenizer.json") is None
    assert not list(tmp_path.glob("*.spm")) and not list(tmp_path.glob(".*.tmp"))
    assert not isinstance(load_tokenizer(tmp_path / "tokenizer.json"), PieceTokenizer)


def test_a_tokenizer_of_another_shape_stays_with_tokenizers(tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel({"[UNK]": 0, "hello": 1, "world": 2}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(tmp_path / "tokenizer.json"))
    assert build_piece_model(tmp_path / "tokenizer.json") is None
    loaded = load_tokenizer(tmp_path / "tokenizer.json")
    assert isinstance(loaded, Tokenizer) and loaded.encode("hello world").ids == [1, 2]


def test_the_copy_is_named_by_its_sources_digest(gemma, tmp_path):
    """A changed tokenizer.json gets a copy of its own: a stale one is never read for it."""
    spec = json.loads(gemma.read_text(encoding="utf-8"))
    spec["added_tokens"] = spec["added_tokens"][:-1]
    (tmp_path / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    assert pieces.piece_model_path(tmp_path / "tokenizer.json").name != pieces.piece_model_path(gemma).name


def test_folders_with_the_same_tokenizer_share_one_loaded_copy(gemma, tmp_path):
    """The caller's folder and the asks-now classifier's hold the same tokenizer.json: one copy in memory."""
    shutil.copy(gemma, tmp_path / "tokenizer.json")
    shutil.copy(build_piece_model(gemma), pieces.piece_model_path(tmp_path / "tokenizer.json"))
    assert load_tokenizer(tmp_path / "tokenizer.json") is load_tokenizer(gemma)
