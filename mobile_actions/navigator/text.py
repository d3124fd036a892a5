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

from dataclasses import dataclass
from typing import Any, Sequence

from mobile_actions.calls import ToolCall
from mobile_actions.catalog import Catalogue
from mobile_actions.errors import ScreenError
from mobile_actions.navigator import goals
from mobile_actions.navigator.actions import Action
from mobile_actions.navigator.guards import Firing, StepView, narrow
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


@dataclass(frozen=True)
class StepCatalogue:
    """A screen's catalogue and the guards that narrowed it (`guards.narrow`), for the trace."""
    catalogue: Catalogue
    guards: tuple[Firing, ...] = ()


def step_catalogue(screen: Screen | None = None, goal: str | None = None, done: Sequence[str] = ()) -> StepCatalogue:
    """The GUI actions, the same declarations on every screen (so their prompt prefix is shared and cached
    across steps); for a given screen, `target` carries its labels as ``x-enum``: the grammar admits only
    those, and the prompt (which drops ``x-`` keys) lists them in the user turn instead. With a `goal` the
    text to type is a span of the goal alone: the screen's own words are in the same user turn, and a 270M
    model otherwise types what it reads there ("Screen", "App"). On a screen, the guards (`guards.GUARDS`:
    typing only into a focused field, switches, forms, the goal's button, the app to open, Back, home, text
    to type, the last step) narrow what the grammar admits; a tool they block stays declared (``x-callable``
    false), so the prompt does not change."""
    target: dict[str, Any] = {"type": "STRING", "description": "The label of an element on the screen."}
    tap_target = dict(target)
    text: dict[str, Any] = {"type": "STRING", "description": "The text to type, in the user's words.",
                            **({"x-span": [goal]} if goal else {"x-grounding": "span"})}
    offer = narrow(StepView(goal or "", screen, tuple(done))) if screen is not None else None
    if offer is not None:
        target["x-enum"] = list(offer.labels)
        tap_target["x-enum"] = list(offer.tap_targets)
        if offer.text is not None:
            text["x-enum"] = list(offer.text)
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
        if offer is not None and tool["function"]["name"] in offer.blocked:
            tool["function"]["parameters"]["x-callable"] = False
    return StepCatalogue(Catalogue.from_json(tools, source="<screen actions>"), offer.firings if offer else ())


def screen_catalogue(screen: Screen | None = None, goal: str | None = None, done: Sequence[str] = ()) -> Catalogue:
    """`step_catalogue`'s catalogue: what the navigator is asked with on this screen."""
    return step_catalogue(screen, goal, done).catalogue


class GoalSteps:
    """A goal that says its steps one after another ("send X an email titled Y, then go to the home
    screen"), worked through in order (`coverage.steps`). A 270M navigator says `finish` once the first
    step is done; then the next step becomes the goal, on the same screen, until the last one is finished. A
    step inside a message the step before passes on is that message's ("text maria: running late, save me a
    seat": one step, whose message is "running late, save me a seat")."""

    def __init__(self, goal: str) -> None:
        from mobile_actions.acting import read
        from mobile_actions.decoding.coverage import steps

        messages = [p.message for p in read(goal) if p.message]
        parts: list[str] = []
        for part in ([goal] if made_entry(goal) else steps(goal)):
            at = goal.find(part)
            if parts and at >= 0 and any(a <= at < b for a, b in messages):
                start = goal.find(parts[-1])
                parts[-1] = goal[start:at + len(part)] if start >= 0 else f"{parts[-1]} {part}"
            else:
                parts.append(part)
        self.goal, self.parts, self.i = goal, parts, 0

    @property
    def current(self) -> str:
        return self.parts[self.i]

    def advance(self) -> bool:
        """Move to the next step; False when the finished step was the last."""
        if self.i + 1 >= len(self.parts):
            return False
        self.i += 1
        return True


def made_entry(goal: str) -> bool:
    """Whether `goal` is the runner's hand-over of an entry a call just made (`goals.made_entry_word`): what
    follows the entry's name is that entry's details, one step however many verbs they hold ("... and I need to
    bring the x-rays, put it in the notes"), not steps of their own after which the entry is left."""
    return goals.made_entry_word(goal) is not None


@dataclass(frozen=True)
class NextCall:
    result: Any                     # the caller's result (.calls, .raw, .text)
    guards: tuple[Firing, ...]      # the guards that narrowed the catalogue it answered


def next_call(caller: Any, goal: GoalSteps, screen: Screen, done: Sequence[str]) -> NextCall:
    """The navigator's call for this screen: the current step's, or, when it says that step is finished, the
    next step's (the runner and the step-wise evaluation both decide through this)."""
    while True:
        step = step_catalogue(screen, goal.current, done)
        out = caller.call_messages(messages(goal.current, screen, done), step.catalogue)
        if not (out.calls and out.calls[0].name == "finish" and goal.advance()):
            return NextCall(out, step.guards)


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
            out = next_call(caller, goal, ex.screen, ex.done).result
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
