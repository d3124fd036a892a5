"""The text navigator's per-screen catalogue, pinned: `screen_catalogue` over 10,896 (screen, goal, actions done)
cases gives the catalogue it gave when the fixture was built, byte for byte (a digest of its tools as JSON).

The cases: every step of virtual-phone recordings (4 seeds, the main and the blind templates, 2 repeats each)
with its goal and each part of it (`GoalSteps`), random (screen, goal, done) triples from those, and
hand-written goals (switches, forms, Back, home, apps to open, final verbs, text to type, the hybrid bench's
requests) on screens of every kind. A change of these outputs is a change of what the navigator may do:
rebuild the fixture (`python -m tests.test_navigator_pins OUT`) only for a change meant to make one.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from mobile_actions.navigator.screen import Element, Screen
from mobile_actions.navigator.text import screen_catalogue

PINS = Path(__file__).parent / "fixtures" / "navigator" / "screen_catalogues.json.gz"


def _screen_json(s: Screen) -> dict[str, Any]:
    return {"package": s.package, "size": list(s.size),
            "elements": [[e.label, e.kind, list(e.bounds), e.clickable, e.long_clickable, e.checkable, e.checked,
                          e.scrollable, e.focused, e.text] for e in s.elements]}


def _screen(data: dict[str, Any]) -> Screen:
    return Screen(data["package"], tuple(Element(e[0], e[1], tuple(e[2]), *e[3:]) for e in data["elements"]),
                  tuple(data["size"]))


def _digest(catalogue: Any) -> str:
    text = json.dumps([t.to_openai() for t in catalogue], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def test_screen_catalogues_are_as_pinned():
    data = json.loads(gzip.decompress(PINS.read_bytes()))
    screens = [_screen(s) for s in data["screens"]]
    goals, dones = data["goals"], data["dones"]
    changed = []
    for si, gi, di, want in data["cases"]:
        got = _digest(screen_catalogue(screens[si], goals[gi] or None, dones[di]))
        if got != want:
            changed.append((screens[si].package, goals[gi], dones[di]))
    changed += [(screens[si].package, None, []) for si, want in data["bare"]
                if _digest(screen_catalogue(screens[si])) != want]
    changed += [(None, goals[gi], []) for gi, want in data["no_screen"]
                if _digest(screen_catalogue(None, goals[gi] or None)) != want]
    assert len(data["cases"]) > 8000 and not changed, f"{len(changed)} changed, e.g. {changed[:5]}"


def build_pins(out: Path) -> None:   # pragma: no cover - run by hand, see the module's docstring
    import random
    import tempfile

    from mobile_actions.datagen.navigator_demos import record_tasks
    from mobile_actions.navigator.text import GoalSteps, recording_examples
    from mobile_actions.recipes.bench_hybrid import TASKS

    examples = []
    with tempfile.TemporaryDirectory() as d:
        for seed in range(4):
            for templates in ("main", "blind"):
                record_tasks(Path(d) / f"{templates}-{seed}", seed=seed, repeats=2, scale=0.05, templates=templates)
                examples += recording_examples(str(Path(d) / f"{templates}-{seed}"))
    tables: dict[str, list] = {"screens": [], "goals": [], "dones": []}
    index: dict[str, dict[str, int]] = {k: {} for k in tables}

    def ix(table: str, value: Any) -> int:
        key = json.dumps(value, sort_keys=True)
        if key not in index[table]:
            index[table][key] = len(tables[table])
            tables[table].append(value)
        return index[table][key]

    cases = set()
    for ex in examples:
        si = ix("screens", _screen_json(ex.screen))
        for goal in {ex.goal, *GoalSteps(ex.goal).parts}:
            cases.add((si, ix("goals", goal), ix("dones", list(ex.done))))
    extra = [t["request"] for t in TASKS] + [
        "turn on wifi", "turn off the wi-fi", "switch the torch on", "enable flight mode", "disable do not disturb",
        "turn on mobile data and hotspot", "put battery saver on", "turn Bluetooth off then open Notes",
        "go back", "press back twice", "go back to the home screen", "go home", "open Notes", "launch the Chrome app",
        "please open Settings.", "switch to Contacts", "show me Calendar", "open Maps and search for cafes",
        "copy its name", "copy the address", "copy the address and paste it in Notes", "send it to a@b.co",
        "save the contact", "write a note saying buy milk", "google weather tomorrow", "search for pizza near me",
        "go to weather.example.com", "open https://example.org/path in chrome",
        "email bob@example.com about 'Lunch' saying \"see you at noon\"",
        "create an event called Standup at Central Library with the note bring slides",
        "add a contact with phone number 555-1234 and email x@y.io", "note down pay rent and email it to a@b.co",
        "jot down call mom then go to the home screen", "look up flights to Oslo on the web",
        "make a note to water the plants in the notes app", "send an email titled Hi, then go to the home screen",
        "", "do nothing", "copy", "send", "save", "Copy address", "turn on", "enable", "tap Save"]
    extra_ix = [ix("goals", g) for g in extra]
    synthetic = [ix("dones", d) for d in ([], ['tap "Send"'], ['tap "Copy"'], ['tap "Save"'], ['tap "Copy address"'],
                                          ['type_text "buy milk"'], ['tap "Subject"', 'type_text "Invoice"'],
                                          ["press_home"], ["swipe down", 'tap "Bluetooth"'])]
    rng = random.Random(0)
    n = [len(tables[k]) for k in ("screens", "goals", "dones")]
    for _ in range(3000):
        cases.add(tuple(rng.randrange(k) for k in n))
    kinds: dict[tuple, int] = {}
    for si, s in enumerate(tables["screens"]):   # one screen of each kind meets every hand-written goal
        kinds.setdefault((s["package"], tuple(sorted(e[0] for e in s["elements"]))), si)
    for gi in extra_ix:
        for si in rng.sample(sorted(kinds.values()), 30):
            cases.add((si, gi, rng.choice(synthetic)))
    screens = [_screen(s) for s in tables["screens"]]
    goals, dones = tables["goals"], tables["dones"]
    data = {**tables,
            "cases": [[si, gi, di, _digest(screen_catalogue(screens[si], goals[gi] or None, dones[di]))]
                      for si, gi, di in sorted(cases)],
            "bare": [[si, _digest(screen_catalogue(s))] for si, s in enumerate(screens)],
            "no_screen": [[gi, _digest(screen_catalogue(None, g or None))] for gi, g in enumerate(goals)]}
    out.write_bytes(gzip.compress(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode(), mtime=0))


if __name__ == "__main__":   # pragma: no cover
    build_pins(Path(sys.argv[1]))
