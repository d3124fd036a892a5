"""Reading JSON that comes from outside: dataset rows, predictions, catalogues, calls on a command line.

`json.loads` alone is not enough for such text. JSON nested 100k deep raises RecursionError (and a
few hundred levels are enough to break any recursive consumer later on); `"\\ud800"` decodes to a
lone surrogate that no UTF-8 file, terminal or device command line can take; invalid UTF-8 must name
its line instead of ending the read. Everything that reads such JSON goes through `loads`, and JSONL
through `read_jsonl`, so these limits hold everywhere.
"""
from __future__ import annotations

import json
import os
import re
from typing import Any, Iterator

from mobile_actions.errors import JSONTextError

# Deeper than any row, catalogue or call needs (a row's argument values start at level 7); shallow
# enough that recursive code downstream (schema checks, validation, rendering) stays far from
# Python's recursion limit.
MAX_DEPTH = 64
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def decode(data: bytes) -> str:
    """Strict UTF-8; the error names the line and the byte's column instead of a buffer offset."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        start = data.rfind(b"\n", 0, e.start) + 1
        raise JSONTextError(f"invalid UTF-8: byte 0x{data[e.start]:02x} at column {e.start - start + 1}",
                            data.count(b"\n", 0, e.start) + 1) from None


def loads(text: str | bytes) -> Any:
    """`json.loads` for untrusted text: at most MAX_DEPTH levels, no lone surrogates, UTF-8 bytes."""
    # A lone surrogate can only come from a `\uD800`-`\uDFFF` escape, or from a str that already
    # holds one (never from strictly decoded bytes); the cheap tests spare the walk for nearly all text.
    maybe_surrogate = not isinstance(text, bytes) and not text.isascii() and _SURROGATE.search(text)
    if isinstance(text, bytes):
        text = decode(text)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise JSONTextError(f"invalid JSON: {e.msg} (column {e.colno})", e.lineno) from None
    except RecursionError:  # far deeper than MAX_DEPTH
        raise JSONTextError(f"invalid JSON: nested more than {MAX_DEPTH} levels deep") from None
    check_depth(value)
    if maybe_surrogate or "\\u" in text and _SURROGATE_ESCAPE.search(text):
        where = _lone_surrogate(value, "")
        if where is not None:
            raise JSONTextError(f"{where}: invalid text: a lone surrogate (half of a UTF-16 pair, not a character)")
    return value


def read_jsonl(path: str | os.PathLike) -> Iterator[tuple[int, Any, str | None]]:
    """(line number, value, None) for every non-blank line, or (line number, None, reason) for a line
    that is not acceptable JSON, so the reader can report it and go on. Lines end at `\n` only: `\r`
    is JSON whitespace, and universal newlines would split a row in two and shift every later line
    number. A file that cannot be opened (missing, a directory) is OSError before the first line."""
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, start=1):
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
