"""The virtual phone's state: plain dataclasses, dumped as JSON for tests and benchmarks.

Why data and not screens: checks must look at outcomes (a contact saved, an email in the outbox, the
torch on), never at rendered strings. Screens are derived from this state on demand (``apps.py``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

WIDTH, HEIGHT, DENSITY = 1080, 2400, 420
COMMAND_LOG_LIMIT = 20_000
# Fields of `PhoneState.to_json` that log what was run rather than what the phone holds: never an outcome.
LOG_FIELDS = ("commands", "command_count", "intents")
# Fields that say what is on the screen (an app opened, a form half typed, a toast), not what the phone keeps:
# opening the Notes app is not writing a note (hybrid/outcome.py tells the two apart with these).
VIEW_FIELDS = ("stack", "recents", "overlay", "toast", "current", "screen")


@dataclass
class Intent:
    """What ``am start`` was asked to do; extras are kept verbatim (strings, ints, bools)."""
    action: str | None = None
    data: str | None = None
    mime: str | None = None
    component: str | None = None
    categories: list[str] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)
    flags: int = 0

    def describe(self) -> str:
        bits = []
        if self.action:
            bits.append(f"act={self.action}")
        if self.categories:
            bits.append("cat=[" + ",".join(self.categories) + "]")
        if self.data:
            bits.append(f"dat={self.data}")
        if self.mime:
            bits.append(f"typ={self.mime}")
        if self.component:
            bits.append(f"cmp={self.component}")
        if self.extras:
            bits.append("(has extras)")
        return "Intent { " + " ".join(bits) + " }"


@dataclass
class Activity:
    """One entry of the task stack. ``fields`` hold a form's text, ``focus`` the focused field."""
    package: str
    name: str
    kind: str
    fields: dict[str, str] = field(default_factory=dict)
    focus: str | None = None
    scroll: int = 0
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def component(self) -> str:
        return f"{self.package}/{self.name}"


@dataclass
class PhoneState:
    serial: str = "vphone-0001"
    model: str = "Virtual Phone"
    timezone: str = "UTC"
    screen_on: bool = True
    torch: bool = False
    wifi: bool = True
    bluetooth: bool = False
    airplane: bool = False
    battery: int = 87
    stack: list[Activity] = field(default_factory=list)      # stack[0] is always the launcher
    recents: list[Activity] = field(default_factory=list)    # activities sent to the background by HOME
    overlay: str | None = None             # None | "shade" (notifications) | "quick_settings" | "recents"
    toast: str | None = None
    clipboard: str = ""
    contacts: list[dict[str, str]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    outbox: list[dict[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    map_searches: list[str] = field(default_factory=list)
    map_results: list[dict[str, Any]] = field(default_factory=list)  # the place card each search showed
    visited_urls: list[str] = field(default_factory=list)
    settings: dict[str, dict[str, str]] = field(default_factory=lambda: {"system": {}, "secure": {}, "global": {}})
    intents: list[dict[str, Any]] = field(default_factory=list)
    commands: list[list[str]] = field(default_factory=list)
    command_count: int = 0
    files: dict[str, bytes] = field(default_factory=dict)

    @property
    def top(self) -> Activity:
        return self.stack[-1]

    def to_json(self) -> dict[str, Any]:
        """Everything a check needs, JSON-ready (files listed by size, not content)."""
        out = asdict(self)
        out["files"] = {path: len(data) for path, data in self.files.items()}
        out["current"] = self.top.component if self.stack else None
        out["screen"] = self.overlay or (self.top.kind if self.stack else None)
        return out
