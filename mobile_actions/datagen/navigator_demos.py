"""Scripted demonstrations on the virtual phone, recorded as GUI Odyssey episodes (same JSON, PNG screenshots).

Each task template is a short script of *intentions* ("tap the widget labelled Save", "type the name") resolved
against the live screen, so coordinates come from the phone's own widget geometry. Before every action the
screen is captured; the action is stored in GUI Odyssey's raw form ([0, 1000] coordinates, ``KEY_*`` presses,
``TEXT``, ``SCROLL`` start/end points) and then performed on the phone. After the script, the phone's *state* is
checked (the contact exists, Wi-Fi is off …) so every recorded episode is a correct demonstration.
The same loader, evaluator and trainer then run on the output.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from mobile_actions.android.phone.apps import DAY_NAMES, FORMS, twelve_hour
from mobile_actions.android.phone.state import WEEKDAYS, days_text
from mobile_actions.errors import RecordError


NAMES = ["Ada Park", "Ben Ortiz", "Chloe Wang", "Dev Patel", "Emma Rossi", "Farid Haddad", "Grace Kim", "Hugo Laurent",
         "Ines Costa", "Jonas Berg", "Kira Sato", "Liam Walsh", "Maya Cohen", "Noor Aziz", "Omar Said", "Priya Nair"]
PLACES = ["Central Library", "City Museum", "Harbour Cafe", "Union Station", "Riverside Park", "Old Town Hall"]
NOTES = ["buy milk and eggs", "call the plumber", "book dentist", "water the plants", "pay rent", "pick up parcel",
         "renew passport", "gym at 6", "send the report", "plan the trip"]
SUBJECTS = ["Lunch tomorrow", "Project update", "Weekend plans", "Invoice", "Meeting notes", "Quick question"]
EVENTS = ["Team sync", "Dentist", "Yoga class", "Birthday dinner", "Flight to Oslo", "Book club"]


@dataclass
class Recorder:
    """Drives one phone through one episode, capturing (screenshot, raw action) pairs."""

    phone: Any
    out: Path
    episode_id: str
    scale: float = 0.25  # screenshots are stored downscaled (the model resizes anyway); coordinates are [0, 1000]
    steps: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        (self.out / "hierarchies").mkdir(parents=True, exist_ok=True)

    # -- geometry
    def _norm(self, x: float, y: float) -> list[int]:
        from mobile_actions.android.phone.state import HEIGHT, WIDTH

        return [round(1000 * x / WIDTH), round(1000 * y / HEIGHT)]

    def _find(self, label: str):
        for w in reversed(self.phone.screen().interactive):
            if w.clickable and label in (w.text, w.desc, w.hint):
                return w
        shown = sorted({w.text or w.desc or w.hint for w in self.phone.screen().interactive if w.clickable} - {""})
        raise RecordError(f"{self.episode_id}: no clickable {label!r} on {self.phone.current_component()} (have {shown})")

    # -- capture + act
    def _capture(self, action: str, info: Any, ps: Any = "") -> None:
        from mobile_actions.android.phone import render

        idx = len(self.steps)
        name = f"{self.episode_id}_{idx}.png"
        im = render.image(self.phone)
        if self.scale != 1.0:
            im = im.resize((round(im.width * self.scale), round(im.height * self.scale)))
        im.save(self.out / "screenshots" / name, optimize=True)
        # The accessibility tree beside the pixels: what the text navigator reads (`navigator.screen`).
        tree = f"{self.episode_id}_{idx}.xml"
        (self.out / "hierarchies" / tree).write_text(render.ui_xml(self.phone), encoding="utf-8")
        self.steps.append({"step": idx, "screenshot": name, "hierarchy": tree, "action": action, "info": info, "ps": ps})

    def tap(self, label: str, long: bool = False) -> None:
        w = self._find(label)
        x, y = w.center
        self._capture("LONG_PRESS" if long else "CLICK", [self._norm(x, y)])
        (self.phone.long_press if long else self.phone.tap)(x, y)

    def tap_slider(self, name: str, percent: int = 50) -> None:
        """A tap on the level ``percent`` of the slider ``name`` ("Brightness 30%"), at the centre of the element
        the text navigator reads there (`navigator.screen`), so a demonstration taps what a text navigator can name."""
        from mobile_actions.android.phone import render
        from mobile_actions.errors import ScreenError
        from mobile_actions.navigator.screen import parse_hierarchy

        try:
            x, y = parse_hierarchy(render.ui_xml(self.phone)).element(f"{name} {percent}%").center
        except ScreenError:
            raise RecordError(f"{self.episode_id}: no slider {name!r} on {self.phone.current_component()}") from None
        self._capture("CLICK", [self._norm(x, y)])
        self.phone.tap(x, y)

    def type(self, text: str) -> None:
        self._capture("TEXT", text)
        self.phone.type_text(text)

    def key(self, name: str) -> None:
        code = {"KEY_HOME": 3, "KEY_BACK": 4, "KEY_APPSELECT": 187}[name]
        self._capture("CLICK", name)
        self.phone.key(code)

    def swipe(self, x1: int, y1: int, x2: int, y2: int) -> None:
        start, end = self._norm(x1, y1), self._norm(x2, y2)
        mid = self._norm((x1 + x2) / 2, (y1 + y2) / 2)
        self._capture("SCROLL", [start, end], [start, mid, end])
        self.phone.swipe(x1, y1, x2, y2)

    def complete(self) -> None:
        self._capture("COMPLETE", "")

    def impossible(self) -> None:
        self._capture("INCOMPLETE", "")


@dataclass(frozen=True)
class Task:
    """One template: a category, the apps used, an instruction, a script and a check on the end state.

    ``setup`` puts the phone in the state the task starts from (Bluetooth on for "turn off Bluetooth").
    """

    template: str
    category: str
    apps: tuple[str, ...]
    instruction: str
    script: Callable[[Recorder], None]
    check: Callable[[dict[str, Any]], bool]
    setup: Callable[[Any], None] | None = None


def _open(r: Recorder, app: str) -> None:
    if r.phone.current_component().split("/")[0] != "com.android.launcher3":
        r.key("KEY_HOME")
    r.tap(app)


def _shade(r: Recorder, expanded: bool = False) -> None:
    r.swipe(540, 40, 540, 900)
    if expanded:
        r.swipe(540, 300, 540, 1400)


URLS = ["example.com", "wikipedia.org", "weather.com", "news.ycombinator.com", "python.org", "openstreetmap.org"]
QUERIES = ["pizza near me", "weather tomorrow", "how to boil an egg", "train times to Leeds", "best hiking boots"]
APP_NAMES = ["Contacts", "Calendar", "Maps", "Gmail", "Notes", "Settings", "Chrome"]
QS_EXTRA = {"Do Not Disturb": ("global", "zen_mode"), "Auto-rotate": ("system", "accelerometer_rotation"),
            "Battery Saver": ("global", "low_power")}
IMPOSSIBLE = ["take a selfie", "play some music", "call my mum", "turn on NFC", "record a voice memo",
              "check my step count", "order a taxi to the station", "pay the phone bill"]


def _note_texts(state: dict[str, Any]) -> list[str]:
    """The text of each note (the phone keeps notes as {title, text})."""
    return [n["text"] for n in state["notes"]]


def _phrase(rng: random.Random, *forms: str) -> str:
    """Templates are phrased several ways, as people ask (some capitalised, some not); a held-out
    template keeps all of its forms."""
    form = rng.choice(forms)
    return form[:1].upper() + form[1:] if rng.random() < 0.5 else form


def tasks_for(rng: random.Random) -> list[Task]:
    """One instance of every template, parameters and phrasing drawn from ``rng``."""
    name, other = rng.sample(NAMES, 2)
    number = f"555-{rng.randint(1000, 9999)}"
    note, note2 = rng.sample(NOTES, 2)
    place, place2 = rng.sample(PLACES, 2)
    subject = rng.choice(SUBJECTS)
    body = rng.choice(["see you at noon", "the files are attached", "thanks for yesterday", "running late"])
    event = rng.choice(EVENTS)
    email = other.lower().replace(" ", ".") + "@example.com"
    url, query, app = rng.choice(URLS), rng.choice(QUERIES), rng.choice(APP_NAMES)
    tile = rng.choice(["Flashlight", "Bluetooth", "Airplane mode"])
    flag = {"Flashlight": "torch", "Bluetooth": "bluetooth", "Airplane mode": "airplane"}[tile]
    off_tile = rng.choice(["Flashlight", "Bluetooth", "Airplane mode"])
    off_flag = {"Flashlight": "torch", "Bluetooth": "bluetooth", "Airplane mode": "airplane"}[off_tile]
    extra = rng.choice(sorted(QS_EXTRA))
    ns, key = QS_EXTRA[extra]
    two = rng.sample(["com.mobileactions.notes", "com.android.chrome", "com.android.contacts", "com.android.calendar"], 2)
    back_app = rng.choice(["Notes", "Chrome", "Contacts", "Calendar"])
    impossible = rng.choice(IMPOSSIBLE)
    low = tile.lower()

    def wifi_off(r: Recorder) -> None:
        _open(r, "Settings"); r.tap("Network & internet"); r.tap("Use Wi-Fi"); r.complete()

    def wifi_on(r: Recorder) -> None:
        _open(r, "Settings"); r.tap("Network & internet"); r.tap("Use Wi-Fi"); r.complete()

    def wifi_screen(r: Recorder) -> None:
        _open(r, "Settings"); r.tap("Network & internet"); r.complete()

    def toggle_tile(r: Recorder) -> None:
        _shade(r); r.tap(tile); r.complete()

    def tile_off(r: Recorder) -> None:
        _shade(r); r.tap(off_tile); r.complete()

    def internet_tile(r: Recorder) -> None:
        _shade(r); r.tap("Internet"); r.complete()

    def extra_tile(r: Recorder) -> None:
        _shade(r, expanded=True); r.tap(extra); r.complete()

    def add_contact(r: Recorder) -> None:
        _open(r, "Contacts"); r.tap("Create contact"); r.type(name); r.tap("Phone"); r.type(number); r.tap("Save"); r.complete()

    def add_contact_email(r: Recorder) -> None:
        _open(r, "Contacts"); r.tap("Create contact"); r.type(name); r.tap("Email"); r.type(email); r.tap("Save"); r.complete()

    def new_note(r: Recorder) -> None:
        _open(r, "Notes"); r.tap("New note"); r.type(note); r.tap("Save"); r.complete()

    def discard_note(r: Recorder) -> None:
        _open(r, "Notes"); r.tap("New note"); r.type(note); r.tap("Cancel"); r.complete()

    def send_mail(r: Recorder) -> None:
        _open(r, "Gmail"); r.tap("Compose"); r.type(email); r.tap("Subject"); r.type(subject); r.tap("Send"); r.complete()

    def mail_body(r: Recorder) -> None:
        _open(r, "Gmail"); r.tap("Compose"); r.type(email); r.tap("Subject"); r.type(subject)
        r.tap("Compose email"); r.type(body); r.tap("Send"); r.complete()

    def new_event(r: Recorder) -> None:
        _open(r, "Calendar"); r.tap("Create new event"); r.type(event); r.tap("Location"); r.type(place); r.tap("Save"); r.complete()

    def event_title(r: Recorder) -> None:
        _open(r, "Calendar"); r.tap("Create new event"); r.type(event); r.tap("Save"); r.complete()

    def note_then_mail(r: Recorder) -> None:
        _open(r, "Notes"); r.tap("New note"); r.type(note2); r.tap("Save")
        r.key("KEY_HOME"); r.tap("Gmail"); r.tap("Compose"); r.type(email); r.tap("Subject"); r.type(note2); r.tap("Send"); r.complete()

    def back_to_app(r: Recorder) -> None:
        _open(r, "Notes"); r.key("KEY_HOME"); r.tap("Chrome"); r.key("KEY_APPSELECT"); r.tap("Notes"); r.complete()

    def cancel_contact(r: Recorder) -> None:
        _open(r, "Contacts"); r.tap("Create contact"); r.type(name); r.key("KEY_BACK"); r.key("KEY_HOME"); r.complete()

    def open_app(r: Recorder) -> None:
        _open(r, app); r.complete()

    def go_home(r: Recorder) -> None:
        r.key("KEY_HOME"); r.complete()

    def go_back(r: Recorder) -> None:
        r.key("KEY_BACK"); r.complete()

    def clear_recents(r: Recorder) -> None:
        r.key("KEY_APPSELECT"); r.tap("Clear all"); r.complete()

    def switch_recent(r: Recorder) -> None:
        r.key("KEY_APPSELECT"); r.tap(back_app); r.complete()

    def browse(r: Recorder) -> None:
        _open(r, "Chrome"); r.tap("Search or type URL"); r.type(url); r.tap("Go"); r.complete()

    def web_search(r: Recorder) -> None:
        _open(r, "Chrome"); r.tap("Search or type URL"); r.type(query); r.tap("Go"); r.complete()

    def map_search(r: Recorder) -> None:
        _open(r, "Maps"); r.tap("Search here"); r.type(place); r.tap("Search"); r.complete()

    def copy_place(r: Recorder) -> None:
        _open(r, "Maps"); r.tap("Search here"); r.type(place2); r.tap("Search"); r.tap("Copy name"); r.complete()

    def copy_address(r: Recorder) -> None:
        _open(r, "Maps"); r.tap("Search here"); r.type(place2); r.tap("Search"); r.tap("Copy address"); r.complete()

    def directions(r: Recorder) -> None:
        _open(r, "Maps"); r.tap("Search here"); r.type(place); r.tap("Search"); r.tap("Directions"); r.complete()

    def address_to_note(r: Recorder) -> None:
        _open(r, "Maps"); r.tap("Search here"); r.type(place2); r.tap("Search"); r.tap("Copy address")
        r.key("KEY_HOME"); r.tap("Notes"); r.tap("New note"); r.tap("Paste"); r.tap("Save"); r.complete()

    def impossible_task(r: Recorder) -> None:
        r.impossible()

    def opened(*packages: str) -> Callable[[Any], None]:
        def setup(phone: Any) -> None:
            for package in packages:
                phone.launch(package)
        return setup

    def flag_on(name: str) -> Callable[[Any], None]:
        return lambda phone: phone.set_flag(name, True)

    def recents_of(*packages: str) -> Callable[[Any], None]:
        def setup(phone: Any) -> None:
            for package in packages:
                phone.launch(package)
                phone.home()
        return setup

    P = lambda *forms: _phrase(rng, *forms)  # noqa: E731
    tasks = [
        Task("wifi_off", "General_Tool", ("Settings",), P("turn off Wi-Fi in Settings", "switch Wi-Fi off", "disable wifi",
             "can you turn the wifi off"), wifi_off, lambda st: not st["wifi"]),
        Task("wifi_on", "General_Tool", ("Settings",), P("turn Wi-Fi back on in Settings", "switch on wifi", "enable Wi-Fi please"),
             wifi_on, lambda st: st["wifi"], setup=lambda phone: phone.set_wifi(False)),
        Task("wifi_screen", "General_Tool", ("Settings",), P("show me the Wi-Fi networks", "open the network settings",
             "go to Network & internet in Settings"), wifi_screen, lambda st: st["stack"][-1]["kind"] == "wifi"),
        Task("toggle_tile", "General_Tool", ("System UI",), P(f"turn on {low} from quick settings", f"switch {low} on",
             f"enable {low}", f"{low} on please", f"can you turn on {low}", f"turn on {tile}", f"switch on {tile}"),
             toggle_tile, lambda st: bool(st[flag])),
        Task("tile_off", "General_Tool", ("System UI",), P(f"turn off {off_tile.lower()}", f"switch {off_tile.lower()} off",
             f"disable {off_tile.lower()}", f"please turn {off_tile.lower()} off"), tile_off,
             lambda st: not st[off_flag], setup=flag_on(off_flag)),
        Task("internet_tile", "General_Tool", ("System UI",), P("turn off the internet tile", "switch wifi off from the shade",
             "use quick settings to turn off wi-fi"), internet_tile, lambda st: not st["wifi"]),
        Task("extra_tile", "General_Tool", ("System UI",), P(f"turn on {extra.lower()}", f"switch {extra.lower()} on",
             f"enable {extra} in quick settings"), extra_tile, lambda st: st["settings"][ns].get(key, "0") not in ("", "0")),
        Task("add_contact", "Information_Management", ("Contacts",), P(f"add a contact named {name} with phone {number}",
             f"save {name}, number {number}", f"new contact {name} {number}", f"put {name} in my contacts, {number}"),
             add_contact, lambda st: {"name": name, "phone": number, "email": ""} in st["contacts"]),
        Task("add_contact_email", "Information_Management", ("Contacts",), P(f"add {name} to contacts with email {email}",
             f"save a contact {name}, {email}", f"create contact {name} email {email}"), add_contact_email,
             lambda st: any(c["name"] == name and c["email"] == email for c in st["contacts"])),
        Task("new_note", "Information_Management", ("Notes",), P(f"write a note saying '{note}'", f"note: {note}",
             f"make a note to {note}", f"jot down {note}", f"add a note that says {note}"), new_note,
             lambda st: note in _note_texts(st)),
        Task("discard_note", "Information_Management", ("Notes",), P(f"start a note '{note}' but cancel it",
             f"begin writing {note} in Notes, then discard it"), discard_note, lambda st: not st["notes"]),
        Task("send_mail", "Social_Sharing", ("Gmail",), P(f"email {email} with the subject '{subject}'",
             f"send {email} a mail titled {subject}", f"write to {email}, subject {subject}"), send_mail,
             lambda st: any(m["to"] == email and m["subject"] == subject for m in st["outbox"])),
        Task("mail_body", "Social_Sharing", ("Gmail",), P(f"email {email} about {subject} saying {body}",
             f"send a mail to {email}, subject {subject}, body: {body}"), mail_body,
             lambda st: any(m["to"] == email and body in m.get("body", "") for m in st["outbox"])),
        Task("new_event", "Information_Management", ("Calendar",), P(f"create a calendar event '{event}' at {place}",
             f"add {event} at {place} to my calendar", f"new event {event}, location {place}"), new_event,
             lambda st: any(e["title"] == event and e["location"] == place for e in st["events"])),
        Task("event_title", "Information_Management", ("Calendar",), P(f"put {event} in my calendar",
             f"add an event called {event}", f"calendar: {event}"), event_title,
             lambda st: any(e["title"] == event for e in st["events"])),
        Task("note_then_mail", "Multi_Apps", ("Notes", "Gmail"), P(f"note down '{note2}' and email it to {email} as the subject",
             f"write {note2} in Notes, then mail it to {email}"), note_then_mail,
             lambda st: note2 in _note_texts(st) and any(m["subject"] == note2 for m in st["outbox"])),
        Task("back_to_app", "Multi_Apps", ("Notes", "Chrome"), "open Notes, then Chrome, then switch back to Notes from recent apps",
             back_to_app, lambda st: st["current"].startswith("com.mobileactions.notes")),
        Task("cancel_contact", "Information_Management", ("Contacts",), P(f"start a contact for {name} but discard it and go home",
             f"begin adding {name} to contacts, then back out to the home screen"), cancel_contact,
             lambda st: not st["contacts"] and st["screen"] == "launcher"),
        Task("open_app", "General_Tool", (app,), P(f"open {app}", f"launch the {app} app", f"go to {app}",
             f"start {app}", f"show me {app}"), open_app, lambda st: st["stack"][-1]["kind"] != "launcher"),
        Task("go_home", "General_Tool", ("Launcher",), P("go back to the home screen", "go home", "close this and show home",
             "take me to the home screen"), go_home, lambda st: st["screen"] == "launcher", setup=opened(two[0])),
        Task("go_back", "General_Tool", ("Launcher",), P("go back", "press back", "back out of this screen"),
             go_back, lambda st: st["screen"] == "launcher", setup=opened(two[0])),
        Task("clear_recents", "General_Tool", ("System UI",), P("clear all recent apps", "close all my apps",
             "clear the recents screen"), clear_recents, lambda st: not st["recents"], setup=recents_of(*two)),
        Task("switch_recent", "Multi_Apps", ("System UI",), P(f"switch to {back_app} from recent apps",
             f"go back to {back_app}", f"bring {back_app} back"), switch_recent,
             lambda st: st["current"].split("/")[0] == {"Notes": "com.mobileactions.notes", "Chrome": "com.android.chrome",
                                                       "Contacts": "com.android.contacts",
                                                       "Calendar": "com.android.calendar"}[back_app],
             setup=recents_of(*{"Notes": ["com.mobileactions.notes"], "Chrome": ["com.android.chrome"],
                                "Contacts": ["com.android.contacts"], "Calendar": ["com.android.calendar"]}[back_app],
                              "com.google.android.gm")),
        Task("browse", "Web_Shopping", ("Chrome",), P(f"open Chrome and go to {url}", f"visit {url}", f"browse to {url}",
             f"open {url} in the browser"), browse, lambda st: any(url in u for u in st["visited_urls"])),
        Task("web_search", "Web_Shopping", ("Chrome",), P(f"search for {query} in Chrome", f"google {query}",
             f"look up {query} on the web"), web_search, lambda st: bool(st["visited_urls"])),
        Task("map_search", "Multi_Apps", ("Maps",), P(f"find {place} in Maps", f"search Maps for {place}",
             f"where is {place}? look it up in maps"), map_search, lambda st: place in st["map_searches"]),
        Task("copy_place", "Multi_Apps", ("Maps",), P(f"search {place2} on the map and copy its name",
             f"copy the name of {place2} from Maps"), copy_place, lambda st: st["clipboard"] == place2),
        Task("copy_address", "Multi_Apps", ("Maps",), P(f"copy the address of {place2}",
             f"look up {place2} in Maps and copy the address"), copy_address, lambda st: bool(st["clipboard"])),
        Task("directions", "Multi_Apps", ("Maps",), P(f"get directions to {place}", f"how do I get to {place}? show directions"),
             directions, lambda st: place in st["map_searches"]),
        Task("address_to_note", "Multi_Apps", ("Maps", "Notes"), P(f"save the address of {place2} in a note",
             f"copy {place2}'s address from Maps into a new note"), address_to_note,
             lambda st: any(st["clipboard"] and st["clipboard"] in n for n in _note_texts(st))),
        Task("impossible", "General_Tool", ("Launcher",), P(impossible, f"please {impossible}", f"can you {impossible}"),
             impossible_task, lambda st: True),
    ]
    return (tasks + everyday_tasks_for(rng) + leave_alone_tasks_for(rng) + look_alike_tasks_for(rng)
            + saved_item_tasks_for(rng))


ALARM_LABELS = ["Gym", "Medicine", "Wake up", "Standup", "Walk the dog", "Pick up kids"]
MESSAGES = ["running late", "see you at noon", "call me back when you can", "happy birthday", "dinner is ready",
            "the keys are with Sam"]
NOTE_TITLES = ["Groceries", "Packing list", "Gift ideas", "Books to read", "Weekend", "Recipes"]
EVENT_DETAILS = ["bring slides", "room 4B", "parking is free", "dress code casual"]


def _day_list(days: list[str], plural: bool = True) -> str:
    """"Mondays and Thursdays", "Tuesday, Wednesday and Friday": repeat days as people say them."""
    names = [DAY_NAMES[WEEKDAYS.index(d)] + ("s" if plural else "") for d in days]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _given(contacts: tuple[tuple[str, str, str], ...] = (), notes: tuple[tuple[str, str], ...] = (),
           alarms: tuple[str, ...] = (), received: tuple[tuple[str, str], ...] = (),
           levels: dict[str, int] | None = None, dnd: bool | None = None) -> Callable[[Any], None]:
    """A setup: contacts (name, phone, email) and notes (title, text) put in the phone's lists as its apps keep
    them; alarms (HH:MM), received texts (number, text), slider levels and Do Not Disturb through its methods."""
    def setup(phone: Any) -> None:
        with phone.lock:
            phone.state.contacts.extend({"name": n, "phone": ph, "email": e} for n, ph, e in contacts)
            phone.state.notes.extend({"title": t, "text": x} for t, x in notes)
            phone.changed()
        for time24 in alarms:
            phone.add_alarm(time24)
        for number, text in received:
            phone.add_message(phone.thread_name(number), number, text, "received")
        for name, value in (levels or {}).items():
            phone.set_level(name, value)
        if dnd is not None:
            phone.set_dnd(dnd)
    return setup


def send_and_leave(r: Recorder) -> None:
    """Send, then Back to the conversation list: after Send the thread keeps the cursor in its reply field, and a
    navigator never finishes beside a focused field (the focused-field guard)."""
    r.tap("Send"); r.key("KEY_BACK")


def new_text(r: Recorder, to: str, body: str, contact: str = "") -> None:
    """Start chat, the recipient as the goal says it, then the saved contact among those offered below the To
    field (the whole name, not a look-alike), the text (picking a contact moves the focus there), Send."""
    r.tap("Start chat"); r.type(to)
    if contact:
        r.tap(contact)
    top = r.phone.state.top
    if top.focus != next(key for key, shown, _ in FORMS[top.kind] if shown == "Text message"):
        r.tap("Text message")
    r.type(body); send_and_leave(r)


def start_timer(r: Recorder, seconds: int) -> None:
    """The Clock's Timer tab, the length typed over its fields as the navigator's guards split it (`goals.
    split_duration`: "an hour and a half" is Hours 1, Minutes 30), Start (the Clock already open)."""
    from mobile_actions.navigator.goals import split_duration

    r.tap("Timer")
    for label, value in split_duration(seconds, TIMER_FIELDS).items():
        r.tap(label); r.type(value)
    r.tap("Start")


def sent(st: dict[str, Any], number: str, body: str) -> bool:
    """The phone has sent `body` to `number`."""
    return any(m["direction"] == "sent" and m["number"] == number and m["text"] == body for m in st["messages"])


def timed(st: dict[str, Any], minutes: int, seconds: int = 0) -> bool:
    """A timer of `minutes` (and `seconds`) is running."""
    return any(t["seconds"] == 60 * minutes + seconds and t["running"] for t in st["timers"])


def everyday_tasks_for(rng: random.Random) -> list[Task]:
    """The templates of the everyday apps (Clock, Messages, Display and Sound settings, notes with a title,
    contacts and events edited or deleted), drawn after `tasks_for`'s own so a seed keeps the first instance
    of those. A value the demonstration types is written as the goal says it (the navigator copies spans)."""
    P = lambda *forms: _phrase(rng, *forms)  # noqa: E731
    name, other = rng.sample(NAMES, 2)
    number, number2 = (f"555-{n}" for n in rng.sample(range(1000, 10000), 2))
    text, text2 = rng.sample(MESSAGES, 2)
    # who a text goes to as people write it: often the first name alone, which Messages' To field completes
    to_said = name.split()[0] if rng.random() < 0.5 else name
    to_said = to_said.lower() if rng.random() < 0.3 else to_said
    hour, minute, pm = rng.randint(1, 12), rng.choice(["00", "05", "15", "20", "30", "45"]), rng.random() < 0.4
    ampm = ("PM" if pm else "AM") if rng.random() < 0.7 else ("pm" if pm else "am")
    say_minute = minute != "00" or rng.random() < 0.5        # "7 AM" as often as "7:00 AM"
    if not pm and 5 <= hour <= 11 and rng.random() < 0.4:
        ampm = ""                                             # "an alarm for 6:30": a morning, the picker's AM kept
    when = (f"{hour}:{minute} {ampm}" if say_minute else f"{hour} {ampm}").strip()
    time24 = f"{hour % 12 + (12 if pm else 0):02d}:{minute}"
    label = rng.choice(ALARM_LABELS)
    chosen = sorted(rng.sample(WEEKDAYS, rng.randint(1, 3)), key=WEEKDAYS.index)
    old, old2 = (f"{h:02d}:{m}" for h, m in zip(rng.sample(range(5, 23), 2), rng.choices(["00", "15", "30", "45"], k=2)))
    old_shown = twelve_hour(old)
    minutes = rng.choice([1, 2, 3, 5, 10, 15, 20, 25, 30, 45])
    level = rng.choice(["media_volume", "ring_volume"])
    level_name = {"media_volume": "Media volume", "ring_volume": "Ring volume"}[level]
    # a level as people say it: a number with or without "%" / "percent", or "half"; from another level
    percent = rng.choice(range(0, 101, 10))
    start = rng.choice([v for v in (0, 10, 25, 50, 80, 100) if v != percent])
    said_level = rng.choice([f"{percent}%", f"{percent} percent", str(percent)] + (["half"] if percent == 50 else []))
    way = "up" if percent > start else "down"
    dnd_on = rng.random() < 0.5
    title, title2, title3 = rng.sample(NOTE_TITLES, 3)
    note, note2, note3 = rng.sample(NOTES, 3)
    event, details = rng.choice(EVENTS), rng.choice(EVENT_DETAILS)
    app = rng.choice(["Clock", "Messages", "Notes", "Calendar"])
    app_package = {"Clock": "com.google.android.deskclock", "Messages": "com.google.android.apps.messaging",
                   "Notes": "com.mobileactions.notes", "Calendar": "com.android.calendar"}[app]
    people = ((name, number, ""), (other, number2, ""))
    three_notes = ((title, note), (title2, note2), (title3, note3))[:rng.randint(2, 3)]
    weekdays = ",".join(WEEKDAYS[:5])

    def alarm_form(r: Recorder, days: tuple[str, ...] = (), label_text: str = "") -> None:
        """The alarm editor, from the Clock's Alarm tab: the hour (focused), the minute, a label, PM, days."""
        r.tap("Add alarm"); r.type(str(hour))
        if say_minute:
            r.tap("Minute"); r.type(minute)
        if label_text:                                   # the fields first, then the toggles (the guards' order)
            r.tap("Label"); r.type(label_text)
        if pm:
            r.tap("PM")
        for day in days:
            r.tap(DAY_NAMES[WEEKDAYS.index(day)])      # the chip's content-desc; its text is one letter
        r.tap("Save")

    def has_alarm(st: dict[str, Any], days: str = "", label_text: str = "") -> bool:
        return any(a["time"] == time24 and a["days"] == days and a["label"] == label_text and a["enabled"]
                   for a in st["alarms"])

    def alarm_at(r: Recorder) -> None:
        _open(r, "Clock"); alarm_form(r); r.complete()

    def alarm_weekdays(r: Recorder) -> None:
        _open(r, "Clock"); alarm_form(r, WEEKDAYS[:5]); r.complete()

    def alarm_days(r: Recorder) -> None:
        _open(r, "Clock"); alarm_form(r, tuple(chosen)); r.complete()

    def alarm_label(r: Recorder) -> None:
        _open(r, "Clock"); alarm_form(r, label_text=label); r.complete()

    def alarm_off(r: Recorder) -> None:
        _open(r, "Clock"); r.tap(f"{old_shown} alarm"); r.complete()

    def alarm_delete(r: Recorder) -> None:
        _open(r, "Clock"); r.tap(f"Delete {old_shown} alarm"); r.complete()

    def timer(r: Recorder) -> None:
        _open(r, "Clock"); start_timer(r, 60 * minutes); r.complete()

    def stopwatch(r: Recorder) -> None:
        _open(r, "Clock"); r.tap("Stopwatch"); r.tap("Start"); r.complete()

    def text_contact(r: Recorder) -> None:
        _open(r, "Messages"); new_text(r, to_said, text, name); r.complete()

    def text_number(r: Recorder) -> None:
        _open(r, "Messages"); new_text(r, number, text); r.complete()

    def reply_thread(r: Recorder) -> None:
        _open(r, "Messages"); r.tap(name); r.type(text2); send_and_leave(r); r.complete()

    def brightness(r: Recorder) -> None:
        _open(r, "Settings"); r.tap("Display"); r.tap_slider("Brightness", percent); r.complete()

    def brightness_tile(r: Recorder) -> None:
        _shade(r, expanded=True); r.tap_slider("Display brightness", percent); r.complete()

    def volume(r: Recorder) -> None:
        _open(r, "Settings"); r.tap("Sound & vibration"); r.tap_slider(level_name, percent); r.complete()

    def dnd_settings(r: Recorder) -> None:
        _open(r, "Settings"); r.tap("Sound & vibration"); r.tap("Do Not Disturb"); r.complete()

    def dnd_off(r: Recorder) -> None:
        _shade(r, expanded=True); r.tap("Do Not Disturb"); r.complete()

    def note_titled(r: Recorder) -> None:
        _open(r, "Notes"); r.tap("New note"); r.type(note); r.tap("Title"); r.type(title); r.tap("Save"); r.complete()

    def delete_note(r: Recorder, shown: str) -> None:
        r.tap(shown); r.tap("Delete"); r.tap("Delete")     # the note's Delete, then the dialog's

    def note_delete(r: Recorder) -> None:
        _open(r, "Notes"); delete_note(r, title2); r.complete()

    def notes_clear(r: Recorder) -> None:
        _open(r, "Notes")
        for shown, _ in three_notes:
            delete_note(r, shown)
        r.complete()

    def contact_phone(r: Recorder) -> None:
        _open(r, "Contacts"); r.tap(name); r.tap("Edit"); r.type(number); r.tap("Save"); r.complete()

    def contact_delete(r: Recorder) -> None:
        _open(r, "Contacts"); r.tap(other); r.tap("Delete"); r.tap("Delete"); r.complete()

    def event_details(r: Recorder) -> None:
        _open(r, "Calendar"); r.tap("Create new event"); r.type(event); r.tap("Description"); r.type(details)
        r.tap("Save"); r.complete()

    def dnd_then_app(r: Recorder) -> None:
        _shade(r, expanded=True); r.tap("Do Not Disturb"); r.key("KEY_HOME"); r.tap(app); r.complete()

    def alarm_then_text(r: Recorder) -> None:
        _open(r, "Clock"); alarm_form(r); r.key("KEY_HOME"); r.tap("Messages"); new_text(r, to_said, text, name)
        r.complete()

    def timer_then_dnd(r: Recorder) -> None:
        _open(r, "Clock"); start_timer(r, 60 * minutes)
        _shade(r, expanded=True); r.tap("Do Not Disturb"); r.complete()

    days_said = _day_list(chosen)
    mins = f"{minutes} minute" + ("s" if minutes > 1 else "")
    return [
        Task("alarm_at", "General_Tool", ("Clock",), P(f"set an alarm for {when}", f"wake me up at {when}",
             f"alarm at {when} please", f"create an alarm for {when}", f"I need an alarm at {when}"), alarm_at,
             lambda st: has_alarm(st)),
        Task("alarm_weekdays", "General_Tool", ("Clock",), P(f"set an alarm for {when} on weekdays",
             f"wake me up at {when} every weekday", f"alarm at {when} Monday to Friday",
             f"set a weekday alarm for {when}"), alarm_weekdays, lambda st: has_alarm(st, weekdays)),
        Task("alarm_days", "General_Tool", ("Clock",), P(f"set an alarm for {when} on {days_said}",
             f"wake me up at {when} every {_day_list(chosen, plural=False)}",
             f"alarm at {when} on {days_said}"), alarm_days, lambda st: has_alarm(st, days_text(chosen))),
        Task("alarm_label", "General_Tool", ("Clock",), P(f"set an alarm for {when} called {label}",
             f"set an alarm at {when} labelled {label}", f"alarm for {when} with the label {label}",
             f"add a {label} alarm at {when}"), alarm_label, lambda st: has_alarm(st, label_text=label)),
        Task("alarm_off", "General_Tool", ("Clock",), P(f"turn off the {old_shown} alarm",
             f"switch off my {old_shown} alarm", f"disable the {old_shown} alarm", f"turn my {old_shown} alarm off"),
             alarm_off, lambda st: any(a["time"] == old and not a["enabled"] for a in st["alarms"]),
             setup=_given(alarms=(old, old2))),
        Task("alarm_delete", "General_Tool", ("Clock",), P(f"delete the {old_shown} alarm",
             f"remove my {old_shown} alarm", f"get rid of the alarm at {old_shown}"), alarm_delete,
             lambda st: not any(a["time"] == old for a in st["alarms"]) and len(st["alarms"]) == 1,
             setup=_given(alarms=(old, old2))),
        Task("timer", "General_Tool", ("Clock",), P(f"set a timer for {mins}", f"start a {minutes} minute timer",
             f"timer for {mins} please", f"count down {mins}", f"set a {minutes} minute timer"), timer,
             lambda st: timed(st, minutes)),
        Task("stopwatch", "General_Tool", ("Clock",), P("start the stopwatch", "start a stopwatch",
             "time me with the stopwatch", "run the stopwatch"), stopwatch, lambda st: st["stopwatch_running"]),
        Task("text_contact", "Social_Sharing", ("Messages",), P(f"text {to_said} saying {text}",
             f"send {to_said} a message saying {text}", f"send a text to {to_said} that says {text}",
             f"message {to_said} saying {text}", f"tell {to_said} {text} by text", f"text {to_said} that {text}",
             f"text {to_said} {text}", f"msg {to_said} {text}", f"let {to_said} know {text} by text",
             f"send {to_said} a text: {text}"), text_contact,
             lambda st: sent(st, number, text), setup=_given(contacts=people)),
        Task("text_number", "Social_Sharing", ("Messages",), P(f"text {number} saying {text}",
             f"send an SMS to {number} saying {text}", f"send a text message to {number} that says {text}"),
             text_number, lambda st: sent(st, number, text)),
        Task("reply_thread", "Social_Sharing", ("Messages",), P(f"reply to {to_said} saying {text2}",
             f"answer {to_said}'s text saying {text2}", f"reply {text2} to {to_said}'s message",
             f"text {to_said} back {text2}", f"reply to {to_said}: {text2}"), reply_thread,
             lambda st: sent(st, number, text2), setup=_given(contacts=people, received=((number, text),))),
        Task("brightness", "General_Tool", ("Settings",), P(f"set the brightness to {said_level}",
             f"screen brightness to {said_level}", f"put the brightness at {said_level}",
             f"turn the brightness {way} to {said_level}", f"brightness {said_level} pls",
             f"set brightness to {said_level} in Settings"), brightness,
             lambda st: st["brightness"] == percent, setup=_given(levels={"brightness": start})),
        Task("brightness_tile", "General_Tool", ("System UI",), P(f"set brightness to {said_level} from quick settings",
             f"use quick settings to put the brightness at {said_level}",
             f"{said_level} brightness from the quick settings slider"),
             brightness_tile, lambda st: st["brightness"] == percent, setup=_given(levels={"brightness": start})),
        Task("volume", "General_Tool", ("Settings",), P(f"set the {level_name.lower()} to {said_level}",
             f"{level_name.lower()} to {said_level}", f"put the {level_name.lower()} at {said_level} in Settings",
             f"turn the {level_name.lower()} {way} to {said_level}",
             *([f"turn the volume {way} to {said_level}", f"volume {said_level}"] if level == "media_volume" else [])),
             volume, lambda st: st[level] == percent, setup=_given(levels={level: start})),
        Task("dnd_settings", "General_Tool", ("Settings",), P(
             f"turn {'on' if dnd_on else 'off'} Do Not Disturb in Settings",
             f"{'enable' if dnd_on else 'disable'} do not disturb in the sound settings",
             f"go to Sound & vibration and turn do not disturb {'on' if dnd_on else 'off'}"), dnd_settings,
             lambda st: st["dnd"] is dnd_on, setup=_given(dnd=not dnd_on)),
        Task("dnd_off", "General_Tool", ("System UI",), P("turn off do not disturb", "switch DND off",
             "disable do not disturb", "turn do not disturb off"), dnd_off, lambda st: not st["dnd"],
             setup=_given(dnd=True)),
        Task("note_titled", "Information_Management", ("Notes",), P(f"write a note titled {title}, saying {note}",
             f"new note called {title}, saying {note}", f"make a note with the title {title} that says {note}",
             f"jot down {note} in a note titled {title}"), note_titled,
             lambda st: {"title": title, "text": note} in st["notes"]),
        Task("note_delete", "Information_Management", ("Notes",), P(f"delete the {title2} note",
             f"remove my {title2} note", f"get rid of the {title2} note"), note_delete,
             lambda st: [n["title"] for n in st["notes"]] == [t for t, _ in three_notes if t != title2],
             setup=_given(notes=three_notes)),
        Task("notes_clear", "Information_Management", ("Notes",), P("delete all my notes", "clear all notes",
             "remove every note", "delete all notes in Notes"), notes_clear, lambda st: not st["notes"],
             setup=_given(notes=three_notes)),
        Task("contact_phone", "Information_Management", ("Contacts",), P(f"give {name} the phone number {number}",
             f"edit {name}'s contact: phone {number}", f"update {name}'s contact with the mobile number {number}"),
             contact_phone, lambda st: any(c["name"] == name and c["phone"] == number for c in st["contacts"]),
             setup=_given(contacts=((name, "", name.split()[0].lower() + "@example.com"), (other, number2, "")))),
        Task("contact_delete", "Information_Management", ("Contacts",), P(f"delete {other} from my contacts",
             f"remove the contact {other}", f"delete the contact {other}"), contact_delete,
             lambda st: [c["name"] for c in st["contacts"]] == [name], setup=_given(contacts=people)),
        Task("event_details", "Information_Management", ("Calendar",), P(
             f"add an event called {event}, 60 minutes long, with the description {details}",
             f"new event {event}, one hour, description: {details}",
             f"put {event} in my calendar for 60 minutes with the details {details}"), event_details,
             lambda st: any(e["title"] == event and e["description"] == details and e.get("duration_min") == 60
                            for e in st["events"])),
        Task("dnd_then_app", "Multi_Apps", ("System UI", app), P(f"turn on do not disturb, then open {app}",
             f"switch DND on and then open {app}", f"enable do not disturb, then launch {app}"), dnd_then_app,
             lambda st: st["dnd"] and st["current"].split("/")[0] == app_package),
        Task("alarm_then_text", "Multi_Apps", ("Clock", "Messages"), P(
             f"set an alarm for {when} and text {to_said} saying {text}",
             f"wake me at {when}, then message {to_said} saying {text}",
             f"set an alarm for {when} and text {to_said} that {text}",
             f"alarm at {when} then text {to_said} {text}"), alarm_then_text,
             lambda st: has_alarm(st) and sent(st, number, text), setup=_given(contacts=people)),
        Task("timer_then_dnd", "Multi_Apps", ("Clock", "System UI"), P(
             f"set a timer for {mins} and turn on do not disturb",
             f"start a {minutes} minute timer, then switch on do not disturb"), timer_then_dnd,
             lambda st: timed(st, minutes) and st["dnd"]),
    ]


OTHER_APPS = ["WhatsApp", "Telegram", "Signal", "Instagram", "Messenger", "Slack", "Discord"]


def leave_alone_tasks_for(rng: random.Random) -> list[Task]:
    """Goals the phone cannot carry out as asked, where the nearest thing it can do is wrong: a message by an app
    it does not have (an SMS is not a WhatsApp), an alarm, contact or note that is not there (another one is not
    it), an alarm already set (tapping it would switch it off). The demonstration looks where the thing would be
    and gives up, or finishes without a change; the check is that nothing changed. Drawn after the other
    templates, so a seed keeps their instances."""
    P = lambda *forms: _phrase(rng, *forms)  # noqa: E731
    name, other, absent = rng.sample(NAMES, 3)
    number, number2 = (f"555-{n}" for n in rng.sample(range(1000, 10000), 2))
    text, app = rng.choice(MESSAGES), rng.choice(OTHER_APPS)
    hours = rng.sample(range(5, 23), 3)
    old, old2, missing = (f"{h:02d}:{m}" for h, m in zip(hours, rng.choices(["00", "15", "30", "45"], k=3)))
    missing_shown = twelve_hour(missing)
    title, title2, title3, gone = rng.sample(NOTE_TITLES, 4)
    note, note2, note3 = rng.sample(NOTES, 3)
    people = ((name, number, ""), (other, number2, ""))
    notes = ((title, note), (title2, note2), (title3, note3))
    alarms = (old, old2)
    hour, minute = int(old[:2]), old[3:]
    when = f"{hour % 12 or 12}:{minute} {'PM' if hour >= 12 else 'AM'}"

    def give_up_at_home(r: Recorder) -> None:
        r.impossible()

    def look_then_give_up(app_name: str) -> Callable[[Recorder], None]:
        def script(r: Recorder) -> None:
            _open(r, app_name); r.impossible()
        return script

    def already_set(r: Recorder) -> None:
        _open(r, "Clock"); r.complete()

    nothing_sent = lambda st: not any(m["direction"] == "sent" for m in st["messages"])  # noqa: E731
    alarms_kept = lambda st: sorted((a["time"], a["enabled"]) for a in st["alarms"]) == [(t, True) for t in sorted(alarms)]  # noqa: E731
    return [
        Task("other_app_message", "Social_Sharing", ("Launcher",), P(f"send {name} a {app} saying {text}",
             f"message {name} on {app}: {text}", f"{app} {name} that {text}", f"tell {name} {text} on {app}",
             f"send a {app} message to {name} saying {text}"), give_up_at_home, nothing_sent,
             setup=_given(contacts=people)),
        Task("alarm_absent", "General_Tool", ("Clock",), P(f"delete the {missing_shown} alarm",
             f"turn off my {missing_shown} alarm", f"remove the alarm at {missing_shown}",
             f"switch off the {missing_shown} alarm"), look_then_give_up("Clock"), alarms_kept,
             setup=_given(alarms=alarms)),
        Task("alarm_already_set", "General_Tool", ("Clock",), P(f"set an alarm for {when}", f"wake me up at {when}",
             f"make sure there's an alarm at {when}"), already_set, alarms_kept, setup=_given(alarms=alarms)),
        Task("contact_absent", "Information_Management", ("Contacts",), P(f"delete {absent} from my contacts",
             f"remove the contact {absent}", f"change {absent}'s number to {number2}"), look_then_give_up("Contacts"),
             lambda st: [(c["name"], c["phone"]) for c in st["contacts"]] == [(n, ph) for n, ph, _ in people],
             setup=_given(contacts=people)),
        Task("note_absent", "Information_Management", ("Notes",), P(f"delete the {gone} note",
             f"remove my {gone} note", f"get rid of the note called {gone}"), look_then_give_up("Notes"),
             lambda st: [n["title"] for n in st["notes"]] == [t for t, _ in notes], setup=_given(notes=notes)),
    ]


def look_alike_tasks_for(rng: random.Random) -> list[Task]:
    """Changes to one item among look-alikes (contacts who share a first name, notes "Groceries" and "Groceries
    2", two events), a value already in a field typed over (long press, Select all), and the same changes asked
    of a look-alike the phone does not have, where the demonstration looks and gives up. Drawn after the other
    templates, so a seed keeps their instances."""
    from mobile_actions.android.phone.setup import apply_setup

    P = lambda *forms: _phrase(rng, *forms)  # noqa: E731
    firsts, lasts = zip(*(n.split() for n in rng.sample(NAMES, 4)))
    first = firsts[0]
    name, other, absent = (f"{first} {last}" for last in lasts[1:])
    said, absent_said = (n if rng.random() < 0.5 else n.lower() for n in (name, absent))
    old, old2, new = (f"555-{n}" for n in rng.sample(range(1000, 10000), 3))
    email = f"{first.lower()}.{lasts[1].lower()}@{rng.choice(['example.com', 'mail.com', 'work.org'])}"
    people = [(name, old, ""), (other, old2, "")]
    rng.shuffle(people)
    title, title3, gone = rng.sample(NOTE_TITLES, 3)
    item = rng.choice(["bananas", "olive oil", "batteries", "a phone charger", "rice", "coffee filters"])
    notes = [(title, rng.choice(NOTES)), (f"{title} 2", rng.choice(NOTES)), (title3, rng.choice(NOTES))]
    rng.shuffle(notes)
    event, event2, gone_event = rng.sample(EVENTS, 3)
    day, day2 = rng.sample(["2025-06-03", "2025-06-04", "2025-06-05", "2025-06-06"], 2)
    hour, hour2 = rng.sample(range(8, 18), 2)
    to_time = f"{rng.choice([h for h in range(8, 20) if h not in (hour, hour2)]):02d}:{rng.choice(['00', '15', '30', '45'])}"
    events = [{"title": event, "begin": f"{day}T{hour:02d}:00"}, {"title": event2, "begin": f"{day2}T{hour2:02d}:00"}]

    def with_contacts(phone: Any) -> None:
        apply_setup(phone, {"contacts": [{"name": n, "phone": p} for n, p, _ in people]})

    def with_notes(phone: Any) -> None:
        apply_setup(phone, {"notes": [{"title": t, "text": x} for t, x in notes]})

    def with_events(phone: Any) -> None:
        apply_setup(phone, {"events": events})

    def replace(r: Recorder, field_label: str, value: str) -> None:
        r.tap(field_label, long=True); r.tap("Select all"); r.type(value)

    def contact_number(r: Recorder) -> None:
        _open(r, "Contacts"); r.tap(name); r.tap("Edit"); replace(r, "Phone", new); r.tap("Save"); r.complete()

    def contact_email(r: Recorder) -> None:
        _open(r, "Contacts"); r.tap(name); r.tap("Edit")
        if r.phone.state.top.focus != "email":     # the form focuses its first empty field
            r.tap("Email")
        r.type(email); r.tap("Save"); r.complete()

    def event_time(r: Recorder) -> None:
        _open(r, "Calendar"); r.tap(event); r.tap("Edit"); replace(r, "Time", to_time); r.tap("Save"); r.complete()

    def note_add(r: Recorder) -> None:
        _open(r, "Notes"); r.tap(title)
        if r.phone.state.top.focus != "text":     # an opened note focuses its text
            r.tap("Note")
        r.type(item); r.tap("Save"); r.complete()

    def look_then_give_up(app_name: str) -> Callable[[Recorder], None]:
        def script(r: Recorder) -> None:
            _open(r, app_name); r.impossible()
        return script

    def contacts_as(st: dict[str, Any], changed: dict[str, tuple[str, str]]) -> bool:
        want = {n: changed.get(n, (p, "")) for n, p, _ in people}
        return {c["name"]: (c["phone"], c["email"]) for c in st["contacts"]} == want

    def notes_as(st: dict[str, Any], added: str = "") -> bool:
        want = [(t, x + item if t == title and added else x) for t, x in notes]
        return [(n["title"], n["text"]) for n in st["notes"]] == want

    def events_as(st: dict[str, Any], moved: bool) -> bool:
        want = [(e["title"], f"{e['begin'][:11]}{to_time}" if moved and e["title"] == event else e["begin"])
                for e in events]
        return [(e["title"], e["begin"]) for e in st["events"]] == want

    return [
        Task("contact_number_change", "Information_Management", ("Contacts",), P(
             f"change {said}'s number to {new}", f"update {said}'s phone number to {new}",
             f"can you change {said} number to {new}"), contact_number,
             lambda st: contacts_as(st, {name: (new, "")}), setup=with_contacts),
        Task("contact_email_add", "Information_Management", ("Contacts",), P(
             f"add {email} as {said}'s email", f"save {said}'s email {email}", f"put {email} on {said}'s contact"),
             contact_email, lambda st: contacts_as(st, {name: (old, email)}),
             setup=with_contacts),
        Task("event_time_change", "Information_Management", ("Calendar",), P(
             f"move {event} to {to_time}", f"reschedule {event.lower()} to {to_time}",
             f"change the time of {event} to {to_time}", f"push {event.lower()} to {to_time}"), event_time,
             lambda st: events_as(st, moved=True), setup=with_events),
        Task("note_add_named", "Information_Management", ("Notes",), P(
             f"add {item} to the {title.lower()} note", f"put {item} on my {title} note", f"add {item} to {title}"),
             note_add, lambda st: notes_as(st, added=item), setup=with_notes),
        Task("contact_look_alike_absent", "Information_Management", ("Contacts",), P(
             f"change {absent_said}'s number to {new}", f"delete {absent_said} from my contacts",
             f"update {absent_said}'s phone number to {new}"), look_then_give_up("Contacts"),
             lambda st: contacts_as(st, {}), setup=with_contacts),
        Task("note_look_alike_absent", "Information_Management", ("Notes",), P(
             f"add {item} to the {gone.lower()} note", f"delete my {gone} note", f"put {item} on the {gone} note"),
             look_then_give_up("Notes"), lambda st: notes_as(st), setup=with_notes),
        Task("event_absent", "Information_Management", ("Calendar",), P(
             f"move {gone_event} to {to_time}", f"cancel {gone_event.lower()}", f"reschedule {gone_event} to {to_time}"),
             look_then_give_up("Calendar"), lambda st: events_as(st, moved=False), setup=with_events),
    ]


# How people refer to what they saved, for `saved_item_tasks_for`: a few words that shorten or soften a request
# ("pls", "appt", "tmrw"). Data for the recorder's phrasings, not read by the toolkit.
CASUAL_OPENERS = ("", "", "pls ", "can you ", "hey ", "could u ")
CASUAL_CLOSERS = ("", "", " pls", " thx", " thanks", " asap")
EVENT_NICKNAMES = {"Team sync": ("team sync", "the sync"), "Dentist": ("dentist appt", "the dentist thing"),
                   "Yoga class": ("yoga", "yoga class"), "Birthday dinner": ("bday dinner", "the birthday dinner"),
                   "Flight to Oslo": ("oslo flight", "the flight"), "Book club": ("book club", "bookclub")}
NEW_EVENT_TITLES = ["Q4 review", "Sprint demo", "Lunch with Sam", "Parents evening", "Kickoff", "Physio"]
STREETS = ["Baker Street 221", "14 Rue Cler", "Calle Mayor 5", "Main St 40", "Via Roma 12", "Hauptstrasse 8"]


def _retype(r: Recorder, label: str, value: str, filled: bool = True) -> None:
    """Focus a form's field (a form focuses its first), then select what it holds and type over it."""
    top = r.phone.state.top
    if top.focus != next(key for key, shown, _ in FORMS[top.kind] if shown == label):
        r.tap(label)
    if filled:
        r.tap(label, long=True); r.tap("Select all")
    r.type(value)


def _casual(rng: random.Random, *forms: str) -> str:
    """One form, an opener before an imperative ("pls ..."; a form that starts with "~" states a fact and
    takes none: "~priya has a new number ..."), a closer after it, capitalised or not."""
    form = rng.choice(forms)
    opener = "" if form.startswith("~") else rng.choice(CASUAL_OPENERS)
    said = opener + form.lstrip("~") + rng.choice([c for c in CASUAL_CLOSERS if c.strip() != opener.strip()])
    return said if rng.random() < 0.7 else said[:1].upper() + said[1:]


def saved_item_tasks_for(rng: random.Random) -> list[Task]:
    """Changes to things the phone already holds (a contact's number or email, an event's time, title or
    place) and deletions of one among others, asked the way people ask: a first name, lower
    case, a nickname of the event ("the dentist thing"), the day it is on, "pls". Drawn after every other
    group, so a seed keeps their instances. The demonstration opens the item and changes it in place: a new
    item beside it would leave the old one."""
    from mobile_actions.android.phone.setup import apply_setup

    casual = lambda *forms: _casual(rng, *forms)  # noqa: E731

    three = rng.sample(NAMES, 3)
    name, other = three[0], three[1]
    first = name.split()[0]
    said = rng.choice([first.lower(), first, name.lower(), name])
    other_said = rng.choice([other.lower(), other, other.split()[0].lower()])
    they = rng.choice(["her", "his", "their"])
    phones = [f"+1 415 555 {n}" if rng.random() < 0.5 else f"555-{n}" for n in rng.sample(range(1000, 10000), 3)]
    new_number = rng.choice([f"{rng.randint(600, 999)}{rng.randint(1000000, 9999999)}",
                             f"555 {rng.randint(1000, 9999)}", f"07700 {rng.randint(100000, 999999)}"])
    emails = [f"{n.split()[0].lower()}.{n.split()[1].lower()}@{rng.choice(['gmail.com', 'yahoo.com', 'mail.com'])}"
              for n in three]
    new_email = f"{first.lower()}{rng.randint(1, 99)}@{rng.choice(['outlook.com', 'proton.me', 'work.org'])}"
    people = [(n, p, e if rng.random() < 0.7 or n == name else "") for n, p, e in zip(three, phones, emails)]

    event, event2, event3 = rng.sample(EVENTS, 3)
    nick = rng.choice(EVENT_NICKNAMES[event] + (event.lower(),))
    my_nick = nick.removeprefix("the ")      # "move my dentist appt", not "my the dentist thing"
    days = {"2025-06-03": ("tmrw", "tomorrow", "tuesday", "tue"), "2025-06-04": ("wednesday", "wed"),
            "2025-06-05": ("thursday", "thu"), "2025-06-06": ("friday", "fri")}
    day, day2 = rng.sample(sorted(days), 2)
    when = rng.choice(days[day])
    on_day = rng.choice([f" {when}", ""] if when in ("tmrw", "tomorrow") else [f" on {when}", f" {when}", ""])
    hour, hour2 = rng.sample(range(8, 18), 2)
    new_hour, new_minute = rng.choice([h for h in range(9, 20) if h not in (hour, hour2)]), rng.choice(["00", "30", "15"])
    to_time = rng.choice([f"{new_hour:02d}:{new_minute}",
                          f"{(new_hour - 1) % 12 + 1}:{new_minute}{'pm' if new_hour >= 12 else 'am'}",
                          f"{(new_hour - 1) % 12 + 1}{'pm' if new_hour >= 12 else 'am'}" if new_minute == "00"
                          else f"{(new_hour - 1) % 12 + 1}:{new_minute} {'pm' if new_hour >= 12 else 'am'}"])
    new_title, new_place = rng.choice(NEW_EVENT_TITLES), rng.choice(STREETS + PLACES)
    old_place = rng.choice(PLACES + [""])
    events = [{"title": event, "begin": f"{day}T{hour:02d}:00", "location": old_place},
              {"title": event2, "begin": f"{day2}T{hour2:02d}:00"},
              {"title": event3, "begin": f"{day}T{hour2:02d}:30"}][:rng.randint(2, 3)]
    title, title2 = rng.sample(NOTE_TITLES, 2)
    notes = [(title, rng.choice(NOTES)), (title2, rng.choice(NOTES))]

    def setup(phone: Any) -> None:
        apply_setup(phone, {"contacts": [{"name": n, "phone": p, "email": e} for n, p, e in people],
                            "events": events, "notes": [{"title": t, "text": x} for t, x in notes]})

    def contact(field: str, value: str) -> Callable[[Recorder], None]:
        def script(r: Recorder) -> None:
            _open(r, "Contacts"); r.tap(name); r.tap("Edit")
            _retype(r, field.capitalize(), value); r.tap("Save"); r.complete()
        return script

    def contact_delete(r: Recorder) -> None:
        _open(r, "Contacts"); r.tap(other); r.tap("Delete"); r.tap("Delete"); r.complete()

    def event_field(label: str, value: str, filled: bool) -> Callable[[Recorder], None]:
        def script(r: Recorder) -> None:
            _open(r, "Calendar"); r.tap(event); r.tap("Edit"); _retype(r, label, value, filled); r.tap("Save")
            r.complete()
        return script

    def event_delete(r: Recorder) -> None:
        _open(r, "Calendar"); r.tap(event); r.tap("Delete"); r.tap("Delete"); r.complete()

    def contacts_are(st: dict[str, Any], changed: dict[str, tuple[str, str]], gone: str = "") -> bool:
        want = {n: changed.get(n, (p, e)) for n, p, e in people if n != gone}
        return {c["name"]: (c["phone"], c["email"]) for c in st["contacts"]} == want

    def events_are(st: dict[str, Any], **changed: str) -> bool:
        want = sorted((e["title"], e["begin"], e.get("location", "")) for e in events)
        if changed.get("gone"):
            want = [w for w in want if w[0] != event]
        else:
            want = [(t, b, loc) if t != event else (changed.get("title", t),
                     f"{b[:11]}{changed['time']}" if "time" in changed else b, changed.get("location", loc))
                    for t, b, loc in want]
        return sorted((e["title"], e["begin"], e.get("location", "")) for e in st["events"]) == sorted(want)

    hh, mm = (int(x) for x in (f"{new_hour:02d}:{new_minute}").split(":"))
    moved = f"{hh:02d}:{mm:02d}"
    return [
        Task("contact_number_said", "Information_Management", ("Contacts",), casual(
             f"~{said} changed {they} number, its {new_number} now. update it", f"update {said}'s number to {new_number}",
             f"~{said} has a new number {new_number}", f"change {said} number to {new_number}"),
             contact("phone", new_number), lambda st: contacts_are(st, {name: (new_number, people[0][2])}), setup=setup),
        Task("contact_email_said", "Information_Management", ("Contacts",), casual(
             f"~{said} got a new email, update it to {new_email}", f"change {said}'s email to {new_email}",
             f"~{said}'s email is {new_email} now", f"replace {said}'s email with {new_email}"),
             contact("email", new_email), lambda st: contacts_are(st, {name: (people[0][1], new_email)}), setup=setup),
        Task("contact_delete_said", "Information_Management", ("Contacts",), casual(
             f"delete {other_said} from my contacts", f"remove {other_said} from contacts", f"get rid of {other_said}",
             f"delete the contact {other_said}"), contact_delete, lambda st: contacts_are(st, {}, gone=other),
             setup=setup),
        Task("event_time_said", "Information_Management", ("Calendar",), casual(
             f"move my {my_nick}{on_day} to {to_time}", f"push {nick}{on_day} to {to_time}",
             f"~{nick}{on_day} got moved to {to_time}", f"reschedule {nick} to {to_time}"),
             event_field("Time", to_time, filled=True), lambda st: events_are(st, time=moved), setup=setup),
        Task("event_rename_said", "Information_Management", ("Calendar",), casual(
             f"rename {nick}{on_day} to {new_title}", f"change the name of {nick} to {new_title}",
             f"call {nick}{on_day} {new_title} instead"),
             event_field("Title", new_title, filled=True), lambda st: events_are(st, title=new_title), setup=setup),
        Task("event_place_said", "Information_Management", ("Calendar",), casual(
             f"~{nick}{on_day} moved to {new_place}, fix the location", f"update the place of {nick}{on_day} to {new_place}",
             f"change {nick}'s location to {new_place}", f"~{nick} has moved to {new_place}, update it"),
             event_field("Location", new_place, filled=bool(old_place)),
             lambda st: events_are(st, location=new_place), setup=setup),
        Task("event_delete_said", "Information_Management", ("Calendar",), casual(
             f"cancel {nick}{on_day}, take it off the calendar", f"delete {nick}{on_day}",
             f"remove {nick} from my calendar", f"~{nick}{on_day} is off, delete it"),
             event_delete, lambda st: events_are(st, gone="yes"), setup=setup),
    ]


HOUR_WORDS = ("twelve", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven")


def clock_in_words(hour: int, minute: str) -> str:
    """A time of day as people say it ("quarter to eight", "half past six", "seven o'clock"), for 00, 15, 30 or
    45 minutes past `hour`; the digits for other minutes."""
    word = HOUR_WORDS[hour % 12]
    return {"00": f"{word} o'clock", "15": f"quarter past {word}", "30": f"half past {word}",
            "45": f"quarter to {HOUR_WORDS[(hour + 1) % 12]}"}.get(minute, f"{hour}:{minute}")


NOTE_ADDITIONS = ["is it ok to take ibuprofen with the new meds?", "ask about parking", "oat milk", "2x AA batteries",
                  "call the vet about Luna's shots", "passport photos"]
NEW_NOTE_TITLES = ["packing list", "trip stuff", "Work todo", "house ideas", "Passwords", "meal plan"]
NOTE_FACTS = ["cabin door code 4471, wifi pinecone88", "locker 112, combo 36-4-19", "gate code 2290",
              "parking level 3 spot C14", "bike lock 5521", "guest wifi sunflower77"]
LEVEL_REASONS = {"dim": ("screen is way too dim", "i cant see the screen", "its too dark"),
                 "bright": ("its way too bright", "screen is blinding me", "too bright at night")}


def edit_tasks_for(rng: random.Random) -> list[Task]:
    """Changes people ask of the Clock, Notes and settings in few words: an alarm named by its time or label
    moved to another time or other days, a new alarm with days and a label at once, a note renamed or picked
    by what it says and deleted, a note of facts after a colon, Do Not Disturb and the ringer in two words,
    brightness with the reason first. Among other alarms and notes, so the right one must be picked."""
    casual = lambda *forms: _casual(rng, *forms)  # noqa: E731
    times = rng.sample([f"{h:02d}:{m}" for h in range(5, 10) for m in ("00", "15", "30", "45")], 3)
    labels = rng.sample(ALARM_LABELS, 2)
    alarms = [{"time": times[0], "days": "Mon,Tue,Wed,Thu,Fri", "label": labels[0]},
              {"time": times[1], "days": "Sat,Sun", "label": ""},
              {"time": times[2], "days": "", "label": labels[1]}][:rng.randint(2, 3)]
    pick = rng.randrange(len(alarms))
    target = alarms[pick]
    shown = twelve_hour(target["time"])                      # "6:30 AM"
    time_said = rng.choice([shown.removesuffix(" AM"), shown, shown.lower().replace(" ", ""),
                            *([target["label"].lower() + " alarm"] if target["label"] else [])])
    # the alarm as the goal names it: by its time ("my 6:30 alarm") or by its label ("the gym alarm")
    named = f"the {time_said}" if time_said.endswith("alarm") else f"my {time_said} alarm"
    new_hour = rng.choice([h for h in range(5, 11)])
    new_minute = rng.choice([m for m in ("00", "10", "15", "20", "30", "40", "45", "50")
                             if f"{new_hour:02d}:{m}" not in [a["time"] for a in alarms]])
    new_said = rng.choice([f"{new_hour}:{new_minute}", f"{new_hour}:{new_minute}am", f"{new_hour}:{new_minute} am"])
    moved = f"{new_hour:02d}:{new_minute}"
    old_h, old_m = (int(x) for x in target["time"].split(":"))

    def setup_alarms(phone: Any) -> None:
        for a in alarms:
            phone.add_alarm(a["time"], [d for d in a["days"].split(",") if d], a["label"], True)

    def alarm_time(r: Recorder) -> None:
        _open(r, "Clock"); r.tap(shown)
        if new_hour != (old_h % 12 or 12):
            _retype(r, "Hour", str(new_hour))
        if f"{old_m:02d}" != new_minute:
            _retype(r, "Minute", new_minute)
        r.tap("Save"); r.complete()

    weekdays, weekend = ["Mon", "Tue", "Wed", "Thu", "Fri"], ["Sat", "Sun"]
    now_days = [d for d in target["days"].split(",") if d]
    want_days = weekdays if set(now_days) != set(weekdays) else weekdays + weekend
    days_said = "weekdays only" if want_days == weekdays else "every day"

    def alarm_days(r: Recorder) -> None:
        _open(r, "Clock"); r.tap(shown)
        for day in WEEKDAYS:
            if (day in now_days) != (day in want_days):
                r.tap(DAY_NAMES[WEEKDAYS.index(day)])
        r.tap("Save"); r.complete()

    def alarms_are(st: dict[str, Any], **changed: Any) -> bool:
        want = [dict(a, enabled=True) for a in alarms]
        want[pick] = {**want[pick], **changed}
        key = lambda a: (a["time"], a["days"], a["label"], a["enabled"])  # noqa: E731
        return sorted(map(key, st["alarms"])) == sorted(map(key, want))

    full_hour, full_minute = rng.randint(5, 9), rng.choice(["05", "10", "20", "40", "50"])
    full_label = rng.choice(["meds", "vitamins", "walk the dog", "school run", "yoga", "take out trash"])
    full_days = rng.choice([(weekdays, "weekdays", "Mon,Tue,Wed,Thu,Fri"), (["Mon", "Wed", "Fri"], "mon wed fri",
                            "Mon,Wed,Fri"), (weekend, "weekends", "Sat,Sun")])

    def alarm_full(r: Recorder) -> None:
        _open(r, "Clock"); r.tap("Add alarm"); r.type(str(full_hour)); r.tap("Minute"); r.type(full_minute)
        r.tap("Label"); r.type(full_label)       # the fields first, then the days (the guards' order)
        for day in full_days[0]:
            r.tap(DAY_NAMES[WEEKDAYS.index(day)])
        r.tap("Save"); r.complete()

    title, other_title, third = rng.sample(NOTE_TITLES, 3)
    notes = [(title, rng.choice(NOTES)), (other_title, rng.choice(NOTES)), (third, rng.choice(NOTES))][:rng.randint(2, 3)]
    old_title = rng.choice(["stuff", "misc", "untitled", "todo", title])
    notes[0] = (old_title, notes[0][1])
    new_title = rng.choice(NEW_NOTE_TITLES)
    secret = rng.choice(["old wifi password", "old door code", "old locker combo"])
    secret_text = {"old wifi password": "router pw: tigerlily2019", "old door code": "door 8812",
                   "old locker combo": "locker 44-12-9"}[secret]
    del_notes = [(other_title, secret_text)] + [n for n in notes if n[0] != other_title]

    def note_rename(r: Recorder) -> None:
        _open(r, "Notes"); r.tap(old_title); _retype(r, "Title", new_title); r.tap("Save"); r.complete()

    def note_delete_by_text(r: Recorder) -> None:
        _open(r, "Notes"); r.tap(other_title); r.tap("Delete"); r.tap("Delete"); r.complete()

    fact = rng.choice(NOTE_FACTS)

    def note_facts(r: Recorder) -> None:
        _open(r, "Notes"); r.tap("New note"); r.type(fact); r.tap("Save"); r.complete()

    def dnd_on(r: Recorder) -> None:
        _shade(r, expanded=True); r.tap("Do Not Disturb"); r.complete()

    def ringer_mute(r: Recorder) -> None:
        _open(r, "Settings"); r.tap("Sound & vibration"); r.tap_slider("Ring volume", 0); r.complete()

    dim = rng.random() < 0.5
    level = rng.choice([70, 80, 90, 100]) if dim else rng.choice([10, 20, 30])
    level_said = rng.choice([f"{level}", f"{level}%", f"{level} percent"])
    reason = rng.choice(LEVEL_REASONS["dim" if dim else "bright"])

    def brightness_reason(r: Recorder) -> None:
        _open(r, "Settings"); r.tap("Display"); r.tap_slider("Brightness", level); r.complete()

    aside = rng.choice(["", ", im in a meeting till 3", " for the next hour", ", in a movie", " til i land"])
    return [
        Task("alarm_time_said", "General_Tool", ("Clock",), casual(
             f"change {named} to {new_said}",
             f"move {named} to {new_said}",
             f"push {named} to {new_said}"),
             alarm_time, lambda st: alarms_are(st, time=moved), setup=setup_alarms),
        Task("alarm_days_said", "General_Tool", ("Clock",), casual(
             f"make {named} {days_said}",
             f"~{named} should ring {days_said}",
             f"set {named} to {days_said}"),
             alarm_days, lambda st: alarms_are(st, days=days_text(want_days)), setup=setup_alarms),
        Task("alarm_full_said", "General_Tool", ("Clock",), casual(
             f"set an alarm for {full_hour}:{full_minute} on {full_days[1]}, call it {full_label}",
             f"~{full_label} alarm {full_hour}:{full_minute} {full_days[1]}",
             f"~alarm at {full_hour}:{full_minute} {full_days[1]} labeled {full_label}",
             f"wake me {full_days[1]} at {full_hour}:{full_minute}, label it {full_label}"),
             alarm_full, lambda st: any(a["time"] == f"{full_hour:02d}:{full_minute}" and a["days"] == full_days[2]
                                        and a["label"] == full_label for a in st["alarms"])),
        Task("note_rename_said", "Information_Management", ("Notes",), casual(
             f"rename my note '{old_title}' to {new_title}", f"rename the {old_title} note to {new_title}",
             f"change the title of my {old_title} note to {new_title}"),
             note_rename, lambda st: sorted((n["title"], n["text"]) for n in st["notes"])
             == sorted((new_title if t == old_title else t, x) for t, x in notes), setup=_given(notes=tuple(notes))),
        Task("note_delete_described", "Information_Management", ("Notes",), casual(
             f"delete the note with the {secret}", f"get rid of the note that has my {secret}",
             f"remove the note with the {secret} in it"),
             note_delete_by_text, lambda st: sorted((n["title"], n["text"]) for n in st["notes"])
             == sorted(del_notes[1:]), setup=_given(notes=tuple(del_notes))),
        Task("note_facts", "Information_Management", ("Notes",), casual(
             f"make a note: {fact}", f"~note: {fact}", f"save a note: {fact}", f"jot this down: {fact}"),
             note_facts, lambda st: any(n["text"] == fact for n in st["notes"])),
        Task("dnd_terse", "General_Tool", ("System UI",), casual(
             f"~dnd on{aside}", f"~do not disturb on{aside}", f"turn on dnd{aside}", f"silence notifications{aside}"),
             dnd_on, lambda st: st["dnd"]),
        Task("ringer_mute", "General_Tool", ("Settings",), casual(
             "mute the ringer", "~ringer off", "turn the ringer all the way down", "~ring volume to 0",
             "silence my ringtone"), ringer_mute, lambda st: st["ring_volume"] == 0,
             setup=_given(levels={"ring_volume": rng.choice([40, 60, 80])})),
        Task("brightness_reason", "General_Tool", ("Settings",), casual(
             f"~{reason}, put brightness at {level_said}", f"~{reason}, brightness {level_said}",
             f"~{reason}. set brightness to {level_said}"), brightness_reason,
             lambda st: st["brightness"] == level, setup=_given(levels={"brightness": 25 if dim else 85})),
    ]


def blind_tasks_for(rng: random.Random) -> list[Task]:
    """Templates recorded only for evaluation (`navigator record --templates blind`): written after the
    navigator's screen guards, never trained on and never used to shape the guards, so they measure both
    on tasks nobody tuned for. Each combines screens the main templates visit in a new way."""
    name, other = rng.sample(NAMES, 2)
    number = f"555-{rng.randint(1000, 9999)}"
    email = other.lower().replace(" ", ".") + "@example.com"
    event, place, place2 = rng.choice(EVENTS), *rng.sample(PLACES, 2)
    desc = rng.choice(["bring the tickets", "second floor", "ask for Sam", "wear boots"])
    subject, note, query = rng.choice(SUBJECTS), rng.choice(NOTES), rng.choice(QUERIES)
    P = lambda *forms: _phrase(rng, *forms)   # noqa: E731

    def contact_full(r: Recorder) -> None:
        _open(r, "Contacts"); r.tap("Create contact"); r.type(name); r.tap("Phone"); r.type(number)
        r.tap("Email"); r.type(email); r.tap("Save"); r.complete()

    def event_details(r: Recorder) -> None:
        _open(r, "Calendar"); r.tap("Create new event"); r.type(event); r.tap("Location"); r.type(place)
        r.tap("Description"); r.type(desc); r.tap("Save"); r.complete()

    def mail_then_home(r: Recorder) -> None:
        _open(r, "Gmail"); r.tap("Compose"); r.type(email); r.tap("Subject"); r.type(subject); r.tap("Send")
        r.key("KEY_HOME"); r.complete()

    def note_then_search(r: Recorder) -> None:
        _open(r, "Notes"); r.tap("New note"); r.type(note); r.tap("Save")
        r.key("KEY_HOME"); r.tap("Chrome"); r.tap("Search or type URL"); r.type(query); r.tap("Go"); r.complete()

    def place_to_note(r: Recorder) -> None:
        _open(r, "Maps"); r.tap("Search here"); r.type(place2); r.tap("Search"); r.tap("Copy name")
        r.key("KEY_HOME"); r.tap("Notes"); r.tap("New note"); r.tap("Paste"); r.tap("Save"); r.complete()

    def contact_email(r: Recorder) -> None:
        _open(r, "Contacts"); r.tap("Create contact"); r.type(name); r.tap("Email"); r.type(email); r.tap("Save")
        r.complete()

    def event_at(r: Recorder) -> None:
        _open(r, "Calendar"); r.tap("Create new event"); r.type(event); r.tap("Location"); r.type(place)
        r.tap("Save"); r.complete()

    def search_then_home(r: Recorder) -> None:
        _open(r, "Chrome"); r.tap("Search or type URL"); r.type(query); r.tap("Go"); r.key("KEY_HOME"); r.complete()

    def tile_then_note(r: Recorder) -> None:
        _shade(r); r.tap("Bluetooth"); r.key("KEY_HOME"); r.tap("Notes"); r.tap("New note"); r.type(note)
        r.tap("Save"); r.complete()

    return [
        Task("contact_full", "Information_Management", ("Contacts",), P(
            f"add {name} to my contacts, phone {number}, email {email}", f"new contact {name}: number {number}, e-mail {email}",
            f"save {name} with the number {number} and the email {email}"), contact_full,
            lambda st: {"name": name, "phone": number, "email": email} in st["contacts"]),
        Task("event_details", "Information_Management", ("Calendar",), P(
            f"new calendar event {event}, location {place}, description {desc}",
            f"put {event} at {place} in my calendar with the description {desc}"), event_details,
            lambda st: any(e["title"] == event and e["location"] == place and e["description"] == desc
                           for e in st["events"])),
        Task("mail_then_home", "Social_Sharing", ("Gmail",), P(
            f"send {email} an email titled {subject}, then go to the home screen",
            f"email {email} with the subject {subject} and go home after"), mail_then_home,
            lambda st: any(m["to"] == email and m["subject"] == subject for m in st["outbox"]) and st["screen"] == "launcher"),
        Task("note_then_search", "Multi_Apps", ("Notes", "Chrome"), P(
            f"jot down {note} in Notes, then search for {query} in Chrome",
            f"write a note saying {note} and then google {query}"), note_then_search,
            lambda st: note in _note_texts(st) and bool(st["visited_urls"])),
        Task("place_to_note", "Multi_Apps", ("Maps", "Notes"), P(
            f"copy the name of {place2} from Maps and paste it into a new note",
            f"find {place2} in Maps, copy its name and save it in a note"), place_to_note,
            lambda st: any(place2 in n for n in _note_texts(st))),
        # a second set, recorded after the guards were corrected on the first
        Task("contact_email", "Information_Management", ("Contacts",), P(
            f"create a contact called {name}, e-mail {email}", f"store {name} in contacts with the email {email}"),
            contact_email, lambda st: any(c["name"] == name and c["email"] == email for c in st["contacts"])),
        Task("event_at", "Information_Management", ("Calendar",), P(
            f"schedule an event called {event} at {place}", f"calendar event {event}, location {place}"), event_at,
            lambda st: any(e["title"] == event and e["location"] == place for e in st["events"])),
        Task("search_then_home", "Web_Shopping", ("Chrome",), P(
            f"look up {query} on the web and then go home", f"search for {query} in Chrome, then go to the home screen"),
            search_then_home, lambda st: bool(st["visited_urls"]) and st["screen"] == "launcher"),
        Task("tile_then_note", "Multi_Apps", ("System UI", "Notes"), P(
            f"turn on Bluetooth, then write a note saying {note}", f"switch Bluetooth on and jot down {note} in Notes"),
            tile_then_note, lambda st: st["bluetooth"] and note in _note_texts(st)),
    ]


TEMPLATES = tuple(t.template for t in tasks_for(random.Random(0)))
BLIND_TEMPLATES = tuple(t.template for t in blind_tasks_for(random.Random(0)))
# what `navigator record --templates` records
# What people put in a text: news told in the past, plans with "I'll", questions, a "don't" -- the person's message,
# typed as they wrote it (the family below; `MESSAGES` stays as the main family's seeds recorded it)
SAID_MESSAGES = [
    "I don't need a ride tomorrow", "ill bring the cake", "I'll be there in 10", "did you get home ok?",
    "are you still at the office?", "I left the keys under the mat", "landed safe", "I already paid the gas bill",
    "dont wait up for me", "don't forget the tickets", "can you grab milk on the way?", "we missed the train",
    "I'm outside", "the meeting moved to 3", "running 15 min late", "I got the job!", "happy anniversary",
    "thanks for dinner last night", "what time is the match?", "is the pharmacy open today?",
    "I'll call you after work", "left my charger at yours", "don't come before 6", "she passed her driving test",
    "we're out of coffee", "picked up the kids", "can we meet at 7 tonight?", "the package arrived",
    "I won't make it tonight", "call me when you're free", "I'm at the gate", "bring an umbrella",
    "I fixed the sink", "where did you park?", "good luck today", "no need to cook, we ate"]
# what people ask someone else to remember ("remind dad to bring the charger"): the text is the errand
ERRANDS = ["bring the charger", "pick up milk on the way", "call the landlord", "feed the cat tonight",
           "take the bins out", "book the table for friday", "water the plants", "grab the tickets",
           "send me the photos", "bring the extension cord", "pay the electricity bill", "lock the back door"]
TEXT_CONTACTS = ["Marta Kowalska", "Ahmed Karimi", "Sofia Hernandez", "Olumide Adeyemi", "Mei Lin", "Lukas Meyer",
                 "Aisha Bello", "Tomás Ruiz", "Yuki Tanaka", "Rahul Mehta", "Chloe Martin", "Mum", "Dad", "Grandma"]
TIMER_THINGS = ["pasta", "eggs", "laundry", "lasagna", "tea", "nap", "pizza", "rice", "bread", "workout"]
TIMER_FIELDS = ("Hours", "Minutes", "Seconds")   # the Clock's Timer tab, as the virtual phone shows it
# lengths of time as people say them, in seconds (read back by `goals.duration_values`, a test checks each)
TIMER_LENGTHS = {30: ("30 seconds", "thirty secs"), 45: ("45 seconds",), 90: ("90 seconds", "a minute and a half"),
                 120: ("two minutes",), 300: ("five minutes", "5 min"), 420: ("seven mins",), 600: ("ten minutes",),
                 900: ("a quarter of an hour", "fifteen minutes", "quarter hour"), 1200: ("twenty minutes",),
                 1500: ("twenty-five minutes",), 1800: ("half an hour", "thirty minutes"),
                 2700: ("forty five minutes", "three quarters of an hour"), 3600: ("an hour", "one hour"),
                 4500: ("an hour and 15 minutes",), 5400: ("an hour and a half", "1.5 hours"),
                 7200: ("two hours", "2 hrs"), 150: ("2 min 30 sec",)}
AMOUNTS = ["$20", "$45", "500 rs", "£15", "€30", "the 60 bucks", "50 dollars"]
PAY_APPS = ["gpay", "venmo", "paypal", "cash app", "revolut", "google pay"]


def text_timer_tasks_for(rng: random.Random) -> list[Task]:
    """Texts the way people write them -- what they say told in the past, with "I'll", a question or a
    "don't", often with no "saying" before it, to a saved contact beside another or to a number in digits --
    and timers in few words or in words ("timer 10 min", "half an hour timer"); and calls and payments, which no
    app here makes (the demonstration gives up at once: a text is no call); alarms beside the ones the phone has
    (a new one is added, not one of them edited; one switched off, not deleted)."""
    casual = lambda *forms: _casual(rng, *forms)  # noqa: E731
    name, other = rng.sample(TEXT_CONTACTS, 2)
    digits = [f"{rng.randint(200, 989)}555{rng.randint(1000, 9999)}" for _ in range(3)]
    number, number2, typed_number = digits
    typed_number = rng.choice([typed_number, f"{typed_number[:3]}-{typed_number[3:6]}-{typed_number[6:]}"])
    people = ((name, number, ""), (other, number2, ""))
    to_said = name if " " not in name or rng.random() < 0.4 else name.split()[0]
    to_said = to_said.lower() if rng.random() < 0.4 else to_said
    said = rng.choice(SAID_MESSAGES)
    errand = rng.choice(ERRANDS)

    def text_said(r: Recorder) -> None:
        _open(r, "Messages"); new_text(r, to_said, said, name); r.complete()

    def text_errand(r: Recorder) -> None:
        _open(r, "Messages"); new_text(r, to_said, errand, name); r.complete()

    def text_digits(r: Recorder) -> None:
        _open(r, "Messages"); new_text(r, typed_number, said); r.complete()

    minutes = rng.choice([2, 3, 4, 5, 6, 8, 10, 12, 15, 18, 20, 25, 30, 35, 40, 45, 50])
    mins = rng.choice([f"{minutes} min", f"{minutes} mins", f"{minutes} minutes"])
    thing = rng.choice(TIMER_THINGS)

    def timer_said(r: Recorder) -> None:
        _open(r, "Clock"); start_timer(r, 60 * minutes); r.complete()

    length = rng.choice(sorted(TIMER_LENGTHS))
    spoken = rng.choice(TIMER_LENGTHS[length])

    def timer_in_words(r: Recorder) -> None:
        _open(r, "Clock"); start_timer(r, length); r.complete()

    # alarms beside the ones the phone has: a new one is added, not one of them edited; one switched off, kept
    kept = [(f"{h:02d}:{m}", lab) for h, m, lab in zip(rng.sample(range(5, 23), 3), rng.choices(["00", "15", "30", "45", "10"], k=3),
                                                     rng.sample(["school run", "swim", "meds", "", "", "gym"], 3))]
    new_hour, new_minute = rng.randint(5, 9), rng.choice(["00", "00", "15", "30", "45"])
    new_full = f"{new_hour}:{new_minute}"
    new_said = f"{new_hour}" if new_minute == "00" and rng.random() < 0.6 else new_full   # "at 7": on the hour
    morning = rng.choice(["", " tomorrow morning", " in the morning", " am"])
    why = rng.choice(["", ", got an early train", ", big day tomorrow", " for the gym"])
    tomorrow = rng.choice(["tmrw", "tmr", "2moro", "tomorrow"])
    off_time, off_label = kept[rng.randrange(3)]
    off_named = f"{off_label} alarm" if off_label and rng.random() < 0.5 else f"{twelve_hour(off_time)} alarm"

    def alarm_among(r: Recorder) -> None:
        _open(r, "Clock"); r.tap("Add alarm"); r.type(str(new_hour)); r.tap("Minute"); r.type(new_minute)
        r.tap("Save"); r.complete()

    def alarm_off_kept(r: Recorder) -> None:
        _open(r, "Clock"); r.tap(f"{twelve_hour(off_time)} alarm" + (f" {off_label}" if off_label else ""))
        r.complete()

    def setup_kept(phone: Any) -> None:
        for time24, lab in kept:
            phone.add_alarm(time24, label=lab)

    amount, pay_app = rng.choice(AMOUNTS), rng.choice(PAY_APPS)

    def give_up_at_home(r: Recorder) -> None:   # no dialer and no payment app: nothing here does it
        r.impossible()

    # a saved note added to ("add one more: ..."), and a new note's title and text said in one breath
    saved = [(t, x) for t, x in zip(rng.sample(NOTE_TITLES, 3), ("- milk", "1. ask about the knee", "socks"))]
    to_title, addition = saved[rng.randrange(3)][0], rng.choice(NOTE_ADDITIONS)
    new_title, new_body = rng.choice(NEW_NOTE_TITLES), rng.choice(NOTE_FACTS)

    def note_add_more(r: Recorder) -> None:
        _open(r, "Notes"); r.tap(to_title); r.type(addition); r.tap("Save"); r.complete()

    def note_title_text(r: Recorder) -> None:
        _open(r, "Notes"); r.tap("New note"); r.type(new_body); r.tap("Title"); r.type(new_title); r.tap("Save")
        r.complete()

    nothing_sent = lambda st: not any(m["direction"] == "sent" for m in st["messages"])  # noqa: E731
    return [
        Task("note_add_more", "Information_Management", ("Notes",), casual(
             f"In my note '{to_title}' please add one more: {addition}", f"add to my {to_title} note: {addition}",
             f"~{to_title.lower()} note - add {addition}", f"add {addition} to my {to_title.lower()} note pls"),
             note_add_more, lambda st: any(n["title"] == to_title and n["text"].endswith(addition) for n in st["notes"])
             and len(st["notes"]) == 3, setup=_given(notes=tuple(saved))),
        Task("note_title_text", "Information_Management", ("Notes",), casual(
             f"save a note called {new_title} with {new_body}", f"new note title '{new_title}' text {new_body}",
             f"note called {new_title}: {new_body}", f"make a note titled {new_title} - {new_body}"),
             note_title_text, lambda st: any(n["title"] == new_title and n["text"] == new_body for n in st["notes"])),
        Task("text_said", "Social_Sharing", ("Messages",), casual(
             f"text {to_said} {said}", f"msg {to_said} {said}", f"text {to_said} that {said}",
             f"tell {to_said} by text that {said}", f"let {to_said} know {said}", f"send {to_said} a text: {said}",
             f"message {to_said}: {said}", f"sms {to_said} {said}", f"text {to_said} saying {said}",
             f"tell {to_said} {said}", f"tell {to_said} that {said}", f"let {to_said} know that {said}",
             f"shoot {to_said} a text saying {said}", f"send {to_said} a text saying {said}",
             f"drop {to_said} a text: {said}"),
             text_said, lambda st: sent(st, number, said), setup=_given(contacts=people)),
        Task("text_errand", "Social_Sharing", ("Messages",), casual(
             f"remind {to_said} to {errand}", f"tell {to_said} to {errand}",
             f"ask {to_said} to {errand}"),
             text_errand, lambda st: sent(st, number, errand), setup=_given(contacts=people)),
        Task("text_digits", "Social_Sharing", ("Messages",), casual(
             f"text {typed_number} {said}", f"txt {typed_number} {said}", f"send a text to {typed_number}: {said}",
             f"sms {typed_number} saying {said}", f"send sms to {typed_number} : {said}",
             f"sms to {typed_number}: {said}", f"text to {typed_number} - {said}"),
             text_digits, lambda st: sent(st, typed_number, said), setup=_given(contacts=people)),
        Task("timer_said", "General_Tool", ("Clock",), casual(
             f"timer {mins}", f"~{mins} timer", f"set a timer for {mins}", f"{thing} timer {mins}",
             f"start a {minutes} minute timer for the {thing}", f"~{thing} in, timer {mins}",
             f"countdown {mins}"),
             timer_said, lambda st: timed(st, minutes)),
        Task("timer_in_words", "General_Tool", ("Clock",), casual(
             f"set a timer for {spoken}", f"timer {spoken}", f"{spoken} timer for the {thing}",
             f"start a timer, {spoken}", f"~{thing} needs {spoken}, set a timer", f"countdown {spoken}"),
             timer_in_words, lambda st: timed(st, 0, length)),
        Task("alarm_among", "General_Tool", ("Clock",), casual(
             f"alarm at {new_said}{morning}{why}", f"set an alarm for {new_full}{morning}{why}",
             f"wake me up at {new_said}{morning}{why}", f"~need an alarm {new_full}{morning}{why}",
             f"wake me up {tomorrow} at {new_full}", f"~alarm {tomorrow} {new_full}{why}",
             f"wake me at {clock_in_words(new_hour, new_minute)}{morning}{why}",
             f"set an alarm for {clock_in_words(new_hour, new_minute)} {tomorrow}",
             f"~need to be up at {new_full} {tomorrow}"),
             alarm_among, lambda st: len(st["alarms"]) == 4 and any(
                 a["time"] == f"{new_hour:02d}:{new_minute}" and a["enabled"] for a in st["alarms"]),
             setup=setup_kept),
        Task("alarm_off_kept", "General_Tool", ("Clock",), casual(
             f"turn off my {twelve_hour(off_time)} alarm, dont delete it", f"switch off the {twelve_hour(off_time)} "
             f"alarm but keep it", f"disable my {twelve_hour(off_time)} alarm, im on holiday this week",
             f"~no {twelve_hour(off_time)} alarm this week, just turn it off",
             f"switch off my {off_named}, dont delete it tho", f"turn off the {off_named}, keep it for later"),
             alarm_off_kept, lambda st: len(st["alarms"]) == 3 and any(
                 a["time"] == off_time and not a["enabled"] for a in st["alarms"]), setup=setup_kept),
        Task("call_or_pay", "Social_Sharing", ("Launcher",), casual(
             f"call {to_said}", f"ring {to_said} and tell them {said}", f"give {to_said} a call",
             f"video call {to_said}", f"facetime {to_said}", f"call {typed_number}",
             f"send {to_said} {amount} on {pay_app}", f"pay {to_said} {amount} for the {thing}",
             f"{pay_app} {to_said} {amount}", f"transfer {amount} to {to_said}"),
             give_up_at_home, nothing_sent, setup=_given(contacts=people)),
    ]


DETAIL_PLACES = ["St. Mary's Hospital", "the community center on Maple Avenue", "Room 4B", "Lincoln Elementary room 12",
                 "Nonna's on 5th", "Memorial Stadium", "the Harbour Cafe", "14 Clover Rd", "Jiffy Lube on Route 9",
                 "SFO terminal 2", "Bright Smile Dental", "the old library", "Gate B", "Kim's place on Elm St",
                 "the big conference room on the 3rd floor", "meeting room 4", "library room 204", "the Maple Room",
                 "the Halifax branch downtown", "Studio Mirra on Elm", "suite 210 of the Lakeview building"]
DETAIL_NOTES = ["bring the x-rays", "I'm bringing the fruit platter", "we're reading Piranesi", "ask about the flea meds",
                "the code is XK7Q2P", "wear something warm", "bring the Q2 numbers and the hiring plan", "parking is free",
                "dress code casual", "buy a card on the way", "gift already wrapped", "call Sam if late",
                "bring my insurance card", "I owe her 20 bucks", "leave the keys with reception",
                "finish chapters 10 to 12"]
EVENT_FORM_LABELS = {"location": "Location", "description": "Description", "duration": "Duration (minutes)"}


def entry_detail_tasks_for(rng: random.Random) -> list[Task]:
    """An event a tool call just made, and what the person also said of it that the tool took no argument
    for, as the runner hands it over (`hybrid.runner.Runner._finish_entry`: the lexicon's
    `navigator.made_entry_goal`): "open the event 'Dentist' and it's at Bright Smile Dental, note: bring the
    x-rays". People rarely name the field ("its at ...", "should take 45 min", "put in the notes that ..."), so
    the demonstration reads which field each detail fills; a length comes with its minutes after the details
    ("an hour and a half, ..., duration 90"), as the runner adds them. The notes come last, as people tell them. The
    event is opened, edited in place and saved; a field the screen guards read a value for is filled first and
    with that value (`navigator.guards.StepView.form_values`), as the guards will hold the navigator to it."""
    from mobile_actions import lexicon as lexicons
    from mobile_actions.android.phone import render
    from mobile_actions.android.phone.setup import apply_setup
    from mobile_actions.navigator.goals import quoted
    from mobile_actions.navigator.guards import StepView
    from mobile_actions.navigator.screen import parse_hierarchy

    title = rng.choice(EVENTS + NEW_EVENT_TITLES + ["Dr. Nakamura", "Rahul's graduation", "car service", "yoga w lena"])
    others = rng.sample([e for e in EVENTS + NEW_EVENT_TITLES if e != title], rng.randint(0, 2))
    day = rng.choice(["2025-06-03", "2025-06-04", "2025-06-05", "2025-06-06"])
    hours = rng.sample(range(8, 19), 3)
    events = [{"title": t, "begin": f"{day if i == 0 else rng.choice(['2025-06-03', '2025-06-07'])}T{h:02d}:00"}
              for i, (t, h) in enumerate(zip([title, *others], hours))]
    rng.shuffle(events)
    place, note = rng.choice(DETAIL_PLACES), rng.choice(DETAIL_NOTES)
    minutes = rng.choice([30, 45, 90, 120, 180, 20, 75])
    hours_said = {30: "half an hour", 90: "an hour and a half", 120: "2 hrs", 180: "3 hours"}.get(minutes)
    # how people say each detail, mostly without the field's name ("we're in ...", "stick that on the event")
    said = {"location": rng.choice([f"it's at {place}", f"its at {place}", f"at {place}", f"it's over at {place}",
                                    f"the venue is {place}", f"meeting at {place}", f"location {place}",
                                    f"in {place}", f"we're in {place}", f"it's in {place}", f"the address is {place}",
                                    f"@ {place}", f"over at {place}"]),
            "duration": rng.choice([f"{minutes} min", f"should take about {minutes} minutes", f"it takes {minutes} minutes",
                                    f"for {minutes} minutes", f"{minutes} mins", f"should run about {minutes} minutes",
                                    f"it'll be around {minutes} min"]
                                   + ([f"{hours_said}", f"takes {hours_said}", f"prob a {hours_said} thing",
                                       f"it'll run {hours_said}"] if hours_said else [])),
            "description": rng.choice([f"note: {note}", f"notes: {note}", f"put in the notes that {note}",
                                       f"note to self: {note}", f"description: {note}",
                                       f"{note}, put that in the notes",
                                       f"{note}, stick that on the event", f"remind me on the event that {note}",
                                       f"add a note to it: {note}",
                                       f"{note}, jot that down in the event too", f"in the notes put {note}"])}
    value = {"location": place, "description": note, "duration": str(minutes)}
    kinds = rng.choice([("location",), ("description",), ("duration",), ("location", "description"),
                        ("location", "duration"), ("duration", "location"), ("duration", "description"),
                        ("location", "duration", "description")])
    # the runner adds the length in minutes after the details, as the Duration field's word and its value
    fields = ", ".join(said[k] for k in kinds) + (f", duration {minutes}" if "duration" in kinds else "")
    goal = lexicons.load().navigator.made_entry_goal[0].format(entry="event", name=quoted(title), fields=fields)
    in_calendar = rng.random() < 0.5     # the tool's form just saved: the Calendar may still be showing

    def setup(phone: Any) -> None:
        apply_setup(phone, {"events": events})
        if in_calendar:
            phone.launch("com.android.calendar")

    def script(r: Recorder) -> None:
        _open(r, "Calendar"); r.tap(title); r.tap("Edit")
        view = StepView(goal, parse_hierarchy(render.ui_xml(r.phone).encode()))
        for k in sorted(kinds, key=lambda k: EVENT_FORM_LABELS[k] not in view.missing_values):   # guard-read first
            label = EVENT_FORM_LABELS[k]
            _retype(r, label, view.form_values.get(label, value[k]), filled=k == "duration")
        r.tap("Save"); r.complete()

    def check(st: dict[str, Any]) -> bool:
        made = [e for e in st["events"] if e["title"] == title]
        return len(made) == 1 and len(st["events"]) == len(events) and all(
            {"location": place in made[0].get("location", ""), "description": note in made[0].get("description", ""),
             "duration": made[0].get("duration_min") == minutes}[k] for k in kinds)

    return [Task("entry_details", "Information_Management", ("Calendar",), goal, script, check, setup=setup)]


FAMILIES: dict[str, Callable[[random.Random], list[Task]]] = {
    "main": tasks_for, "blind": blind_tasks_for, "look-alike": look_alike_tasks_for,
    "saved-items": saved_item_tasks_for, "edits": edit_tasks_for,
    "texts-timers": text_timer_tasks_for, "entry-details": entry_detail_tasks_for}
# the task split's test part: whole templates never seen in training (one per family of screens)
HELD_OUT_TEMPLATES = ("new_event", "back_to_app", "tile_off", "mail_body", "copy_place", "go_back",
                      "alarm_days", "reply_thread", "note_delete")


# Where an episode without a setup of its own may start besides the home screen: a navigator also runs
# after tool calls that left an app open, and must first leave it. The phone's apps (`phone.apps.APPS`) in
# a fixed order of their own: a seed's recordings (the model card's data) depend on it.
START_APPS = ("com.mobileactions.notes", "com.android.chrome", "com.android.contacts", "com.android.calendar",
              "com.google.android.gm", "com.google.android.apps.maps", "com.android.settings",
              "com.google.android.deskclock", "com.google.android.apps.messaging")


def record_episode(task: Task, out: Path, episode_id: str, scale: float = 0.25,
                   start: str | None = None) -> dict[str, Any]:
    """One demonstration; ``start`` is an app to open first (tasks with their own ``setup`` ignore it)."""
    from mobile_actions.android.phone.core import VirtualPhone
    from mobile_actions.android.phone.state import HEIGHT, WIDTH

    phone = VirtualPhone(serial="vphone-rec")
    if task.setup is not None:
        task.setup(phone)
    elif start is not None:
        phone.launch(start)
    rec = Recorder(phone, out, episode_id, scale)
    task.script(rec)
    if not task.check(phone.snapshot()):
        raise RecordError(f"{episode_id} ({task.template}): the script ran but the phone is not in the asked-for state")
    return {
        "episode_id": episode_id,
        "device_info": {"product": "Virtual Phone", "release_version": "14", "sdk_version": "34", "h": HEIGHT, "w": WIDTH,
                        "device_name": "mobile-actions virtual phone"},
        "task_info": {"category": task.category, "app": list(task.apps), "meta_task": task.template, "task": task.instruction,
                      "instruction": task.instruction},
        "step_length": len(rec.steps),
        "steps": rec.steps,
    }


def record_tasks(out: str | Path, seed: int = 0, repeats: int = 1, scale: float = 0.25, test_fraction: float = 0.2,
                 elsewhere: float = 0.35, templates: str = "main") -> dict[str, Any]:
    """Record ``repeats`` instances of every template under ``out`` (official layout) with random and task
    splits; a share ``elsewhere`` of the episodes starts inside an app rather than on the home screen.
    ``templates="look-alike"`` records only `look_alike_tasks_for`'s (more of them for a training mix).
    ``templates="blind"`` records the evaluation-only templates (`blind_tasks_for`), all in the task split's
    test part."""
    out = Path(out)
    for sub in ("annotations", "screenshots", "hierarchies", "splits"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    files: list[tuple[str, str]] = []
    steps = 0
    for n in range(repeats):
        for task in FAMILIES[templates](rng):
            eid = f"vp-{task.template}-{seed}-{n:04d}"
            start = rng.choice(START_APPS) if rng.random() < elsewhere else None
            ep = record_episode(task, out, eid, scale, start)
            (out / "annotations" / f"{eid}.json").write_text(json.dumps(ep, indent=1, ensure_ascii=False))
            files.append((f"{eid}.json", task.template))
            steps += ep["step_length"]
    names = [f for f, _ in files]
    shuffled = names[:]
    random.Random(seed + 1).shuffle(shuffled)
    k = max(1, round(len(shuffled) * test_fraction))
    splits = {
        "random": {"train": sorted(shuffled[k:]), "test": sorted(shuffled[:k])},
        "task": {"train": [f for f, t in files if t not in HELD_OUT_TEMPLATES + BLIND_TEMPLATES],
                 "test": [f for f, t in files if t in HELD_OUT_TEMPLATES + BLIND_TEMPLATES]},
    }
    for name, split in splits.items():
        (out / "splits" / f"{name}_split.json").write_text(json.dumps(split, indent=1))
    return {"out": str(out), "episodes": len(names), "steps": steps,
            "templates": len(FAMILIES[templates](random.Random(0))),
            "splits": {k: {p: len(v) for p, v in s.items()} for k, s in splits.items()}}
