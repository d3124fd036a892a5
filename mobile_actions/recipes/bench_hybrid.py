"""The online hybrid benchmark: requests run end to end on the virtual phone, judged on the phone's *state*.

GUI Odyssey measures navigators offline, step by step against recorded gold actions; it names online
evaluation as missing. Here every task is a request plus a check on the phone's state after the run
(an email in the outbox to the right address, the torch on, a note saved), so any route that gets there
counts, and nothing is judged on strings the model wrote.

Tasks are data (`TASKS`): ``request``, ``category`` (``tool``: tools alone can do it; ``gui``: no tool
covers it; ``mixed``: tools plus GUI work or a chain of tools), optional ``setup`` (the phone before the
run, `android.phone.setup`) and ``check`` (the state after), ``expect`` (``done``, the default; ``not_done``: the
right outcome is a run that reports it could not do it, and the check says what must still hold; a run
that reports done there is a false done), ``note`` (free text) and ``gold`` calls (the tool part, for the
``oracle`` caller);
`GUI_SCRIPTS` holds the GUI part for the ``oracle`` navigator. The two oracles are harness checks (the
ceiling of this phone + action space), never reported as a model's score.

Check language (all conditions must hold; text compares ignore case; the fields are `PhoneState.to_json`'s):
``{"torch": true}``, ``{"brightness": 80}`` a scalar field equals; ``{"current_app": PKG}`` the foreground
package; ``{"contacts"|"events"|"outbox"|"notes"|"alarms"|"timers"|"messages": {FIELD: V, "FIELD~": SUB,
"text~": SUB}}`` some item matches every given field (``text~``: any text field contains; an event's
``begin`` is ``YYYY-MM-DDTHH:MM`` on the phone's clock, an alarm's ``time`` ``HH:MM``, its ``days`` e.g.
``"Mon,Wed"``); ``{"notes~"|"map_searches~"|"visited_urls~"|"clipboard~": SUB}`` some entry (of a list of
items: some text field of one) contains; ``{"alarms#": 2}`` a count; ``{"!KEY": ...}`` that condition fails
(``{"!contacts": {"name": "Tom Baker"}}``: no such contact); a list of objects, each matching some item
(``{"alarms": [{"time": "06:00"}, {"time": "07:15", "enabled": true}]}``: both are still there).
"""
from __future__ import annotations

import csv
import json
import time
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Sequence

from mobile_actions.android.phone.setup import apply_setup, setup_problem
from mobile_actions.android.phone.state import ENTRY_FIELDS

NOW = "2025-06-02T10:00:00"     # a Monday: "tomorrow" is 2025-06-03, "Friday" 2025-06-06
CATEGORIES = ("tool", "gui", "mixed")
NOTES_PKG, CHROME_PKG = "com.mobileactions.notes", "com.android.chrome"


def _c(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


# --------------------------------------------------------------------------------------------- the tasks
TASKS: list[dict[str, Any]] = [
    # tool: the caller's tools alone can do it
    {"id": "t01", "category": "tool", "request": "Turn on the flashlight",
     "check": {"torch": True}, "gold": [_c("turn_on_flashlight")]},
    {"id": "t02", "category": "tool", "request": "Please switch off the flashlight", "setup": {"torch": True},
     "check": {"torch": False}, "gold": [_c("turn_off_flashlight")]},
    {"id": "t03", "category": "tool", "request": "Open the Wi-Fi settings",
     "check": {"screen": "wifi"}, "gold": [_c("open_wifi_settings")]},
    {"id": "t04", "category": "tool", "request": "Show me the Eiffel Tower on the map",
     "check": {"map_searches~": "eiffel tower"}, "gold": [_c("show_map", query="Eiffel Tower")]},
    {"id": "t05", "category": "tool", "request": "Where is Central Park? Show it on the map.",
     "check": {"map_searches~": "central park"}, "gold": [_c("show_map", query="Central Park")]},
    {"id": "t06", "category": "tool", "request": "Email ana@example.com with the subject Lunch tomorrow",
     "check": {"outbox": {"to": "ana@example.com", "subject~": "lunch"}},
     "gold": [_c("send_email", to="ana@example.com", subject="Lunch tomorrow")]},
    {"id": "t07", "category": "tool", "request": "Send an email to bob@example.com about the invoice saying it is paid",
     "check": {"outbox": {"to": "bob@example.com", "text~": "invoice"}},
     "gold": [_c("send_email", to="bob@example.com", subject="Invoice", body="The invoice is paid.")]},
    {"id": "t08", "category": "tool", "request": "Add John Smith to my contacts, his number is 555-0100",
     "check": {"contacts": {"name": "John Smith", "phone~": "555-0100"}},
     "gold": [_c("create_contact", first_name="John", last_name="Smith", phone_number="555-0100")]},
    {"id": "t09", "category": "tool", "request": "Create a contact for Maria Garcia with the email maria@example.com",
     "check": {"contacts": {"name": "Maria Garcia", "email": "maria@example.com"}},
     "gold": [_c("create_contact", first_name="Maria", last_name="Garcia", email="maria@example.com")]},
    {"id": "t10", "category": "tool", "request": "Create a calendar event called Team sync tomorrow at 3pm",
     "check": {"events": {"title~": "team sync", "begin": "2025-06-03T15:00"}},
     "gold": [_c("create_calendar_event", title="Team sync", datetime="2025-06-03T15:00:00")]},
    {"id": "t11", "category": "tool", "request": "Schedule a dentist appointment on June 10 at 9 am",
     "check": {"events": {"title~": "dentist", "begin": "2025-06-10T09:00"}},
     "gold": [_c("create_calendar_event", title="Dentist appointment", datetime="2025-06-10T09:00:00")]},
    {"id": "t12", "category": "tool", "request": "Turn on the flashlight and open the Wi-Fi settings",
     "check": {"torch": True, "screen": "wifi"}, "gold": [_c("turn_on_flashlight"), _c("open_wifi_settings")]},
    {"id": "t13", "category": "tool",
     "request": "Add Lee Chen, 555-0199, to my contacts and email lee@example.com saying hello",
     "check": {"contacts": {"name": "Lee Chen"}, "outbox": {"to": "lee@example.com"}},
     "gold": [_c("create_contact", first_name="Lee", last_name="Chen", phone_number="555-0199"),
              _c("send_email", to="lee@example.com", subject="Hello", body="Hello!")]},
    {"id": "t14", "category": "tool", "request": "Show the Louvre on the map and turn on the flashlight",
     "check": {"map_searches~": "louvre", "torch": True},
     "gold": [_c("show_map", query="Louvre"), _c("turn_on_flashlight")]},
    {"id": "t15", "category": "tool",
     "request": "Put Book club on my calendar for Friday at 7pm and email ana@example.com about it",
     "check": {"events": {"title~": "book club", "begin": "2025-06-06T19:00"}, "outbox": {"to": "ana@example.com"}},
     "gold": [_c("create_calendar_event", title="Book club", datetime="2025-06-06T19:00:00"),
              _c("send_email", to="ana@example.com", subject="Book club", body="Book club on Friday at 7pm.")]},
    {"id": "t16", "category": "tool", "request": "Turn off the flashlight and show me Union Station on the map",
     "setup": {"torch": True}, "check": {"torch": False, "map_searches~": "union station"},
     "gold": [_c("turn_off_flashlight"), _c("show_map", query="Union Station")]},
    # gui: no tool covers it; only the navigator can
    {"id": "g01", "category": "gui", "request": "Turn on Bluetooth", "check": {"bluetooth": True}},
    {"id": "g02", "category": "gui", "request": "Turn on airplane mode", "check": {"airplane": True}},
    {"id": "g03", "category": "gui", "request": "Turn off Bluetooth", "setup": {"bluetooth": True},
     "check": {"bluetooth": False}},
    {"id": "g04", "category": "gui", "request": "Write a note saying buy milk and eggs",
     "check": {"notes~": "buy milk and eggs"}},
    {"id": "g05", "category": "gui", "request": "Open Chrome and go to example.com",
     "check": {"visited_urls~": "example.com"}},
    {"id": "g06", "category": "gui", "request": "Open the Calendar app",
     "check": {"current_app": "com.android.calendar"}},
    {"id": "g07", "category": "gui", "request": "Open my contacts", "check": {"current_app": "com.android.contacts"}},
    {"id": "g08", "category": "gui", "request": "Go back to the home screen", "setup": {"open": [NOTES_PKG]},
     "check": {"screen": "launcher"}},
    {"id": "g09", "category": "gui", "request": "Clear all recent apps", "setup": {"recents": [NOTES_PKG, CHROME_PKG]},
     "check": {"recents#": 0}},
    {"id": "g10", "category": "gui",
     "request": "Open Notes, then Chrome, then switch back to Notes from the recent apps",
     "check": {"current_app": NOTES_PKG}},
    {"id": "g11", "category": "gui", "request": "Turn off airplane mode", "setup": {"airplane": True},
     "check": {"airplane": False}},
    {"id": "g12", "category": "gui", "request": "Search for pizza in Chrome", "check": {"visited_urls~": "pizza"}},
    {"id": "g13", "category": "gui", "request": "Write a note that says call the plumber",
     "check": {"notes~": "call the plumber"}},
    # mixed: tools plus GUI work no tool covers, or information carried from one app to another
    {"id": "m01", "category": "mixed",
     "request": "Turn on the flashlight and email the address of the Louvre to ana@example.com",
     "check": {"torch": True, "outbox": {"to": "ana@example.com", "text~": "rue de rivoli"}},
     "gold": [_c("turn_on_flashlight"), _c("show_map", query="Louvre"),
              _c("send_email", to="ana@example.com", subject="Address of the Louvre",
                 body="Louvre Museum, Rue de Rivoli, 75001 Paris, France")]},
    {"id": "m02", "category": "mixed", "request": "Turn off Wi-Fi", "check": {"wifi": False},
     "gold": [_c("open_wifi_settings")]},
    {"id": "m03", "category": "mixed", "request": "Turn on the flashlight and Bluetooth",
     "check": {"torch": True, "bluetooth": True}, "gold": [_c("turn_on_flashlight")]},
    {"id": "m04", "category": "mixed",
     "request": "Show Harbour Cafe on the map and write a note saying meet at Harbour Cafe",
     "check": {"map_searches~": "harbour cafe", "notes~": "meet at harbour cafe"},
     "gold": [_c("show_map", query="Harbour Cafe")]},
    {"id": "m05", "category": "mixed", "request": "Add a contact Omar Said 555-0142 and write a note saying call Omar",
     "check": {"contacts": {"name": "Omar Said"}, "notes~": "call omar"},
     "gold": [_c("create_contact", first_name="Omar", last_name="Said", phone_number="555-0142")]},
    {"id": "m06", "category": "mixed",
     "request": "Email ben@example.com with the subject Invoice, then turn on airplane mode",
     "check": {"outbox": {"to": "ben@example.com", "subject~": "invoice"}, "airplane": True},
     "gold": [_c("send_email", to="ben@example.com", subject="Invoice")]},
    {"id": "m07", "category": "mixed",
     "request": "Create an event Yoga class tomorrow at 6pm and open example.com in Chrome",
     "check": {"events": {"title~": "yoga", "begin": "2025-06-03T18:00"}, "visited_urls~": "example.com"},
     "gold": [_c("create_calendar_event", title="Yoga class", datetime="2025-06-03T18:00:00")]},
    {"id": "m08", "category": "mixed", "request": "Note down pay rent and email it to ana@example.com as the subject",
     "check": {"notes~": "pay rent", "outbox": {"to": "ana@example.com", "subject~": "pay rent"}},
     "gold": [_c("send_email", to="ana@example.com", subject="pay rent")]},
    {"id": "m09", "category": "mixed",
     "request": "Find the City Museum on the map and email its name to kira@example.com",
     "check": {"map_searches~": "city museum", "outbox": {"to": "kira@example.com", "text~": "city museum"}},
     "gold": [_c("show_map", query="City Museum"),
              _c("send_email", to="kira@example.com", subject="City Museum", body="City Museum")]},
    {"id": "m10", "category": "mixed", "request": "Turn off the flashlight and Wi-Fi", "setup": {"torch": True},
     "check": {"torch": False, "wifi": False}, "gold": [_c("turn_off_flashlight"), _c("open_wifi_settings")]},
    {"id": "m11", "category": "mixed",
     "request": "Turn on the flashlight, then open Chrome and go to weather.example.com",
     "check": {"torch": True, "visited_urls~": "weather.example.com"}, "gold": [_c("turn_on_flashlight")]},
    {"id": "m12", "category": "mixed", "request": "Create a contact Grace Kim 555-0177 and turn on Bluetooth",
     "check": {"contacts": {"name": "Grace Kim"}, "bluetooth": True},
     "gold": [_c("create_contact", first_name="Grace", last_name="Kim", phone_number="555-0177")]},
    {"id": "m13", "category": "mixed", "request": "Show Riverside Park on the map and copy its name",
     "check": {"map_searches~": "riverside park", "clipboard~": "riverside park"},
     "gold": [_c("show_map", query="Riverside Park")]},
]


# The GUI part of each task as an oracle navigator would do it, starting from the phone as the tool calls
# left it: ("tap", LABEL) is resolved against the live screen (text, content-desc or hint), strings are
# navigator commands. Not a model: it shows which checks a GUI route can reach on the virtual phone with
# GUI Odyssey's action space. Tasks without an entry need no GUI work.
SHADE = ["SCROLL: DOWN"]          # on the home screen: opens the notification shade (its first row of tiles)
GO = ("tap", "Go")                # Chrome's on-screen submit button (GUI Odyssey has no ENTER)
GUI_SCRIPTS: dict[str, list[Any]] = {
    "g01": SHADE + [("tap", "Bluetooth")],
    "g02": SHADE + [("tap", "Airplane mode")],
    "g03": SHADE + [("tap", "Bluetooth")],
    "g04": [("tap", "Notes"), ("tap", "New note"), "TYPE: buy milk and eggs", ("tap", "Save")],
    "g05": [("tap", "Chrome"), ("tap", "Search or type URL"), "TYPE: example.com", GO],
    "g06": [("tap", "Calendar")],
    "g07": [("tap", "Contacts")],
    "g08": ["PRESS_HOME"],
    "g09": ["PRESS_RECENT", ("tap", "Clear all")],
    "g10": [("tap", "Notes"), "PRESS_HOME", ("tap", "Chrome"), "PRESS_RECENT", ("tap", "Notes")],
    "g11": SHADE + [("tap", "Airplane mode")],
    "g12": [("tap", "Chrome"), ("tap", "Search or type URL"), "TYPE: pizza", GO],
    "g13": [("tap", "Notes"), ("tap", "New note"), "TYPE: call the plumber", ("tap", "Save")],
    "m02": [("tap", "Use Wi-Fi")],
    "m03": SHADE + [("tap", "Bluetooth")],
    "m04": ["PRESS_HOME", ("tap", "Notes"), ("tap", "New note"), "TYPE: meet at Harbour Cafe", ("tap", "Save")],
    "m05": ["PRESS_HOME", ("tap", "Notes"), ("tap", "New note"), "TYPE: call Omar", ("tap", "Save")],
    "m06": ["PRESS_HOME"] + SHADE + [("tap", "Airplane mode")],       # in an app, the shade needs home first
    "m07": ["PRESS_HOME", ("tap", "Chrome"), ("tap", "Search or type URL"), "TYPE: example.com", GO],
    "m08": ["PRESS_HOME", ("tap", "Notes"), ("tap", "New note"), "TYPE: pay rent", ("tap", "Save")],
    "m10": [("tap", "Use Wi-Fi")],
    "m11": ["PRESS_HOME", ("tap", "Chrome"), ("tap", "Search or type URL"), "TYPE: weather.example.com", GO],
    "m12": ["PRESS_HOME"] + SHADE + [("tap", "Bluetooth")],
    "m13": [("tap", "Copy")],
}


# --------------------------------------------------------------------------------------------- checks


def _text_match(value: Any, want: Any, contains: bool) -> bool:
    a, b = str(value or "").strip().lower(), str(want).strip().lower()
    return b in a if contains else a == b


def _equal(value: Any, want: Any) -> bool:
    """A check's value against the state's: true/false and numbers exactly, text ignoring case."""
    if isinstance(want, bool) or isinstance(value, bool):
        return value is want
    if isinstance(want, (int, float)):
        return isinstance(value, (int, float)) and value == want
    return _text_match(value, want, False)


def _item_matches(item: dict[str, Any], want: dict[str, Any]) -> bool:
    for key, value in want.items():
        if key == "text~":
            if not any(_text_match(v, value, True) for v in item.values() if isinstance(v, str)):
                return False
        elif key.endswith("~"):
            if not _text_match(item.get(key[:-1]), value, True):
                return False
        elif not _equal(item.get(key), value):
            return False
    return True


def _condition(key: str, want: Any, state: dict[str, Any]) -> str | None:
    """Why one condition of a check fails on a state (None: it holds). Unknown fields are errors."""
    if key == "current_app":
        got = (state.get("current") or "").split("/")[0]
        return None if got == want else f"foreground app is {got!r}, not {want!r}"
    if key.endswith("#"):
        n = len(state.get(key[:-1]) or [])
        return None if n == want else f"{key[:-1]}: {n} entries, expected {want}"
    if key.endswith("~"):
        name = key[:-1]
        values = state.get(name)
        values = values if isinstance(values, list) else [values]
        texts = [t for v in values for t in (v.values() if isinstance(v, dict) else [v]) if isinstance(t, str)]
        return None if any(_text_match(t, want, True) for t in texts) else f"{name}: nothing contains {want!r}"
    if isinstance(want, list):     # several items that must all be there: each object matches some entry
        if not want or not all(isinstance(w, dict) for w in want):
            raise TypeError(f"check {key!r}: a list of conditions is a non-empty list of objects")
        return "; ".join(why for w in want if (why := _condition(key, w, state)) is not None) or None
    if isinstance(want, dict):
        items = state.get(key)
        if not isinstance(items, list):
            raise KeyError(f"check {key!r}: the phone state has no such list")
        fields = ENTRY_FIELDS.get(key)
        unknown = sorted(f for f in (k.removesuffix("~") for k in want if k != "text~")
                         if fields is not None and f not in fields)
        if unknown:
            raise KeyError(f"check {key!r}: its entries have no field {', '.join(map(repr, unknown))} "
                           f"(fields: {', '.join(sorted(fields))}, and 'text~' for any of them)")
        if any(isinstance(i, dict) and _item_matches(i, want) for i in items):
            return None
        return f"{key}: no entry matches {json.dumps(want, ensure_ascii=False)}"
    if key not in state:
        raise KeyError(f"check {key!r}: the phone state has no such field")
    return None if _equal(state[key], want) or state[key] == want else f"{key} is {state[key]!r}, expected {want!r}"


def check_state(check: dict[str, Any], state: dict[str, Any]) -> list[str]:
    """The conditions a phone state fails (empty: the task is done). ``!KEY`` holds when KEY's condition
    fails. Unknown keys are errors, not passes."""
    failures = []
    for key, want in check.items():
        if key.startswith("!"):
            if isinstance(want, list):
                raise TypeError(f"check {key!r}: takes one object (a '!' of a list would hold when any one fails)")
            if _condition(key[1:], want, state) is None:
                failures.append(f"{key[1:]}: {json.dumps(want, ensure_ascii=False)} holds, and must not")
        else:
            why = _condition(key, want, state)
            if why:
                failures.append(why)
    return failures


def validate_tasks(tasks: Sequence[dict[str, Any]]) -> None:
    """Every task well formed (unique id, known category, a non-empty check), and not already done at the start."""
    from mobile_actions.android.phone import VirtualPhone

    seen = set()
    phone = VirtualPhone()
    for t in tasks:
        if t["id"] in seen:
            raise ValueError(f"task {t['id']}: duplicate id")
        seen.add(t["id"])
        if t["category"] not in CATEGORIES or not t.get("check") or not t.get("request"):
            raise ValueError(f"task {t['id']}: needs a category in {CATEGORIES}, a request and a check")
        if t.get("expect", "done") not in EXPECTS:
            raise ValueError(f"task {t['id']}: 'expect' must be one of {EXPECTS}")
        phone.reset()
        try:
            apply_setup(phone, t.get("setup", {}))
        except ValueError as e:
            raise ValueError(f"task {t['id']}: {e}") from None
        if t.get("expect", "done") == "done" and not check_state(t["check"], phone.snapshot()):
            raise ValueError(f"task {t['id']}: its check already passes before the run")


EXPECTS = ("done", "not_done")
TASK_KEYS = {"id", "request", "category", "setup", "check", "gold", "expect", "note"}


def _task_problem(task: Any, phone: Any) -> str | None:
    """Why a user's task cannot be run (None: it can)."""
    from mobile_actions.calls import ToolCall, validate_call
    from mobile_actions.catalog import load_catalogue

    if not isinstance(task, dict):
        return "a task is a JSON object"
    unknown = sorted(set(task) - TASK_KEYS)
    if unknown:
        return f"unknown field(s) {', '.join(unknown)} (fields: {', '.join(sorted(TASK_KEYS))})"
    if not isinstance(task.get("request"), str) or not task["request"].strip():
        return "'request' must be a non-empty string"
    if task.get("category") not in CATEGORIES:
        return f"'category' must be one of {', '.join(CATEGORIES)}"
    if task.get("expect", "done") not in EXPECTS:
        return f"'expect' must be one of {', '.join(EXPECTS)}"
    if not isinstance(task.get("note", ""), str):
        return "'note' must be a string"
    setup = task.get("setup", {})
    why = setup_problem(setup)
    if why:
        return why
    check = task.get("check")
    if not isinstance(check, dict) or not check:
        return "'check' must be a non-empty object"
    phone.reset()
    try:
        apply_setup(phone, setup)
        failures = check_state(check, phone.snapshot())
        if not failures and task.get("expect", "done") == "done":
            return "its check already passes before the run"
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        return f"check: {e}"
    gold = task.get("gold", [])
    if not isinstance(gold, list):
        return "'gold' must be a list of calls"
    tools = load_catalogue("mobile_actions")
    for i, c in enumerate(gold):
        try:
            problems = validate_call(ToolCall.from_json(c), tools)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            return f"gold[{i}]: not a call ({e})"
        if problems:
            return f"gold[{i}]: {problems[0]}"
    return None


def load_tasks(path: str | Path) -> tuple[list[dict[str, Any]], list[str]]:
    """User-defined tasks from JSONL, each line in the check language above; (tasks, ``file:line: reason``
    problems). Every line is checked; ids default to ``line N``."""
    from mobile_actions.android.phone import VirtualPhone

    data = Path(path).read_bytes()
    tasks, problems, seen = [], [], set()
    phone = VirtualPhone()
    for n, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            task = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            problems.append(f"{path}:{n}: not UTF-8 ({e.reason} at byte {e.start})")
            continue
        except (json.JSONDecodeError, RecursionError) as e:
            problems.append(f"{path}:{n}: invalid JSON: {getattr(e, 'msg', 'nested too deep')}")
            continue
        why = _task_problem(task, phone)
        if why is None:
            task = {**task, "id": str(task.get("id") or f"line {n}"), "expect": task.get("expect", "done")}
            if task["id"] in seen:
                why = f"duplicate id {task['id']!r}"
        if why is not None:
            problems.append(f"{path}:{n}: {why}")
            continue
        seen.add(task["id"])
        tasks.append(task)
    if not tasks and not problems:
        problems.append(f"{path}: no tasks")
    return tasks, problems


# --------------------------------------------------------------------------------------------- running
@dataclass
class TaskResult:
    id: str
    category: str
    request: str
    success: bool
    failures: list[str]
    status: str
    steps: int
    caller_turns: int
    calls: int
    nav_steps: int
    seconds: float
    done: int
    not_done: int
    refused: int
    run_dir: str
    error: str = ""
    note: str = ""        # the run's first not-done / refused reason (why, from the runner's side)
    false_done: bool = False   # the run reported every item done, and the task failed (for a not_done task: always)
    expect: str = "done"       # the task's right outcome: done, or not_done (the run must say it could not)
    nav_ms: tuple[float, ...] = ()   # the navigator's time per step (its model's answer, `model_ms` in the trace)

    @property
    def kind(self) -> str:
        """✓ passed; ✗ failed; ✗! a false done (the run said done and the phone says otherwise): a failure of
        its own kind, as `run` would have exited 0 on it."""
        return "✓" if self.success else "✗!" if self.false_done else "✗"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class OracleCaller:
    """The tasks' gold calls in the first turn, a plain reply after: the *tool route's* ceiling.

    Not a model: it checks that dispatch, result reading and the state checks agree (a gold call that
    does not reach its state is a harness bug). Shown as its own row, never as the caller's score.
    """

    layout = "official"

    def __init__(self, tasks: Sequence[dict[str, Any]]) -> None:
        self.by_request = {t["request"]: t.get("gold", []) for t in tasks}

    def call_messages(self, messages: list[dict], tools: Any):
        from mobile_actions import wire
        from mobile_actions.calls import ToolCall
        from mobile_actions.runtime import result_from_raw

        request = next(m["content"] for m in messages if m.get("role") == "user")
        follow_up = any(m.get("role") == "tool" for m in messages)
        gold = [] if follow_up else self.by_request.get(request, [])
        raw = "".join(wire.render_call(ToolCall(c["name"], c["arguments"])) for c in gold)
        raw = raw or "I cannot do that with my tools."
        return result_from_raw(raw, tools, {})


class OracleNavigator:
    """Plays `GUI_SCRIPTS` for the request it is given, resolving taps on the live virtual phone; says
    IMPOSSIBLE when a label is not on screen. The GUI route's ceiling on this phone, not a model."""

    def __init__(self, phone: Any, tasks: Sequence[dict[str, Any]]) -> None:
        self.phone = phone
        self.scripts = {t["request"]: GUI_SCRIPTS.get(t["id"], []) for t in tasks}
        self.progress: dict[str, int] = {}

    def next_action(self, instruction: str, screen: bytes, history: Sequence[Any]):
        from mobile_actions.android.phone.state import HEIGHT, WIDTH
        from mobile_actions.hybrid.models import NavPrediction
        from mobile_actions.navigator.actions import parse_command

        script = self.scripts.get(instruction, [])
        i = len(history)
        if i >= len(script):
            return NavPrediction("COMPLETE", parse_command("COMPLETE"))
        step = script[i]
        if isinstance(step, tuple):
            hit = next((w for w in reversed(self.phone.screen().interactive)
                        if w.clickable and step[1] in (w.text, w.desc, w.hint)), None)
            if hit is None:
                return NavPrediction("IMPOSSIBLE", parse_command("IMPOSSIBLE"),
                                     f"no {step[1]!r} on {self.phone.current_component()}")
            x, y = hit.center
            step = f"CLICK: ({round(1000 * x / WIDTH)}, {round(1000 * y / HEIGHT)})"
        return NavPrediction(step, parse_command(step))


@dataclass
class BenchConfig:
    model: str = "auto"
    navigator: str | None = "default"
    navigate: str = "auto"         # what `run` does; "always" also hands every request to the navigator
    max_steps: int = 15
    limit: int | None = None
    only: str | None = None        # comma list of ids or categories
    out: str = "out/bench-hybrid"


def select_tasks(tasks: Sequence[dict[str, Any]], only: str | None = None, limit: int | None = None) -> list[dict]:
    chosen = list(tasks)
    if only:
        keys = {k.strip() for k in only.split(",") if k.strip()}
        chosen = [t for t in chosen if t["id"] in keys or t["category"] in keys]
    return chosen[:limit] if limit is not None else chosen


def run_bench(cfg: BenchConfig, *, caller: Any = None, navigator: Any = "config",
              tasks: Sequence[dict[str, Any]] | None = None,
              on_result: Callable[[int, int, TaskResult], None] | None = None,
              on_event: Callable[[dict], None] | None = None) -> list[TaskResult]:
    """Run the tasks on one in-process virtual phone (reset between tasks); the caller and navigator are
    loaded once. Send-type actions are confirmed (it is a virtual phone)."""
    from mobile_actions.hybrid.runner import RunConfig, Runner
    from mobile_actions.hybrid.device import start_virtual_phone
    from mobile_actions.hybrid.models import resolve_caller, resolve_navigator

    chosen = select_tasks(tasks if tasks is not None else TASKS, cfg.only, cfg.limit)
    say = on_event or (lambda _e: None)
    if caller is None:
        caller = OracleCaller(chosen) if cfg.model == "oracle" else resolve_caller(
            cfg.model, lambda m: say({"type": "message", "text": m}))
    if navigator == "config" and cfg.navigator != "oracle":
        navigator, line = resolve_navigator(cfg.navigator)
        say({"type": "message", "text": line})
    out = Path(cfg.out)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    session = start_virtual_phone()
    if navigator == "config":
        navigator = OracleNavigator(session.phone, chosen)
    results = []
    try:
        for n, task in enumerate(chosen, 1):
            session.phone.reset()
            session.phone.set_clock(datetime.fromisoformat(NOW))   # the status bar agrees with the caller's day
            apply_setup(session.phone, task.get("setup", {}))
            run_dir = out / "runs" / task["id"]
            if run_dir.exists():
                import shutil
                shutil.rmtree(run_dir)
            rc = RunConfig(model=cfg.model, navigator=cfg.navigator, yes=True, max_steps=cfg.max_steps,
                           navigate=cfg.navigate, now=NOW, runs_dir=str(out / "runs"))
            runner = Runner(rc, caller=caller, navigator=navigator, session=session, on_event=on_event)
            t0 = time.perf_counter()
            try:
                rep = runner.run(task["request"], run_dir=run_dir)
                error = rep.error
            except Exception as e:   # one broken task must not end the benchmark; it fails, with the reason
                rep, error = None, f"{type(e).__name__}: {e}"
            seconds = time.perf_counter() - t0
            if rep is not None and rep.status == "interrupted":
                session.reconnect()
            failures = check_state(task["check"], session.phone.snapshot())
            expect = task.get("expect", "done")
            reported_done = rep is not None and rep.all_done
            if expect == "not_done" and reported_done:
                failures.append("the run reported done; the right outcome is not done")
            success = not failures and not error
            res = TaskResult(task["id"], task["category"], task["request"], success, failures,
                             rep.status if rep else "error", rep.steps if rep else 0, rep.caller_turns if rep else 0,
                             rep.calls_dispatched if rep else 0, rep.nav_steps if rep else 0, round(seconds, 2),
                             len(rep.done) if rep else 0, len(rep.not_done) if rep else 0,
                             len(rep.refused) if rep else 0, str(run_dir), error,
                             next((i.reason for i in (rep.not_done + rep.refused)), "") if rep else "",
                             false_done=not success and reported_done, expect=expect,
                             nav_ms=_nav_step_ms(run_dir))
            results.append(res)
            if on_result:
                on_result(n, len(chosen), res)
    finally:
        session.close()
    return results


def _nav_step_ms(run_dir: Path) -> tuple[float, ...]:
    """The navigator's answer time per step of a run, read from the run's own trace."""
    from mobile_actions.hybrid.trace import Trace

    if not (run_dir / "trace.jsonl").is_file():
        return ()
    return tuple(float(r["model_ms"]) for r in Trace.read(run_dir).of_type("nav")
                 if isinstance(r.get("model_ms"), (int, float)))


# --------------------------------------------------------------------------------------------- tables
@dataclass
class Summary:
    group: str
    n: int
    success: int
    false_done: int      # of the failures: the run reported done
    must_not_act: int    # tasks whose right outcome is not done (``expect: not_done``) ...
    held_back: int       # ... and of them, those passed: nothing done that must not be, nothing claimed
    mean_steps: float
    mean_seconds: float
    median_seconds: float

    @property
    def rate(self) -> float:
        return self.success / self.n if self.n else 0.0


def summarize(results: Sequence[TaskResult]) -> list[Summary]:
    import statistics

    out = []
    for group in (*CATEGORIES, "all"):
        rs = [r for r in results if group == "all" or r.category == group]
        if not rs:
            continue
        held = [r for r in rs if r.expect == "not_done"]
        out.append(Summary(group, len(rs), sum(r.success for r in rs), sum(r.false_done for r in rs),
                           len(held), sum(r.success for r in held), statistics.mean(r.steps for r in rs),
                           statistics.mean(r.seconds for r in rs), statistics.median(r.seconds for r in rs)))
    return out


def nav_step_line(results: Sequence[TaskResult]) -> str:
    """The navigator's step time over every step of the run ("" when no task reached it), with the CPU."""
    from mobile_actions.recipes.machine import cpu_name
    from mobile_actions.recipes.stats import median, p90

    ms = [m for r in results for m in r.nav_ms]
    if not ms:
        return ""
    return f"navigator step: median {median(ms):.0f} ms, p90 {p90(ms):.0f} ms over {len(ms)} steps ({cpu_name()})"


def markdown(results: Sequence[TaskResult], title: str = "") -> str:
    lines = [f"**{title}**", ""] if title else []
    lines += ["| tasks | n | success | rate | false done | must not act: passed | mean steps | mean s/task | "
              "median s/task |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s in summarize(results):
        held = f"{s.held_back} of {s.must_not_act}" if s.must_not_act else "–"
        lines.append(f"| {s.group} | {s.n} | {s.success} | {s.rate:.0%} | {s.false_done} | {held} | "
                     f"{s.mean_steps:.1f} | {s.mean_seconds:.1f} | {s.median_seconds:.1f} |")
    step = nav_step_line(results)
    if step:
        lines += ["", step]
    lines += ["", "| id | category | ok | steps | s | state check failed | runner said |",
              "|---|---|:-:|---:|---:|---|---|"]
    for r in results:
        why = "; ".join(r.failures + ([r.error] if r.error else []))
        note = r.note if not r.success else ""
        lines.append(f"| {r.id} | {r.category} | {r.kind} | {r.steps} | {r.seconds:.1f} | "
                     f"{why.replace('|', '/')} | {note.replace('|', '/')[:120]} |")
    return "\n".join(lines) + "\n"


def write_outputs(results: Sequence[TaskResult], out: str | Path, title: str = "") -> tuple[Path, Path, Path]:
    """``results.csv`` (one row per task), ``results.md`` (the tables) and ``results.json`` under ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    csv_path, md_path, json_path = out / "results.csv", out / "results.md", out / "results.json"
    cols = [f.name for f in TaskResult.__dataclass_fields__.values()]
    with open(csv_path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        for r in results:
            row = r.to_json()
            row["failures"] = "; ".join(r.failures)
            row["nav_ms"] = " ".join(f"{m:.1f}" for m in r.nav_ms)
            w.writerow(row)
    md_path.write_text(markdown(results, title), encoding="utf-8")
    data = {"title": title, "summary": [asdict(s) | {"rate": s.rate} for s in summarize(results)],
            "tasks": [r.to_json() for r in results]}
    json_path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return csv_path, md_path, json_path

