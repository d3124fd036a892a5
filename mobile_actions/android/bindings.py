"""Android bindings as data: for each tool, the device steps that carry it out.

Why data: a user's own catalogue binds its own tools without code. Why whole-element templates: an
argument value is substituted *inside one argv element* and is never split or parsed again, so no
value can become a second argument, an option, or shell syntax. Quoting for the device shell happens
once, at the very end, with ``shlex.quote`` per element.

Format (``<name>.android.json`` beside the catalogue)::

    {"format": "mobile-actions.android/1",
     "tools": {"TOOL": {"route": "intent"|"shell"|"gui", "confirm": false,
                        "steps": [{"shell": [ELEMENT, ...]},
                                  {"tap": {"text"|"resource-id"|"content-desc": "..."},
                                   "unless": {"checked": "true"}, "timeout_s": 5}],
                        "reads": {"FIELD": {"text"|"resource-id"|"content-desc": "..."}}}}}

``reads``: fields of the call's result read off the screen after it (a tool that returns information, such as a
map's place card; the caller gets a follow-up turn with them).

``ELEMENT`` is a string with ``{arg}`` / ``{arg|filter}`` placeholders (``{{``/``}}`` for braces) or
``{"if": "arg", "then": [ELEMENT, ...]}``, kept only when the call has ``arg``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from mobile_actions.errors import BindingError

FORMAT = "mobile-actions.android/1"
ROUTES = ("intent", "shell", "gui")
SELECTOR_KEYS = ("text", "resource-id", "content-desc", "class", "package")
FILTERS = ("uri", "epoch_ms", "epoch_ms_end", "calendar_days")
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)(?:\|([A-Za-z_]+))?\}|[{}]")


@dataclass(frozen=True)
class Template:
    """One argv element: literal text and (argument, filter) holes, in order."""
    pieces: tuple[str | tuple[str, str | None], ...]

    @property
    def arguments(self) -> set[str]:
        return {p[0] for p in self.pieces if isinstance(p, tuple)}


@dataclass(frozen=True)
class Optional_:
    argument: str
    then: tuple["Element", ...]


Element = Template | Optional_


@dataclass(frozen=True)
class ShellSpec:
    argv: tuple[Element, ...]


@dataclass(frozen=True)
class TapSpec:
    selector: tuple[tuple[str, str], ...]
    unless: tuple[tuple[str, str], ...] = ()
    timeout_s: float = 5.0
    done_when_gone: bool = False   # a Send/Save button: the call is done only once it has left the screen


@dataclass(frozen=True)
class WasDoneSpec:
    """How to tell, after a dropped connection, whether a send already happened: a fixed shell command whose
    output holds every value of ``contains`` (argument names) when it did (e.g. the outbox)."""
    argv: tuple[str, ...]
    contains: tuple[str, ...]


@dataclass(frozen=True)
class ResultReader:
    """One field of a tool's result, read off the screen after the call: the first node matching `selector`
    in ``uiautomator dump`` (its text, else its content-desc)."""
    field: str
    selector: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Binding:
    tool: str
    route: str
    confirm: bool
    steps: tuple[ShellSpec | TapSpec, ...]
    was_done: WasDoneSpec | None = None
    reads: tuple[ResultReader, ...] = ()

    @property
    def arguments(self) -> set[str]:
        out: set[str] = set()
        for step in self.steps:
            if isinstance(step, ShellSpec):
                for el in step.argv:
                    out |= _element_arguments(el)
        return out


def _element_arguments(el: Element) -> set[str]:
    if isinstance(el, Template):
        return el.arguments
    out = {el.argument}
    for sub in el.then:
        out |= _element_arguments(sub)
    return out


@dataclass(frozen=True)
class Bindings:
    tools: dict[str, Binding]
    source: str = "<data>"

    def __getitem__(self, name: str) -> Binding:
        return self.tools[name]

    def __contains__(self, name: object) -> bool:
        return name in self.tools

    def __iter__(self) -> Iterator[str]:
        return iter(self.tools)

    @classmethod
    def from_json(cls, data: Any, source: str = "<data>") -> "Bindings":
        if not isinstance(data, dict) or not isinstance(data.get("tools"), dict):
            raise BindingError(f"{source}: expected an object with a 'tools' object")
        if data.get("format", FORMAT) != FORMAT:
            raise BindingError(f"{source}: unknown format {data.get('format')!r} (expected {FORMAT!r})")
        return cls({name: _binding(name, spec, f"{source}: {name}") for name, spec in data["tools"].items()}, source)

    def check_against(self, catalogue) -> None:
        """Every bound tool exists and every placeholder is one of its parameters."""
        for name, b in self.tools.items():
            if name not in catalogue:
                raise BindingError(f"{self.source}: {name}: no such tool in the catalogue")
            props = set(catalogue[name].parameters.get("properties", {}))
            unknown = b.arguments - props
            if unknown:
                raise BindingError(f"{self.source}: {name}: placeholders {sorted(unknown)} are not parameters "
                                   f"of the tool (it has {sorted(props)})")


def _binding(name: str, spec: Any, where: str) -> Binding:
    if not isinstance(spec, dict):
        raise BindingError(f"{where}: expected an object")
    route = spec.get("route", "intent")
    if route not in ROUTES:
        raise BindingError(f"{where}: route must be one of {ROUTES}, got {route!r}")
    steps_raw = spec.get("steps")
    if not isinstance(steps_raw, list) or not steps_raw:
        raise BindingError(f"{where}: 'steps' must be a non-empty list")
    steps = tuple(_step(s, f"{where}: step {i + 1}") for i, s in enumerate(steps_raw))
    if route != "gui" and any(isinstance(s, TapSpec) for s in steps) and not any(isinstance(s, ShellSpec) for s in steps):
        raise BindingError(f"{where}: only tap steps: mark the route 'gui'")
    confirm = spec.get("confirm", False)
    if not isinstance(confirm, bool):
        raise BindingError(f"{where}: 'confirm' must be true or false")
    return Binding(name, route, confirm, steps, _was_done(spec.get("was_done"), f"{where}: was_done"),
                   _reads(spec.get("reads"), f"{where}: reads"))


def _reads(raw: Any, where: str) -> tuple[ResultReader, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise BindingError(f"{where}: expected an object of result fields and their selectors")
    out = []
    for name, selector in raw.items():
        sel = _attrs(selector, f"{where}: {name}", "selector")
        if not sel:
            raise BindingError(f"{where}: {name}: the selector needs at least one of {SELECTOR_KEYS}")
        out.append(ResultReader(name, sel))
    return tuple(out)


def _was_done(raw: Any, where: str) -> WasDoneSpec | None:
    if raw is None:
        return None
    argv, contains = (raw.get("shell"), raw.get("contains")) if isinstance(raw, dict) else (None, None)
    if not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)):
        raise BindingError(f"{where}: 'shell' must be a non-empty list of fixed strings")
    if not (isinstance(contains, list) and contains and all(isinstance(a, str) for a in contains)):
        raise BindingError(f"{where}: 'contains' must be a non-empty list of argument names")
    return WasDoneSpec(tuple(argv), tuple(contains))


def _step(raw: Any, where: str) -> ShellSpec | TapSpec:
    if isinstance(raw, dict) and "shell" in raw:
        argv = raw["shell"]
        if not isinstance(argv, list) or not argv:
            raise BindingError(f"{where}: 'shell' must be a non-empty list of argument elements")
        elements = tuple(_element(e, f"{where}: element {i + 1}") for i, e in enumerate(argv))
        if not isinstance(elements[0], Template) or elements[0].arguments:
            raise BindingError(f"{where}: the command name must be a fixed string")
        return ShellSpec(elements)
    if isinstance(raw, dict) and "tap" in raw:
        sel = _attrs(raw["tap"], where, "tap")
        if not sel:
            raise BindingError(f"{where}: 'tap' needs at least one of {SELECTOR_KEYS}")
        unless = _attrs(raw.get("unless", {}), where, "unless", keys=SELECTOR_KEYS + ("checked", "focused", "selected"))
        timeout = raw.get("timeout_s", 5.0)
        if not isinstance(timeout, (int, float)) or not 0 < timeout <= 120:
            raise BindingError(f"{where}: timeout_s must be a number of seconds in (0, 120]")
        gone = raw.get("done_when_gone", False)
        if not isinstance(gone, bool):
            raise BindingError(f"{where}: done_when_gone must be true or false")
        return TapSpec(sel, unless, float(timeout), gone)
    raise BindingError(f"{where}: a step is {{'shell': [...]}} or {{'tap': {{...}}}}")


def _attrs(raw: Any, where: str, what: str, keys: tuple[str, ...] = SELECTOR_KEYS) -> tuple[tuple[str, str], ...]:
    if not isinstance(raw, dict):
        raise BindingError(f"{where}: '{what}' must be an object")
    out = []
    for k, v in raw.items():
        if k not in keys:
            raise BindingError(f"{where}: '{what}' key {k!r} is not one of {keys}")
        if isinstance(v, bool):
            v = "true" if v else "false"
        elif not isinstance(v, str):
            raise BindingError(f"{where}: '{what}.{k}' must be a string")
        out.append((k, v))
    return tuple(sorted(out))


def _element(raw: Any, where: str) -> Element:
    if isinstance(raw, str):
        return parse_template(raw, where)
    if isinstance(raw, dict) and set(raw) == {"if", "then"} and isinstance(raw["if"], str) and isinstance(raw["then"], list):
        return Optional_(raw["if"], tuple(_element(e, where) for e in raw["then"]))
    raise BindingError(f"{where}: an element is a string or {{'if': ARG, 'then': [...]}}")


def parse_template(text: str, where: str = "<template>") -> Template:
    pieces: list[str | tuple[str, str | None]] = []
    pos = 0
    for m in _PLACEHOLDER.finditer(text):
        if m.start() > pos:
            pieces.append(text[pos:m.start()])
        tok = m.group(0)
        if tok in ("{{", "}}"):
            pieces.append(tok[0])
        elif tok in ("{", "}"):
            raise BindingError(f"{where}: stray {tok!r} in {text!r} (write {tok * 2} for a literal brace)")
        else:
            if m.group(2) is not None and m.group(2) not in FILTERS:
                raise BindingError(f"{where}: unknown filter {m.group(2)!r} (known: {FILTERS})")
            pieces.append((m.group(1), m.group(2)))
        pos = m.end()
    if pos < len(text):
        pieces.append(text[pos:])
    return Template(tuple(pieces))


def load_bindings(name_or_path: str | os.PathLike = "mobile_actions") -> Bindings:
    """A bare name loads ``<dir>/<name>.android.json`` from the catalogue search path; else a file. ``A+B``
    (no such file) is the bindings of both, as `catalog.load_catalogue` joins catalogues."""
    from mobile_actions.catalog import read_named_json

    text = str(name_or_path)
    if "+" in text and not Path(text).exists():
        parts = [load_bindings(part) for part in text.split("+") if part]
        twice = sorted({n for i, b in enumerate(parts) for n in b if any(n in o for o in parts[i + 1:])})
        if twice:
            raise BindingError(f"{text}: tool(s) {', '.join(twice)} bound twice")
        return Bindings({n: b[n] for b in parts for n in b}, text)
    data, path = read_named_json(name_or_path, ".android.json", BindingError, "Android bindings")
    return Bindings.from_json(data, source=str(path))


def default_bindings_for(tools: str) -> str:
    """The bindings that go with a catalogue: `X.android.json` beside a catalogue file `X.json`,
    else the catalogue's name (bundled catalogues have bundled bindings), else the Mobile Actions ones."""
    p = Path(tools)
    if p.suffix == ".json":
        candidate = p.with_name(p.stem + ".android.json")
        return str(candidate) if candidate.is_file() else "mobile_actions"
    return tools
