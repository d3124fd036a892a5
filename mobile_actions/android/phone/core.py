"""The virtual phone itself: state plus everything that changes it (intents, taps, keys, app actions).

Why one object with one lock: several adb streams (and the test process itself) reach the phone at
once; every mutation and every read of a screen happens under ``lock`` so a screenshot never mixes two
states. Shell text only ever reaches ``Shell`` (a parser); device commands are Python functions.
"""

from __future__ import annotations

import json
import math
import re
import threading
from datetime import datetime, timedelta, tzinfo
from typing import Any
from urllib.parse import parse_qs, quote_plus, unquote

from mobile_actions.android.phone import apps, places
from mobile_actions.android.phone.shell import Shell, ShellResult
from mobile_actions.android.phone.state import (COMMAND_LOG_LIMIT, HEIGHT, LEVELS, WEEKDAYS, WIDTH, Intent, PhoneState,
                                                as_note, days_text, zone)

ALARM_EXTRA = "android.intent.extra.alarm."         # AlarmClock's extras (HOUR, MINUTES, DAYS, MESSAGE, ...)
CALENDAR_DAYS = {1: "Sun", 2: "Mon", 3: "Tue", 4: "Wed", 5: "Thu", 6: "Fri", 7: "Sat"}   # java.util.Calendar
EMAIL_RE = re.compile(r"[^@\s<>,;]+@[^@\s<>,;.]+(?:\.[^@\s<>,;.]+)+")   # what Gmail takes as a recipient


def invalid_recipient(to: str) -> str | None:
    """The first recipient of a To field that is not an address, as Gmail refuses it (a bare name, a phrase)."""
    return next((r.strip() for r in re.split(r"[,;]", to) if r.strip() and not EMAIL_RE.fullmatch(r.strip())), None)

DIRECTORIES = {"/", "/sdcard", "/sdcard/Download", "/sdcard/Pictures", "/data", "/data/local", "/data/local/tmp",
               "/system", "/system/bin", "/storage", "/storage/emulated", "/storage/emulated/0", "/dev"}

KEYCODES = {
    "HOME": 3, "BACK": 4, "CALL": 5, "ENDCALL": 6, "DPAD_UP": 19, "DPAD_DOWN": 20, "DPAD_LEFT": 21,
    "DPAD_RIGHT": 22, "DPAD_CENTER": 23, "VOLUME_UP": 24, "VOLUME_DOWN": 25, "POWER": 26, "CAMERA": 27,
    "TAB": 61, "SPACE": 62, "ENTER": 66, "DEL": 67, "MENU": 82, "NOTIFICATION": 83, "SEARCH": 84,
    "ESCAPE": 111, "FORWARD_DEL": 112, "MOVE_HOME": 122, "MOVE_END": 123, "VOLUME_MUTE": 164,
    "APP_SWITCH": 187, "SLEEP": 223, "WAKEUP": 224, "CUT": 277, "COPY": 278, "PASTE": 279,
}
KEYCODES.update({str(d): 7 + d for d in range(10)})
KEYCODES.update({chr(ord("A") + i): 29 + i for i in range(26)})
KEY_CHARS = {7 + d: str(d) for d in range(10)} | {29 + i: chr(ord("a") + i) for i in range(26)} | {62: " "}


def keycode(name: str) -> int | None:
    """``66``, ``ENTER`` or ``KEYCODE_ENTER`` -> 66; None when unknown."""
    if name.isdigit():
        return int(name)
    key = name.upper().removeprefix("KEYCODE_")
    return KEYCODES.get(key)


class VirtualFS:
    """Files as a dict (sync pull/push, uiautomator dump, screencap FILE, shell redirections)."""

    def __init__(self, phone: "VirtualPhone") -> None:
        self.phone = phone

    @property
    def files(self) -> dict[str, bytes]:
        return self.phone.state.files

    def read(self, path: str) -> bytes | None:
        if path == "/dev/null":
            return b""
        return self.files.get(normpath(path))

    def write(self, path: str, data: bytes, append: bool = False) -> bool:
        path = normpath(path)
        if path == "/dev/null":
            return True
        if path in DIRECTORIES or parent(path) not in DIRECTORIES:
            return False
        self.files[path] = (self.files.get(path, b"") if append else b"") + data
        return True

    def is_dir(self, path: str) -> bool:
        return normpath(path) in DIRECTORIES

    def listdir(self, path: str) -> list[str] | None:
        path = normpath(path)
        if path not in DIRECTORIES:
            return None
        names = {p.rsplit("/", 1)[1] for p in (*DIRECTORIES, *self.files) if p != "/" and parent(p) == path}
        return sorted(names)

    def remove(self, path: str) -> bool:
        return self.files.pop(normpath(path), None) is not None


def normpath(path: str) -> str:
    parts: list[str] = []
    for bit in path.split("/"):
        if bit in ("", "."):
            continue
        if bit == "..":
            if parts:
                parts.pop()
        else:
            parts.append(bit)
    out = "/" + "/".join(parts)
    return out.replace("/storage/emulated/0", "/sdcard", 1) if out.startswith("/storage/emulated/0/") else out


def parent(path: str) -> str:
    return path.rsplit("/", 1)[0] or "/"


class VirtualPhone:
    """A phone whose whole state is ``self.state``; every public method takes ``self.lock``."""

    def __init__(self, serial: str = "vphone-0001", tz: str = "UTC") -> None:
        from mobile_actions.android.phone.commands import COMMANDS  # commands import this module

        self.lock = threading.RLock()
        self.serial = serial
        self.tzname = tz
        self.fs = VirtualFS(self)
        self.shell_env = {"PATH": "/system/bin", "HOME": "/", "USER": "shell", "ANDROID_DATA": "/data"}
        self.commands = COMMANDS
        self.version = 0
        self._render_cache: dict[str, tuple[Any, bytes | str]] = {}
        self.fail_next: str | None = None      # test hook: "disconnect" drops the next shell's transport
        self.drop_after: str | None = None     # test hook: the next shell starting with this runs, then the link drops
        self.reset()

    # ------------------------------------------------------------------ lifecycle and inspection
    def reset(self) -> None:
        """Back to a fresh phone (home screen, empty apps); the command log is cleared."""
        with self.lock:
            self.state = PhoneState(serial=self.serial, timezone=self.tzname)
            self.state.stack.append(apps.new_activity("launcher"))
            self.changed()

    def snapshot(self) -> dict[str, Any]:
        """A deep, JSON-ready copy of the state (safe to keep after the phone changes)."""
        with self.lock:
            return json.loads(json.dumps(self.state.to_json()))

    def state_json(self) -> str:
        with self.lock:
            return json.dumps(self.state.to_json(), ensure_ascii=False, indent=1)

    def clear_log(self) -> None:
        with self.lock:
            self.state.commands.clear()
            self.state.intents.clear()

    def changed(self) -> None:
        self.version += 1

    # ------------------------------------------------------------------ shell
    def run(self, script: str, stdin: bytes = b"") -> ShellResult:
        """Run shell text as ``/system/bin/sh -c`` would, recording every command."""
        with self.lock:
            shell = Shell(self.commands, self._record, self.fs, self.shell_env)
            shell.phone = self  # type: ignore[attr-defined]
            return shell.run(script, stdin)

    def _record(self, argv: list[str]) -> None:
        log = self.state.commands
        log.append(argv)
        self.state.command_count += 1
        if len(log) > COMMAND_LOG_LIMIT:
            del log[: len(log) - COMMAND_LOG_LIMIT]

    # ------------------------------------------------------------------ time
    def tz(self) -> tzinfo:
        return zone(self.state.timezone)

    def now(self) -> datetime:
        """The phone's clock: the host's, moved by what `set_clock` set."""
        return datetime.now(self.tz()) + timedelta(milliseconds=self.state.clock_offset_ms)

    def set_clock(self, when: datetime) -> None:
        """Set the phone's clock to `when` (naive: the phone's own time zone); it runs on from there."""
        with self.lock:
            when = when if when.tzinfo is not None else when.replace(tzinfo=self.tz())
            # rounded up: the clock never reads a moment before `when` (the status bar would show the minute before)
            self.state.clock_offset_ms = math.ceil((when - datetime.now(self.tz())).total_seconds() * 1000)
            self.changed()

    def format_ms(self, ms: int | None) -> str:
        if ms is None:
            return "—"
        return apps.epoch_ms_to_local(int(ms), self.tz()).strftime("%a %d %b %Y, %H:%M")

    def format_span(self, event: dict) -> str:
        return f"{self.format_ms(event.get('begin_ms'))} – {self.format_ms(event.get('end_ms'))}"

    # ------------------------------------------------------------------ screens
    def screen(self) -> apps.Screen:
        with self.lock:
            return apps.build(self)

    def cached(self, key: str, make) -> Any:
        """Renders are cached per state version and minute (the status-bar clock)."""
        with self.lock:
            stamp = (self.version, int(self.now().timestamp() // 60))
            hit = self._render_cache.get(key)
            if hit and hit[0] == stamp:
                return hit[1]
            value = make(self)
            self._render_cache[key] = (stamp, value)
            return value

    def current_component(self) -> str:
        with self.lock:
            return self.state.top.component

    # ------------------------------------------------------------------ navigation
    def open(self, kind: str, **fields: Any) -> None:
        with self.lock:
            act = apps.new_activity(kind, **{k: v for k, v in fields.items() if isinstance(v, str)})
            act.data.update({k: v for k, v in fields.items() if k not in act.fields})
            self._push(act)

    def _push(self, act) -> None:
        st = self.state
        st.overlay = None
        st.stack.append(act)
        if len(st.stack) > 40:
            del st.stack[1:len(st.stack) - 39]
        self.changed()

    def launch(self, package: str) -> bool:
        """Bring an app to the front (restoring its activities) or start its main activity."""
        with self.lock:
            app = apps.APP_BY_PACKAGE.get(package)
            if app is None:
                return False
            st = self.state
            st.overlay = None
            if app is apps.LAUNCHER:
                self.home()
                return True
            mine = [a for a in st.stack[1:] + st.recents if a.package == package]
            st.stack[1:] = [a for a in st.stack[1:] if a.package != package]
            st.recents = [a for a in st.recents if a.package != package]
            st.stack.extend(mine or [apps.new_activity(app.kind)])
            self.changed()
            return True

    def home(self) -> None:
        with self.lock:
            st = self.state
            st.overlay = None
            st.recents = [a for a in st.recents if a not in st.stack] + st.stack[1:]
            st.recents = st.recents[-40:]
            del st.stack[1:]
            self.changed()

    def back(self) -> None:
        with self.lock:
            st = self.state
            if st.overlay:
                st.overlay = None
            elif st.top.data.pop("dialog", None):
                pass
            elif len(st.stack) > 1:
                st.stack.pop()
            self.changed()

    def show_recents(self) -> None:
        with self.lock:
            self.state.overlay = None if self.state.overlay == "recents" else "recents"
            self.changed()

    def recent_packages(self) -> list[str]:
        seen: list[str] = []
        for a in reversed(self.state.stack[1:] + self.state.recents[::-1]):
            if a.package not in seen:
                seen.append(a.package)
        return seen

    def clear_recents(self) -> None:
        with self.lock:
            self.state.recents.clear()
            del self.state.stack[1:]
            self.state.overlay = None
            self.changed()

    def expand_settings(self) -> None:
        """Quick Settings fully expanded (``cmd statusbar expand-settings``, or a 2nd swipe down)."""
        with self.lock:
            self.state.overlay = "quick_settings"
            self.changed()

    def expand_notifications(self) -> None:
        """The notification shade with the first row of tiles (a swipe down, KEYCODE_NOTIFICATION)."""
        with self.lock:
            self.state.overlay = "shade"
            self.changed()

    def collapse(self) -> None:
        with self.lock:
            if self.state.overlay in ("shade", "quick_settings"):
                self.state.overlay = None
            self.changed()

    # ------------------------------------------------------------------ system toggles
    def set_wifi(self, on: bool) -> None:
        with self.lock:
            self.state.wifi = bool(on)
            self.state.settings["global"]["wifi_on"] = "1" if on else "0"
            self.changed()

    def set_flag(self, name: str, value: bool | None = None) -> None:
        """Toggle (or set) torch / bluetooth / airplane."""
        with self.lock:
            new = (not getattr(self.state, name)) if value is None else bool(value)
            setattr(self.state, name, new)
            if name == "airplane":
                self.state.settings["global"]["airplane_mode_on"] = "1" if new else "0"
            self.changed()

    def set_dnd(self, on: bool) -> None:
        with self.lock:
            self.state.dnd = bool(on)
            self.state.settings["global"]["zen_mode"] = "1" if on else "0"
            self.changed()

    def set_level(self, name: str, value: int) -> None:
        """A 0-100 slider (brightness, media_volume, ring_volume); brightness is also the 0-255
        ``settings system screen_brightness``, as Android keeps it."""
        if name not in LEVELS:
            raise ValueError(f"{name!r} is not one of {LEVELS}")
        with self.lock:
            value = max(0, min(100, int(value)))
            setattr(self.state, name, value)
            if name == "brightness":
                self.state.settings["system"]["screen_brightness"] = str(round(value * 255 / 100))
            self.changed()

    def step_volume(self, up: bool) -> None:
        """VOLUME_UP / VOLUME_DOWN: one of media's 15 steps (the keys set media volume since Android 9)."""
        with self.lock:
            index = round(self.state.media_volume * 15 / 100) + (1 if up else -1)
            self.set_level("media_volume", round(max(0, min(15, index)) * 100 / 15))

    def toggle_setting(self, namespace: str, key: str, on_value: str = "1") -> None:
        """A Quick Settings tile backed by a ``settings`` key (Do Not Disturb, Auto-rotate, ...)."""
        with self.lock:
            table = self.state.settings[namespace]
            table[key] = "0" if apps.setting_on(self, namespace, key) else on_value
            self.changed()

    def toast_msg(self, text: str) -> None:
        with self.lock:
            self.state.toast = text
            self.changed()

    # ------------------------------------------------------------------ forms and app actions
    def focus(self, key: str) -> None:
        with self.lock:
            self.state.top.focus = key
            self.changed()

    def set_field(self, key: str, value: str) -> None:
        """A suggestion picked (Messages' To: a contact): the field takes it, the cursor moves on."""
        with self.lock:
            act = self.state.top
            act.fields[key] = value
            act.data.setdefault("picked", {})[key] = value
            keys = [k for k, _, _ in apps.FORMS.get(act.kind, ())]
            act.focus = keys[keys.index(key) + 1] if key in keys[:-1] else key
            self.changed()

    def set_form_data(self, key: str, value: Any) -> None:
        with self.lock:
            self.state.top.data[key] = value
            self.changed()

    def ask(self, dialog: str) -> None:
        """Show a confirm dialog (`apps.DIALOGS`) over the current screen."""
        with self.lock:
            self.state.top.data["dialog"] = dialog
            self.changed()

    def dismiss_dialog(self) -> None:
        with self.lock:
            self.state.top.data.pop("dialog", None)
            self.changed()

    def confirm_dialog(self) -> None:
        with self.lock:
            key = self.state.top.data.pop("dialog", None)
            if key in apps.DIALOGS:
                getattr(self, apps.DIALOGS[key][2])()
            self.changed()

    def copy(self, text: str, message: str = "Copied") -> None:
        with self.lock:
            self.state.clipboard = text
            self.state.toast = message
            self.changed()

    def paste(self) -> None:
        self.type_text(self.state.clipboard)

    def select_all(self, key: str) -> None:
        """The floating toolbar's Select all: the field's text is selected and the toolbar stays (Cut, Copy,
        Paste); what is typed or pasted next replaces it."""
        with self.lock:
            act = self.state.top
            if key in act.fields:
                act.focus = key
                act.data["selected"] = key
                act.data["paste_menu"] = key
                self.changed()

    def copy_selection(self, key: str, cut: bool = False) -> None:
        """The toolbar's Copy (or Cut: the field is emptied too) of a selected field's text."""
        with self.lock:
            act = self.state.top
            if act.data.pop("selected", None) == key and key in act.fields:
                self.copy(act.fields[key])
                if cut:
                    act.fields[key] = ""
                self.changed()

    def paste_into(self, key: str) -> None:
        """The floating toolbar's Paste (after a long press on a text field): focus it, insert the clip."""
        with self.lock:
            act = self.state.top
            if key in act.fields:
                act.focus = key
                self.paste()

    def save_contact(self) -> None:
        with self.lock:
            act = self.state.top
            f = act.fields
            if not (f["name"] or f["phone"] or f["email"]):
                self.toast_msg("Contact is empty")
                return
            contact = {"name": f["name"], "phone": f["phone"], "email": f["email"]}
            index = act.data.get("index")
            if isinstance(index, int) and 0 <= index < len(self.state.contacts):
                self.state.contacts[index] = contact
                self.state.stack = [a for a in self.state.stack if a.kind != "contact_view"]
            else:
                self.state.contacts.append(contact)
            self._finish(act, "contacts", "Contact saved")

    def delete_contact(self) -> None:
        self._delete(self.state.contacts, "contacts", "Contact deleted")

    def delete_event(self) -> None:
        self._delete(self.state.events, "calendar", "Event deleted")

    def delete_note(self) -> None:
        self._delete(self.state.notes, "notes", "Note deleted")

    def _delete(self, items: list, list_kind: str, message: str) -> None:
        """The confirmed Delete of the item the top screen shows (its ``index``)."""
        with self.lock:
            act = self.state.top
            index = act.data.get("index")
            if isinstance(index, int) and 0 <= index < len(items):
                del items[index]
            self._finish(act, list_kind, message)

    def edit_event(self, index: int) -> None:
        """The event view's Edit: the event's form, filled with it; Save changes that event in place."""
        with self.lock:
            if not 0 <= index < len(self.state.events):
                return
            e = self.state.events[index]
            self.new_event(begin_ms=e.get("begin_ms"), end_ms=e.get("end_ms"), title=e.get("title", ""),
                           location=e.get("location", ""), description=e.get("description", ""), index=index,
                           all_day=bool(e.get("all_day", False)))

    def new_event(self, begin_ms: int | None = None, end_ms: int | None = None, **fields: Any) -> None:
        """Calendar's event form, its Date / Time / Duration filled from ``begin_ms`` / ``end_ms`` (default: the
        next full hour, one hour long). The exact times are kept, used while those fields stay as shown."""
        with self.lock:
            if begin_ms is None:
                begin_ms = int((self.now().replace(minute=0, second=0, microsecond=0)
                                + timedelta(hours=1)).timestamp() * 1000)
                end_ms = None
            if end_ms is None or end_ms < begin_ms:
                end_ms = begin_ms + 3_600_000
            start = apps.epoch_ms_to_local(begin_ms, self.tz())
            shown = {"date": start.strftime("%Y-%m-%d"), "time": start.strftime("%H:%M"),
                     "duration": str((end_ms - begin_ms) // 60_000)}
            self.open("event_edit", **fields, **shown, begin_ms=begin_ms, end_ms=end_ms, shown=shown)

    def save_event(self) -> None:
        with self.lock:
            act = self.state.top
            f, shown = act.fields, act.data.get("shown", {})
            begin, end = act.data.get("begin_ms"), act.data.get("end_ms")
            if not (isinstance(begin, int) and f["date"] == shown.get("date") and f["time"] == shown.get("time")):
                begin = local_epoch_ms(f["date"], f["time"], self.tz())
                if begin is None:
                    self.toast_msg("Enter the date as YYYY-MM-DD and the time as HH:MM")
                    return
                end = None
            if not (isinstance(end, int) and f["duration"] == shown.get("duration")):
                minutes = f["duration"].strip() or "60"
                if not minutes.isdigit() or not 0 < int(minutes) <= 100_000:
                    self.toast_msg("Duration: a number of minutes")
                    return
                end = begin + int(minutes) * 60_000
            event = {"title": f["title"], "location": f["location"], "description": f["description"],
                     "begin_ms": int(begin), "end_ms": int(end), "all_day": bool(act.data.get("all_day", False))}
            index = act.data.get("index")
            if isinstance(index, int) and 0 <= index < len(self.state.events):
                self.state.events[index] = event
            else:
                self.state.events.append(event)
            self._finish(act, "calendar", "Event saved")

    def send_email(self) -> None:
        with self.lock:
            act = self.state.top
            if not act.fields["to"].strip():
                self.toast_msg("Add at least one recipient.")
                return
            bad = invalid_recipient(act.fields["to"])
            if bad is not None:
                self.toast_msg(f"The address <{bad}> is invalid.")
                return
            self.state.outbox.append({k: act.fields[k] for k in ("to", "subject", "body")}
                                     | {"cc": act.data.get("cc", ""), "bcc": act.data.get("bcc", "")})
            self._finish(act, "mail", "Message sent")

    def notes(self) -> list[dict[str, str]]:
        return [as_note(n) for n in self.state.notes]

    def save_note(self) -> None:
        with self.lock:
            act = self.state.top
            note = as_note(act.fields)
            index = act.data.get("index")
            if isinstance(index, int) and 0 <= index < len(self.state.notes):
                self.state.notes[index] = note
            elif not (note["title"] or note["text"]):
                self._finish(act, "notes", "Empty note discarded")
                return
            else:
                self.state.notes.append(note)
            self._finish(act, "notes", "Note saved")

    # ------------------------------------------------------------------ Clock
    def clock_tab(self, tab: str) -> None:
        with self.lock:
            self.state.top.data["tab"] = tab
            self.state.top.scroll = 0
            self.state.top.focus = None
            self.changed()

    def add_alarm(self, time24: str, days: list[str] | tuple[str, ...] = (), label: str = "",
                  enabled: bool = True) -> dict[str, Any]:
        """One alarm; an alarm with the same time, days and label is switched on instead of doubled (as
        DeskClock does for AlarmClock.ACTION_SET_ALARM)."""
        with self.lock:
            alarm = {"time": time24, "days": days_text(days), "label": label, "enabled": bool(enabled)}
            same = next((a for a in self.state.alarms if all(a[k] == alarm[k] for k in ("time", "days", "label"))), None)
            if same is not None:
                same["enabled"] = same["enabled"] or alarm["enabled"]
                self.changed()
                return same
            self.state.alarms.append(alarm)
            self.changed()
            return alarm

    def edit_alarm(self, index: int) -> None:
        with self.lock:
            a = self.state.alarms[index]
            h, m = (int(x) for x in a["time"].split(":"))
            self.open("alarm_edit", hour=str(h % 12 or 12), minute=f"{m:02d}", label=a["label"], pm=h >= 12,
                      days=[d for d in a["days"].split(",") if d], index=index)

    def toggle_alarm_day(self, day: str) -> None:
        with self.lock:
            days = self.state.top.data.setdefault("days", [])
            days.remove(day) if day in days else days.append(day)
            self.changed()

    def save_alarm(self) -> None:
        """The alarm editor's Save: Hour 1-12 and Minute 0-59 with AM / PM, as the picker's keyboard mode."""
        with self.lock:
            act = self.state.top
            hour, minute = act.fields["hour"].strip(), act.fields["minute"].strip() or "0"
            if not (hour.isdigit() and minute.isdigit() and 1 <= int(hour) <= 12 and int(minute) <= 59):
                self.toast_msg("Enter a valid time")
                return
            time24 = f"{int(hour) % 12 + (12 if act.data.get('pm') else 0):02d}:{int(minute):02d}"
            alarm = {"time": time24, "days": days_text(act.data.get("days", [])), "label": act.fields["label"],
                     "enabled": True}
            index = act.data.get("index")
            if isinstance(index, int) and 0 <= index < len(self.state.alarms):
                self.state.alarms[index] = alarm
            else:
                self.state.alarms.append(alarm)
            self._finish(act, "clock", f"Alarm set for {apps.twelve_hour(time24)}")
            self.state.top.data["tab"] = "alarm"

    def toggle_alarm(self, index: int) -> None:
        with self.lock:
            self.state.alarms[index]["enabled"] = not self.state.alarms[index]["enabled"]
            self.changed()

    def delete_alarm(self, index: int) -> None:
        with self.lock:
            del self.state.alarms[index]
            self.toast_msg("Alarm deleted")

    def add_timer(self, seconds: int, label: str = "", running: bool = True) -> None:
        with self.lock:
            self.state.timers.append({"seconds": int(seconds), "label": label, "running": bool(running)})
            self.changed()

    def start_timer(self) -> None:
        """The Timer tab's Start: hours, minutes and seconds (empty = 0) make one running timer."""
        with self.lock:
            act = self.state.top
            parts = [act.fields[k].strip() or "0" for k in ("hours", "minutes", "seconds")]
            if not all(p.isdigit() for p in parts):
                self.toast_msg("Enter hours, minutes and seconds as numbers")
                return
            h, m, sec = (int(p) for p in parts)
            total = h * 3600 + m * 60 + sec
            if not 0 < total <= 100 * 3600:
                self.toast_msg("Set a time for the timer")
                return
            self.add_timer(total, act.fields["timer_label"])
            for k in ("hours", "minutes", "seconds", "timer_label"):
                act.fields[k] = ""
            act.focus = None

    def toggle_timer(self, index: int) -> None:
        with self.lock:
            self.state.timers[index]["running"] = not self.state.timers[index]["running"]
            self.changed()

    def delete_timer(self, index: int) -> None:
        with self.lock:
            del self.state.timers[index]
            self.changed()

    def set_stopwatch(self, running: bool) -> None:
        with self.lock:
            self.state.stopwatch_running = bool(running)
            self.changed()

    # ------------------------------------------------------------------ Messages
    def thread_name(self, number: str) -> str:
        """How a conversation is titled: the contact whose phone is this number, else the number."""
        key = _digits(number)
        return next((c["name"] for c in self.state.contacts if key and _digits(c.get("phone", "")) == key
                     and c.get("name")), number)

    def resolve_recipient(self, text: str) -> tuple[str, str] | None:
        """Messages' To: (name as the thread shows it, number) for a contact's name or a phone number."""
        text = text.strip()
        contact = next((c for c in self.state.contacts if c.get("name", "").lower() == text.lower() and c.get("phone")),
                       None)
        if contact is not None:
            return contact["name"], contact["phone"]
        if re.fullmatch(r"\+?[\d\s().-]+", text) and len(_digits(text)) >= 3:
            return self.thread_name(text), text
        return None

    def add_message(self, to: str, number: str, text: str, direction: str = "sent") -> None:
        with self.lock:
            self.state.messages.append({"to": to, "number": number, "text": text, "direction": direction})
            self.changed()

    def thread(self, number: str) -> list[dict[str, str]]:
        key = _digits(number)
        return [m for m in self.state.messages if _digits(m["number"]) == key]

    def threads(self) -> list[tuple[str, dict[str, str]]]:
        """(number, last message) per conversation, the most recent first."""
        last: dict[str, tuple[str, dict[str, str]]] = {}
        for m in self.state.messages:
            key = _digits(m["number"]) or m["number"]
            last.pop(key, None)
            last[key] = (m["number"], m)
        return list(reversed(last.values()))

    def send_message(self) -> None:
        """Send: the text goes to the thread's number (a new chat: the To field's contact or number), the field
        empties, and a new chat becomes that conversation."""
        with self.lock:
            act = self.state.top
            text = act.fields.get("text", "")
            if not text.strip():
                return
            if act.kind == "message_new":
                who = self.resolve_recipient(act.fields["to"])
                if who is None:
                    self.toast_msg("Not a contact's name or a phone number")
                    return
                to, number = who
            else:
                number = act.data.get("number", "")
                to = self.thread_name(number)
            self.add_message(to, number, text, "sent")
            act.fields["text"] = ""
            if act.kind == "message_new":
                self.state.stack.remove(act)
                self.open("message_thread", number=number)
            self.changed()

    def search_map(self, query: str) -> None:
        with self.lock:
            act = self.state.top
            place = places.lookup(query)
            act.data["result"] = query
            act.data["place"] = place.to_json()
            act.fields["query"] = query
            act.focus = None
            self.state.map_searches.append(query)
            self.state.map_results.append({"query": query, "name": place.name, "address": place.address,
                                           "category": place.category})
            self.changed()

    def submit(self) -> bool:
        """The IME action of a submitting field (Chrome's address bar: Go; Maps' search box: Search),
        from the on-screen button or KEYCODE_ENTER. Returns False when the screen has no such field."""
        with self.lock:
            act = self.state.top
            spec = apps.SUBMIT.get(act.kind)
            if spec is None:
                return False
            text = act.fields.get(spec[0], "").strip()
            if text:
                (self.search_map if act.kind == "maps" else self.browse)(text)
            return True

    def _finish(self, act, list_kind: str, message: str) -> None:
        """A form is done: drop it and show its app's list (as the real apps do after Save/Send)."""
        st = self.state
        st.stack.remove(act)
        if st.top.kind != list_kind:
            st.stack.append(apps.new_activity(list_kind))
        st.toast = message
        self.changed()

    # ------------------------------------------------------------------ input
    def tap(self, x: float, y: float) -> None:
        with self.lock:
            if not self.state.screen_on:
                return
            self.state.toast = None
            widgets = self.screen().interactive
            self.state.top.data.pop("paste_menu", None)      # any tap dismisses the floating toolbar
            selected = self.state.top.data.pop("selected", None)   # ... and collapses a selection
            for w in reversed(widgets):
                if w.clickable and w.contains(x, y):
                    if w.kind == "popup" and selected is not None:   # but the toolbar's own items act on it
                        self.state.top.data["selected"] = selected
                    if w.on_slide is not None:
                        w.on_slide(w.track_fraction(x))
                    elif w.on_tap is not None:
                        w.on_tap()
                    break
            self.changed()

    def long_press(self, x: float, y: float) -> None:
        """A press held >= 500 ms: the widget's long-click action; a text field shows the floating
        toolbar (Paste) when the clipboard has text; elsewhere a long press acts as a tap (Android
        performs the click when no long-click listener consumed it)."""
        with self.lock:
            if not self.state.screen_on:
                return
            for w in reversed(self.screen().interactive):
                if (w.clickable or w.on_long_press) and w.contains(x, y):
                    if w.on_long_press is not None:
                        self.state.toast = None
                        self.state.top.data.pop("paste_menu", None)
                        w.on_long_press()
                        self.changed()
                        return
                    break
            self.tap(x, y)

    def swipe(self, x1: float, y1: float, x2: float, y2: float, duration_ms: float = 300) -> None:
        """``input swipe``. A swipe down from the status bar (or anywhere on the home screen, as the Pixel
        launcher does) opens the notification shade; a second swipe down expands Quick Settings; a swipe
        up closes them. A swipe up from the navigation bar goes home; other vertical swipes scroll."""
        with self.lock:
            st = self.state
            if not st.screen_on:
                return
            dx, dy = x2 - x1, y2 - y1
            if abs(dx) < 24 and abs(dy) < 24:
                (self.long_press if duration_ms >= 500 else self.tap)(x1, y1)
                return
            vertical = abs(dy) >= abs(dx)
            st.top.data.pop("paste_menu", None)
            bar = next((w for w in reversed(self.screen().interactive) if w.on_slide and w.contains(x1, y1)), None)
            if bar is not None and not vertical:      # a SeekBar dragged: its value follows the finger
                bar.on_slide(bar.track_fraction(x2))
            elif (st.overlay is None and vertical and dy > 200
                    and (y1 < apps.STATUS_H + 40 or (st.top.kind == "launcher" and y1 < apps.CONTENT_BOTTOM))):
                self.expand_notifications()
            elif st.overlay == "shade" and vertical and dy > 200:
                self.expand_settings()
            elif st.overlay in ("shade", "quick_settings") and vertical and dy < -200:
                self.collapse()
            elif st.overlay is None and y1 > apps.CONTENT_BOTTOM and dy < -200:
                self.home()
            elif vertical and st.overlay is None:
                st.top.scroll = max(0, st.top.scroll - int(dy))
            self.changed()

    def type_text(self, text: str) -> None:
        with self.lock:
            act = self.state.top
            act.data.pop("paste_menu", None)
            if self.state.overlay or act.focus is None or act.focus not in act.fields:
                return
            if act.data.pop("selected", None) == act.focus:   # typing over a selection replaces it
                act.fields[act.focus] = ""
            act.fields[act.focus] += text
            self.changed()

    def key(self, code: int) -> None:
        with self.lock:
            st = self.state
            if code in (26, 223, 224):
                st.screen_on = {26: not st.screen_on, 223: False, 224: True}[code]
            elif not st.screen_on:
                return
            elif code == 3:
                self.home()
            elif code in (4, 111):
                self.back()
            elif code == 187:
                self.show_recents()
            elif code == 83:
                self.expand_notifications()
            elif code in (24, 25):
                self.step_volume(code == 24)
            elif code in KEY_CHARS:
                self.type_text(KEY_CHARS[code])
            else:
                self._edit_key(code)
            st.toast = None
            self.changed()

    def _edit_key(self, code: int) -> None:
        act = self.state.top
        focus = act.focus if act.focus in act.fields else None
        keys = [k for k, _, _ in apps.FORMS.get(act.kind, ())]
        if focus is None:
            return
        if code == 67:
            act.fields[focus] = act.fields[focus][:-1]
        elif code == 279:
            self.paste()
        elif code in (277, 278):
            self.copy(act.fields[focus])
            if code == 277:
                act.fields[focus] = ""
        elif code == 66 and act.kind in apps.SUBMIT and focus == apps.SUBMIT[act.kind][0]:
            self.submit()
        elif code == 66 and any(k == focus and multi for k, _, multi in apps.FORMS[act.kind]):
            act.fields[focus] += "\n"
        elif code in (61, 66, 20):
            act.focus = keys[(keys.index(focus) + 1) % len(keys)]
        elif code == 19:
            act.focus = keys[(keys.index(focus) - 1) % len(keys)]

    def browse(self, text: str) -> None:
        """What Chrome's omnibox does with typed text: a URL is opened (https:// added when no scheme
        is given), anything else becomes a Google search."""
        text = text.strip()
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", text) or text.startswith(("about:", "chrome://")):
            url = text
        elif " " not in text and re.match(r"^[\w-]+(\.[\w-]+)+(:\d+)?(/.*)?$", text):
            url = "https://" + text
        else:
            url = "https://www.google.com/search?q=" + quote_plus(text)
        self.visit(url)

    def visit(self, url: str) -> None:
        with self.lock:
            act = self.state.top
            act.data["url"] = url
            act.fields["url"] = url
            act.focus = None
            self.state.visited_urls.append(url)
            self.changed()

    # ------------------------------------------------------------------ intents
    def start_intent(self, intent: Intent) -> str | None:
        """Resolve and start an activity; returns the started component, or None if nothing matches."""
        with self.lock:
            self.state.intents.append({**intent.__dict__, "categories": list(intent.categories),
                                       "extras": {k: (list(v) if isinstance(v, list) else v)
                                                  for k, v in intent.extras.items()}})
            opened = self._resolve(intent)
            self.changed()
            return self.state.top.component if opened else None

    def _resolve(self, it: Intent) -> bool:
        action, data, mime = it.action or "", it.data or "", (it.mime or "").lower()
        scheme = data.split(":", 1)[0].lower() if ":" in data else ""
        if it.component:
            return self._by_component(it)
        if action in ("android.settings.WIFI_SETTINGS", "android.settings.panel.action.WIFI",
                      "android.net.wifi.PICK_WIFI_NETWORK"):
            self.open("wifi")
            return True
        if action in ("android.settings.SETTINGS", "android.settings.WIRELESS_SETTINGS"):
            self.launch("com.android.settings")
            return True
        if action == "android.settings.DISPLAY_SETTINGS":
            self.open("display")
            return True
        if action in ("android.settings.SOUND_SETTINGS", "android.settings.ZEN_MODE_SETTINGS"):
            self.open("sound")
            return True
        if action == "android.intent.action.SET_ALARM":
            self._set_alarm(it.extras)
            return True
        if action == "android.intent.action.SET_TIMER":
            self._set_timer(it.extras)
            return True
        if action in ("android.intent.action.SHOW_ALARMS", "android.intent.action.SHOW_TIMERS"):
            self.open("clock", tab="alarm" if action.endswith("ALARMS") else "timer")
            return True
        if action in ("android.intent.action.SENDTO", "android.intent.action.VIEW") and scheme in ("sms", "smsto"):
            self._open_sms(it, data)
            return True
        if action == "android.intent.action.MAIN" and "android.intent.category.HOME" in it.categories:
            self.home()
            return True
        if action == "android.intent.action.VIEW" and scheme == "geo":
            self._open_map(data)
            return True
        if action == "android.intent.action.VIEW" and scheme in ("http", "https"):
            self.open("browser", url=data)
            self.visit(data)
            return True
        if (action in ("android.intent.action.SENDTO", "android.intent.action.SEND", "android.intent.action.VIEW")
                and (scheme == "mailto" or (action == "android.intent.action.SEND" and mime in ("message/rfc822", "text/plain")))):
            self._open_compose(it, data if scheme == "mailto" else "")
            return True
        if action == "android.intent.action.INSERT" and (
                mime in ("vnd.android.cursor.dir/contact", "vnd.android.cursor.dir/raw_contact",
                         "vnd.android.cursor.dir/person")
                or data.startswith(("content://com.android.contacts/contacts", "content://com.android.contacts/raw_contacts"))):
            self.open("contact_edit", name=_text(it.extras.get("name")), phone=_text(it.extras.get("phone")),
                      email=_text(it.extras.get("email")))
            return True
        if action in ("android.intent.action.INSERT", "android.intent.action.EDIT") and (
                mime in ("vnd.android.cursor.item/event", "vnd.android.cursor.dir/event")
                or data.startswith("content://com.android.calendar/events")):
            self._open_event(it)
            return True
        return False

    def _by_component(self, it: Intent) -> bool:
        package, _, cls = it.component.partition("/")
        if cls.startswith("."):
            cls = package + cls
        kind = apps.KIND_BY_COMPONENT.get((package, cls))
        app = apps.APP_BY_PACKAGE.get(package)
        if kind is None or app is None:
            return False
        if kind == app.kind:
            return self.launch(package)
        if kind == "compose":
            self._open_compose(it, it.data or "")
        elif kind == "event_edit":
            self._open_event(it)
        elif kind == "alarm_edit":
            self._set_alarm(it.extras)
        else:
            self.open(kind, **{k: _text(v) for k, v in it.extras.items()})
        return True

    def _open_map(self, data: str) -> None:
        rest = data.split(":", 1)[1]
        coords, _, query = rest.partition("?")
        q = parse_qs(query, keep_blank_values=True).get("q") if query else None
        label = q[0] if q else coords
        self.open("maps", query=label)
        self.search_map(label)

    def _open_compose(self, it: Intent, mailto: str) -> None:
        to, subject, body = [], "", ""
        if mailto:
            addr, _, query = mailto.split(":", 1)[1].partition("?")
            if addr:
                to.append(unquote(addr))
            params = parse_qs(query, keep_blank_values=True)
            subject = params.get("subject", [""])[0]
            body = params.get("body", [""])[0]
        extra_to = it.extras.get("android.intent.extra.EMAIL")
        if isinstance(extra_to, list):
            to.extend(str(x) for x in extra_to)
        elif isinstance(extra_to, str):
            to.append(extra_to)
        subject = _text(it.extras.get("android.intent.extra.SUBJECT", subject))
        body = _text(it.extras.get("android.intent.extra.TEXT", body))
        self.open("compose", to=", ".join(to), subject=subject, body=body)

    def _open_event(self, it: Intent) -> None:
        ex = it.extras
        begin = ex.get("beginTime")
        end = ex.get("endTime")
        self.new_event(begin_ms=int(begin) if isinstance(begin, int) else None,
                       end_ms=int(end) if isinstance(end, int) else None,
                       title=_text(ex.get("title")), location=_text(ex.get("eventLocation")),
                       description=_text(ex.get("description")), all_day=bool(ex.get("allDay", False)))

    def _set_alarm(self, ex: dict[str, Any]) -> None:
        """AlarmClock.ACTION_SET_ALARM: HOUR (0-23), MINUTES, MESSAGE (label), DAYS (Calendar.SUNDAY=1 ..
        SATURDAY=7), SKIP_UI. With SKIP_UI the alarm is set at once; else the editor opens filled in and
        Save sets it. Without an int HOUR (``getIntExtra``: a string extra does not count) the editor opens."""
        hour, minute = ex.get(ALARM_EXTRA + "HOUR"), ex.get(ALARM_EXTRA + "MINUTES", 0)
        label = _text(ex.get(ALARM_EXTRA + "MESSAGE"))
        raw_days = ex.get(ALARM_EXTRA + "DAYS")
        raw_days = [raw_days] if isinstance(raw_days, int) else raw_days if isinstance(raw_days, list) else []
        days = [CALENDAR_DAYS[d] for d in raw_days if d in CALENDAR_DAYS]
        if not isinstance(minute, int):
            minute = 0
        if not isinstance(hour, int) or isinstance(hour, bool):
            self.open("alarm_edit", hour="", minute="", label=label, days=days)
            return
        if not (0 <= hour <= 23 and 0 <= minute <= 59):
            self.open("clock", tab="alarm")
            self.toast_msg("Invalid alarm time")
            return
        if ex.get(ALARM_EXTRA + "SKIP_UI") is True:
            self.add_alarm(f"{hour:02d}:{minute:02d}", days, label)
            self.toast_msg(f"Alarm set for {apps.twelve_hour(f'{hour:02d}:{minute:02d}')}")
            return
        self.open("alarm_edit", hour=str(hour % 12 or 12), minute=f"{minute:02d}", label=label, pm=hour >= 12,
                  days=days)

    def _set_timer(self, ex: dict[str, Any]) -> None:
        """AlarmClock.ACTION_SET_TIMER: LENGTH (seconds, 1-86400), MESSAGE, SKIP_UI (start it at once; else the
        Timer tab opens filled in and Start starts it)."""
        length, label = ex.get(ALARM_EXTRA + "LENGTH"), _text(ex.get(ALARM_EXTRA + "MESSAGE"))
        if not isinstance(length, int) or isinstance(length, bool) or not 1 <= length <= 86_400:
            self.open("clock", tab="timer", timer_label=label)
            if length is not None:
                self.toast_msg("Invalid timer length")
            return
        if ex.get(ALARM_EXTRA + "SKIP_UI") is True:
            self.add_timer(length, label)
            self.toast_msg("Timer started")
            return
        h, rest = divmod(length, 3600)
        self.open("clock", tab="timer", hours=str(h) if h else "", minutes=str(rest // 60), seconds=str(rest % 60),
                  timer_label=label)

    def _open_sms(self, it: Intent, data: str) -> None:
        """``smsto:NUMBER`` / ``sms:NUMBER`` (and ``sms_body``): the conversation with that number, the text typed
        in and not sent. A contact's name is looked up as Messages' To field does; anything else opens a new chat
        with the address in To."""
        address, _, query = unquote(data.split(":", 1)[1]).partition("?")
        body = parse_qs(query, keep_blank_values=True).get("body", [""])[0] if query else ""
        body = _text(it.extras.get("sms_body", it.extras.get("android.intent.extra.TEXT", body)))
        address = re.split(r"[,;]", address)[0].strip()
        who = self.resolve_recipient(address) if address else None
        if who is None:
            self.open("message_new", to=address, text=body)
        else:
            self.open("message_thread", number=who[1], text=body)

    def force_stop(self, package: str) -> None:
        with self.lock:
            st = self.state
            st.stack[1:] = [a for a in st.stack[1:] if a.package != package]
            st.recents = [a for a in st.recents if a.package != package]
            self.changed()

    def clear_app(self, package: str) -> bool:
        """``pm clear``: forget an app's data (and stop it)."""
        with self.lock:
            data = {"com.android.contacts": ("contacts",), "com.android.calendar": ("events",),
                    "com.google.android.gm": ("outbox",), "com.mobileactions.notes": ("notes",),
                    "com.google.android.apps.maps": ("map_searches", "map_results"),
                    "com.android.chrome": ("visited_urls",), "com.google.android.deskclock": ("alarms", "timers"),
                    "com.google.android.apps.messaging": ("messages",)}
            if package not in apps.APP_BY_PACKAGE:
                return False
            for name in data.get(package, ()):
                getattr(self.state, name).clear()
            if package == "com.google.android.deskclock":
                self.state.stopwatch_running = False
            self.force_stop(package)
            return True


def _digits(number: str) -> str:
    return re.sub(r"\D", "", number)


def local_epoch_ms(date: str, clock: str, tz: tzinfo) -> int | None:
    """A form's Date (``YYYY-MM-DD``) and Time (``HH:MM``, or ``3:30 PM``) on the phone's clock -> epoch ms;
    None when either cannot be read."""
    try:
        day = datetime.strptime(date.strip(), "%Y-%m-%d")
    except ValueError:
        return None
    m = re.fullmatch(r"(\d{1,2})(?::(\d{2}))?\s*([ap]\.?m\.?)?", clock.strip().lower())
    if not m or (m.group(2) is None and m.group(3) is None):
        return None
    hour, minute = int(m.group(1)), int(m.group(2) or 0)
    if m.group(3):
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if m.group(3).startswith("p") else 0)
    if hour > 23 or minute > 59:
        return None
    return int(day.replace(hour=hour, minute=minute, tzinfo=tz).timestamp() * 1000)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


__all__ = ["VirtualPhone", "keycode", "normpath", "WIDTH", "HEIGHT"]
