"""Whether a request asks for anything at all: a small model learned from people's words, beside the lexicon.

Why learned: the gate (`acting`) refuses a call when a cue of the lexicon says its piece of the request is not
asked ("don't", "should I", "already"). Non-requests without such a cue still got calls ("lol the last carpenter
I got was a legend", "rang the harbour master myself about it"), and a phrase added per miss only fixes that
miss. This is a logistic regression over word n-grams, trained on requests and non-requests written for many
catalogues (`recipes/train_asks.py`); it scores the whole request, knows no tool, and keeps only n-grams that
occur in the requests of several catalogues, so a catalogue's own nouns decide nothing. It only ever refuses:
a request it scores as asking for nothing, at or above its threshold (chosen on other rows to refuse almost no
real request), gets no call, and the refusal names the score.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Mapping

from mobile_actions.errors import CatalogueError
from mobile_actions.lexicon import LEXICON_DIR, normalise, reading_language

_QUOTED_RE = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|'[^'\n]{2,}'(?!\w)")
_EMAIL_RE = re.compile(r"[\w.%+-]+@[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}")
_PHONE_RE = re.compile(r"\+?\(?\d[\d\s().-]{5,}\d")
_TOKEN_RE = re.compile(r"<\w+>|[^\W\d_]+(?:'[^\W\d_]+)?|\d+|[?!]")


def tokens(request: str) -> list[str]:
    """The words a request is scored on: lower case, quoted text, addresses, phone numbers and digits each one
    placeholder (what someone is called or sent is no cue to whether they ask), "?" and "!" kept."""
    text = normalise(request)
    text = _QUOTED_RE.sub(" <quote> ", text)
    text = _EMAIL_RE.sub(" <email> ", text)
    text = _PHONE_RE.sub(" <phone> ", text)
    return ["<num>" if t.isdigit() else t for t in _TOKEN_RE.findall(text)]


def features(request: str) -> set[str]:
    """Word unigrams and bigrams, with the request's start and end as words ("<s> should", "? </s>")."""
    toks = ["<s>", *tokens(request), "</s>"]
    return {*toks[1:-1], *(f"{a} {b}" for a, b in zip(toks, toks[1:]))}


@dataclass(frozen=True)
class AskModel:
    """Weights of the n-grams, a bias, and the score at or above which a request is read as asking for nothing.
    `source`: where it was read from; `trained_on`: what it was trained and calibrated on (for its card)."""
    weights: Mapping[str, float]
    bias: float
    threshold: float
    source: str = ""
    trained_on: dict = field(default_factory=dict)

    def p_nothing(self, request: str) -> float:
        """The probability that `request` asks for nothing."""
        z = self.bias + sum(self.weights.get(f, 0.0) for f in features(request))
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))

    def asks_nothing(self, request: str) -> float | None:
        """The score when it is at or above the threshold, else None."""
        p = self.p_nothing(request)
        return p if p >= self.threshold else None

    def to_json(self) -> dict:
        return {"description": __doc__.split("\n\n")[0], "threshold": self.threshold, "bias": self.bias,
                "trained_on": self.trained_on, "weights": dict(sorted(self.weights.items()))}


def model_path(language: str | None = None) -> Path:
    """Beside the language's lexicon: `<language>.asks.json`."""
    return LEXICON_DIR / f"{language or reading_language()}.asks.json"


def read_model(path: str | Path) -> AskModel:
    """An `AskModel` from its JSON file; `CatalogueError` naming the file and the field that is wrong."""
    path = Path(path)
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
        weights = {str(k): float(v) for k, v in d["weights"].items()}
        model = AskModel(weights, float(d["bias"]), float(d["threshold"]), str(path), dict(d.get("trained_on") or {}))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise CatalogueError(f"{path}: not a request model ({type(e).__name__}: {e})") from None
    if not all(math.isfinite(v) for v in (model.bias, model.threshold, *weights.values())) or \
            not 0.0 < model.threshold <= 1.0:
        raise CatalogueError(f"{path}: weights must be finite numbers and the threshold in (0, 1]")
    return model


@lru_cache(maxsize=4)
def load(language: str | None = None) -> AskModel | None:
    """The bundled model of `language` (default: the language requests are read in), or None when there is none
    (then only the lexicon's cues refuse)."""
    path = model_path(language)
    return read_model(path) if path.is_file() else None
