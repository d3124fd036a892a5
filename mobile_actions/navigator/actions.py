"""The action codec: GUI Odyssey raw labels <-> command-style actions.

GUI Odyssey stores each step as a raw ``action`` (``CLICK``, ``LONG_PRESS``, ``SCROLL``, ``TEXT``, ``COMPLETE``,
``INCOMPLETE``) plus ``info``. The model reads and writes *command-style* strings instead
(``CLICK: (x, y)``, ``SCROLL: UP``, ``TYPE: text``, ``PRESS_BACK`` …), produced exactly as the official
``decode_action`` in ``data/format_converter.py`` does, so prompts and targets match the paper's.
Coordinates stay in the dataset's [0, 1000] per-axis space.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from mobile_actions.errors import ActionParseError, RawActionError

POINT_KINDS = ("CLICK", "LONG_PRESS")
PRESS_KINDS = ("PRESS_BACK", "PRESS_HOME", "PRESS_RECENT")
KINDS = POINT_KINDS + ("SCROLL", "TYPE") + PRESS_KINDS + ("COMPLETE", "IMPOSSIBLE")
DIRECTIONS = ("UP", "DOWN", "LEFT", "RIGHT")

# raw CLICK info -> command, as in the official decode_action
_KEY_TO_PRESS = {"KEY_HOME": "PRESS_HOME", "KEY_BACK": "PRESS_BACK", "KEY_APPSELECT": "PRESS_RECENT"}
_PRESS_TO_KEY = {v: k for k, v in _KEY_TO_PRESS.items()}
# canonical finger paths used when encoding a SCROLL back to raw (start, end) points, and so the paths the
# hybrid runner swipes. DOWN starts at the status bar, as the demonstrations do: a finger moving down there
# opens the notification shade (and expands Quick Settings once it is open) on any screen, which is what a
# navigator asks for with it; from mid-screen the same swipe would scroll an app's content instead.
_SCROLL_PATHS = {
    "UP": ([500, 700], [500, 300]),
    "DOWN": ([500, 17], [500, 375]),
    "LEFT": ([700, 500], [300, 500]),
    "RIGHT": ([300, 500], [700, 500]),
}

Number = int | float


@dataclass(frozen=True)
class Action:
    """One command-style action. Exactly the field its ``kind`` needs is set."""

    kind: str
    point: tuple[Number, Number] | None = None  # CLICK / LONG_PRESS, [0, 1000] per axis
    direction: str | None = None  # SCROLL: the finger's direction
    text: str | None = None  # TYPE

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ActionParseError(self.kind, f"unknown action kind (known: {', '.join(KINDS)})")
        if (self.kind in POINT_KINDS) != (self.point is not None):
            raise ActionParseError(self.kind, "a point is required for CLICK/LONG_PRESS and only for them")
        if (self.kind == "SCROLL") != (self.direction is not None):
            raise ActionParseError(self.kind, "a direction is required for SCROLL and only for it")
        if self.direction is not None and self.direction not in DIRECTIONS:
            raise ActionParseError(self.direction, f"scroll direction must be one of {DIRECTIONS}")
        if (self.kind == "TYPE") != (self.text is not None):
            raise ActionParseError(self.kind, "text is required for TYPE and only for it")

    def to_command(self) -> str:
        """The command string the model is trained to emit (same spelling as the official targets)."""
        if self.kind in POINT_KINDS:
            assert self.point is not None
            return f"{self.kind}: ({self.point[0]!r}, {self.point[1]!r})"
        if self.kind == "SCROLL":
            return f"SCROLL: {self.direction}"
        if self.kind == "TYPE":
            return f"TYPE: {self.text}"
        return self.kind

    def to_json(self) -> dict[str, Any]:
        """Plain JSON for the service and traces."""
        out: dict[str, Any] = {"kind": self.kind, "command": self.to_command()}
        if self.point is not None:
            out["point"] = list(self.point)
        if self.direction is not None:
            out["direction"] = self.direction
        if self.text is not None:
            out["text"] = self.text
        return out

    def __str__(self) -> str:
        return self.to_command()


def scroll_direction(start: Any, end: Any) -> str:
    """Direction of a finger moving from ``start`` to ``end``: the larger axis wins, ties go vertical.

    Same rule as the official ``decode_action``: ``|dx| > |dy|`` → LEFT/RIGHT, else UP (dy < 0) / DOWN.
    """
    dx = float(end[0]) - float(start[0])
    dy = float(end[1]) - float(start[1])
    if abs(dx) > abs(dy):
        return "LEFT" if dx < 0 else "RIGHT"
    return "UP" if dy < 0 else "DOWN"


def from_raw(action: str, info: Any) -> Action:
    """Decode a raw GUI Odyssey label into an :class:`Action` (the official ``decode_action``)."""
    if action in POINT_KINDS:
        if isinstance(info, str) and info in _KEY_TO_PRESS:
            return Action(_KEY_TO_PRESS[info])
        if isinstance(info, list) and info and isinstance(info[0], (list, tuple)) and len(info[0]) == 2:
            x, y = info[0]
            return Action(action, point=(x, y))
        raise RawActionError(f"unknown {action} info {info!r} (expected [[x, y]] or KEY_HOME/KEY_BACK/KEY_APPSELECT)")
    if action == "SCROLL":
        if not (isinstance(info, list) and len(info) >= 2):
            raise RawActionError(f"SCROLL info must be [start, end] points, got {info!r}")
        return Action("SCROLL", direction=scroll_direction(info[0], info[1]))
    if action == "TEXT":
        return Action("TYPE", text=str(info))
    if action == "COMPLETE":
        return Action("COMPLETE")
    if action == "INCOMPLETE":
        return Action("IMPOSSIBLE")
    raise RawActionError(f"unknown raw action {action!r}")


def to_raw(act: Action) -> tuple[str, Any]:
    """Encode an :class:`Action` back to a raw ``(action, info)`` pair that :func:`from_raw` decodes to it.

    SCROLL gets a canonical centred finger path; everything else round-trips exactly.
    """
    if act.kind in POINT_KINDS:
        assert act.point is not None
        return act.kind, [[act.point[0], act.point[1]]]
    if act.kind in PRESS_KINDS:
        return "CLICK", _PRESS_TO_KEY[act.kind]
    if act.kind == "SCROLL":
        assert act.direction is not None
        start, end = _SCROLL_PATHS[act.direction]
        return "SCROLL", [list(start), list(end)]
    if act.kind == "TYPE":
        return "TEXT", act.text
    if act.kind == "COMPLETE":
        return "COMPLETE", ""
    return "INCOMPLETE", ""


_NUM = r"[-+]?\d+(?:\.\d+)?"
_POINT_RE = re.compile(rf"^(?:\(\s*(?P<a>{_NUM})\s*,\s*(?P<b>{_NUM})\s*\)|\[\s*(?P<c>{_NUM})\s*,\s*(?P<d>{_NUM})\s*\]|(?P<e>{_NUM})\s*,\s*(?P<f>{_NUM}))$")


def _number(s: str) -> Number:
    return float(s) if "." in s else int(s)


def parse_command(text: str) -> Action:
    """Parse a command-style action strictly (the corrected reading).

    Splits on the *first* ``:`` only, so ``TYPE: 10:30`` keeps its whole text (the official script splits on
    every ``:`` and truncates it). Action names are case-sensitive, as in the official matcher; scroll
    directions are case-insensitive. Raises :class:`ActionParseError`.
    """
    head, sep, rest = text.strip().partition(":")
    kind = head.strip()
    arg = rest.strip()
    if kind in POINT_KINDS:
        m = _POINT_RE.match(arg)
        if not m:
            raise ActionParseError(text, f"{kind} needs a point '(x, y)'")
        x, y = [v for v in m.groups() if v is not None]
        return Action(kind, point=(_number(x), _number(y)))
    if kind == "SCROLL":
        if arg.upper() not in DIRECTIONS:
            raise ActionParseError(text, f"SCROLL needs one of {DIRECTIONS}")
        return Action("SCROLL", direction=arg.upper())
    if kind == "TYPE":
        if not sep:
            raise ActionParseError(text, "TYPE needs ': text'")
        return Action("TYPE", text=arg)
    if kind in PRESS_KINDS + ("COMPLETE", "IMPOSSIBLE"):
        if arg:
            raise ActionParseError(text, f"{kind} takes no argument")
        return Action(kind)
    raise ActionParseError(text, f"unknown action kind {kind!r}")
