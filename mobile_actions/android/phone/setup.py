"""A virtual phone's starting state, written as data: the flags, levels, apps and items it holds.

The same language sets up a benchmark task (`recipes/bench_hybrid.py`) and a `run --phone FILE` on the
virtual phone, so a task's phone can be tried by hand. Every problem is a `PhoneSetupError` naming the key
and the item; nothing is applied until the whole setup has been checked.
"""
from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from mobile_actions import jsontext
from mobile_actions.errors import JSONTextError, PhoneSetupError

FLAGS = ("torch", "wifi", "bluetooth", "airplane", "dnd")
# the setup lists of items: key -> {field: (type, required)}
SETUP_ITEMS: dict[str, dict[str, tuple[type, bool]]] = {
    "contacts": {"name": (str, True), "phone": (str, False), "email": (str, False)},
    "events": {"title": (str, True), "begin": (str, True), "duration_min": (int, False), "location": (str, False),
               "description": (str, False)},
    "alarms": {"time": (str, True), "days": (str, False), "label": (str, False), "enabled": (bool, False)},
    "messages": {"to": (str, False), "number": (str, True), "text": (str, True), "direction": (str, False)},
    "notes": {"title": (str, False), "text": (str, False)},
}
SETUP_KEYS = (*FLAGS, "brightness", "media_volume", "ring_volume", "open", "recents", "clipboard", "clock",
              *SETUP_ITEMS)


def setup_clock(value: Any) -> datetime | None:
    """A setup's ``clock`` (``YYYY-MM-DDTHH:MM[:SS]``, the phone's own time) as a datetime; None if unreadable."""
    try:
        when = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None
    return when if when is not None and when.tzinfo is None else None


def setup_problem(setup: Any) -> str | None:
    """Why a task's setup cannot be applied (None: it can); the reason names the key, and the item."""
    from mobile_actions.android.phone.apps import APP_BY_PACKAGE
    from mobile_actions.android.phone.state import LEVELS

    if not isinstance(setup, dict):
        return "'setup' must be an object"
    for key, value in setup.items():
        where = f"setup.{key}"
        if key not in SETUP_KEYS:
            return f"setup: unknown key {key!r} (keys: {', '.join(SETUP_KEYS)})"
        if key in FLAGS and not isinstance(value, bool):
            return f"{where}: expected true or false"
        if key in LEVELS and (not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 100):
            return f"{where}: expected a whole number from 0 to 100"
        if key == "clipboard" and not isinstance(value, str):
            return f"{where}: expected a string"
        if key == "clock" and setup_clock(value) is None:
            return f"{where}: expected the phone's time as YYYY-MM-DDTHH:MM (no time zone), got {value!r}"
        if key in ("open", "recents"):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                return f"{where}: expected a list of strings"
            unknown = [v for v in value if v not in APP_BY_PACKAGE]
            if unknown:
                return f"{where}: no app {unknown[0]!r} on the phone (apps: {', '.join(sorted(APP_BY_PACKAGE))})"
        if key in SETUP_ITEMS:
            if not isinstance(value, list):
                return f"{where}: expected a list"
            for i, item in enumerate(value):
                why = _item_problem(key, item)
                if why:
                    return f"{where}[{i}]: {why}"
    return None


def _item_problem(key: str, item: Any) -> str | None:
    from mobile_actions.android.phone.state import WEEKDAYS

    fields = SETUP_ITEMS[key]
    if key == "notes" and isinstance(item, str):
        return None
    if not isinstance(item, dict):
        return "expected an object" + (" or a string" if key == "notes" else "")
    unknown = sorted(set(item) - set(fields))
    if unknown:
        return f"unknown field {unknown[0]!r} (fields: {', '.join(fields)})"
    for name, (kind, required) in fields.items():
        if name not in item:
            if required:
                return f"needs {name!r}"
            continue
        v = item[name]
        if not isinstance(v, kind) or kind is int and isinstance(v, bool):
            return f"{name}: expected {dict([(str, 'a string'), (int, 'a whole number'), (bool, 'true or false')])[kind]}"
    if key == "events":
        try:
            datetime.strptime(item["begin"], "%Y-%m-%dT%H:%M")
        except ValueError:
            return f"begin: expected YYYY-MM-DDTHH:MM, got {item['begin']!r}"
        if item.get("duration_min", 60) <= 0:
            return "duration_min: expected a number of minutes above 0"
    if key == "alarms":
        try:
            datetime.strptime(item["time"], "%H:%M")
        except ValueError:
            return f"time: expected HH:MM (24 h), got {item['time']!r}"
        days = [d.strip() for d in item.get("days", "").split(",") if d.strip()]
        if any(d not in WEEKDAYS for d in days):
            return f"days: a comma list of {','.join(WEEKDAYS)}, got {item['days']!r}"
    if key == "messages" and item.get("direction", "received") not in ("sent", "received"):
        return f"direction: 'sent' or 'received', got {item['direction']!r}"
    return None


def apply_setup(phone: Any, setup: dict[str, Any]) -> None:
    """Put a fresh virtual phone into a starting state (`PhoneSetupError` naming the key when it cannot)."""
    from mobile_actions.android.phone.core import local_epoch_ms
    from mobile_actions.android.phone.state import LEVELS, as_note

    why = setup_problem(setup)
    if why:
        raise PhoneSetupError(why)
    if "clock" in setup:
        phone.set_clock(setup_clock(setup["clock"]))
    for flag in ("torch", "bluetooth", "airplane"):
        if flag in setup:
            phone.set_flag(flag, setup[flag])
    if "wifi" in setup:
        phone.set_wifi(setup["wifi"])
    if "dnd" in setup:
        phone.set_dnd(setup["dnd"])
    for name in LEVELS:
        if name in setup:
            phone.set_level(name, setup[name])
    for pkg in setup.get("recents", []):
        phone.launch(pkg)
        phone.home()
    for pkg in setup.get("open", []):
        phone.launch(pkg)
    with phone.lock:
        st = phone.state
        if "clipboard" in setup:
            st.clipboard = setup["clipboard"]
        st.notes.extend(as_note(n) for n in setup.get("notes", []))
        st.contacts.extend({"name": c["name"], "phone": c.get("phone", ""), "email": c.get("email", "")}
                           for c in setup.get("contacts", []))
        for e in setup.get("events", []):
            day, clock = e["begin"].split("T")
            begin = local_epoch_ms(day, clock, phone.tz())
            st.events.append({"title": e["title"], "location": e.get("location", ""),
                              "description": e.get("description", ""), "begin_ms": begin,
                              "end_ms": begin + 60_000 * e.get("duration_min", 60), "all_day": False})
        for a in setup.get("alarms", []):
            phone.add_alarm(a["time"], [d.strip() for d in a.get("days", "").split(",")], a.get("label", ""),
                            a.get("enabled", True))
        for m in setup.get("messages", []):
            phone.add_message(m.get("to") or phone.thread_name(m["number"]), m["number"], m["text"],
                              m.get("direction", "received"))
        phone.changed()


def load_setup(path: str | Path) -> dict[str, Any]:
    """A setup from a JSON file, read as all outside JSON is (`jsontext.load_file`: bounded, no repeated keys)
    and checked; errors name the file, and the line of a JSON syntax error."""
    try:
        setup = jsontext.load_file(path)
    except OSError as e:
        raise PhoneSetupError(f"{path}: cannot read it ({e.strerror or e})") from None
    except JSONTextError as e:
        where = f"{path}:{e.line}" if e.line else str(path)
        raise PhoneSetupError(f"{where}: not JSON ({e.reason})") from None
    why = setup_problem(setup)
    if why:
        raise PhoneSetupError(f"{path}: {why}")
    return setup
