"""Reading JSON that comes from outside: dataset rows, predictions, catalogues, calls on a command line.

`json.loads` alone is not enough for such text. JSON nested 100k deep raises RecursionError (and a
few hundred levels are enough to break any recursive consumer later on); `"\\ud800"` decodes to a
lone surrogate that no UTF-8 file, terminal or device command line can take; invalid UTF-8 must name
its line instead of ending the read. A 100,000-digit integer ends in a traceback (Python's limit on
int conversion), `NaN`/`Infinity` are not JSON and cannot be written back, and a repeated key
silently keeps its last value (a second `"name"` would swap the tool). Everything that reads such
JSON goes through `loads`, JSONL through `read_jsonl` and files through `load_file`, so these
limits hold everywhere.
"""
from __future__ import annotations

import json
import math
import os
import re
from typing import Any, Iterator

from mobile_actions.errors import JSONTextError

# Deeper than any row, catalogue or call needs (a row's argument values start at level 7); shallow
# enough that recursive code downstream (schema checks, validation, rendering) stays far from
# Python's recursion limit.
MAX_DEPTH = 64
# One number's characters: far beyond any value a tool takes (a double has 17 significant digits),
# far below the 4,300 digits at which Python refuses to convert an int to or from text.
MAX_NUMBER_CHARS = 1000
# One string or key, in characters: a long email body or tool result fits many times over.
MAX_STRING_CHARS = 1 << 20
# One JSON text (a JSONL line, a catalogue file), in bytes: read no further than this.
MAX_TEXT_BYTES = 64 << 20
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
# JSON text as tokens: a string, a bare word (number, true, false, null, NaN...) or one punctuation mark
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[^\s"{}\[\]:,]+|\S')


class _Refused(Exception):
    """Raised by the decoder's hooks, which are not told where they are: `_refusal` finds the place."""


def _int(text: str) -> int:
    if len(text) > MAX_NUMBER_CHARS:
        raise _Refused
    return int(text)


def _float(text: str) -> float:
    value = float(text) if len(text) <= MAX_NUMBER_CHARS else math.inf
    if not math.isfinite(value):   # 1e400 would be Infinity
        raise _Refused
    return value


def _constant(text: str) -> Any:
    raise _Refused   # NaN, Infinity, -Infinity


def _object(pairs: list[tuple[str, Any]]) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _Refused   # a repeated key
    return obj


def decode(data: bytes) -> str:
    """Strict UTF-8; the error names the line and the byte's column instead of a buffer offset."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        start = data.rfind(b"\n", 0, e.start) + 1
        raise JSONTextError(f"invalid UTF-8: byte 0x{data[e.start]:02x} at column {e.start - start + 1}",
                            data.count(b"\n", 0, e.start) + 1) from None


def loads(text: str | bytes) -> Any:
    """`json.loads` for untrusted text: at most MAX_TEXT_BYTES, MAX_DEPTH levels, MAX_NUMBER_CHARS per
    number and MAX_STRING_CHARS per string; no lone surrogates, NaN, Infinity or repeated keys; UTF-8 bytes."""
    if len(text) > MAX_TEXT_BYTES:
        raise JSONTextError(f"invalid JSON: longer than {MAX_TEXT_BYTES:,} bytes")
    # A lone surrogate can only come from a `\uD800`-`\uDFFF` escape, or from a str that already
    # holds one (never from strictly decoded bytes); the cheap tests spare the walk for nearly all text.
    maybe_surrogate = not isinstance(text, bytes) and not text.isascii() and _SURROGATE.search(text)
    if isinstance(text, bytes):
        text = decode(text)
    try:
        value = json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_constant,
                           object_pairs_hook=_object)
    except json.JSONDecodeError as e:
        raise JSONTextError(f"invalid JSON: {e.msg} (column {e.colno})", e.lineno) from None
    except RecursionError:  # far deeper than MAX_DEPTH
        raise JSONTextError(f"invalid JSON: nested more than {MAX_DEPTH} levels deep") from None
    except _Refused:
        raise JSONTextError(*_refusal(text)) from None
    check_depth(value)
    if len(text) > MAX_STRING_CHARS and _has_long_string(value):   # no string can be longer than its text
        raise JSONTextError(*_refusal(text))
    if maybe_surrogate or "\\u" in text and _SURROGATE_ESCAPE.search(text):
        where = _lone_surrogate(value, "")
        if where is not None:
            raise JSONTextError(f"{where}: invalid text: a lone surrogate (half of a UTF-16 pair, not a character)")
    return value


def load_file(path: str | os.PathLike) -> Any:
    """One file's JSON (`loads`), reading at most MAX_TEXT_BYTES of it. OSError if it cannot be read."""
    with open(path, "rb") as f:
        data = f.read(MAX_TEXT_BYTES + 1)
    if len(data) > MAX_TEXT_BYTES:
        raise JSONTextError(f"invalid JSON: the file is larger than {MAX_TEXT_BYTES:,} bytes")
    return loads(data)


def read_jsonl(path: str | os.PathLike) -> Iterator[tuple[int, Any, str | None]]:
    """(line number, value, None) for every non-blank line, or (line number, None, reason) for a line
    that is not acceptable JSON, so the reader can report it and go on. Lines end at `\n` only: `\r`
    is JSON whitespace, and universal newlines would split a row in two and shift every later line
    number. A file that cannot be opened (missing, a directory) is OSError before the first line."""
    with open(path, "rb") as f:
        lineno = 0
        while raw := f.readline(MAX_TEXT_BYTES + 1):
            lineno += 1
            if len(raw) > MAX_TEXT_BYTES:
                while raw and not raw.endswith(b"\n"):   # the rest of the line, never held at once
                    raw = f.readline(1 << 20)
                yield lineno, None, f"invalid JSON: the line is longer than {MAX_TEXT_BYTES:,} bytes"
                continue
            if not raw.strip():
                continue
            try:
                value = loads(raw)
            except JSONTextError as e:
                yield lineno, None, e.reason
            else:
                yield lineno, value, None


def check_depth(value: Any) -> None:
    """JSONTextError if objects/lists nest more than MAX_DEPTH levels; for values decoded by other
    parsers (the model's call syntax). Level by level, so it never recurses itself."""
    level = [value] if isinstance(value, (dict, list)) else []
    for _ in range(MAX_DEPTH):
        level = [c for v in level for c in (v.values() if isinstance(v, dict) else v) if isinstance(c, (dict, list))]
        if not level:
            return
    raise JSONTextError(f"invalid JSON: nested more than {MAX_DEPTH} levels deep")


def _has_long_string(value: Any) -> bool:
    """Whether any string or key in `value` (of bounded depth) is longer than MAX_STRING_CHARS."""
    level = [value]
    while level:
        if any(isinstance(v, str) and len(v) > MAX_STRING_CHARS for v in level):
            return True
        level = [c for v in level if isinstance(v, (dict, list))
                 for c in ([*v, *v.values()] if isinstance(v, dict) else v)]
    return False


def _refusal(text: str) -> tuple[str, int | None]:
    """(reason, line) for the first value in `text` that `loads` refuses although `json` would decode it:
    a number too long or not finite, NaN or Infinity, a string too long, a key its object already has.
    The decoder's hooks only say *that* something is wrong; a second pass over the tokens says where
    (only ever on this error path)."""
    keys: list[set | None] = []   # per open container: the keys seen so far (an object) or None (a list)
    previous = ""
    for m in _TOKEN.finditer(text):
        token, reason = m.group(), None
        first = token[0]
        if first == '"':
            if len(token) > MAX_STRING_CHARS + 2 and len(json.loads(token)) > MAX_STRING_CHARS:
                reason = f"a string longer than {MAX_STRING_CHARS:,} characters"
            elif keys and keys[-1] is not None and previous in ("{", ","):
                key = json.loads(token)
                if key in keys[-1]:
                    reason = f"the key {key!r:.60} appears twice in one object"
                keys[-1].add(key)
        elif first == "{":
            keys.append(set())
        elif first == "[":
            keys.append(None)
        elif first in "}]" and keys:
            keys.pop()
        elif token in ("NaN", "Infinity", "-Infinity"):
            reason = f"{token} is not a JSON number"
        elif first not in ":," and token not in ("true", "false", "null"):
            if len(token) > MAX_NUMBER_CHARS:
                reason = f"a number longer than {MAX_NUMBER_CHARS:,} characters"
            elif not math.isfinite(_number(token)):
                reason = f"{token:.40} is too large for a number"
        if reason is not None:
            return f"invalid JSON: {reason}", text.count("\n", 0, m.start()) + 1
        previous = first
    return "invalid JSON: a value that cannot be read", None


def _number(token: str) -> float:
    try:
        return float(token)
    except ValueError:   # not a number after all: nothing to refuse here
        return 0.0


def _lone_surrogate(value: Any, path: str) -> str | None:
    """Where the first lone surrogate is (`messages[1].content`), or None. Recursive, so only called
    once the depth is known to be bounded; the path never quotes the bad text itself."""
    if isinstance(value, str):
        return (path or "the value") if _SURROGATE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            if _SURROGATE.search(key):
                return f"{path or 'the top-level object'} (a key)"
            found = _lone_surrogate(item, f"{path}.{key}" if path else key)
            if found is not None:
                return found
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = _lone_surrogate(item, f"{path}[{i}]")
            if found is not None:
                return found
    return None
