"""Token ids as the call automaton sees them, and greedy choice among the allowed ones.

A `TokenTable` maps each id of a tokenizer to its string in automaton symbols (control strings become
private-use characters, so the structure can only be written with the real control tokens) and indexes the
strings for prefix search. It depends on the tokenizer only, so it is built once per model folder.
"""
from __future__ import annotations

import bisect
import functools
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import numpy as np

from mobile_actions.errors import GrammarDeadEnd
from mobile_actions.wire import CONTROL_TOKEN_IDS, CONTROL_TOKENS, END_CALL, ESCAPE, START_CALL, STOP_STRINGS

TOKEN_CACHE = "token_table.npz"
# Control strings become private-use symbols inside the automaton.
CTRL_SYM = {text: chr(0xE000 + k) for k, text in enumerate(CONTROL_TOKENS)}
S_START, S_END, S_ESC = CTRL_SYM[START_CALL], CTRL_SYM[END_CALL], CTRL_SYM[ESCAPE]
CTRL_SYMS = frozenset(CTRL_SYM.values())
SYM_CTRL = {sym: text for text, sym in CTRL_SYM.items()}
# Literal texts that must not appear inside strings or plain text: the parser would read them as structure.
FORBIDDEN_IN_STRINGS = (ESCAPE, *STOP_STRINGS)
FORBIDDEN_IN_TEXT = (*CONTROL_TOKENS, *STOP_STRINGS)
# What a cached table's strings are joined by: the first of these that no token's string holds.
SEPARATORS = ("\x00", "\x1f", "\U0010fffe", "\U0010ffff")


@dataclass
class TokenTable:
    """Per tokenizer: each id's string in automaton symbols (None: never allowed by the grammar),
    which ids are plain text, and a sorted index for prefix search. Built once and cached in the
    model folder (`token_table.npz`, ~5 MB for Gemma), since decoding and sorting 262k ids takes
    seconds in Python; loading the cache takes a fraction of that."""
    strings: list            # str | None per id; control ids map to their private-use symbol
    opaque: np.ndarray       # bool: partial UTF-8 byte tokens (only inside strings/text)
    stop_ids: tuple
    control_ids: dict
    key_ids: np.ndarray | None = None     # regular ids sorted by string (derived when None)
    string_ok: np.ndarray | None = None   # free-string content
    text_ok: np.ndarray | None = None     # plain-text reply
    keys: list | None = None              # the regular ids' strings in `key_ids` order (derived when None)

    def __post_init__(self):
        n = len(self.strings)
        self.size = n
        ctrl = set(self.control_ids.values())
        if self.key_ids is None:
            regular = [(s, i) for i, s in enumerate(self.strings) if s and not self.opaque[i] and i not in ctrl]
            regular.sort()
            self.key_ids = np.array([i for _, i in regular], dtype=np.int64)
        if self.string_ok is None or self.text_ok is None:
            plain = np.zeros(n, dtype=bool)
            text_ok = np.zeros(n, dtype=bool)
            for i, s in enumerate(self.strings):
                if s and i not in ctrl:
                    plain[i] = not any(f in s for f in FORBIDDEN_IN_STRINGS)
                    text_ok[i] = not any(f in s for f in FORBIDDEN_IN_TEXT)
            self.string_ok, self.text_ok = plain, text_ok
        if self.keys is None:
            strings = self.strings
            self.keys = [strings[i] for i in self.key_ids.tolist()]
        self._starts: dict[str, np.ndarray] = {}

    def prefix_range(self, p: str) -> tuple[int, int]:
        lo = bisect.bisect_left(self.keys, p)
        hi = bisect.bisect_left(self.keys, p + "\U0010ffff", lo)
        return lo, hi

    def ids_starting_with(self, p: str) -> np.ndarray:
        if p not in self._starts:
            lo, hi = self.prefix_range(p)
            self._starts[p] = self.key_ids[lo:hi]
        return self._starts[p]

    # ------------------------------------------------------------------ building
    @classmethod
    def from_tokenizer(cls, tokenizer, stop_ids: Iterable[int], control_ids: dict | None = None) -> "TokenTable":
        strings, opaque = _token_strings(tokenizer, control_ids or CONTROL_TOKEN_IDS)
        return cls(strings, np.array(opaque, dtype=bool), tuple(stop_ids), dict(control_ids or CONTROL_TOKEN_IDS))

    def save(self, path: Path, digest: str) -> None:
        """The strings, and the sorted keys, each as one UTF-8 blob joined by a character none of them holds:
        a load splits the two blobs (0.04 s for Gemma's 262k ids) instead of slicing out 262k strings and
        indexing them again in key order (0.15 s of a one-shot `call`)."""
        strings = [s or "" for s in self.strings]
        sep = next((c for c in SEPARATORS if not any(c in s for s in strings)), None)
        if sep is None:
            return   # (no tokenizer seen holds them all) not cached: built again next time
        blob = lambda texts: np.frombuffer(sep.join(texts).encode("utf-8", "surrogatepass"), dtype=np.uint8)  # noqa: E731
        with open(path, "wb") as f:
            np.savez(f, joined=blob(strings), keys_joined=blob(self.keys), sep=np.array(sep),
                     none=np.array([s is None for s in self.strings]), opaque=self.opaque, key_ids=self.key_ids,
                     string_ok=self.string_ok, text_ok=self.text_ok, digest=np.array(digest))

    @classmethod
    def load(cls, path: Path, digest: str, stop_ids: tuple, control_ids: dict) -> "TokenTable | None":
        """The table `save` wrote for the tokenizer of sha256 `digest`; None for another tokenizer's or an
        older layout's."""
        with np.load(path) as z:
            if str(z["digest"]) != digest or "joined" not in z.files:
                return None
            sep = str(z["sep"])
            split = lambda name: z[name].tobytes().decode("utf-8", "surrogatepass").split(sep)  # noqa: E731
            strings: list = split("joined")
            for i in np.flatnonzero(z["none"]).tolist():
                strings[i] = None
            key_ids = z["key_ids"]
            return cls(strings, z["opaque"], stop_ids, control_ids, key_ids, z["string_ok"], z["text_ok"],
                       split("keys_joined") if len(key_ids) else [])

    @classmethod
    def from_folder(cls, folder: str | Path) -> "TokenTable":
        """Load (or build and try to cache) the table of an exported model folder."""
        from tokenizers import Tokenizer

        folder = Path(folder)
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        tok_path = folder / manifest.get("tokenizer", "tokenizer.json")
        digest = tokenizer_digest(tok_path)
        controls = {k: int(v) for k, v in manifest.get("control_token_ids", CONTROL_TOKEN_IDS).items()}
        stop = tuple(manifest["stop_token_ids"])
        cache = folder / TOKEN_CACHE
        if cache.is_file():
            table = cls.load(cache, digest, stop, controls)
            if table is not None:
                return table
        strings, opaque = _token_strings(Tokenizer.from_file(str(tok_path)), controls)
        table = cls(strings, np.array(opaque, dtype=bool), stop, controls)
        try:
            table.save(cache, digest)
        except OSError:
            pass  # a read-only folder: rebuild next time
        return table


def tokenizer_digest(path: Path) -> str:
    """sha256 of a tokenizer file: what the caches derived from it (this table, the runtime's piece model) are
    keyed by. Read once per process and file version: both are built at a caller's start, and Gemma's file is 12 MB."""
    st = path.stat()
    return _digest(str(path.resolve()), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _digest(path: str, size: int, mtime_ns: int) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()

def _token_strings(tokenizer, control_ids: dict) -> tuple[list, list]:
    """Decode every id alone. Special tokens other than the control strings are None."""
    tok = getattr(tokenizer, "backend_tokenizer", tokenizer)  # transformers fast tokenizer or tokenizers.Tokenizer
    n = tok.get_vocab_size(with_added_tokens=True)
    special = {i for i, t in tok.get_added_tokens_decoder().items() if t.special}
    texts = tok.decode_batch([[i] for i in range(n)], skip_special_tokens=False)
    by_id = {v: k for k, v in control_ids.items()}
    strings: list = []
    opaque: list = []
    for i, s in enumerate(texts):
        if i in by_id:
            strings.append(CTRL_SYM[by_id[i]])
            opaque.append(False)
        elif i in special or not s:
            strings.append(None)
            opaque.append(False)
        else:
            strings.append(s)
            opaque.append("\ufffd" in s)
    return strings, opaque



def allowed_mask(allowed: np.ndarray, size: int) -> np.ndarray:
    """`Constraint.allowed()` (ids or a mask) as a bool mask of `size` (a model's head may be wider
    than its tokenizer: the extra ids are never allowed)."""
    if allowed.dtype == bool:
        return allowed if len(allowed) == size else np.pad(allowed[:size], (0, max(0, size - len(allowed))))
    m = np.zeros(size, dtype=bool)
    m[allowed[allowed < size]] = True
    return m


def share_of(token_id: int, logits: np.ndarray, allowed: np.ndarray) -> tuple[float, int | None]:
    """The probability `token_id` has among the allowed ids (ids or a mask), and the likeliest other allowed
    id (None when it is the only one). Why: a choice between two kinds of continuation (a call, or any of
    thousands of text tokens) is one of mass, not of the single likeliest token."""
    mask = allowed_mask(allowed, len(logits))
    if not mask[token_id]:
        return 0.0, None
    z = np.where(mask, logits.astype(np.float64), -np.inf)
    p = np.exp(z - z.max())
    share = float(p[token_id] / p.sum())
    p[token_id] = 0.0
    return share, (int(np.argmax(p)) if p.any() else None)


def pick(logits: np.ndarray, allowed: np.ndarray) -> int:
    """Greedy choice among the allowed ids (int array) or mask (bool array); a mask is fitted to the
    logits' width first (a head may be wider than its tokenizer)."""
    if len(allowed) == 0 or allowed.dtype == bool and not allowed.any():
        raise GrammarDeadEnd("no token is allowed: the grammar reached a dead end")
    if allowed.dtype == bool:
        if len(allowed) != len(logits):
            allowed = allowed_mask(allowed, len(logits))
        return int(np.argmax(np.where(allowed, logits, -np.inf)))
    return int(allowed[int(np.argmax(logits[allowed]))])
