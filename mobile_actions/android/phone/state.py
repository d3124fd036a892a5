"""The virtual phone's state: plain dataclasses, dumped as JSON for tests and benchmarks.

Why data and not screens: checks must look at outcomes (a contact saved, an email in the outbox, the
torch on), never at rendered strings. Screens are derived from this state on demand (``apps.py``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone, tzinfo
from typing import Any, Iterable

WIDTH, HEIGHT, DENSITY = 1080, 2400, 420
COMMAND_LOG_LIMIT = 20_000
# Fields of `PhoneState.to_json` that log what was run rather than what the phone holds: never an outcome.
LOG_FIELDS = ("commands", "command_count", "intents")
# Fields that say what is on the screen (an app opened, a form half typed, a toast), not what the phone keeps:
# opening the Notes app is not writing a note (hybrid/outcome.py tells the two apart with these).
VIEW_FIELDS = ("stack", "recents", "overlay", "toast", "current", "screen")
# The Clock app's repeat days, in the order its day chips show them and `alarms[].days` lists them.
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
LEVELS = ("brightness", "media_volume", "ring_volume")        # the 0-100 sliders


def as_note(value: str | dict[str, Any]) -> dict[str, str]:
    """A note as the Notes app keeps it, {title, text}; a plain string is a note's text (no title)."""
    if isinstance(value, str):
        return {"title": "", "text": value}
    return {"title": str(value.get("title") or ""), "text": str(value.get("text") or "")}


def days_text(days: Iterable[str]) -> str:
    """Repeat days as a check names them: the WEEKDAYS given, in WEEKDAYS order, comma separated."""
    chosen = set(days)
    return ",".join(d for d in WEEKDAYS if d in chosen)


def zone(name: str) -> tzinfo:
    try:
        from zoneinfo import ZoneInfo
        return ZoneInfo(name)
    except Exception:
        return timezone.utc


def local_minute(ms: int, tz: str) -> str:
    """Epoch milliseconds -> ``YYYY-MM-DDTHH:MM`` on the phone's clock (how checks name an event's start)."""
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).astimezone(zone(tz)).strftime("%Y-%m-%dT%H:%M")


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


# The fields of each list's entries as `PhoneState.to_json` writes them: what a benchmark's check may name
# (a field no entry has would make a check that can never hold, or a "must not" that always does).
ENTRY_FIELDS: dict[str, frozenset[str]] = {
    "contacts": frozenset({"name", "phone", "email"}),
    "events": frozenset({"title", "location", "description", "begin_ms", "end_ms", "all_day", "begin", "duration_min"}),
    "outbox": frozenset({"to", "subject", "body", "cc", "bcc"}),
    "notes": frozenset({"title", "text"}),
    "alarms": frozenset({"time", "days", "label", "enabled"}),
    "timers": frozenset({"seconds", "label", "running"}),
    "messages": frozenset({"to", "number", "text", "direction"}),
    "map_results": frozenset({"query", "name", "address", "category"}),
}
# The form field that holds an entry's length in minutes, by the first word of its label ("Duration (minutes)"):
# a length said in other units ("an hour and a half") is given to it as minutes, as the form takes it.
LENGTH_FIELDS: dict[str, str] = {"events": "duration"}
# The form fields that hold a new entry's day and time of day, by the first word of their labels ("Date
# (YYYY-MM-DD)", "Time"): the navigator types only its goal's words, and cannot count "thursday" into a date.
WHEN_FIELDS: dict[str, tuple[str, str]] = {"events": ("date", "time")}


@dataclass
class PhoneState:
    serial: str = "vphone-0001"
    model: str = "Virtual Phone"
    timezone: str = "UTC"
    # The phone's clock minus the host's, in ms: a clock set apart from the host's, as on an emulator (a
    # benchmark runs on its own fixed day, and the status bar then shows the same minute in every run).
    clock_offset_ms: int = 0
    screen_on: bool = True
    torch: bool = False
    wifi: bool = True
    bluetooth: bool = False
    airplane: bool = False
    battery: int = 87
    dnd: bool = False                      # Do Not Disturb (mirrored in settings global zen_mode)
    brightness: int = 50                   # 0-100, the Display slider (settings system screen_brightness 0-255)
    media_volume: int = 40
    ring_volume: int = 60
    stack: list[Activity] = field(default_factory=list)      # stack[0] is always the launcher
    recents: list[Activity] = field(default_factory=list)    # activities sent to the background by HOME
    overlay: str | None = None             # None | "shade" (notifications) | "quick_settings" | "recents"
    toast: str | None = None
    clipboard: str = ""
    contacts: list[dict[str, str]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    outbox: list[dict[str, str]] = field(default_factory=list)
    notes: list[dict[str, str]] = field(default_factory=list)                # {title, text}
    alarms: list[dict[str, Any]] = field(default_factory=list)    # {time "HH:MM", days, label, enabled}
    timers: list[dict[str, Any]] = field(default_factory=list)    # {seconds, label, running}
    stopwatch_running: bool = False
    messages: list[dict[str, str]] = field(default_factory=list)  # SMS {to, number, text, direction}
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
        """Everything a check needs, JSON-ready (files listed by size, not content). Notes are always
        {title, text} (a string put in by older code is a note's text); events also say their start on the
        phone's clock (``begin``) and their length (``duration_min``), as checks name them."""
        out = asdict(self)
        out["files"] = {path: len(data) for path, data in self.files.items()}
        out["notes"] = [as_note(n) for n in self.notes]
        for event in out["events"]:
            begin, end = event.get("begin_ms"), event.get("end_ms")
            if isinstance(begin, int):
                event["begin"] = local_minute(begin, self.timezone)
                if isinstance(end, int) and end >= begin:
                    event["duration_min"] = (end - begin) // 60_000
        out["current"] = self.top.component if self.stack else None
        out["screen"] = self.overlay or (self.top.kind if self.stack else None)
        return out
