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
        self.steps.append({"step": idx, "screenshot": name, "action": action, "info": info, "ps": ps})

    def tap(self, label: str, long: bool = False) -> None:
        w = self._find(label)
        x, y = w.center
        self._capture("LONG_PRESS" if long else "CLICK", [self._norm(x, y)])
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


@dataclass(frozen=True)
class Task:
    """One template: a category, the apps used, an instruction, a script and a check on the end state."""

    template: str
    category: str
    apps: tuple[str, ...]
    instruction: str
    script: Callable[[Recorder], None]
    check: Callable[[dict[str, Any]], bool]


def _open(r: Recorder, app: str) -> None:
    if r.phone.current_component().split("/")[0] != "com.android.launcher3":
        r.key("KEY_HOME")
    r.tap(app)


def tasks_for(rng: random.Random) -> list[Task]:
    """One instance of every template, parameters drawn from ``rng``."""
    name, other = rng.sample(NAMES, 2)
    number = f"555-{rng.randint(1000, 9999)}"
    note, note2 = rng.sample(NOTES, 2)
    place = rng.choice(PLACES)
    subject = rng.choice(SUBJECTS)
    event = rng.choice(EVENTS)
    email = other.lower().replace(" ", ".") + "@example.com"
    tile = rng.choice(["Flashlight", "Bluetooth", "Airplane mode"])
    flag = {"Flashlight": "torch", "Bluetooth": "bluetooth", "Airplane mode": "airplane"}[tile]

    def wifi_off(r: Recorder) -> None:
        _open(r, "Settings"); r.tap("Network & internet"); r.tap("Use Wi-Fi"); r.complete()

    def toggle_tile(r: Recorder) -> None:
        r.swipe(540, 40, 540, 900); r.tap(tile); r.complete()

    def add_contact(r: Recorder) -> None:
        _open(r, "Contacts"); r.tap("Create contact"); r.type(name); r.tap("Phone"); r.type(number); r.tap("Save"); r.complete()

    def new_note(r: Recorder) -> None:
        _open(r, "Notes"); r.tap("New note"); r.type(note); r.tap("Save"); r.complete()

    def send_mail(r: Recorder) -> None:
        _open(r, "Gmail"); r.tap("Compose"); r.type(email); r.tap("Subject"); r.type(subject); r.tap("Send"); r.complete()

    def new_event(r: Recorder) -> None:
        _open(r, "Calendar"); r.tap("Create new event"); r.type(event); r.tap("Location"); r.type(place); r.tap("Save"); r.complete()

    def note_then_mail(r: Recorder) -> None:
        _open(r, "Notes"); r.tap("New note"); r.type(note2); r.tap("Save")
        r.key("KEY_HOME"); r.tap("Gmail"); r.tap("Compose"); r.type(email); r.tap("Subject"); r.type(note2); r.tap("Send"); r.complete()

    def back_to_app(r: Recorder) -> None:
        _open(r, "Notes"); r.key("KEY_HOME"); r.tap("Chrome"); r.key("KEY_APPSELECT"); r.tap("Notes"); r.complete()

    def cancel_contact(r: Recorder) -> None:
        _open(r, "Contacts"); r.tap("Create contact"); r.type(name); r.key("KEY_BACK"); r.key("KEY_HOME"); r.complete()

    return [
        Task("wifi_off", "General_Tool", ("Settings",), "turn off Wi-Fi in Settings", wifi_off, lambda s: not s["wifi"]),
        Task("toggle_tile", "General_Tool", ("System UI",), f"turn on {tile.lower()} from quick settings", toggle_tile,
             lambda s: bool(s[flag])),
        Task("add_contact", "Information_Management", ("Contacts",), f"add a contact named {name} with phone {number}",
             add_contact, lambda s: {"name": name, "phone": number, "email": ""} in s["contacts"]),
        Task("new_note", "Information_Management", ("Notes",), f"write a note saying '{note}'", new_note,
             lambda s: note in s["notes"]),
        Task("send_mail", "Social_Sharing", ("Gmail",), f"email {email} with the subject '{subject}'", send_mail,
             lambda s: any(m["to"] == email and m["subject"] == subject for m in s["outbox"])),
        Task("new_event", "Information_Management", ("Calendar",), f"create a calendar event '{event}' at {place}", new_event,
             lambda s: any(e["title"] == event and e["location"] == place for e in s["events"])),
        Task("note_then_mail", "Multi_Apps", ("Notes", "Gmail"), f"note down '{note2}' and email it to {email} as the subject",
             note_then_mail, lambda s: note2 in s["notes"] and any(m["subject"] == note2 for m in s["outbox"])),
        Task("back_to_app", "Multi_Apps", ("Notes", "Chrome"), "open Notes, then Chrome, then switch back to Notes from recent apps",
             back_to_app, lambda s: s["current"].startswith("com.mobileactions.notes")),
        Task("cancel_contact", "Information_Management", ("Contacts",), f"start a contact for {name} but discard it and go home",
             cancel_contact, lambda s: not s["contacts"] and s["screen"] == "launcher"),
    ]


TEMPLATES = tuple(t.template for t in tasks_for(random.Random(0)))
HELD_OUT_TEMPLATES = ("new_event", "back_to_app")  # the task split's test part


def record_episode(task: Task, out: Path, episode_id: str, scale: float = 0.25) -> dict[str, Any]:
    from mobile_actions.android.phone.core import VirtualPhone
    from mobile_actions.android.phone.state import HEIGHT, WIDTH

    phone = VirtualPhone(serial="vphone-rec")
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


def record_tasks(out: str | Path, seed: int = 0, repeats: int = 1, scale: float = 0.25, test_fraction: float = 0.2) -> dict[str, Any]:
    """Record ``repeats`` instances of every template under ``out`` (official layout) with random and task splits."""
    out = Path(out)
    for sub in ("annotations", "screenshots", "splits"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    files: list[tuple[str, str]] = []
    steps = 0
    for n in range(repeats):
        for task in tasks_for(rng):
            eid = f"vp-{task.template}-{seed}-{n:04d}"
            ep = record_episode(task, out, eid, scale)
            (out / "annotations" / f"{eid}.json").write_text(json.dumps(ep, indent=1, ensure_ascii=False))
            files.append((f"{eid}.json", task.template))
            steps += ep["step_length"]
    names = [f for f, _ in files]
    shuffled = names[:]
    random.Random(seed + 1).shuffle(shuffled)
    k = max(1, round(len(shuffled) * test_fraction))
    splits = {
        "random": {"train": sorted(shuffled[k:]), "test": sorted(shuffled[:k])},
        "task": {"train": [f for f, t in files if t not in HELD_OUT_TEMPLATES], "test": [f for f, t in files if t in HELD_OUT_TEMPLATES]},
    }
    for name, split in splits.items():
        (out / "splits" / f"{name}_split.json").write_text(json.dumps(split, indent=1))
    return {"out": str(out), "episodes": len(names), "steps": steps, "templates": len(TEMPLATES),
            "splits": {k: {p: len(v) for p, v in s.items()} for k, s in splits.items()}}
