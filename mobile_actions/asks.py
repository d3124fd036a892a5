"""Whether a message asks the assistant to act now: a small learned reader of a whole message.

People pass an action on ("Message to Raúl: turn ur flashlight on at the gate"), note it for later ("TODO - put
Car service on calendar for the 12th"), ask whether it could be done or quote it, in more ways than a lexicon can
list; the 270M caller, even trained on such framings, still acts on most of them (docs/experiments.md). This
reader is trained for that one choice on contrastive pairs: the same requests asked, and written into messages
that do not ask for them now (`datagen/framings.json`), across the seed catalogues' domains, beside people's own
non-requests. Since each request is on both sides, what it learns is the framing, not the request: it knows no
catalogue and no tool.

Two readers, each with its own threshold (the lowest at which at most 0.5 % of held-out asks are refused for the
word reader, 1 % for the classifier):
- `AsksNow`: logistic regression over hashed word uni- and bigrams (the first words marked: framings mostly open
  a message) and character n-grams (misspelt "fwd", "msg"): numpy only, a few hundred kilobytes, well under a
  millisecond a message. It learns openers.
- `AsksNowLM`: the first four layers of the Gemma base with a LoRA and a one-logit head, 8-bit ONNX
  (`training/asks_reader.py`, `recipes/export_asks.py`; ~45 MB built by `model prepare` from a 3 MB adapter),
  a few milliseconds a message. It reads context ("my physio sent this: 'please save my number ...'").
`acting.gate` refuses a call when either reader is sure the message asks nothing now (`shipped()`).
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, Sequence

import numpy as np

ASSET = Path(__file__).parent / "assets" / "asks-now.npz"
LM_ADAPTER = Path(__file__).parent / "assets" / "asks-now-lm"     # what `model prepare` exports
LM_FOLDER = "asks-now-lm"                                         # the export, in the cache folder
LM_ENV = "MOBILE_ACTIONS_ASKS_LM"                                 # another folder for it, or "off"
OPENING_WORDS = 6          # words marked as the message's opening
CHAR_NGRAMS = (3, 5)
_WORD = re.compile(r"[^\W_]+|[^\w\s]", re.UNICODE)


def _hash(feature: str, bits: int) -> int:
    return int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little") & ((1 << bits) - 1)


def features(text: str, bits: int) -> np.ndarray:
    """The hashed feature ids of a message (with repeats: a count is a repeat)."""
    words = _WORD.findall(text.lower())
    feats = [f"w:{w}" for w in words]
    feats += [f"b:{a} {b}" for a, b in zip(words, words[1:])]
    feats += [f"o:{w}" for w in words[:OPENING_WORDS]]
    feats += [f"o2:{a} {b}" for a, b in zip(words[:OPENING_WORDS], words[1:OPENING_WORDS])]
    lo, hi = CHAR_NGRAMS
    for w in words:
        padded = f"<{w}>"
        feats += [f"c:{padded[i:i + n]}" for n in range(lo, hi + 1) for i in range(len(padded) - n + 1)]
    feats.append("always")   # every message has one feature: an empty message still scores
    return np.fromiter((_hash(f, bits) for f in feats), dtype=np.int64, count=len(feats))


class Reader(Protocol):
    """What the gate asks of a reader: its probability that a message asks for nothing now, and from what
    probability on it is sure (`threshold`); `name` marks its cue in a refusal."""
    name: str
    threshold: float

    def p_not_asking(self, text: str) -> float: ...


@dataclass(frozen=True)
class AsksNow:
    """The trained reader: `weights` over 2**`bits` hashed features, `bias`, and the probability of "asks
    nothing now" at or above which the gate refuses (`threshold`); `trained_on` says from what."""
    weights: np.ndarray
    bias: float
    bits: int
    threshold: float
    trained_on: str = ""
    name: str = "asks-now"

    def p_not_asking(self, text: str) -> float:
        """The probability that `text` asks the assistant for nothing now."""
        ids = features(text, self.bits)
        z = float(self.weights[ids].sum() / np.sqrt(len(ids))) + self.bias
        return float(1.0 / (1.0 + np.exp(-z)))

    def save(self, path: str | Path) -> None:
        np.savez_compressed(path, weights=self.weights.astype(np.float16), bias=np.float32(self.bias),
                            bits=np.int32(self.bits), threshold=np.float32(self.threshold),
                            trained_on=np.array(self.trained_on))

    @classmethod
    def load(cls, path: str | Path = ASSET) -> "AsksNow":
        with np.load(path, allow_pickle=False) as z:
            return cls(z["weights"].astype(np.float32), float(z["bias"]), int(z["bits"]), float(z["threshold"]),
                       str(z["trained_on"]))

    def with_threshold(self, threshold: float) -> "AsksNow":
        return AsksNow(self.weights, self.bias, self.bits, threshold, self.trained_on)


@dataclass(frozen=True)
class AsksNowLM:
    """The exported classifier (`recipes/export_asks.py`): token ids mapped to the kept embedding rows, one ONNX
    run per message, its first `max_tokens` tokens read (a framing opens a message)."""
    session: Any
    rows: np.ndarray
    tokenizer: Any
    bos: int
    max_tokens: int
    threshold: float
    name: str = "asks-now-lm"

    def p_not_asking(self, text: str) -> float:
        ids = ([self.bos] + list(self.tokenizer.encode(text).ids))[: self.max_tokens]
        x = self.rows[np.asarray(ids, dtype=np.int64)].astype(np.int64)[None]
        return float(np.asarray(self.session.run(None, {"input_ids": x})[0]).reshape(-1)[0])

    @classmethod
    def load(cls, folder: str | Path, threshold: float | None = None, threads: int = 1) -> "AsksNowLM":
        """`threshold`: instead of the folder's own (`reader.json`; a folder not yet calibrated has none)."""
        import json

        import onnxruntime as ort

        from mobile_actions.errors import ModelError
        from mobile_actions.runtime.pieces import load_tokenizer

        folder = Path(folder)
        try:
            spec = json.loads((folder / "reader.json").read_text(encoding="utf-8"))
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = threads
            opts.inter_op_num_threads = 1
            opts.log_severity_level = 3
            session = ort.InferenceSession(str(folder / "model.onnx"), opts, providers=["CPUExecutionProvider"])
            tok = load_tokenizer(folder / "tokenizer.json")
            return cls(session, np.load(folder / "rows.npy", allow_pickle=False), tok, int(spec["bos_id"]),
                       int(spec["max_tokens"]),
                       float(threshold if threshold is not None else spec.get("threshold") or 1.0))
        except Exception as e:   # onnxruntime's load errors (Fail, InvalidProtobuf, NoSuchFile ...) derive from it alone
            raise ModelError(f"{folder}: the asks-now classifier cannot be loaded ({type(e).__name__}: {e}); "
                             f"`mobile-actions model prepare --force` builds it again, {LM_ENV}=off reads "
                             "without it") from None


def threshold_for(p_asks: Sequence[float], max_asks_refused: float) -> float:
    """The lowest threshold at which at most `max_asks_refused` of the asks scored `p_asks` would be refused:
    the cost in asks is what a person notices, so it is the one fixed (a model's probabilities are its own
    scale). Kept within [0.5, 0.999]."""
    asks = np.sort(np.asarray(p_asks, dtype=np.float64))
    allowed = int(np.floor(max_asks_refused * len(asks)))
    top = asks[len(asks) - 1 - allowed] if len(asks) > allowed else 0.0
    return float(min(max(np.nextafter(top, 1.0), 0.5), 0.999))


def lm_folder() -> Path | None:
    """Where `model prepare` puts the exported classifier and the gate reads it: `$MOBILE_ACTIONS_ASKS_LM` ("off":
    none, the word reader alone), else beside the callers' exports."""
    from mobile_actions.caller.model import cache_folder  # torch-free

    return cache_folder(LM_ENV, LM_FOLDER)


@lru_cache(maxsize=1)
def shipped() -> tuple[Reader, ...]:
    """The bundled readers: the word n-grams, and the classifier once `model prepare` has exported it. None
    bundled: the gate reads with its lexicon alone."""
    readers: list[Reader] = [AsksNow.load()] if ASSET.is_file() else []
    folder = lm_folder()
    if folder is not None and (folder / "model.onnx").is_file():
        readers.append(AsksNowLM.load(folder))
    return tuple(readers)


def train(texts: Sequence[str], not_asking: Sequence[bool], *, bits: int = 18, epochs: int = 6,
          lr: float = 0.05, l2: float = 1e-6, batch: int = 64, seed: int = 0, threshold: float = 0.9,
          trained_on: str = "") -> AsksNow:
    """Logistic regression by Adam on mini-batches, the two classes weighted to count alike (a set with more
    asks than framings must not teach "asks" as the default)."""
    rng = np.random.default_rng(seed)
    rows = [features(t, bits) for t in texts]
    y = np.asarray(not_asking, dtype=np.float64)
    pos = max(y.mean(), 1e-9)
    cw = np.where(y > 0, 0.5 / pos, 0.5 / max(1 - pos, 1e-9))
    w = np.zeros(1 << bits)
    m, v = np.zeros_like(w), np.zeros_like(w)
    b, mb, vb, t = 0.0, 0.0, 0.0, 0
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    for _ in range(epochs):
        order = rng.permutation(len(rows))
        for s in range(0, len(order), batch):
            idx = order[s:s + batch]
            ids = np.concatenate([rows[i] for i in idx])
            owner = np.repeat(np.arange(len(idx)), [len(rows[i]) for i in idx])
            scale = 1.0 / np.sqrt(np.array([len(rows[i]) for i in idx], dtype=np.float64))
            z = np.bincount(owner, weights=w[ids], minlength=len(idx)) * scale + b
            p = 1.0 / (1.0 + np.exp(-z))
            err = (p - y[idx]) * cw[idx] / len(idx)
            g = np.zeros_like(w)
            np.add.at(g, ids, (err * scale)[owner])
            touched = np.unique(ids)
            g[touched] += l2 * w[touched]
            t += 1
            m[touched] = beta1 * m[touched] + (1 - beta1) * g[touched]
            v[touched] = beta2 * v[touched] + (1 - beta2) * g[touched] ** 2
            w[touched] -= lr * (m[touched] / (1 - beta1 ** t)) / (np.sqrt(v[touched] / (1 - beta2 ** t)) + eps)
            gb = float(err.sum())
            mb, vb = beta1 * mb + (1 - beta1) * gb, beta2 * vb + (1 - beta2) * gb * gb
            b -= lr * (mb / (1 - beta1 ** t)) / (np.sqrt(vb / (1 - beta2 ** t)) + eps)
    return AsksNow(w.astype(np.float32), float(b), bits, threshold, trained_on)

