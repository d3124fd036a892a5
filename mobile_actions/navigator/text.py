"""The on-device text navigator's contract: GUI actions as function calls over a per-screen catalogue.

A GUI step is one more function-calling turn for the caller's own stack (wire format, grammar, runtime,
export, training recipe): the user turn holds the goal, the screen's elements (`screen.Screen.describe`) and
the actions taken so far; the tools are the GUI actions, and `tap`/`long_press` take a `target` whose JSON
Schema ``enum`` is the labels on *this* screen, so the grammar admits only elements that are there, and the
text to type is grounded in the goal (``x-grounding: span``). Each call converts to a GUI Odyssey command
(an element's centre on the 0-1000 grid → ``CLICK: (x, y)``), so AMS/SR are computed as for any navigator.

Rows built here (`step_row`) are Mobile Actions rows: `mobile-actions train` trains them like any other.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from mobile_actions.calls import ToolCall
from mobile_actions.catalog import Catalogue
from mobile_actions.decoding.coverage import VERBS
from mobile_actions.errors import ScreenError
from mobile_actions.navigator.actions import Action
from mobile_actions.navigator.screen import Screen

INSTRUCTION = ("You operate an Android phone's screen, one action at a time, to reach the user's goal. "
               "You are a model that can do function calling with the following functions\n")
DIRECTIONS = ("up", "down", "left", "right")
_KEYS = {"press_back": "PRESS_BACK", "press_home": "PRESS_HOME", "show_recent_apps": "PRESS_RECENT",
         "finish": "COMPLETE", "give_up": "IMPOSSIBLE"}
_KEY_CALLS = {v: k for k, v in _KEYS.items()}


def _tool(name: str, description: str, properties: dict | None = None, required: Sequence[str] = ()) -> dict:
    params: dict[str, Any] = {"type": "OBJECT", "properties": properties or {}}
    if required:
        params["required"] = list(required)
    return {"function": {"name": name, "description": description, "parameters": params}}


# A goal that sets a switch ("turn on Bluetooth", "turn airplane mode off", "disable NFC"). Whether a switch
# on the screen is already in the asked state is read off the hierarchy by the toolkit, not guessed by the
# 270M model, which otherwise says `finish` next to an "off" tile or taps a tile it has just turned on.
_VERBS = r"turn|switch|put|flip|enable|activate|disable|deactivate|open|go|tap|then"
_THINGS = rf"(?:(?!\b(?:{_VERBS})\b)[^.;!?])*"   # up to the next verb or the end of the sentence
_SWITCH_GOAL = re.compile(
    rf"\b(?:(?:turn|switch|put|flip)\s+(?P<s1>on|off)\b(?P<t1>{_THINGS})"
    rf"|(?:turn|switch|put|flip)\s+(?P<t2>{_THINGS}?)\s+(?P<s2>on|off)\b"
    rf"|(?P<s3>enable|activate|disable|deactivate)\b(?P<t3>{_THINGS}))", re.I)
# Other names people use for a switch's label (the label, lower case -> what users call it)
SWITCH_ALIASES = {"internet": ("internet", "wi-fi", "wifi", "wireless"), "wi-fi": ("wi-fi", "wifi", "wireless"),
                  "flashlight": ("flashlight", "torch", "flash light"),
                  "airplane mode": ("airplane mode", "aeroplane mode", "flight mode", "plane mode"),
                  "do not disturb": ("do not disturb", "dnd"), "mobile data": ("mobile data", "cellular data"),
                  "hotspot": ("hotspot", "tethering"), "battery saver": ("battery saver", "power saving")}


def switch_states(goal: str, screen: Screen) -> dict[str, bool]:
    """The state the goal asks for, per checkable element of `screen` it names: {"Airplane mode": True}."""
    asked: list[tuple[str, bool]] = []
    for m in _SWITCH_GOAL.finditer(goal):
        state = (m["s1"] or m["s2"] or m["s3"]).lower() in ("on", "enable", "activate")
        asked.append((m["t1"] or m["t2"] or m["t3"] or "", state))
    out: dict[str, bool] = {}
    for e in screen.elements:
        if not e.checkable:
            continue
        names = SWITCH_ALIASES.get(e.label.lower(), (e.label.lower(),))
        for things, state in asked:
            if any(re.search(rf"(?<!\w){re.escape(n)}(?!\w)", things, re.I) for n in names):
                out[e.label] = state
    return out


# A form the goal fills: each field gets the words the goal gives it after the field's cue ("about Invoice" ->
# Subject, "saying running late" -> the body, "location Central Library" -> Location); "To" gets the first
# email address written (an "Email" field too). A 270M navigator otherwise saves after the first field or types "Invoice saying
# running late" into Subject. Field labels are what Android's mail, calendar and contacts forms show.
FIELD_CUES: dict[str, tuple[str, ...]] = {
    "subject": ("with the subject", "subject", "about", "titled", "headed", "regarding"),
    "compose email": ("saying", "that says", "body", "with the message"),
    "body": ("saying", "that says", "body", "with the message"),
    "title": ("called", "titled", "named", "event"),
    "location": ("location", "venue", "at"),
    "description": ("description", "with the note", "details", "notes"),
    "phone": ("phone number", "number", "phone", "mobile", "tel"),
    "note": ("saying", "that says", "note down", "jot down", "write down", "make a note to", "note"),
    "search or type url": ("search for", "look up", "google", "search"),
}
# A web address in a goal ("go to weather.example.com"): what a browser's address field takes first.
_URL = re.compile(r"(?<![\w@.-])(?:https?://)?[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}(?:/[^\s,;]*)?(?![\w@-])", re.I)
_WEB = re.compile(r"\b(?:chrome|browser|web|google|online)\b", re.I)
# Where a value ends besides the next field's cue: a comma, the sentence's end, the place it is said to go,
# or "and"/"then" before another request's verb ("note down pay rent and email it to ...").
_VALUE_STOPS = ["to my", "in my", "on my", "to the calendar", "in the calendar", "in chrome", "on the web",
                "in the browser", "on google", "in notes", "in the notes app", "in a note", "into a note"]
ADDRESS_FIELDS = ("to", "email")    # fields that take the first email address the goal writes
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
# Verbs whose button ends a task ("... and copy its name": the Copy button, "send", "save").
FINAL_VERBS = frozenset({"copy", "send", "save"})
SILENT_VERBS = frozenset({"copy"})   # their button changes nothing on the screen (`last_step_done`)
# A goal that ends on the home screen ("... then go to the home screen"): a 270M navigator says `finish` in
# the app it was in. Any launcher package counts as home.
_HOME_GOAL = re.compile(r"\bhome\b", re.I)
# A step that opens an app ("open Notes", "launch the Chrome app", "go to Settings"; the open_app template's
# phrasings): on the home screen its icon is the step. Given "open Notes, then Chrome, ...", a 270M navigator
# tapped Chrome first.
_OPEN_GOAL = re.compile(r"^\s*(?:please\s+)?(?:open|launch|start|go to|show me|switch to)\s+(?:the\s+)?(.+?)"
                        r"(?:\s+app)?\s*[.!]?\s*$", re.I)
# A goal whose action is the Back key ("go back", "back out of this screen"), not a way home.
_BACK_GOAL = re.compile(r"^\s*(?:please\s+)?(?:go back|press back|back out|navigate back)\b(?!\s+to\b)", re.I)


def _value_after(goal: str, cues: Sequence[str], stops: Sequence[str]) -> str:
    """The words the goal gives after the first of `cues` it says: a quoted text whole, else up to one of
    `stops`, a comma, the sentence's end or "and"/"then" before another request's verb ("" if none)."""
    value_end = re.compile(r"[,;]|\.(?:\s|$)|\b(?:%s)\b|\s(?:and|then|and then)\s+(?=(?:%s)\b)" % (
        "|".join([*stops, *_VALUE_STOPS]), "|".join(sorted(VERBS, key=len, reverse=True))), re.I)
    for cue in cues:
        m = re.search(rf"(?<![^\W_]){re.escape(cue)}(?![^\W_])[\s:]*", goal, re.I)
        if not m:
            continue
        rest = goal[m.end():]
        quoted = re.match(r"'([^']+)'|\"([^\"]+)\"|“([^”]+)”|‘([^’]+)’", rest)
        if quoted:
            return next(g for g in quoted.groups() if g)
        end = value_end.search(rest)
        value = (rest[:end.start()] if end else rest).strip().strip("'\"“”‘’").strip()
        if value:
            return value
    return ""


def form_values(goal: str, screen: Screen) -> dict[str, str]:
    """What the goal asks each field of this screen to hold: {"Subject": "Invoice", "To": "a@b.com"}."""
    out: dict[str, str] = {}
    fields = [e for e in screen.elements if e.kind == "field"]
    for e in fields:
        key = re.sub(r"\s*\(\d+\)$", "", e.label.lower())    # "Note (2)": labels are made unique on a screen
        if key in ADDRESS_FIELDS:
            m = _EMAIL.search(goal)
            if m:
                out[e.label] = m.group(0)
            continue
        if key == "search or type url":   # a browser's: a web address, or a search said to go to the web
            url = _URL.search(goal)
            if url:
                out[e.label] = url.group(0)
            if url or not _WEB.search(goal):
                continue
        # a value runs to the next field's cue (of this form)
        stops = sorted({re.escape(c) for f in fields if f is not e for c in FIELD_CUES.get(f.label.lower(), ())},
                       key=len, reverse=True)
        value = _value_after(goal, FIELD_CUES.get(key, ()), stops)
        if value:
            out[e.label] = value
    return out


# Cues after which a goal says text to type, wherever the field is ("write a note saying X", "google X").
TEXT_CUES = ("saying", "that says", "note down", "jot down", "write down", "make a note to", "search for", "google")


def untyped_text(goal: str, done: Sequence[str]) -> str:
    """Text the goal says to type that no `type_text` so far has typed ("" when none): a goal is not
    finished before it is typed."""
    value = _value_after(goal, TEXT_CUES, ())
    typed = [d[len('type_text "'):-1].lower() for d in done if d.startswith('type_text "')]
    return value if value and not any(value.lower() in t for t in typed) else ""


def goal_buttons(goal: str, screen: Screen, done: Sequence[str]) -> list[str]:
    """The buttons on this screen that do what the goal's final verb asks and are not done yet: for each verb
    of `FINAL_VERBS` in the goal that no tap in `done` has used, the buttons starting with it whose words are
    all the goal's, the most specific ones ("Copy address" before "Copy"). A button is a verb and at most one
    more word: longer labels are content (a saved note reading "send the report"), as are quoted words."""
    words = {w.lower() for w in re.findall(r"[^\W_]+", re.sub(r"'[^']*'|\"[^\"]*\"|“[^”]*”", " ", goal))}
    tapped = [d[len('tap "'):-1].lower() for d in done if d.startswith('tap "')]
    out: list[str] = []
    for verb in sorted(words & FINAL_VERBS):
        if any(t.split()[:1] == [verb] for t in tapped):
            continue
        fits = [(len(lw), e.label) for e in screen.actionable
                if (lw := re.findall(r"[^\W_]+", e.label.lower())) and lw[0] == verb and len(lw) <= 2
                and set(lw) <= words]
        best = max((n for n, _ in fits), default=0)
        out += [label for n, label in fits if n == best]
    return out


def app_to_open(goal: str, screen: Screen) -> str | None:
    """The home screen's icon for a goal that only opens that app, or None."""
    m = _OPEN_GOAL.match(goal)
    if not m or "launcher" not in screen.package:
        return None
    return next((e.label for e in screen.actionable if e.label.lower() == m.group(1).lower()), None)


def last_step_done(goal: str, done: Sequence[str]) -> bool:
    """The goal ends on a verb of `SILENT_VERBS` ("copy its name") and a button of that verb has been tapped:
    nothing is left but to finish. A copy leaves the screen as it was, so a 270M navigator that judges its
    progress by the screen does not see it happened and goes on ("copy its name" ended with the address copied
    over the name). A send or a save changes the screen (and an app may ask to confirm it), so finishing after
    those stays the navigator's call."""
    words = [w.lower() for w in re.findall(r"[^\W_]+", re.sub(r"'[^']*'|\"[^\"]*\"|“[^”]*”", " ", goal))]
    verbs = [w for w in words if w in VERBS]
    if not verbs or verbs[-1] not in SILENT_VERBS:
        return False
    tapped = [d[len('tap "'):-1].lower() for d in done if d.startswith('tap "')]
    return any(t.split()[:1] == [verbs[-1]] for t in tapped)


def screen_catalogue(screen: Screen | None = None, goal: str | None = None, done: Sequence[str] = ()) -> Catalogue:
    """The GUI actions, the same declarations on every screen (so their prompt prefix is shared and cached
    across steps); for a given screen, `target` carries its labels as ``x-enum``: the grammar admits only
    those, and the prompt (which drops ``x-`` keys) lists them in the user turn instead. Likewise
    `type_text` is declared everywhere but callable only where a field has the focus, and with a `goal` its
    text is a span of the goal alone: the screen's own words are in the same user turn, and a 270M model
    otherwise types what it reads there ("Screen", "App"). A goal that sets switches (`switch_states`): while
    a switch it names shows the other state, tapping it is the only step offered; one already right is not
    offered to `tap` (a tap would undo it). No goal ends with text sitting in a focused field (it is saved,
    sent or submitted first, which moves the focus away), so `finish` is not offered while a field has it.
    With `done` (the actions so far, as `describe_call` writes them) the goal's forms, final button, Back and
    home, and text to type are settled too (`form_values`, `goal_buttons`, `untyped_text`), and once the Copy
    button of a goal that ends on "copy" is tapped, `finish` is the only step (`last_step_done`). On the home
    screen, a goal that opens an app taps its icon (`app_to_open`)."""
    moves = {"tap", "long_press", "swipe", "press_back", "press_home", "show_recent_apps", "finish", "give_up"}
    target: dict[str, Any] = {"type": "STRING", "description": "The label of an element on the screen."}
    tap_target = dict(target)
    text: dict[str, Any] = {"type": "STRING", "description": "The text to type, in the user's words.",
                            **({"x-span": [goal]} if goal else {"x-grounding": "span"})}
    blocked: set[str] = set()   # declared (the prompt stays the same) but not offered by the grammar here
    if screen is not None:
        labels = [e.label for e in screen.actionable]
        wanted = switch_states(goal, screen) if goal else {}
        wrong = [label for label, state in wanted.items() if screen.element(label).checked != state]
        target["x-enum"] = labels
        # a switch the goal names is in the other state: tapping it is the step (nothing else gets closer)
        tap_target["x-enum"] = wrong or [label for label in labels if label not in wanted]
        blocked |= {"long_press"} if not labels else set()
        blocked |= {"tap"} if not tap_target["x-enum"] else set()
        if wrong:
            blocked |= moves - {"tap"} | {"type_text"}
        # typed text would go nowhere without a focused field; with one, the text is not yet submitted or saved
        blocked.add("finish" if any(e.kind == "field" and e.focused for e in screen.elements) else "type_text")
        # a form the goal fills (`form_values`): the focused field takes its value; while a field still lacks
        # its value, tapping a field that lacks one is the step: nothing is saved, sent or finished yet
        values = form_values(goal, screen) if goal and not wrong else {}
        typed = {d[len('type_text "'):-1] for d in done if d.startswith('type_text "')}
        missing = [label for label, v in values.items()
                   if v.lower() not in screen.element(label).text.lower() and v not in typed]
        focus = next((e.label for e in screen.elements if e.kind == "field" and e.focused), None)
        if focus in missing:
            text["x-enum"] = [values[focus]]
            blocked |= moves
        elif missing and (focus is None or focus in values or screen.element(focus).text):
            tap_target["x-enum"] = missing
            # inside a form being filled (a field has the focus) nothing else; before it, the keys stay (a
            # demonstration may take the long way round to the form)
            blocked |= moves - {"tap"} if focus else {"long_press", "swipe", "finish", "give_up", "type_text"}
        elif not wrong and not (focus and not screen.element(focus).text):
            # the form is done (or there is none) and no focused field waits for text: the button the goal's
            # verb names ("copy its name": Copy; "copy the address": Copy address; "send"; "save") is the step
            # until a button of that verb has been tapped; a field that holds its value is not tapped again
            named = goal_buttons(goal or "", screen, done)
            if named:
                tap_target["x-enum"] = named
                blocked |= moves - {"tap"}
            elif values:
                tap_target["x-enum"] = [t for t in tap_target["x-enum"] if t not in values] or tap_target["x-enum"]
        opens = app_to_open(goal, screen) if goal and not wrong else None
        if opens:
            tap_target["x-enum"] = [opens]
            blocked |= moves - {"tap"} | {"type_text"}
        if goal and _BACK_GOAL.search(goal):
            blocked.add("press_home")
        if goal and _HOME_GOAL.search(goal) and "launcher" not in screen.package:
            blocked.add("finish")                  # not home yet
        if goal and untyped_text(goal, done):
            blocked.add("finish")                  # the note or search it asks for is not written yet
        elif goal and not wrong and not missing and last_step_done(goal, done):
            blocked |= moves - {"finish"} | {"type_text"}   # its last verb's button is tapped: the goal is done
    tools = [
        _tool("tap", "Taps an element on the screen.", {"target": tap_target}, ["target"]),
        _tool("long_press", "Touches and holds an element on the screen.", {"target": target}, ["target"]),
        _tool("type_text", "Types text into the focused field.", {"text": text}, ["text"]),
        _tool("swipe", "Swipes a finger across the screen (up scrolls the content down).",
              {"direction": {"type": "STRING", "description": "Where the finger moves.", "enum": list(DIRECTIONS)}},
              ["direction"]),
        _tool("press_back", "Presses the Back button."),
        _tool("press_home", "Presses the Home button."),
        _tool("show_recent_apps", "Opens the recent apps screen."),
        _tool("finish", "Says the goal is reached."),
        _tool("give_up", "Says the goal cannot be reached on this phone."),
    ]
    for tool in tools:
        if tool["function"]["name"] in blocked:
            tool["function"]["parameters"]["x-callable"] = False
    return Catalogue.from_json(tools, source="<screen actions>")


class GoalSteps:
    """A goal that says its steps one after another ("send X an email titled Y, then go to the home
    screen"), worked through in order (`coverage.steps`). A 270M navigator says `finish` once the first
    step is done; then the next step becomes the goal, on the same screen, until the last one is finished."""

    def __init__(self, goal: str) -> None:
        from mobile_actions.decoding.coverage import steps

        self.goal, self.parts, self.i = goal, steps(goal), 0

    @property
    def current(self) -> str:
        return self.parts[self.i]

    def advance(self) -> bool:
        """Move to the next step; False when the finished step was the last."""
        if self.i + 1 >= len(self.parts):
            return False
        self.i += 1
        return True


def next_call(caller: Any, goal: GoalSteps, screen: Screen, done: Sequence[str]) -> Any:
    """The navigator's call for this screen: the current step's, or, when it says that step is finished, the
    next step's (the runner and the step-wise evaluation both decide through this)."""
    while True:
        out = caller.call_messages(messages(goal.current, screen, done), screen_catalogue(screen, goal.current, done))
        if not (out.calls and out.calls[0].name == "finish" and goal.advance()):
            return out


def describe_call(call: ToolCall) -> str:
    """An action taken, as the history line the next prompt shows (``tap "Bluetooth"``)."""
    if call.name in ("tap", "long_press"):
        return f'{call.name} "{call.arguments.get("target", "")}"'
    if call.name == "type_text":
        return f'type_text "{call.arguments.get("text", "")}"'
    if call.name == "swipe":
        return f"swipe {call.arguments.get('direction', '')}"
    return call.name


def user_turn(goal: str, screen: Screen, done: Sequence[str]) -> str:
    history = "\n".join(f"{i + 1}. {d}" for i, d in enumerate(done)) or "nothing yet"
    return f"Goal: {goal}\nScreen:\n{screen.describe()}\nDone so far:\n{history}"


def messages(goal: str, screen: Screen, done: Sequence[str]) -> list[dict]:
    return [{"role": "developer", "content": INSTRUCTION}, {"role": "user", "content": user_turn(goal, screen, done)}]


def to_action(call: ToolCall, screen: Screen) -> Action:
    """The GUI Odyssey command for a navigator call (points on the 0-1000 grid of this screen)."""
    if call.name in ("tap", "long_press"):
        x, y = screen.element(str(call.arguments.get("target", ""))).center
        w, h = screen.size
        if not (w and h):
            raise ScreenError("the screen has no size: cannot place a tap")
        return Action("CLICK" if call.name == "tap" else "LONG_PRESS",
                      point=(round(1000 * x / w), round(1000 * y / h)))
    if call.name == "type_text":
        return Action("TYPE", text=str(call.arguments.get("text", "")))
    if call.name == "swipe":
        direction = str(call.arguments.get("direction", "")).upper()
        return Action("SCROLL", direction=direction)
    if call.name in _KEYS:
        return Action(_KEYS[call.name])
    raise ScreenError(f"{call.name!r} is not a screen action")


def from_action(action: Action, screen: Screen) -> ToolCall:
    """The navigator call for a recorded GUI Odyssey action: a tap names the element under its point
    (the smallest one, as the touch would land on it)."""
    if action.kind in ("CLICK", "LONG_PRESS"):
        assert action.point is not None
        w, h = screen.size
        x, y = action.point[0] * w / 1000, action.point[1] * h / 1000
        hits = [e for e in screen.actionable
                if e.bounds[0] <= x < e.bounds[2] and e.bounds[1] <= y < e.bounds[3]]
        if not hits:
            raise ScreenError(f"no element under {action.to_command()}")
        best = min(hits, key=lambda e: (e.bounds[2] - e.bounds[0]) * (e.bounds[3] - e.bounds[1]))
        return ToolCall("tap" if action.kind == "CLICK" else "long_press", {"target": best.label})
    if action.kind == "TYPE":
        return ToolCall("type_text", {"text": action.text or ""})
    if action.kind == "SCROLL":
        return ToolCall("swipe", {"direction": (action.direction or "").lower()})
    return ToolCall(_KEY_CALLS[action.kind], {})


@dataclass(frozen=True)
class StepExample:
    goal: str
    screen: Screen
    done: tuple[str, ...]
    call: ToolCall

    def row(self, metadata: str = "train") -> dict:
        """A Mobile Actions row: the navigator trains with `mobile-actions train` like the caller."""
        return {"metadata": metadata, "tools": screen_catalogue(self.screen).to_mobile_actions(),
                "messages": messages(self.goal, self.screen, self.done)
                + [{"role": "assistant", "tool_calls": [{"function": {"name": self.call.name,
                                                                      "arguments": dict(self.call.arguments)}}]}]}


def episode_examples(goal: str, steps: Sequence[tuple[Screen, Action]]) -> list[StepExample]:
    """One example per recorded step: the screen before the action, the actions so far, the action."""
    out: list[StepExample] = []
    done: list[str] = []
    for screen, action in steps:
        call = from_action(action, screen)
        out.append(StepExample(goal, screen, tuple(done), call))
        done.append(describe_call(call))
    return out


def recording_steps(root: str, split: str | None = None, part: str = "train"):
    """(episode, [(screen, gold action) per step]) for every episode of a recording (or one split part)."""
    from mobile_actions.errors import EpisodeError
    from mobile_actions.navigator.episodes import OdysseyDir, load_episodes
    from mobile_actions.navigator.screen import MAX_DUMP_BYTES, parse_hierarchy

    d = OdysseyDir.at(root)
    for ep in load_episodes(root, split, part):  # type: ignore[arg-type]
        steps = []
        for step in ep.steps:
            path = d.hierarchy_path(step)
            try:
                if path.stat().st_size > MAX_DUMP_BYTES:
                    raise ScreenError(f"over {MAX_DUMP_BYTES} bytes")
                screen = parse_hierarchy(path.read_bytes())
            except (OSError, ScreenError) as e:
                raise EpisodeError(f"{ep.source} step {step.index}: {path.name}: {e}") from None
            steps.append((screen, step.command))
        yield ep, steps


def predict_recording(caller: Any, root: str, split: str | None = None, part: str = "test"):
    """Step-wise predictions with the gold history, as GUI Odyssey scores a navigator: yields
    (episode_id, step, command) where command is the GUI Odyssey command the call converts to, or the
    model's raw text when it wrote no usable call (scored wrong)."""
    for ep, steps in recording_steps(root, split, part):
        goal = GoalSteps(ep.task.instruction)
        for ex, step in zip(episode_examples(ep.task.instruction, steps), ep.steps):
            out = next_call(caller, goal, ex.screen, ex.done)
            try:
                pred = to_action(out.calls[0], ex.screen).to_command() if out.calls else (out.raw or out.text)
            except ScreenError:
                pred = out.raw
            yield ep.episode_id, step.index, pred


def recording_examples(root: str, split: str | None = None, part: str = "train") -> list[StepExample]:
    """Examples from virtual-phone recordings (`navigator record`): every step's hierarchy dump and gold
    action; all episodes, or the ``part`` of ``split`` (``task``: whole templates held out)."""
    from mobile_actions.errors import EpisodeError

    out: list[StepExample] = []
    for ep, steps in recording_steps(root, split, part):
        try:
            out += episode_examples(ep.task.instruction, steps)
        except ScreenError as e:
            raise EpisodeError(f"{ep.source}: {e}") from None
    return out
