"""A screen as a text navigator reads it: the on-screen elements of a ``uiautomator dump``, each with a label.

Why the accessibility tree and not pixels: every Android phone gives it over adb, it names what a 270M text
model can read (the label "Bluetooth", the state "off"), and the grammar can then admit only the elements
that are on the screen. Why labels and not indexes: a goal says "turn on Bluetooth", and copying the label
"Bluetooth" from the goal is a far easier step for a small model than mapping it to an element number.

The dump is untrusted device output: it is parsed with a size bound, no DTD or entities, and nothing in it
makes the toolkit read a file or open a connection.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from mobile_actions.errors import ScreenError

MAX_DUMP_BYTES = 4 * 1024 * 1024
MAX_ELEMENTS = 200
_BOUNDS = re.compile(r"^\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]$")
_SHORT_CLASS = {"EditText": "field", "Switch": "switch", "CheckBox": "checkbox", "Button": "button",
                "ImageButton": "button", "ImageView": "icon", "RecyclerView": "list", "ScrollView": "list",
                "SeekBar": "slider"}
# A slider is read as the points of its track a tap can set, every LEVEL_STEP percent ("Brightness 30%"): a
# text navigator names what it taps, and the centre of a SeekBar is one value only.
LEVEL_STEP = 10
_TRAILING_VALUE = re.compile(r"\s*\d+(?:[.,]\d+)?\s*%?\s*$")


@dataclass(frozen=True)
class Element:
    """One element the navigator may act on or read."""

    label: str                          # unique on its screen: what the grammar admits and the prompt shows
    kind: str                           # button | switch | field | item | text | list | ...
    bounds: tuple[int, int, int, int]   # device pixels
    clickable: bool = False
    long_clickable: bool = False
    checkable: bool = False
    checked: bool = False
    scrollable: bool = False
    focused: bool = False
    text: str = ""                      # the field's current text (inputs), or a secondary line
    description: str = ""               # content-desc, when the label is something else ("M": "Monday")

    @property
    def center(self) -> tuple[int, int]:
        x1, y1, x2, y2 = self.bounds
        return (x1 + x2) // 2, (y1 + y2) // 2

    def describe(self) -> str:
        """One prompt line: label, kind and state, e.g. ``"Bluetooth" switch off``."""
        parts = [f'"{self.label}"', self.kind]
        if self.checkable:
            parts.append("on" if self.checked else "off")
        if self.focused:
            parts.append("focused")
        if self.text:
            parts.append(f"text {self.text!r}")
        if self.scrollable:
            parts.append("scrollable")
        return " ".join(parts)


@dataclass(frozen=True)
class Screen:
    package: str
    elements: tuple[Element, ...]
    size: tuple[int, int]

    @property
    def actionable(self) -> tuple[Element, ...]:
        return tuple(e for e in self.elements if e.clickable or e.long_clickable or e.kind == "field")

    def element(self, label: str) -> Element:
        for e in self.elements:
            if e.label == label:
                return e
        raise ScreenError(f"no element labelled {label!r} on this screen")

    def describe(self) -> str:
        lines = [f"App: {self.package}"] + [f"- {e.describe()}" for e in self.elements]
        return "\n".join(lines)


def _levels(name: str, bounds: tuple[int, int, int, int], value: str, clickable: bool) -> list[Element]:
    """A SeekBar as its levels: one element per LEVEL_STEP percent, each a slice of the track around the point a
    tap there sets (the track stops half the bar's height short of each end, as Android's thumb does); the level
    nearest the bar's value (its text, when it has one) is "on"."""
    x1, y1, x2, y2 = bounds
    pad = (y2 - y1) // 2
    track = max(1, x2 - x1 - 2 * pad)
    try:
        current = float(value) if value.strip() else None
    except ValueError:
        current = None
    out = []
    half = track * LEVEL_STEP / 200
    for p in range(0, 101, LEVEL_STEP):
        centre = x1 + pad + track * p / 100
        left = x1 if p == 0 else round(centre - half)        # the ends reach the bar's ends: a touch there clamps
        right = x2 if p == 100 else round(centre + half)
        out.append(Element(label=f"{name} {p}%", kind="level", bounds=(left, y1, max(left + 1, right), y2),
                           clickable=clickable, checkable=current is not None,
                           checked=current is not None and abs(current - p) * 2 < LEVEL_STEP))
    return out


def _kind(node: ET.Element) -> str:
    cls = node.get("class", "").rsplit(".", 1)[-1]
    if cls in _SHORT_CLASS:
        return _SHORT_CLASS[cls]
    if node.get("checkable") == "true":
        return "switch"
    if node.get("clickable") == "true":
        return "button"
    return "text"


def _bounds(raw: str, where: str) -> tuple[int, int, int, int]:
    m = _BOUNDS.match(raw or "")
    if not m:
        raise ScreenError(f"{where}: bounds {raw!r} are not [x1,y1][x2,y2]")
    x1, y1, x2, y2 = (int(v) for v in m.groups())
    return x1, y1, x2, y2


def parse_hierarchy(dump: str | bytes) -> Screen:
    """The elements of a ``uiautomator dump`` worth showing: labelled, clickable, inputs or scrollable.

    Labels come from text (content-desc when the text is only a symbol), then content-desc, then hint, then
    the resource-id's last part (a field: its content-desc, hint or id, as its text is what was typed); repeated
    labels get " (2)", " (3)" in screen order, so every label names one element.
    """
    data = dump.encode("utf-8") if isinstance(dump, str) else dump
    if len(data) > MAX_DUMP_BYTES:
        raise ScreenError(f"hierarchy dump of {len(data)} bytes is over the {MAX_DUMP_BYTES}-byte limit")
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        raise ScreenError("hierarchy dump declares a DTD or entities; a uiautomator dump never does")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as e:
        raise ScreenError(f"hierarchy dump is not XML: {e}") from None
    nodes = list(root.iter("node"))
    package = nodes[0].get("package", "") if nodes else ""
    width = height = 0
    elements: list[Element] = []
    seen: dict[str, int] = {}
    for i, node in enumerate(nodes):
        x1, y1, x2, y2 = _bounds(node.get("bounds", ""), f"node {i}")
        width, height = max(width, x2), max(height, y2)
        flag = lambda name: node.get(name) == "true"  # noqa: E731
        kind = _kind(node)
        text, desc, hint = node.get("text", ""), node.get("content-desc", ""), node.get("hint", "")
        rid = node.get("resource-id", "").rsplit("/", 1)[-1].replace("_", " ")
        interactive = flag("clickable") or flag("long-clickable") or flag("scrollable") or kind == "field"
        # a "+" or "⋮" button: its content-desc says what it does
        name = text if any(c.isalnum() for c in text) or not desc else desc
        label = (desc or hint or rid) if kind == "field" else (name or desc or hint or (rid if interactive else ""))
        if not label.strip() or not (interactive or text):
            continue
        label = " ".join(label.split())[:80]
        if kind == "slider":
            for level in _levels(" ".join((_TRAILING_VALUE.sub("", desc) or desc or label).split())[:60],
                                 (x1, y1, x2, y2), text, flag("clickable") or flag("long-clickable")):
                seen[level.label] = seen.get(level.label, 0) + 1
                elements.append(level)
            continue
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            label = f"{label} ({seen[label]})"
        elements.append(Element(label=label, kind=kind, bounds=(x1, y1, x2, y2), clickable=flag("clickable"),
                                long_clickable=flag("long-clickable"), checkable=flag("checkable"),
                                checked=flag("checked"), scrollable=flag("scrollable"), focused=flag("focused"),
                                text=" ".join(text.split())[:80] if kind == "field" else "",
                                description=" ".join(desc.split())[:80] if desc != label else ""))
        if len(elements) >= MAX_ELEMENTS:
            break
    return Screen(package=package, elements=tuple(elements), size=(width, height))
