"""Tool calls and their validation against a catalogue.

An invalid call is never dispatched: everything downstream (dispatch, the hybrid runner, the
scorer's schema-valid rate) asks `validate_call` first. Problems are values, not exceptions,
because a validator's caller usually wants all of them at once.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any, Iterable, Sequence

from jsonschema import Draft202012Validator, ValidationError, validators
from jsonschema.protocols import Validator
from referencing import Registry

from mobile_actions import jsontext
from mobile_actions.catalog import PATTERN_TIMEOUT_S, Catalogue, Tool, format_checker, schema_regex

# Mobile Actions writes datetimes as `YYYY-MM-DDTHH:MM:SS` and says so only in the description.
DATETIME_FORMAT = "%Y-%m-%dT%H:%M:%S"
DATETIME_HINT = "YYYY-MM-DDTHH:MM:SS"
DATETIME_RE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}")
_FORMATS = format_checker()
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _pattern(validator: Validator, pattern: str, instance: Any, schema: dict) -> Iterable[ValidationError]:
    """jsonschema's `pattern`, but matched by the `regex` engine within PATTERN_TIMEOUT_S: the schema and
    the value both come from outside, and `^(a+)+$` on 41 characters keeps stdlib `re` busy for hours."""
    if not validator.is_type(instance, "string"):
        return
    try:
        found = schema_regex(pattern).search(instance, timeout=PATTERN_TIMEOUT_S)
    except ValueError as e:   # a Tool built in code, whose schema no catalogue checked
        yield ValidationError(str(e))
    except TimeoutError:
        yield ValidationError("pattern check took too long")
    else:
        if found is None:
            yield ValidationError(f"{instance!r} does not match {pattern!r}")


# Draft 2020-12 with `pattern` bounded in time. The only other keyword that runs a schema's regex on a
# value, `patternProperties`, is refused when the catalogue is loaded.
_Validator = validators.extend(Draft202012Validator, {"pattern": _pattern})


@_FORMATS.checks("mobile-actions-datetime", raises=ValueError)
def _is_datetime(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if not DATETIME_RE.fullmatch(value):
        raise ValueError(f"{value!r} is not in {DATETIME_HINT} format")
    try:
        datetime.strptime(value, DATETIME_FORMAT)
    except ValueError as e:  # 2025-02-30T10:00:00 has the right shape but is no date
        raise ValueError(f"{value!r} is not a real date and time: {e}") from None
    return True


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"name": self.name, "arguments": self.arguments}

    @classmethod
    def from_json(cls, data: Any) -> "ToolCall":
        """Accept `{"name", "arguments"}` and the row shape `{"function": {"name", "arguments"}}`.
        Arguments given as a JSON string are untrusted text like the row around them (jsontext)."""
        if not isinstance(data, dict):
            raise ValueError(f"a tool call is a JSON object, got {type(data).__name__}")
        fn = data.get("function", data)
        if not isinstance(fn, dict):
            raise ValueError(f"field 'function' must be an object, got {type(fn).__name__}")
        name = fn.get("name")
        if not isinstance(name, str):
            raise ValueError("a tool call needs a string 'name'")
        args = fn.get("arguments", {})
        if isinstance(args, str):
            try:
                args = jsontext.loads(args) if args.strip() else {}
            except jsontext.JSONTextError as e:
                raise ValueError(f"{name}: arguments string is not JSON: {e.reason.removeprefix('invalid JSON: ')}") from None
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise ValueError(f"{name}: arguments must be an object, got {type(args).__name__}")
        return cls(name, args)


def turn_calls(calls: Sequence[ToolCall], tools: Iterable[Tool] = ()) -> list[ToolCall]:
    """What a turn returns: `calls` in order, each once (same tool, same arguments), and without an optional
    string argument that echoes another string value of its call (one holds the other).

    A 270M caller sometimes writes a finished call again at the end of its turn (the same email twice);
    nobody asks for the very same action twice in one request, and a send is never repeated. It also pads an
    email with a body copied from its own subject ("PO 7731" and "7731", "Siobhan joining" twice); no gold call
    in the generated or hand-written rows has two values where one holds the other. `tools` (the declarations)
    say which arguments are optional; without them no argument is dropped."""
    required = {t.name: set(t.required) for t in tools}
    seen: set[str] = set()
    out = []
    for c in calls:
        if c.name in required:
            c = ToolCall(c.name, {k: v for k, v in c.arguments.items() if k in required[c.name]
                                  or not _echoes(k, v, c.arguments)})
        key = json.dumps([c.name, c.arguments], sort_keys=True, ensure_ascii=False)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


_ADDRESS = re.compile(r"[^\s@]+@[^\s@]+")


def _echoes(name: str, value: Any, arguments: dict) -> bool:
    """Whether text `value` holds, or is held by, another argument's text, or holds another argument's address
    ("2 emails: to ops@x.io" beside the address ops@x.io). An address echoes only the same address (a body that
    repeats the recipient): "sofia" is in "sofia.g@x.com", and both are right."""
    if not isinstance(value, str) or not value.strip():
        return False
    if _ADDRESS.fullmatch(value.strip()):
        return any(k != name and isinstance(v, str) and v.strip() == value.strip() for k, v in arguments.items())
    return any(k != name and isinstance(v, str) and v.strip()
               and (v in value or value in v and not _ADDRESS.fullmatch(v.strip())) for k, v in arguments.items())


def calls_from_json(items: Any, where: str) -> list[ToolCall]:
    """A JSON list of calls (null: none); anything else is a ValueError naming `where` and the item."""
    if items is None:
        return []
    if not isinstance(items, list):
        raise ValueError(f"{where} must be a list of calls, got {type(items).__name__}")
    calls = []
    for i, item in enumerate(items):
        try:
            calls.append(ToolCall.from_json(item))
        except ValueError as e:
            raise ValueError(f"{where}[{i}]: {e}") from None
    return calls


@dataclass(frozen=True)
class Problem:
    tool: str
    argument: str | None
    message: str

    def __str__(self) -> str:
        where = f"{self.tool}.{self.argument}" if self.argument else self.tool
        return f"{where}: {self.message}"


def argument_schema(tool: Tool) -> dict:
    """The JSON Schema a call's arguments must satisfy: the tool's parameters, closed, with
    the Mobile Actions datetime convention turned into a checked format."""
    schema = _with_datetime_format(tool.parameters)
    schema.setdefault("additionalProperties", False)
    return schema


def is_datetime(schema: dict) -> bool:
    """Whether a string argument holds a Mobile Actions datetime (its checked format, or the convention's
    description): the values the grammar constrains to the request's resolved dates."""
    return schema.get("format") == "mobile-actions-datetime" or DATETIME_HINT in str(schema.get("description", ""))


def value_kind(name: str, schema: dict) -> str:
    """The format a string argument's values have, from its name and schema: "datetime", "date" (YYYY-MM-DD),
    "time" (HH:MM), "email", "phone" or "span" (what grounding tightens a copied value to; what a request's
    written addresses and numbers are for)."""
    text = f"{name} {schema.get('format', '')} {schema.get('description', '')}".lower()
    if schema.get("format") == "mobile-actions-datetime" or DATETIME_HINT.lower() in text:
        return "datetime"
    if schema.get("format") == "date" or re.search(r"\byyyy-mm-dd\b", text):
        return "date"
    if schema.get("format") == "time" or re.search(r"\bhh:mm\b", text):
        return "time"
    # The value *is* an address or a number: the name says so, or the format or description calls it one.
    # "The subject of the email" mentions email but is not an address.
    words = set(re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", name).replace("e-mail", "email").lower()))
    if words & {"email", "emails"} or schema.get("format") == "email" or re.search(r"e-?mail (?:address|of)", text):
        return "email"
    if words & {"phone", "telephone", "mobile", "tel"} or "phone number" in text:
        return "phone"
    return "span"


def _with_datetime_format(schema: dict) -> dict:
    out = dict(schema)
    if out.get("type") == "string" and "format" not in out and DATETIME_HINT in out.get("description", ""):
        out["format"] = "mobile-actions-datetime"
    if out.get("format") in ("date-time", "datetime") and DATETIME_HINT in out.get("description", ""):
        out["format"] = "mobile-actions-datetime"
    if "properties" in out:
        out["properties"] = {k: _with_datetime_format(v) for k, v in out["properties"].items()}
    if isinstance(out.get("items"), dict):
        out["items"] = _with_datetime_format(out["items"])
    return out


def _validator(tool: Tool) -> Validator:
    return _compiled(json.dumps(argument_schema(tool), sort_keys=True))


@lru_cache(maxsize=256)
def _compiled(schema_json: str) -> Validator:
    """One validator per distinct schema (by content, so memory stays constant however many rows repeat
    the same tools). The empty registry means a `$ref` is never fetched or read from disk, even for a
    Tool built in code that bypassed the catalogue's checks: only references inside the schema resolve."""
    return _Validator(json.loads(schema_json), format_checker=_FORMATS, registry=Registry())


def validate_call(call: ToolCall, catalogue: Catalogue) -> list[Problem]:
    if _LONE_SURROGATE.search(call.name):
        return [Problem(_printable(call.name), None, "the tool name is not valid Unicode text (a lone surrogate)")]
    if call.name not in catalogue:
        return [Problem(call.name, None, f"unknown tool (known: {', '.join(catalogue.names)})")]
    tool = catalogue[call.name]
    if not isinstance(call.arguments, dict):
        return [Problem(call.name, None, "arguments must be an object")]
    unencodable = [Problem(call.name, _printable(key), "not valid Unicode text (a lone surrogate); it cannot be "
                           "printed, written or sent") for key, value in call.arguments.items()
                   if _has_lone_surrogate(key) or _has_lone_surrogate(value)]
    if unencodable:
        return unencodable
    problems = []
    for err in sorted(_validator(tool).iter_errors(call.arguments), key=lambda e: list(map(str, e.path))):
        problems.append(_problem(call.name, err))
    return problems


def _printable(text: str) -> str:
    """`text` with any lone surrogate written as `\\udXXX`, so a message about it can be printed."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _has_lone_surrogate(value: Any) -> bool:
    """Calls built from model text or in code never went through jsontext; their text must still be
    encodable before it is printed, written to a file or put on a device's command line."""
    if isinstance(value, str):
        return bool(_LONE_SURROGATE.search(value))
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


def _problem(tool: str, err) -> Problem:
    path = ".".join(str(p) for p in err.absolute_path)
    if err.validator == "required":
        missing = err.message.split("'")[1] if "'" in err.message else None
        return Problem(tool, missing, "missing required argument")
    if err.validator == "additionalProperties":
        extra = re.findall(r"'([^']+)'", err.message)
        return Problem(tool, ".".join(filter(None, [path, *extra])) or None, "unknown argument")
    if err.validator == "type":
        return Problem(tool, path or None, f"expected {err.validator_value}, got {type(err.instance).__name__} {err.instance!r:.60}")
    if err.validator == "enum":
        return Problem(tool, path or None, f"{err.instance!r:.60} is not one of {err.validator_value}")
    if err.validator == "format":
        cause = err.cause if err.cause is not None else err.message
        return Problem(tool, path or None, str(cause))
    return Problem(tool, path or None, err.message)


def validate_calls(calls: Iterable[ToolCall], catalogue: Catalogue) -> list[Problem]:
    return [p for c in calls for p in validate_call(c, catalogue)]


def is_valid(call: ToolCall, catalogue: Catalogue) -> bool:
    return not validate_call(call, catalogue)
