"""Mobile Actions JSONL rows: reading (strict or lenient), writing, splits, `datasets` interop.

Nothing is dropped silently: every bad line becomes a `LineProblem` naming `file:line`. Strict mode
raises on the first one; lenient mode skips the line and keeps the problem in `Reader.problems`,
so the caller can print a count and the list.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Iterator

from mobile_actions import jsontext
from mobile_actions.calls import ToolCall, calls_from_json
from mobile_actions.catalog import Catalogue, CatalogueError
from mobile_actions.errors import DatasetError

ROLES_FIRST = ("developer", "system")
DEVELOPER_TEMPLATE = ("Current date and time given in YYYY-MM-DDTHH:MM:SS format: {now}\n"
                      "Day of week is {weekday}\n"
                      "You are a model that can do function calling with the following functions\n")


def developer_message(now: "datetime | None" = None) -> dict:
    """The Mobile Actions developer turn for a moment in time (now, to the second, by default)."""
    now = (now or datetime.now()).replace(microsecond=0)
    return {"role": "developer",
            "content": DEVELOPER_TEMPLATE.format(now=now.strftime("%Y-%m-%dT%H:%M:%S"), weekday=now.strftime("%A"))}


@dataclass(frozen=True)
class LineProblem:
    source: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.reason}"


@dataclass(frozen=True)
class Row:
    """One Mobile Actions example. `calls` is the gold (empty for a refusal, whose text is `reply`)."""

    metadata: str
    tools: Catalogue
    messages: list[dict]
    calls: list[ToolCall]
    reply: str = ""
    source: str = "<memory>"
    line: int = 0
    extra: dict = field(default_factory=dict)

    @property
    def prompt_messages(self) -> list[dict]:
        """The conversation up to (not including) the gold model turn."""
        return self.messages[:-1]

    @property
    def user_text(self) -> str:
        return next((m.get("content") or "" for m in reversed(self.messages) if m.get("role") == "user"), "")

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}"

    def to_json(self, *, stringify_arguments: bool = False) -> dict:
        """The row as Mobile Actions JSON; `stringify_arguments` writes the dataset card's variant."""
        messages = [dict(m) for m in self.messages[:-1]]
        if self.calls:
            tool_calls = []
            for c in self.calls:
                fn = {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)
                      if stringify_arguments else c.arguments}
                tool_calls.append({"id": f"call_{len(tool_calls)}", "type": "function", "function": fn}
                                  if stringify_arguments else {"function": fn})
            messages.append({"role": "assistant", "tool_calls": tool_calls})
        else:
            messages.append({"role": "assistant", "content": self.reply})
        out = {"metadata": self.metadata, "tools": self.tools.to_mobile_actions(), "messages": messages}
        out.update(self.extra)
        return out


def parse_row(data: Any, source: str = "<memory>", line: int = 0, tools: Catalogue | None = None) -> Row:
    """A decoded JSON value -> Row, or ValueError with the reason (no location: the reader adds it).
    `tools`: the catalogue of a row that carries none (rows kept apart from their catalogue, as the seed
    catalogues' are); a row's own `tools` always wins."""
    if not isinstance(data, dict):
        raise ValueError(f"a row is a JSON object, got {type(data).__name__}")
    if "tools" not in data and tools is None:
        raise ValueError("missing field 'tools'")
    if "messages" not in data:
        raise ValueError("missing field 'messages'")
    if "tools" in data:
        try:
            tools = Catalogue.from_json(data["tools"], source="tools")
        except CatalogueError as e:
            raise ValueError(str(e)) from None
    messages = data["messages"]
    if not isinstance(messages, list) or len(messages) < 2:
        raise ValueError("field 'messages' must be a list of at least a user and an assistant message")
    roles = [m.get("role") if isinstance(m, dict) else None for m in messages]
    if None in roles:
        raise ValueError("every message must be an object with a 'role'")
    body = roles[1:] if roles[0] in ROLES_FIRST else roles
    if not body or body[0] != "user":
        raise ValueError(f"wrong role order {roles}: expected [developer,] user, ..., assistant")
    if body[-1] not in ("assistant", "model"):
        raise ValueError(f"wrong role order {roles}: the last message must be the assistant's")
    if roles.count("developer") + roles.count("system") > (1 if roles[0] in ROLES_FIRST else 0):
        raise ValueError(f"wrong role order {roles}: a developer/system message may only come first")
    gold = messages[-1]
    tool_calls = gold.get("tool_calls") or []
    calls = calls_from_json(tool_calls, "assistant tool_calls")
    normalised = [dict(m) for m in messages[:-1]]
    final = {"role": "assistant"}
    if calls:
        final["tool_calls"] = [{"function": c.to_json()} for c in calls]
    else:
        content = gold.get("content")
        if not isinstance(content, str):
            raise ValueError("the assistant message has neither tool_calls nor text content")
        final["content"] = content
    normalised.append(final)
    extra = {k: v for k, v in data.items() if k not in ("metadata", "tools", "messages")}
    return Row(metadata=str(data.get("metadata", "train")), tools=tools, messages=normalised, calls=calls,
               reply="" if calls else final["content"], source=source, line=line, extra=extra)


class Reader:
    """Streams rows from a JSONL file; keeps the problems of skipped lines (lenient mode). `tools`: the
    catalogue of rows that carry none (`parse_row`)."""

    def __init__(self, path: str | Path, strict: bool = True, tools: Catalogue | None = None):
        self.path, self.strict, self.tools = Path(path), strict, tools
        self.problems: list[LineProblem] = []

    def __iter__(self) -> Iterator[Row]:
        """Rows in file order. A file that cannot be opened at all (missing, a directory) is OSError."""
        source = str(self.path)
        for lineno, data, reason in jsontext.read_jsonl(self.path):
            if reason is None:
                try:
                    row = parse_row(data, source, lineno, self.tools)
                except ValueError as e:
                    reason = str(e)
                else:
                    yield row
                    continue
            problem = LineProblem(source, lineno, reason)
            if self.strict:
                raise DatasetError(problem)
            self.problems.append(problem)


def read_rows(path: str | Path, strict: bool = True) -> Iterator[Row]:
    """Rows of one file. Lenient callers that need the skipped lines should use `Reader` directly."""
    return iter(Reader(path, strict))


def load_rows(path: str | Path, strict: bool = True) -> tuple[list[Row], list[LineProblem]]:
    reader = Reader(path, strict)
    rows = list(reader)
    return rows, reader.problems


def write_rows(rows: Iterable[Row | dict], path: str | Path, *, stringify_arguments: bool = False) -> int:
    n = 0
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            data = row.to_json(stringify_arguments=stringify_arguments) if isinstance(row, Row) else row
            f.write(json.dumps(data, ensure_ascii=False) + "\n")
            n += 1
    return n


def split(rows: Iterable[Row]) -> dict[str, list[Row]]:
    """Group by the `metadata` field (train / eval in the official file)."""
    out: dict[str, list[Row]] = {}
    for row in rows:
        out.setdefault(row.metadata, []).append(row)
    return out


def to_dataset(rows: Iterable[Row], *, layout: str = "official"):
    """A `datasets.Dataset` with the row as JSON text plus prompt/completion text for SFT.

    `tools` and `messages` travel as JSON strings: Arrow would otherwise unify the differing
    argument/property structs across rows and fill missing keys with nulls, changing the data.
    """
    from datasets import Dataset

    cols: dict[str, list] = {"metadata": [], "tools": [], "messages": [], "prompt": [], "completion": []}
    for row in rows:
        data = row.to_json()
        cols["metadata"].append(row.metadata)
        cols["tools"].append(json.dumps(data["tools"], ensure_ascii=False))
        cols["messages"].append(json.dumps(data["messages"], ensure_ascii=False))
        prompt, completion = prompt_completion(row, layout=layout)
        cols["prompt"].append(prompt)
        cols["completion"].append(completion)
    return Dataset.from_dict(cols)


def from_dataset(ds) -> list[Row]:
    return [parse_row({"metadata": r["metadata"], "tools": jsontext.loads(r["tools"]),
                       "messages": jsontext.loads(r["messages"])}, "dataset", i + 1) for i, r in enumerate(ds)]


def prompt_completion(row: Row, *, layout: str = "official") -> tuple[str, str]:
    """The text a caller sees and the text it must produce (its whole model turn)."""
    from mobile_actions import wire

    prompt = wire.render(row.prompt_messages, row.tools, add_generation_prompt=True, layout=layout)
    full = wire.render(row.messages, row.tools, layout=layout)
    if not full.startswith(prompt):  # the renderer's contract; a failure here is a bug, not bad data
        raise AssertionError("rendered conversation does not extend its prompt")
    return prompt, full[len(prompt):]
