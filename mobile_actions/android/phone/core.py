"""The virtual phone itself: state plus everything that changes it (intents, taps, keys, app actions).

Why one object with one lock: several adb streams (and the test process itself) reach the phone at
once; every mutation and every read of a screen happens under ``lock`` so a screenshot never mixes two
states. Shell text only ever reaches ``Shell`` (a parser); device commands are Python functions.
"""

from __future__ import annotations

import json
import threading
import time
from datetime import datetime, timezone, tzinfo
from typing import Any
import re
from urllib.parse import parse_qs, quote_plus, unquote

from mobile_actions.android.phone import apps, places
from mobile_actions.android.phone.shell import Shell, ShellResult
from mobile_actions.android.phone.state import COMMAND_LOG_LIMIT, HEIGHT, WIDTH, Intent, PhoneState

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
        try:
            from zoneinfo import ZoneInfo
            return ZoneInfo(self.state.timezone)
        except Exception:
            return timezone.utc

    def now(self) -> datetime:
        return datetime.now(self.tz())

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
            stamp = (self.version, int(time.time() // 60))
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

    def copy(self, text: str, message: str = "Copied") -> None:
        with self.lock:
            self.state.clipboard = text
            self.state.toast = message
            self.changed()

    def paste(self) -> None:
        self.type_text(self.state.clipboard)

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
            self.state.contacts.append({"name": f["name"], "phone": f["phone"], "email": f["email"]})
            self._finish(act, "contacts", "Contact saved")

    def save_event(self) -> None:
        with self.lock:
            act = self.state.top
            begin = act.data.get("begin_ms")
            if begin is None:
                begin = int(time.time() // 3600 + 1) * 3_600_000
            end = act.data.get("end_ms")
            if end is None:
                end = begin + 3_600_000
            self.state.events.append({
                "title": act.fields["title"], "location": act.fields["location"],
                "description": act.fields["description"], "begin_ms": int(begin), "end_ms": int(end),
                "all_day": bool(act.data.get("all_day", False)),
            })
            self._finish(act, "calendar", "Event saved")

    def send_email(self) -> None:
        with self.lock:
            act = self.state.top
            if not act.fields["to"].strip():
                self.toast_msg("Add at least one recipient.")
                return
            self.state.outbox.append({k: act.fields[k] for k in ("to", "subject", "body")}
                                     | {"cc": act.data.get("cc", ""), "bcc": act.data.get("bcc", "")})
            self._finish(act, "mail", "Message sent")

    def save_note(self) -> None:
        with self.lock:
            act = self.state.top
            index = act.data.get("index")
            if isinstance(index, int) and 0 <= index < len(self.state.notes):
                self.state.notes[index] = act.fields["text"]
            else:
                self.state.notes.append(act.fields["text"])
            self._finish(act, "notes", "Note saved")

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
            for w in reversed(widgets):
                if w.clickable and w.contains(x, y):
                    if w.on_tap is not None:
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
            if (st.overlay is None and vertical and dy > 200
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
        self.open("event_edit", title=_text(ex.get("title")), location=_text(ex.get("eventLocation")),
                  description=_text(ex.get("description")),
                  begin_ms=int(begin) if isinstance(begin, int) else None,
                  end_ms=int(end) if isinstance(end, int) else None,
                  all_day=bool(ex.get("allDay", False)))

    def force_stop(self, package: str) -> None:
        with self.lock:
            st = self.state
            st.stack[1:] = [a for a in st.stack[1:] if a.package != package]
            st.recents = [a for a in st.recents if a.package != package]
            self.changed()

    def clear_app(self, package: str) -> bool:
        """``pm clear``: forget an app's data (and stop it)."""
        with self.lock:
            data = {"com.android.contacts": "contacts", "com.android.calendar": "events",
                    "com.google.android.gm": "outbox", "com.mobileactions.notes": "notes",
                    "com.google.android.apps.maps": "map_searches", "com.android.chrome": "visited_urls"}
            if package not in apps.APP_BY_PACKAGE:
                return False
            if package in data:
                getattr(self.state, data[package]).clear()
            if package == "com.google.android.apps.maps":
                self.state.map_results.clear()
            self.force_stop(package)
            return True


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


__all__ = ["VirtualPhone", "keycode", "normpath", "WIDTH", "HEIGHT"]
