"""Tool catalogues: the set of tools a caller may call.

Three shapes exist in the wild: Mobile Actions rows (`{"function": {...}}` with Gemini's upper-case
types), OpenAI's (`{"type": "function", "function": {...}}` with JSON Schema types) and BFCL/Gorilla
function docs (`{"name", "description", "parameters": {"type": "dict", ...}}` with Python's type
names and dotted names such as `math.factorial`). All are normalised to JSON Schema here, once, so
validation, rendering and generation see one shape. Dotted names stay as they are: the FunctionGemma
wire format writes them bare (`call:math.factorial{...}`), so calls need no renaming back.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import unquote

import regex
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import SchemaError

from mobile_actions import jsontext, lexicon
from mobile_actions.errors import CatalogueError

CATALOGS_DIR = Path(__file__).resolve().parent / "catalogs"  # the bundled catalogues (package data)
JSON_TYPES = {"string", "number", "integer", "boolean", "object", "array", "null"}
# BFCL/Gorilla's Python type names, as its own conversion for OpenAI-style models maps them
# (bfcl-eval's GORILLA_TO_OPENAPI: `any` is a string there, and its checker expects one).
GORILLA_TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": "string"}
# Schema keys we understand; anything else is kept verbatim (descriptions of the user's own schemas
# are theirs), but these are the ones whose values we check.
_SCHEMA_KEYS = {"type", "description", "properties", "required", "enum", "items", "format",
                "pattern", "minimum", "maximum", "default", "nullable", "minItems", "maxItems"}
# Keys that make the validator resolve references somewhere other than inside the tool's own parameters.
_FOREIGN_REF_KEYS = ("$id", "$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor")
# Keys whose value maps names (property names, definition names) to schemas: the names are not keywords.
_NAMED_SCHEMAS = {"properties", "$defs", "definitions", "dependentSchemas"}
# With `$ref`s followed, a schema must stay a finite tree this small (a DAG of refs can double at each level).
MAX_SCHEMA_NODES = 10_000
# What calling a tool does, from least to most consequential: reads or shows something; changes the phone's
# state (a switch, a new contact or event, a deletion); reaches someone else (an email, a message, a payment).
EFFECTS = ("none", "changes", "sends")
# Tool names: ASCII, so that no two tools look alike ("ѕend_email" with a Cyrillic ѕ beside "send_email");
# Gemini's rule for function names (dots: BFCL's `math.factorial`), at most 64 characters.
TOOL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
# A catalogue is checked against these before anything is built from it (a prompt, a grammar, a KV cache):
# OpenAI's limit on tools per request, and declarations (name, description and parameters as JSON) far
# longer than any model here can read (the bundled catalogue is ~3,000 characters for 7 tools).
MAX_TOOLS = 128
MAX_DECLARATION_CHARS = 256 << 10
# A schema's `pattern` runs on untrusted values: with the `regex` engine, which can stop a match that
# backtracks without end (`^(a|aa)+$` on forty a's and a "!"); `calls` turns the timeout into a problem.
PATTERN_TIMEOUT_S = 0.1


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict = field(default_factory=lambda: {"type": "object", "properties": {}})

    @property
    def properties(self) -> dict:
        return self.parameters.get("properties", {})

    @property
    def required(self) -> list[str]:
        return list(self.parameters.get("required", []))

    @property
    def effect(self) -> str:
        """What calling the tool does (`EFFECTS`): its parameters' ``"x-effect"``, else read from the words of its
        name with the lexicon (`name_effect`). Why it matters: the toolkit never forces a call that changes
        anything, asks before dispatching one, and refuses one the request does not ask for."""
        given = self.parameters.get("x-effect")
        return given if given in EFFECTS else name_effect(self.name)

    def to_mobile_actions(self) -> dict:
        """The Mobile Actions row shape (Gemini upper-case types, no wrapper type)."""
        return {"function": {"name": self.name, "description": self.description,
                             "parameters": _to_gemini(self.parameters)}}

    def to_openai(self) -> dict:
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": self.parameters}}


@dataclass(frozen=True)
class Catalogue:
    tools: tuple[Tool, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {t.name: t for t in self.tools})

    def __getitem__(self, name: str) -> Tool:
        return self._by_name[name]  # type: ignore[attr-defined]

    def __contains__(self, name: object) -> bool:
        return name in self._by_name  # type: ignore[attr-defined]

    def __iter__(self) -> Iterator[Tool]:
        return iter(self.tools)

    def __len__(self) -> int:
        return len(self.tools)

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.tools]

    def to_mobile_actions(self) -> list[dict]:
        return [t.to_mobile_actions() for t in self.tools]

    def to_openai(self) -> list[dict]:
        return [t.to_openai() for t in self.tools]

    @classmethod
    def from_json(cls, data: Any, source: str = "<data>") -> "Catalogue":
        if isinstance(data, dict) and "tools" in data:
            data = data["tools"]
        elif isinstance(data, dict) and isinstance(data.get("function"), list):
            data = data["function"]   # a BFCL question: its function docs
        if not isinstance(data, list):
            raise CatalogueError(f"{source}: a catalogue is a JSON list of tools, got {type(data).__name__}")
        _check_count(len(data), source)   # before any tool is parsed
        tools: list[Tool] = []
        seen: set[str] = set()
        for i, entry in enumerate(data):
            tool = parse_tool(entry, f"{source}: tool #{i}")
            if tool.name in seen:
                raise CatalogueError(f"{source}: tool {tool.name!r}: duplicate tool name")
            seen.add(tool.name)
            tools.append(tool)
        return cls.checked(tools, source)

    @classmethod
    def checked(cls, tools: list[Tool], source: str) -> "Catalogue":
        """A catalogue within MAX_TOOLS and MAX_DECLARATION_CHARS: a caller renders every declaration into
        its prompt, whose KV cache grows with it (5,000 tools asked for 11 GB), so the size is refused
        here, where the catalogue is loaded, before any prompt, grammar or cache is built for it."""
        _check_count(len(tools), source)
        chars = sum(declaration_chars(t) for t in tools)
        if chars > MAX_DECLARATION_CHARS:
            raise CatalogueError(f"{source}: the tool declarations are {chars:,} characters; a catalogue's "
                                 f"are at most {MAX_DECLARATION_CHARS:,} (offer fewer tools, or shorter descriptions)")
        return cls(tuple(tools))


def _check_count(n: int, source: str) -> None:
    if n > MAX_TOOLS:
        raise CatalogueError(f"{source}: {n:,} tools; a catalogue holds at most {MAX_TOOLS}")


def declaration_chars(tool: Tool) -> int:
    """A tool's size as the model reads it: name, description and parameters (as JSON)."""
    return len(tool.name) + len(tool.description) + len(json.dumps(tool.parameters, ensure_ascii=False))


def parse_tool(entry: Any, where: str = "<tool>") -> Tool:
    """One tool in either shape -> Tool with a JSON Schema `parameters`."""
    if isinstance(entry, Tool):
        return entry
    if not isinstance(entry, dict):
        raise CatalogueError(f"{where}: a tool is a JSON object, got {type(entry).__name__}")
    fn = entry.get("function", entry)
    if not isinstance(fn, dict):
        raise CatalogueError(f"{where}: field 'function' must be an object")
    name = fn.get("name")
    if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
        foreign = [c for c in dict.fromkeys(name) if not c.isascii()][:5] if isinstance(name, str) else []
        raise CatalogueError(f"{where}: field 'name': {name!r:.80} is not a tool name (ASCII letters, digits, "
                             "'_', '.' and '-', starting with a letter or '_', at most 64 characters)"
                             + "".join(f"; {c!r} is U+{ord(c):04X}, not ASCII" for c in foreign))
    where = f"{where.rsplit(': tool #', 1)[0]}: tool {name!r}"
    description = fn.get("description", "")
    if not isinstance(description, str):
        raise CatalogueError(f"{where}: field 'description' must be a string")
    params = fn.get("parameters") or {"type": "object", "properties": {}}
    params = _normalise_schema(params, f"{where}: parameters")
    if params.get("type") != "object":
        raise CatalogueError(f"{where}: field 'parameters.type' must be OBJECT/object, got {params.get('type')!r}")
    params.setdefault("properties", {})
    if "x-effect" in params and params["x-effect"] not in EFFECTS:
        raise CatalogueError(f"{where}: field 'parameters.x-effect' must be one of {', '.join(EFFECTS)}, "
                             f"got {params['x-effect']!r}")
    problem = _schema_problem(json.dumps(params, sort_keys=True))
    if problem:
        raise CatalogueError(f"{where}: parameters: {problem}")
    return Tool(name=name, description=description, parameters=params)


def name_words(name: str) -> list[str]:
    """The words of a tool's name, lower case: send_email, sendEmail, SEND_EMAIL, "chat.delete" alike."""
    return [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+", name)]


def name_effect(name: str) -> str:
    """A tool's effect from its name: the first word of it the lexicon lists as sending or as reading decides
    ("get_emails": none, "email_team": sends); a name with neither changes state, the safe default."""
    words = lexicon.load().effect
    for word in name_words(name):
        if word in words.sends:
            return "sends"
        if word in words.none:
            return "none"
    return "changes"


@lru_cache(maxsize=256)
def schema_regex(pattern: str) -> "regex.Pattern":
    """A schema's `pattern`, compiled with the `regex` engine (which `calls` runs with PATTERN_TIMEOUT_S).
    ValueError for one that does not compile, nested too deep included (a RecursionError otherwise)."""
    try:
        return regex.compile(pattern)
    except (regex.error, OverflowError) as e:
        raise ValueError(f"{pattern!r:.60} is not a regular expression: {e}") from None
    except RecursionError:
        raise ValueError(f"{pattern!r:.60} is not a regular expression: nested too deeply") from None


def format_checker() -> FormatChecker:
    """jsonschema's format checks, with "regex" compiled by the engine that runs `pattern` (`schema_regex`):
    for a schema's patterns when it is loaded, and for argument values whose format is "regex"."""
    checker = FormatChecker()
    checker.checks("regex", raises=ValueError)(lambda value: not isinstance(value, str) or bool(schema_regex(value)))
    return checker


SCHEMA_FORMATS = format_checker()


@lru_cache(maxsize=1024)
def _schema_problem(schema_json: str) -> str | None:
    """Why a parameters schema (canonical JSON) cannot be used, or None. Checked once per distinct
    schema when it is loaded, so that validation never meets a bad value (`pattern: "("`,
    `minimum: "zero"`) or a reference it would have to fetch; keyed by content because every row of a
    dataset repeats the same tools."""
    schema = json.loads(schema_json)
    try:  # also compiles every `pattern` (format "regex", with the engine that will run it)
        Draft202012Validator.check_schema(schema, format_checker=SCHEMA_FORMATS)
    except SchemaError as e:   # a format check's own reason (why a pattern does not compile) says more
        return f"field {'.'.join(map(str, e.absolute_path)) or '(top)'!r}: {str(e.cause or e.message):.200}"
    try:
        _check_references(schema)
    except ValueError as e:
        return str(e)
    return None


def _check_references(root: dict) -> None:
    """`$ref` may only be `#` or `#/...` pointing inside this schema: never a URL or a file, which the
    validator would fetch or read. With references followed the schema must stay a finite tree (no
    loops) of at most MAX_SCHEMA_NODES nodes and jsontext.MAX_DEPTH levels, because validation
    recurses through it. Walks every nested object, data included (a local `$ref` may point into an
    `enum`), without recursion of its own."""
    done: dict[int, tuple[int, int]] = {}  # id(node) -> (nodes, levels) of its expanded subtree
    active = {id(root)}                     # the nodes on the current path
    stack: list[list] = [[root, _references_below(root, "#", root), 0]]  # node, its kids, next kid
    while stack:
        top = stack[-1]
        node, kids, i = top
        if i < len(kids):
            top[2] += 1
            kid, at = kids[i]
            if id(kid) in active:
                raise ValueError(f"field '$ref': {at!r:.100} loops back to an enclosing schema (recursive schemas are not supported)")
            if id(kid) not in done:
                active.add(id(kid))
                stack.append([kid, _references_below(kid, at, root), 0])
            continue
        stack.pop()
        active.discard(id(node))
        nodes = 1 + sum(done[id(k)][0] for k, _ in kids)
        levels = 1 + max((done[id(k)][1] for k, _ in kids), default=0)
        if nodes > MAX_SCHEMA_NODES or levels > jsontext.MAX_DEPTH:
            raise ValueError(f"the schema with its '$ref's followed is too big (more than {MAX_SCHEMA_NODES} "
                             f"objects or {jsontext.MAX_DEPTH} levels)")
        done[id(node)] = (nodes, levels)


def _references_below(node: Any, at: str, root: dict) -> list[tuple[Any, str]]:
    """The objects and lists directly below `node`, and what its `$ref` points at, with their pointers."""
    if isinstance(node, list):
        return [(v, f"{at}/{i}") for i, v in enumerate(node) if isinstance(v, (dict, list))]
    kids = []
    for key, value in node.items():
        if key in _FOREIGN_REF_KEYS:
            raise ValueError(f"field {key!r} at {at!r}: not supported (only '#/...' references inside the tool's parameters)")
        if key == "patternProperties":   # jsonschema matches these with `re`, which no time limit stops
            raise ValueError(f"field 'patternProperties' at {at!r}: not supported (name the arguments in 'properties')")
        if key == "$ref":
            target = _local_target(value, at, root)
            if isinstance(target, (dict, list)):
                kids.append((target, value))
        elif key in _NAMED_SCHEMAS and isinstance(value, dict):
            kids += [(v, f"{at}/{key}/{name}") for name, v in value.items() if isinstance(v, (dict, list))]
        elif isinstance(value, (dict, list)):
            kids.append((value, f"{at}/{key}"))
    return kids


def _local_target(ref: Any, at: str, root: dict) -> Any:
    """The schema a `$ref` points at, resolved the way `referencing` does (unquote, then ~1 and ~0)."""
    if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
        raise ValueError(f"field '$ref' at {at!r}: {ref!r:.100} is not a '#/...' reference inside the tool's "
                         "parameters (URLs and files are never read)")
    node: Any = root
    for segment in unquote(ref[2:]).split("/") if ref != "#" else []:
        key = segment.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and segment.isascii() and segment.isdigit() and int(segment) < len(node):
            node = node[int(segment)]
        else:
            raise ValueError(f"field '$ref' at {at!r}: {ref!r:.100} points at nothing in the tool's parameters")
    if not isinstance(node, (dict, bool)):
        raise ValueError(f"field '$ref' at {at!r}: {ref!r:.100} does not point at a schema")
    return node


def _normalise_schema(schema: Any, where: str) -> dict:
    if not isinstance(schema, dict):
        raise CatalogueError(f"{where}: a schema must be an object, got {type(schema).__name__}")
    out: dict = {}
    for key, value in schema.items():
        if key == "type":
            types = value if isinstance(value, list) else [value]
            norm = []
            for t in types:
                name = t.lower() if isinstance(t, str) else None
                name = GORILLA_TYPES.get(name, name)
                if name not in JSON_TYPES:
                    raise CatalogueError(f"{where}: field 'type': unknown type {t!r:.40} (known: "
                                         f"{', '.join(sorted(JSON_TYPES | GORILLA_TYPES.keys()))}, in any case)")
                norm.append(name)
            out["type"] = norm if isinstance(value, list) else norm[0]
        elif key == "properties":
            if not isinstance(value, dict):
                raise CatalogueError(f"{where}: field 'properties' must be an object")
            out["properties"] = {k: _normalise_schema(v, f"{where}.{k}") for k, v in value.items()}
        elif key == "items":
            out["items"] = _normalise_schema(value, f"{where}[]")
        elif key == "enum":
            if not isinstance(value, list) or not value:
                raise CatalogueError(f"{where}: field 'enum' must be a non-empty list")
            out["enum"] = list(value)
        elif key == "nullable" and value is True:
            out["nullable"] = True
        else:
            out[key] = value
    if not {"type", "enum", "properties", "$ref"} & out.keys():
        raise CatalogueError(f"{where}: field 'type' is missing")
    if "properties" in out and "type" not in out:
        out["type"] = "object"
    required = out.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise CatalogueError(f"{where}: field 'required' must be a list of names")
    if out.get("type") == "object":
        for r in required:
            if r not in out.get("properties", {}):
                raise CatalogueError(f"{where}: field 'required': {r!r} is not in properties")
    return out


def _to_gemini(schema: dict) -> dict:
    out: dict = {}
    for key, value in schema.items():
        if key == "type":
            out["type"] = [t.upper() for t in value] if isinstance(value, list) else value.upper()
        elif key == "properties":
            out["properties"] = {k: _to_gemini(v) for k, v in value.items()}
        elif key == "items":
            out["items"] = _to_gemini(value)
        else:
            out[key] = value
    return out


def catalogue_search_path() -> list[Path]:
    """Where bare catalogue names are looked up: $MOBILE_ACTIONS_TOOLS (os.pathsep list), then the bundled catalogues."""
    extra = [Path(p) for p in os.environ.get("MOBILE_ACTIONS_TOOLS", "").split(os.pathsep) if p]
    return [*extra, CATALOGS_DIR]


def read_named_json(name_or_path: str | os.PathLike, suffix: str, error: type[Exception], what: str) -> tuple[Any, Path]:
    """JSON data files that users name either by a bare name (looked up as `<dir>/<name><suffix>` on the
    catalogue search path) or by a path: catalogues (`.json`) and their Android bindings (`.android.json`).
    Errors name the file and line."""
    text = str(name_or_path)
    path = Path(text)
    if not path.suffix and os.sep not in text and not path.is_file():
        for d in catalogue_search_path():
            if (d / f"{text}{suffix}").is_file():
                path = d / f"{text}{suffix}"
                break
        else:
            dirs = ", ".join(str(d) for d in catalogue_search_path())
            raise error(f"no {what} named {text!r} (looked for {text}{suffix} in {dirs})")
    try:
        return jsontext.load_file(path), path
    except FileNotFoundError:
        raise error(f"{path}: no such {what} file") from None
    except OSError as e:  # a directory, no permission
        raise error(f"{path}: cannot read the {what} file: {e.strerror or e}") from None
    except jsontext.JSONTextError as e:
        raise error(f"{path}:{e.line}: {e.reason}" if e.line else f"{path}: {e.reason}") from None


def load_catalogue(name_or_path: str | os.PathLike = "mobile_actions") -> Catalogue:
    """A bare name (`mobile_actions`) loads `<dir>/<name>.json` from the search path; anything else is a file.
    ``A+B`` (no such file) is the tools of both, in that order (``mobile_actions+operate_screen``).
    A catalogue someone names explicitly must offer something to call: an empty one is refused rather
    than silently standing for "no constraint"."""
    text = str(name_or_path)
    if "+" in text and not Path(text).exists():
        parts = [load_catalogue(part) for part in text.split("+") if part]
        tools = [t for cat in parts for t in cat]
        names = [t.name for t in tools]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise CatalogueError(f"{text}: tool(s) {', '.join(dup)} declared twice")
        return Catalogue.checked(tools, text)
    data, path = read_named_json(name_or_path, ".json", CatalogueError, "catalogue")
    catalogue = Catalogue.from_json(data, source=str(path))
    if not catalogue:
        raise CatalogueError(f"{path}: the catalogue has no tools")
    return catalogue
