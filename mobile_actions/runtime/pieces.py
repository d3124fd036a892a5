"""The caller's tokenizer, loaded in a twelfth of the time: Gemma's BPE as a SentencePiece model.

Why: a one-shot `call` spent 0.7 s and ~130 MB parsing Gemma's `tokenizer.json` (262k pieces, 515k merges) before
its first token. The same vocabulary as a SentencePiece model (`sentencepiece`, C++, a 5 MB protobuf) loads in
~0.06 s and ~50 MB. Both are byte-fallback BPE over the text with spaces as "▁"; a merge's rank becomes its piece's
score (SentencePiece merges the highest score first, `tokenizers` the lowest rank first), added tokens become
user-defined pieces (matched whole in the text, as `tokenizers` matches them).

The piece model is derived from `tokenizer.json` and cached beside it under the name of that file's digest, like the
token table; it is built once per export (the export builds it; an older export builds it on first load) and only
used when it gives `tokenizers`' ids and text on a fixed set of strings (`agrees`). A tokenizer of another shape, or
no `sentencepiece`, keeps `tokenizers`.
"""
from __future__ import annotations

import json
import logging
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

logger = logging.getLogger(__name__)

PIECE_MODEL = "tokenizer.{digest}.spm"   # cached beside tokenizer.json; the digest is that file's sha256 (16 hex)


@dataclass(frozen=True)
class Encoding:
    """What `tokenizers.Tokenizer.encode` returns, as far as the toolkit reads it."""
    ids: list[int]


class PieceTokenizer:
    """`tokenizers.Tokenizer`'s `encode`/`decode`, as the toolkit calls them, over a SentencePiece model."""

    def __init__(self, path: Path) -> None:
        import sentencepiece

        self.sp = sentencepiece.SentencePieceProcessor(model_file=str(path))
        self.unk_id = self.sp.unk_id()
        self.unk_piece = self.sp.id_to_piece(self.unk_id)

    def encode(self, text: str, add_special_tokens: bool = False) -> Encoding:
        # SentencePiece cannot make its unknown piece a user-defined one; `tokenizers` reads "<unk>" in the text as it
        if self.unk_piece not in text:
            return Encoding(self.sp.encode(text))
        ids: list[int] = []
        for k, part in enumerate(text.split(self.unk_piece)):
            ids += ([self.unk_id] if k else []) + (self.sp.encode(part) if part else [])
        return Encoding(ids)

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        return self.sp.decode(list(ids))


class Unconvertible(ValueError):
    """The tokenizer is not a byte-fallback BPE of the shape a SentencePiece model reproduces."""


def _check_shape(spec: dict) -> None:
    model = spec.get("model") or {}
    if model.get("type") != "BPE" or not model.get("byte_fallback") or model.get("continuing_subword_prefix") \
            or model.get("end_of_word_suffix") or model.get("dropout"):
        raise Unconvertible("not a byte-fallback BPE")
    norm = spec.get("normalizer") or {}
    if norm != {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}:
        raise Unconvertible(f"normalizer {norm.get('type')!r}")
    pre = spec.get("pre_tokenizer")
    if pre not in (None, {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious",
                          "invert": False}):   # after the normalizer no " " is left: a no-op
        raise Unconvertible(f"pre-tokenizer {pre.get('type')!r}")
    if any(a.get("single_word") or a.get("lstrip") or a.get("rstrip") or a.get("normalized")
           for a in spec["added_tokens"]):
        raise Unconvertible("an added token strips, is normalized or matches whole words only")


def piece_model_bytes(spec: dict) -> bytes:
    """A serialized SentencePiece model reproducing `spec` (a parsed `tokenizer.json`); raises `Unconvertible`."""
    from sentencepiece import sentencepiece_model_pb2 as pb

    _check_shape(spec)
    model = spec["model"]
    vocab: dict[str, int] = model["vocab"]
    rank: dict[str, int] = {}
    for k, m in enumerate(model["merges"]):
        a, b = m if isinstance(m, list) else m.split(" ", 1)
        rank.setdefault(a + b, k)
    added = {a["id"] for a in spec["added_tokens"]}
    unk = model.get("unk_token")
    proto = pb.ModelProto()
    proto.trainer_spec.model_type = pb.TrainerSpec.BPE
    proto.trainer_spec.byte_fallback = True
    proto.trainer_spec.vocab_size = len(vocab)
    proto.trainer_spec.unk_id = vocab[unk] if unk in vocab else 0
    proto.trainer_spec.bos_id = proto.trainer_spec.eos_id = proto.trainer_spec.pad_id = -1   # all text pieces
    proto.trainer_spec.unk_surface = unk or " ⁇ "
    proto.normalizer_spec.name = "identity"
    proto.normalizer_spec.add_dummy_prefix = False
    proto.normalizer_spec.remove_extra_whitespaces = False
    proto.normalizer_spec.escape_whitespaces = True
    kinds = pb.ModelProto.SentencePiece
    for piece, i in sorted(vocab.items(), key=lambda kv: kv[1]):
        p = proto.pieces.add()
        p.piece = piece
        if piece == unk:
            p.type = kinds.UNKNOWN
        elif i in added:
            p.type = kinds.USER_DEFINED
        elif len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
            p.type = kinds.BYTE
        else:   # merged pieces by rank; single characters (no merge makes them) below every merge
            p.score = -float(rank.get(piece, len(model["merges"]) + i))
    return proto.SerializeToString()


def agreement_texts(seed: int = 0, n: int = 2000) -> list[str]:
    """Strings both tokenizers must agree on: the wire format's markers, whitespace runs, JSON, and random text
    over ASCII, Latin, CJK, emoji and invisible characters."""
    fixed = ["", " ", "  ", "\n", "\n\n \n", "\t", "turn on the flashlight", " leading space", "trailing space ",
             "<start_function_call>call:send_email{to:<escape>ana@example.com<escape>}<end_function_call>",
             "<start_of_turn>user\nhi<end_of_turn>\n<start_of_turn>model\n", "<eos><bos><pad>", "<unk>", "a <unk>b<unk>",
             '{"a": [1, 2.5e-3, true, null], "b": "naïve café"}', "1.84000000000000", "😅👍🏽 ok", "中文 テスト"]
    rng = random.Random(seed)
    alphabet = [chr(c) for c in [*range(32, 127), *range(0xA0, 0x250), 0x4E2D, 0x6587, 0x1F605, 0x1F44D, 0x200B,
                                 0xFEFF, 0x3000, 9, 10, 13]]
    return fixed + ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60))) for _ in range(n)]


def agrees(ours: PieceTokenizer, theirs: Any, texts: Sequence[str]) -> str | None:
    """None when `ours` gives `theirs`' ids for every text and decodes those ids to the same text; else the first
    text where they differ."""
    for text in texts:
        ids = theirs.encode(text, add_special_tokens=False).ids
        if ours.encode(text).ids != ids or ours.decode(ids) != theirs.decode(ids, skip_special_tokens=False):
            return text
    return None


def piece_model_path(tokenizer_json: Path) -> Path:
    from mobile_actions.decoding.tokens import tokenizer_digest

    return tokenizer_json.with_name(PIECE_MODEL.format(digest=tokenizer_digest(tokenizer_json)[:16]))


def build_piece_model(tokenizer_json: Path) -> Path | None:
    """Write the piece model for `tokenizer_json` beside it, checked against `tokenizers`; None when it cannot be
    (no `sentencepiece`, another tokenizer shape, a disagreement, a read-only folder), with the reason logged."""
    path = piece_model_path(tokenizer_json)
    if path.is_file():
        return path
    from tokenizers import Tokenizer

    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")   # two processes building at once never share it
    try:
        tmp.write_bytes(piece_model_bytes(json.loads(tokenizer_json.read_text(encoding="utf-8"))))
        diff = agrees(PieceTokenizer(tmp), Tokenizer.from_file(str(tokenizer_json)), agreement_texts())
        if diff is not None:
            tmp.unlink()
            logger.info("tokenizer: the SentencePiece copy differs on %r; keeping tokenizers", diff)
            return None
        tmp.replace(path)
        return path
    except (ImportError, Unconvertible, OSError, RuntimeError, ValueError, KeyError, TypeError) as e:
        # RuntimeError: sentencepiece refused it; ValueError, KeyError, TypeError: a tokenizer.json of another form
        tmp.unlink(missing_ok=True)
        logger.info("tokenizer: no SentencePiece copy (%s); keeping tokenizers", e)
        return None


_LOADED: dict[str, PieceTokenizer] = {}   # by piece model name (its tokenizer.json's digest): ~50 MB each


def load_tokenizer(tokenizer_json: Path) -> Any:
    """The fastest tokenizer that gives `tokenizer_json`'s ids: its piece model (built on first use), else
    `tokenizers`. Folders with the same tokenizer (the caller's and the asks-now classifier's) share one."""
    path = build_piece_model(tokenizer_json)
    if path is not None:
        try:
            if path.name not in _LOADED:
                _LOADED[path.name] = PieceTokenizer(path)
            return _LOADED[path.name]
        except (ImportError, OSError, RuntimeError) as e:
            logger.info("tokenizer: cannot load %s (%s); keeping tokenizers", path, e)
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(tokenizer_json))
