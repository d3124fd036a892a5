"""Scoring predicted tool calls against gold rows.

`exact_match` is the official Mobile Actions metric (Google's notebook): the ordered list of tool
names is equal and every call's arguments are exactly equal; no normalisation. The notebook calls it
a lower bound, so `lenient_match` adds a BFCL-style check (order-free parallel calls, strings
compared after removing spaces and `,./-_*^` and lower-casing, int accepted for float).
"""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from mobile_actions import jsontext
from mobile_actions.calls import ToolCall, calls_from_json, validate_call
from mobile_actions.catalog import Catalogue
from mobile_actions.dataset import LineProblem, Row

NONE = "<none>"  # the "no call" column/row of the confusion table (a refusal)
# Why a row is not an exact match: one kind per row, the first that applies, in this order
# (so the counts add up to the rows that are not exact).
ERROR_KINDS = ("unparseable", "call on a refusal row", "no call", "missing call", "extra call", "wrong order",
               "wrong tool", "wrong argument")


@dataclass(frozen=True)
class Prediction:
    """What a caller produced for one row. `error` is a parse error (the output was not a call list)."""

    calls: list[ToolCall] = field(default_factory=list)
    text: str = ""
    raw: str | None = None
    error: str | None = None

    def to_json(self) -> dict:
        return {"calls": [c.to_json() for c in self.calls], "text": self.text, "raw": self.raw, "error": self.error}

    @classmethod
    def from_json(cls, data: Any) -> "Prediction":
        """Accepts our own lines, a Mobile Actions row / assistant message, or `{"raw": model_text}`."""
        if not isinstance(data, dict):
            raise ValueError(f"a prediction is a JSON object, got {type(data).__name__}")
        if "calls" in data:
            return cls(_calls(data, "calls"), _text(data, "text"), _text(data, "raw", None), _text(data, "error", None))
        if "messages" in data:
            messages = data["messages"]
            if not isinstance(messages, list) or not messages or not isinstance(messages[-1], dict):
                raise ValueError("field 'messages' must be a list ending with the assistant message (an object)")
            data = messages[-1]
        if "tool_calls" in data or data.get("role") == "assistant":
            return cls(_calls(data, "tool_calls"), _text(data, "content"))
        if "raw" in data:
            raw = _text(data, "raw", None)
            if raw is None:
                raise ValueError("field 'raw' must be the model's text, got null")
            return _parse_raw(raw)
        raise ValueError("a prediction needs 'calls', 'tool_calls', 'messages' or 'raw'")


def _parse_raw(raw: str) -> Prediction:
    """Model text -> calls. Text the call syntax cannot take is an unparseable prediction (a model
    error, scored as one), and so is nesting beyond jsontext.MAX_DEPTH: the wire parser is recursive
    and the scorer's comparisons are too."""
    from mobile_actions import wire

    try:
        parsed = wire.parse(raw)
        jsontext.check_depth([c.arguments for c in parsed.calls])
    except (wire.WireParseError, jsontext.JSONTextError) as e:
        return Prediction([], "", raw, str(e))
    except RecursionError:
        return Prediction([], "", raw, f"nested more than {jsontext.MAX_DEPTH} levels deep")
    return Prediction(parsed.calls, parsed.text, raw)


def _calls(data: dict, key: str) -> list[ToolCall]:
    """A list of calls (null or missing: none); anything else is a ValueError naming the field."""
    return calls_from_json(data.get(key) or [], f"field {key!r}")


def _text(data: dict, key: str, default: str | None = "") -> str | None:
    """A string field (null or missing: `default`); anything else is a ValueError naming the field."""
    value = data.get(key)
    if value is None:
        return default
    if not isinstance(value, str):
        raise ValueError(f"field {key!r} must be a string, got {type(value).__name__}")
    return value


@dataclass
class ToolStats:
    gold: int = 0
    predicted: int = 0
    correct: int = 0  # name matches (multiset overlap per row)

    @property
    def precision(self) -> float:
        return self.correct / self.predicted if self.predicted else 0.0

    @property
    def recall(self) -> float:
        return self.correct / self.gold if self.gold else 0.0

    def to_json(self) -> dict:
        return {"gold": self.gold, "predicted": self.predicted, "correct": self.correct,
                "precision": round(self.precision, 4), "recall": round(self.recall, 4)}


@dataclass
class Report:
    n: int
    exact_match: float
    lenient_match: float
    schema_valid: float
    refusal_accuracy: float | None
    n_refusal_rows: int
    per_tool: dict[str, ToolStats]
    confusion: dict[str, dict[str, int]]
    errors: dict[str, int] = field(default_factory=dict)            # ERROR_KINDS -> rows
    argument_errors: dict[str, int] = field(default_factory=dict)   # "tool.argument" -> calls, most first
    invented: int = 0                # predicted string values found neither in the conversation nor in the gold
    row_results: list[dict] = field(default_factory=list, repr=False)

    def to_json(self) -> dict:
        return {"n": self.n, "exact_match": round(self.exact_match, 4), "lenient_match": round(self.lenient_match, 4),
                "schema_valid": round(self.schema_valid, 4),
                "refusal_accuracy": None if self.refusal_accuracy is None else round(self.refusal_accuracy, 4),
                "n_refusal_rows": self.n_refusal_rows,
                "per_tool": {k: v.to_json() for k, v in sorted(self.per_tool.items())},
                "confusion": self.confusion, "errors": self.errors,
                "argument_errors": self.argument_errors, "invented": self.invented}


def invented_values(row: Row, pred: Prediction) -> int:
    """Predicted string values nobody said: not in the user's words or tool results, and not the gold
    value of that ``tool.argument`` either (a gold subject may be composed). Datetimes are not counted:
    they are computed, never copied."""
    from mobile_actions.calls import DATETIME_RE
    from mobile_actions.decoding.grounding import conversation_sources

    sources = conversation_sources(row.messages)   # user turns and tool results only
    gold = {(c.name, k, v) for c in row.calls for k, v in c.arguments.items() if isinstance(v, str)}
    return sum(1 for c in pred.calls for k, v in c.arguments.items()
               if isinstance(v, str) and v and not DATETIME_RE.fullmatch(v) and (c.name, k, v) not in gold
               and not any(v in s for s in sources))


def exact_match(gold: Sequence[ToolCall], pred: Sequence[ToolCall]) -> bool:
    """Official: ordered names equal and each call's argument dict exactly equal."""
    return [c.name for c in gold] == [c.name for c in pred] and all(
        _sorted(g.arguments) == _sorted(p.arguments) for g, p in zip(gold, pred))


def _sorted(d: Any) -> Any:
    return json.dumps(d, sort_keys=True, ensure_ascii=False)


_STRIP = re.compile(r"[\s,./\-_*^]")


def _norm(value: Any) -> Any:
    """A value as the lenient check compares it: strings stripped of spaces and `,./-_*^` and lower-cased,
    in lists and objects too. Numbers stay as they are, since Python compares an int with a float exactly
    (1 == 1.0; a 400-digit int has no float to become); booleans are tagged so that True is not 1."""
    if isinstance(value, str):
        return _STRIP.sub("", value).lower()
    if isinstance(value, bool):
        return (bool, value)
    if isinstance(value, (list, tuple)):
        return [_norm(v) for v in value]
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    return value


def lenient_match(gold: Sequence[ToolCall], pred: Sequence[ToolCall]) -> bool:
    """BFCL-style: every gold call matched by one predicted call, in any order, values normalised."""
    if len(gold) != len(pred):
        return False
    remaining = list(pred)
    for g in gold:
        want = (g.name, _norm(g.arguments))
        for i, p in enumerate(remaining):
            if (p.name, _norm(p.arguments)) == want:
                del remaining[i]
                break
        else:
            return False
    return True


def error_kind(gold: Sequence[ToolCall], pred: Prediction) -> str | None:
    """Which of ERROR_KINDS keeps a row from an exact match, or None when it is one. The tool
    names decide first (the right calls with a wrong value are "wrong argument", nothing else)."""
    if exact_match(gold, pred.calls):
        return None   # the official metric: an unparseable reply to a refusal row still has no calls
    if pred.error is not None:
        return "unparseable"
    g, p = [c.name for c in gold], [c.name for c in pred.calls]
    if not g:
        return "call on a refusal row"
    if not p:
        return "no call"
    if g == p:
        return "wrong argument"
    if len(p) < len(g) and Counter(p) <= Counter(g):
        return "missing call"
    if len(p) > len(g) and Counter(g) <= Counter(p):
        return "extra call"
    if Counter(g) == Counter(p):
        return "wrong order"
    return "wrong tool"


def differing_arguments(gold: Sequence[ToolCall], pred: Sequence[ToolCall]) -> list[str]:
    """"tool.argument" for every argument that is wrong, missing or extra, over calls paired in order
    (meaningful when the names agree, i.e. for "wrong argument" rows)."""
    out = []
    for g, p in zip(gold, pred):
        for key in sorted(set(g.arguments) | set(p.arguments)):
            a, b = g.arguments, p.arguments
            if key not in a or key not in b or _sorted(a[key]) != _sorted(b[key]):
                out.append(f"{g.name}.{key}")
    return out


def schema_valid(pred: Prediction, tools: Catalogue) -> bool:
    return pred.error is None and all(not validate_call(c, tools) for c in pred.calls)


def score(rows: Sequence[Row], preds: Sequence[Prediction]) -> Report:
    if len(rows) != len(preds):
        raise ValueError(f"{len(rows)} gold rows but {len(preds)} predictions")
    n = len(rows)
    em = lm = sv = refusals = refusals_ok = 0
    per_tool: dict[str, ToolStats] = {}
    confusion: dict[str, dict[str, int]] = {}
    errors: Counter = Counter()
    argument_errors: Counter = Counter()
    invented = 0
    results = []
    for row, pred in zip(rows, preds):
        e, l, v = exact_match(row.calls, pred.calls), lenient_match(row.calls, pred.calls), schema_valid(pred, row.tools)
        em += e
        lm += l
        sv += v
        if not row.calls:
            refusals += 1
            refusals_ok += not pred.calls and pred.error is None
        g_names, p_names = Counter(c.name for c in row.calls), Counter(c.name for c in pred.calls)
        for name in g_names | p_names:
            st = per_tool.setdefault(name, ToolStats())
            st.gold += g_names[name]
            st.predicted += p_names[name]
            st.correct += min(g_names[name], p_names[name])
        g_seq, p_seq = [c.name for c in row.calls] or [NONE], [c.name for c in pred.calls] or [NONE]
        for i in range(max(len(g_seq), len(p_seq))):
            g = g_seq[i] if i < len(g_seq) else NONE
            p = p_seq[i] if i < len(p_seq) else NONE
            confusion.setdefault(g, {}).setdefault(p, 0)
            confusion[g][p] += 1
        kind = error_kind(row.calls, pred)
        if kind is not None:
            errors[kind] += 1
        if kind == "wrong argument":
            argument_errors.update(differing_arguments(row.calls, pred.calls))
        made_up = invented_values(row, pred)
        invented += made_up
        results.append({"where": row.where, "exact": e, "lenient": l, "schema_valid": v, "error": kind,
                        "invented": made_up})
    return Report(n=n, exact_match=em / n if n else 0.0, lenient_match=lm / n if n else 0.0,
                  schema_valid=sv / n if n else 0.0,
                  refusal_accuracy=refusals_ok / refusals if refusals else None, n_refusal_rows=refusals,
                  per_tool=per_tool, confusion=confusion,
                  errors={k: errors[k] for k in ERROR_KINDS if errors[k]},
                  argument_errors=dict(sorted(argument_errors.items(), key=lambda kv: (-kv[1], kv[0]))),
                  invented=invented, row_results=results)


def read_predictions(path: str | Path) -> tuple[list[Prediction], list[LineProblem]]:
    """Predictions JSONL, one per gold row, in order. Bad lines are problems, never skipped silently."""
    preds: list[Prediction] = []
    problems: list[LineProblem] = []
    for lineno, data, reason in jsontext.read_jsonl(path):
        if reason is None:
            try:
                preds.append(Prediction.from_json(data))
                continue
            except ValueError as e:
                reason = str(e)
        problems.append(LineProblem(str(path), lineno, f"bad prediction: {reason}"))
    return preds, problems


def write_predictions(preds: Iterable[Prediction], path: str | Path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for p in preds:
            f.write(json.dumps(p.to_json(), ensure_ascii=False) + "\n")


def confusion_table(confusion: dict[str, dict[str, int]]) -> tuple[list[str], list[list[int]]]:
    """Labels and a square matrix (gold rows × predicted columns) for printing or plotting."""
    labels = sorted({*confusion, *(p for row in confusion.values() for p in row)}, key=lambda s: (s == NONE, s))
    return labels, [[confusion.get(g, {}).get(p, 0) for p in labels] for g in labels]
