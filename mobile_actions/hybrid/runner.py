"""Hybrid runs: the caller turns a request into tool calls, calls are dispatched, GUI work goes to the navigator.

One run, end to end (docs/hybrid.md has the whole picture)::

    request ─► caller turn (FunctionGemma prompt ─► raw ─► parsed calls)
            ─► per call: validate ─► confirm (send-type) ─► dispatch (adb) ─► tool result
            ─► follow-up caller turn with the tool results (FunctionGemma response format) while a tool
               returned information (show_map's place card read from `uiautomator dump`)
            ─► navigator loop for GUI work: screencap ─► navigator ─► action ─► `input …` ─► … until
               COMPLETE, IMPOSSIBLE, the step limit or a repeated-screen stall; a COMPLETE is *done* only
               when the phone shows it (outcome.py: its state or screen changed since the task began, in a
               way that fits the goal), else *unknown* or *not_done*
    every step ─► trace (trace.py) ─► replay / resume / benchmark

How a request is split between tools and GUI (the honest route; see docs/hybrid.md):
- every call the caller makes is validated on its own and dispatched; an invalid call is refused, never
  "repaired", and nothing is dispatched from output that does not parse;
- a tool bound to GUI steps (the flashlight's Quick Settings tile) runs its scripted tap steps first;
  only when they fail is the navigator handed that call as an instruction;
- when the caller makes no valid call (it refused: the request is GUI work no tool covers), the navigator
  gets the whole request (``navigate="auto"``); ``navigate="always"`` also hands it over after the tool
  calls, for mixed requests whose GUI half no tool covers; ``"never"`` keeps runs tool-only.

Safety: calls the request does not ask for are refused (`acting.gate_messages`, whatever the caller did);
every call that changes or sends something (`Tool.effect`) and navigator taps on send/delete-type buttons are
asked for (``RunConfig.yes`` or the ``confirm`` callback); refused otherwise. The step limit bounds the
navigator. `RunReport` lists what was done, not done and refused, with reasons. Before anything acts on the
phone an ``intent`` record is on disk, so `resume` never repeats blindly what may already have happened;
and `resume` only continues a folder this user's runs signed, with this invocation's tools, models and device.

The caller and the navigator are injected (anything with ``call_messages(messages, tools)`` /
``next_action(...)``; `models` builds the shipped defaults); the device side (session, screens,
actions as argv) is device.py. The library never prints: progress goes to an ``on_event`` callback.
"""
from __future__ import annotations

import hashlib
import json
import re
import shlex
import time
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Sequence

from mobile_actions import lexicon as lexicons
from mobile_actions.acting import (MESSAGE_MARKS, REASONS, Declined, Piece, Polarity, Refusal, asks_nothing,
                                   claimed, clause_of, gate_messages, named_addressee, names_tool)
from mobile_actions.acting import read as read_request
from mobile_actions.calls import Problem, ToolCall, validate_call
from mobile_actions.hybrid.device import (DeviceSession, HybridError, action_argv, node_at, nodes, open_session,
                                          png_size, screencap)
from mobile_actions.hybrid.models import (TORCH_PREFIX, CallerLike, NavigatorLike, PredictorNavigator,
                                          resolve_caller, resolve_navigator)
from mobile_actions.hybrid.items import Item as ScreenItem
from mobile_actions.hybrid.items import (better_named, form_item, list_rows, loosely_named, recipient_item,
                                         switched_item, tapped_item, typed_over, unnamed)
from mobile_actions.hybrid.outcome import (GoalCheck, PhoneView, form_part, joined, length_in_minutes, singular,
                                           when_and_length)
from mobile_actions.hybrid.trace import Trace, TraceWriter, new_run_dir, screen_file
from mobile_actions.navigator.goals import edits as edits_what_exists
from mobile_actions.navigator.goals import (confirm_button, field_value, goal_words, named_apps, quoted, removes_every,
                                            says_word, word_set)

RESULT_LIMIT = 2000            # characters of device output kept per command in the trace
STEPS_PER_VALUE = 4            # a field's value typed over what it holds: tap, hold, Select all, type
Confirm = Callable[[str, Sequence[str]], bool]   # (what, detail lines) -> go ahead?
Event = Callable[[dict[str, Any]], None]


SCREEN_TOOL = "operate_screen"   # the routing tool (catalogs/operate_screen.json): a GUI step for the navigator
UNANSWERED = "no call was made for this part of the request (asked about it on its own, the caller made none)"


# ============================================================================================ config / records
@dataclass
class RunConfig:
    """Everything that shapes a run; recorded in the trace header.

    On `resume` the run's shape (clock, limits, routing) comes from the header, but what the run is done
    *with* (`IDENTITY`: tools, bindings, caller, navigator; and the device) is always the current
    invocation's: the header is compared with it and a mismatch refused, never obeyed, so a run folder
    cannot choose what runs, where screenshots go or which phone is driven.
    """

    model: str = "auto"                 # caller: auto | default | general | DIR (ONNX export or PyTorch checkpoint/adapter)
    navigator: str | None = "default"   # default | DIR | http(s)://URL | none
    serial: str | None = None           # device; None: $ANDROID_SERIAL, the only device, else the virtual phone
    tools: str = "mobile_actions"
    bindings: str | None = None         # default: <tools>.android.json
    dry_run: bool = False
    yes: bool = False                   # confirm send-type actions without asking (not recorded: asked again on resume)
    max_steps: int = 15                 # navigator actions per GUI task
    max_turns: int = 3                  # caller turns (the first + follow-ups with tool results)
    navigate: str = "auto"              # auto | always | never
    route: str = "auto"                 # offer the caller operate_screen(goal): auto (if it was trained to) | always | never
    stall_repeats: int = 3              # the same screen this many times in a row = stalled
    history: int = 4                    # navigator history frames
    screens: bool = True                # a screenshot after each dispatched call (the navigator always takes them)
    now: str | None = None              # the caller's clock, YYYY-MM-DDTHH:MM:SS (default: the run's start)
    runs_dir: str = "runs"
    phone: dict[str, Any] | None = None  # the virtual phone's starting state (`android.phone.setup`); a new run only

    IDENTITY = ("tools", "bindings", "model", "navigator")

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("yes")
        return d

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "RunConfig":
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def mismatches(self, recorded: "RunConfig") -> list[str]:
        """How this invocation differs from a recorded run in `IDENTITY`, each as the flag to pass."""
        return [f"this run used {_flag(name, getattr(recorded, name))}, not {_flag(name, getattr(self, name))}"
                for name in self.IDENTITY if getattr(recorded, name) != getattr(self, name)]

    def resumed(self, recorded: "RunConfig") -> "RunConfig":
        """The config a resumed run goes on with: the recorded shape, this invocation's identity, serial and
        --yes; a dry run stays dry whichever of the two asked for it."""
        keep = {"serial", "yes", "runs_dir", *self.IDENTITY}
        out = RunConfig(**{f.name: getattr(self if f.name in keep else recorded, f.name) for f in fields(self)})
        out.dry_run = self.dry_run or recorded.dry_run
        return out


def _flag(name: str, value: str | None) -> str:
    """A config value as the `run` flag that sets it (what the user types to match a recorded run)."""
    if value is None:
        return "--navigator none" if name == "navigator" else f"no --{name}"
    if name == "model" and value.startswith(TORCH_PREFIX):
        return f"--model {shlex.quote(value[len(TORCH_PREFIX):])} --torch"
    return f"--{name} {shlex.quote(str(value))}"


@dataclass
class StepRecord:
    """One trace line: a step of the run (caller turn, dispatched call, navigator action, ...)."""

    type: str
    key: str | None = None
    status: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    ms: float | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.key is not None:
            out["key"] = self.key
        if self.status is not None:
            out["status"] = self.status
        out.update(self.data)
        if self.ms is not None:
            out["ms"] = round(self.ms, 1)
        return out


@dataclass
class Item:
    """One line of the final report: a call or a GUI task, and what became of it."""

    what: str
    status: str          # done | not_done | refused | planned | skipped | unknown (may or may not have happened)
    reason: str = ""

    def to_json(self) -> dict[str, str]:
        return asdict(self)


@dataclass
class RunReport:
    run_dir: Path
    request: str
    status: str                      # finished | interrupted | dry_run
    items: list[Item] = field(default_factory=list)
    caller_turns: int = 0
    calls_dispatched: int = 0
    nav_steps: int = 0
    seconds: float = 0.0
    error: str = ""
    phone_state: dict[str, Any] | None = None

    @property
    def steps(self) -> int:
        """Caller turns + dispatched calls + navigator actions: the run's length."""
        return self.caller_turns + self.calls_dispatched + self.nav_steps

    def by_status(self, *status: str) -> list[Item]:
        return [i for i in self.items if i.status in status]

    @property
    def done(self) -> list[Item]:
        return self.by_status("done")

    @property
    def all_done(self) -> bool:
        """The run finished and every item is done: what `run` exits 0 on and the benchmark calls a claim."""
        return self.status == "finished" and bool(self.items) and not self.not_done and not self.refused

    @property
    def not_done(self) -> list[Item]:
        return self.by_status("not_done", "skipped", "planned", "unknown")

    @property
    def refused(self) -> list[Item]:
        return self.by_status("refused")

    def to_json(self) -> dict[str, Any]:
        return {"run_dir": str(self.run_dir), "request": self.request, "status": self.status,
                "items": [i.to_json() for i in self.items], "caller_turns": self.caller_turns,
                "calls_dispatched": self.calls_dispatched, "nav_steps": self.nav_steps, "steps": self.steps,
                "seconds": round(self.seconds, 2), "error": self.error}


# ============================================================================================ the runner
class Interrupted(Exception):
    """The device went away mid-run; the trace has everything up to here (resume continues)."""


def developer_message_for(now: str | None):
    from mobile_actions.dataset import developer_message

    return developer_message(datetime.fromisoformat(now) if now else None)


class Runner:
    """Runs (and resumes) one request. Collaborators are injectable; missing ones are built from `config`.

    ``caller`` / ``navigator`` may be objects or zero-argument factories (loaded only when a step needs
    them: a resumed run whose caller turns are all in the trace never loads the model).
    """

    def __init__(self, config: RunConfig | None = None, *, caller: Any = None, navigator: Any = "config",
                 session: DeviceSession | None = None, confirm: Confirm | None = None,
                 on_event: Event | None = None) -> None:
        self.config = config or RunConfig()
        self._load_tools()
        self._caller = caller
        self._navigator = navigator
        self._nav_resolved = navigator != "config" and not callable(navigator) or navigator is None
        self.session = session
        self._own_session = False
        self.confirm = confirm
        self.on_event = on_event or (lambda _e: None)
        self.goal_check = GoalCheck()

    def _load_tools(self) -> None:
        from mobile_actions.android.bindings import default_bindings_for, load_bindings
        from mobile_actions.catalog import load_catalogue

        self.catalogue = load_catalogue(self.config.tools)
        self.bindings = load_bindings(self.config.bindings or default_bindings_for(self.config.tools))
        self.bindings.check_against(self.catalogue)
        self._screen_tool = load_catalogue(SCREEN_TOOL)

    @property
    def caller_catalogue(self) -> Any:
        """What the caller is offered: the catalogue, plus `operate_screen` when it routes GUI steps (a caller
        trained on it, `route="auto"`; or `route="always"`). Its calls go to the navigator, never to adb."""
        from mobile_actions.catalog import Catalogue

        route = self.config.route
        if route == "never" or SCREEN_TOOL in self.catalogue.names:
            return self.catalogue
        if route == "auto" and not getattr(self.caller, "routes", False):
            return self.catalogue
        return Catalogue(tuple(self.catalogue) + tuple(self._screen_tool))

    # ------------------------------------------------------------------ collaborators
    def _say(self, text: str) -> None:
        self.on_event({"type": "message", "text": text})

    @property
    def caller(self) -> CallerLike:
        if self._caller is None:
            self._caller = resolve_caller(self.config.model, self._say, tool_names=self.catalogue.names)
        elif not hasattr(self._caller, "call_messages") and callable(self._caller):
            self._caller = self._caller()
        return self._caller

    @property
    def navigator(self) -> NavigatorLike | None:
        if not self._nav_resolved:
            if self._navigator == "config":
                self._navigator, line = resolve_navigator(self.config.navigator, self.config.history)
                self._say(line)
            else:
                self._navigator = self._navigator()
            self._nav_resolved = True
        nav = self._navigator
        if nav is not None and not hasattr(nav, "next_action") and hasattr(nav, "predict"):
            nav = self._navigator = PredictorNavigator(nav, self.config.history)
        return nav

    @property
    def device(self) -> Any:
        return self.session.device if self.session is not None else None

    def _ensure_session(self, state: dict[str, Any] | None = None, virtual: bool | None = None,
                        setup: dict[str, Any] | None = None) -> None:
        if self.session is None and not self.config.dry_run:
            self.session = open_session(self.config.serial, virtual=virtual, state=state, setup=setup)
            self._own_session = True
            self._say(f"device: {self.session.serial}" + (" (virtual phone)" if self.session.virtual else ""))

    def close(self) -> None:
        if self._own_session and self.session is not None:
            self.session.close()
            self.session = None

    # ------------------------------------------------------------------ entry points
    def run(self, request: str, run_dir: str | Path | None = None) -> RunReport:
        """A new run in a fresh folder under ``config.runs_dir`` (or ``run_dir``)."""
        cfg = self.config
        folder = Path(run_dir) if run_dir else new_run_dir(cfg.runs_dir, request)
        self._ensure_session(setup=cfg.phone)
        if cfg.now is None:
            cfg.now = self._clock().replace(microsecond=0).isoformat()
        self.writer = TraceWriter(folder)
        self.prior: Trace | None = None
        self._write(StepRecord("run", data={"request": request, "config": cfg.to_json(),
                                            "device": self._device_info()}))
        return self._execute(request)

    def resume(self, run_dir: str | Path) -> RunReport:
        """Continue an interrupted run of this user's: steps recorded as finished are not done again, steps
        in doubt are settled (`_settle_interrupted`), the device is re-established (a virtual phone comes
        back in the state the run left it). The folder must be signed by this user's run key, and the
        run's tools, bindings, models and device must be this invocation's (`RunConfig.mismatches`)."""
        prior = Trace.read_own(run_dir)
        if not prior.interrupted:
            raise HybridError(f"{run_dir}: the run already finished (nothing to resume)")
        header = prior.header
        recorded = RunConfig.from_json(header.get("config") or {})
        dev = header.get("device") or {}
        serial = self.config.serial
        problems = self.config.mismatches(recorded)
        if self.session is None and dev.get("virtual") and serial:
            problems.append(f"this run was on the virtual phone, not --serial {shlex.quote(serial)}")
        elif self.session is None and not dev.get("virtual") and dev.get("serial") and serial != dev["serial"]:
            problems.append(f"this run used --serial {shlex.quote(str(dev['serial']))}")
        if problems:
            raise HybridError(f"{run_dir}: " + "; ".join(problems) + ": pass the same to resume it "
                              "(a run folder's settings are compared, never taken)")
        cfg = self.config = self.config.resumed(recorded)
        if self.session is not None:            # given by the caller: used as given
            self.session.reconnect()
        elif cfg.dry_run:
            pass
        elif dev.get("virtual"):
            self._ensure_session(state=prior.saved_phone_state(), virtual=True)
        elif serial:
            self.session = DeviceSession(None, serial)   # the same phone (checked above), reconnected
            self._own_session = True
            self.session.reconnect()
            self._say(f"device: {self.session.serial} (reconnected)")
        else:
            self._ensure_session()
        self.writer = TraceWriter(prior.dir)
        self.prior = prior
        self._write(StepRecord("resume", data={"device": self._device_info()}))
        return self._execute(prior.request)

    # ------------------------------------------------------------------ the flow
    def _execute(self, request: str) -> RunReport:
        t0 = time.perf_counter()
        self.report = RunReport(self.writer.dir, request, "dry_run" if self.config.dry_run else "finished")
        self._done_calls: list[ToolCall] = []
        self._turn_calls: list[ToolCall] = []   # the calls of the caller turn being dispatched (`clause_of`)
        self._widened: dict[str, str] = {}       # a routed goal widened to its part of the request: its outcome
        try:
            self._flow(request)
        except Interrupted as e:
            self.report.status, self.report.error = "interrupted", str(e)
        except KeyboardInterrupt:
            self.report.status, self.report.error = "interrupted", "stopped by the user"
            self._finish(t0)
            raise
        self._finish(t0)
        return self.report

    def _finish(self, t0: float) -> None:
        rep = self.report
        rep.seconds = time.perf_counter() - t0
        state_sha256 = None
        if self.session is not None:
            rep.phone_state = self.session.state()
            if rep.phone_state is not None:
                state_sha256 = self.writer.write_json("phone_state.json", rep.phone_state)
        if rep.status == "interrupted":
            self._write(StepRecord("interrupted", data={"error": rep.error}))
        self._write(StepRecord("report", status=rep.status, data={"report": rep.to_json(),
                                                                  "phone_state_sha256": state_sha256}))

    def _flow(self, request: str) -> None:
        cfg = self.config
        messages: list[dict] = [developer_message_for(cfg.now), {"role": "user", "content": request}]
        any_valid = False
        refused: list[Refusal] = []   # the gate's refusals: what they asked for is no goal for the screen either
        #                               (but a call for the wrong ask, `Refusal.misrouted`, was the caller's
        #                               guess, not something the request declined: the request still goes on)
        made: list[ToolCall] = []     # every call of every turn, made, routed or refused: what they answer is taken
        unanswered: list[str] = []    # parts the caller, asked about each alone, still made no call for
        edits: list[Refusal] = []     # refused as what the tool does not do (a new entry for a change to a saved
        #                               one, a message passed on): the screen's to make
        self._first_text = ""
        self._handed: dict[str, str] = {}   # what was handed to the screen in this run, and how it ended
        self._fields_filled: list[str] = []  # pieces handed to the screen as fields of an entry a call made
        for turn in range(cfg.max_turns):
            rec = self._caller_turn(turn, messages)
            if turn == 0:
                self._first_text = " ".join(str(rec.get("text") or rec.get("raw") or "").split())
            calls = [ToolCall.from_json(c) for c in rec.get("calls", [])]
            for r in map(Refusal.from_json, rec.get("refused", [])):
                made.append(r.call)
                if r.for_screen and cfg.navigate != "never":
                    edits.append(r)   # as `GoalCheck.edits_by_adding` in `_call`: the edit (or the message
                    continue          # passed on) goes to the screen
                self._item(describe_call(r.call), "refused", f"refused: {r.why}")
                # a call for the wrong ask keeps no goal from the screen, nor does a screen goal the gate refused
                # ("go swimming" of "I do not go swimming anymore, please remove the swim alarm"): `held_back`
                # reads the request itself
                if not r.misrouted and r.call.name != SCREEN_TOOL:
                    refused.append(r)
            unanswered += [c for c in rec.get("unanswered", []) if c not in unanswered]
            validation = [[Problem(**p) for p in v["problems"]] for v in rec["validation"]]
            if turn == 0 and self._all_screen_work(calls, validation):
                # No tool is asked for: the request in the user's own words is the goal. A 270M router
                # shortens or splits it ("Open Chrome and go to example.com" -> "open Chrome").
                goals = app_goals(request, self.goal_check)
                if len(goals) > 1:
                    self._write(StepRecord("gate", "route:app-goals", "split", data={"rule": "app-goals",
                                                                                    "goals": goals}))
                calls, validation = [ToolCall(SCREEN_TOOL, {"goal": g}) for g in goals], [[] for _ in goals]
            responses, informative, new = [], False, 0
            made += calls
            self._turn_calls = calls
            for i, call in enumerate(calls):
                problems = validation[i]
                result = self._call(f"call:{turn}.{i}", call, problems)
                responses.append({"name": call.name, "response": result})
                any_valid |= not problems
                new += result.get("status") != "skipped"
                informative |= any(k not in ("status", "reason") for k in result)
            if not calls or not informative or not new:
                break
            # FunctionGemma response format: the model's calls, then one response per call; the model continues
            messages = messages + [{"role": "assistant", "tool_calls": [c.to_json() for c in calls]},
                                   {"role": "tool", "content": responses}]
        if cfg.navigate == "always" or (cfg.navigate == "auto" and not any_valid):
            why = "requested" if cfg.navigate == "always" else "the caller made no valid call"
            if not any_valid and self._first_text:
                why += f"; it replied {self._first_text[:80]!r}"
            declined = asks_nothing(request) or held_back(request, self.goal_check)
            if declined is not None or (refused and not any_valid):
                # "whatever you do, don't email Ana" is no goal for the screen either, nor is a request whose
                # calls the gate refused (the GUI would send what the gate kept from the phone)
                reason = declined.why if declined is not None else f"its calls were refused ({refused[0].why})"
                self._write(StepRecord("gate", "navtask:request", "refused", data={
                    "task": "request", "reason": reason, "cue": declined.cue if declined else refused[0].cue,
                    "piece": declined.text if declined else refused[0].piece}))
                self._item(f"GUI: {request}", "refused", f"not handed to the navigator: {reason}")
                for r in edits:
                    self._item(describe_call(r.call), "refused", f"refused: {r.why}")
                self._unanswered(unanswered)
                return
            self._navigate("request", request, why, makes=True)
        elif cfg.navigate == "auto":
            # "wifi off, bluetooth on, and media volume to 70" with only Wi-Fi routed: the rest is the screen's
            parts = unclaimed_parts(request, made, self.catalogue, self.goal_check)
            for n, part in enumerate(p for p in parts if not self._handed_over(p)):
                key = f"part:{n}"
                self._navigate(key, self._addressed(key, part), "no call answered this part of the request",
                               makes=True)
            # "Note down pay rent and email it to ana@..." with only the email made: its value claims the note's
            # part, but asked about that part alone the caller made no call, so no tool covers it (a clause inside a
            # part is that part's: "text him hi" of "and text him hi" is not sent twice)
            # ... and a clause already inside a goal the navigator had ("set an alarm for half 8 on Saturdays" of
            # "... on Saturdays and Sundays") is not navigated again: a second pass undoes the first one's Sunday
            for n, clause in enumerate(c for c in unanswered if not any(c in p for p in parts)
                                       and not self._handed_over(c)):
                key = f"unanswered:{n}"
                self._navigate(key, self._addressed(key, clause), UNANSWERED, what=clause, makes=True)
            for n, r in enumerate(r for r in edits if r.piece not in parts):
                self._hand_over(f"edit:{n}", r.piece, r.why, r.call, r.for_screen, what=describe_call(r.call),
                                piece=r.piece)
        else:
            self._unanswered(unanswered)

    def _unanswered(self, clauses: Sequence[str]) -> None:
        """Parts no call and no GUI task answered are reported not done, never finished as if the request were
        ("... and email lee@x.com saying hello" with the caller silent on it and no screen to hand it to)."""
        for clause in clauses:
            self._item(clause, "not_done", UNANSWERED)

    def _routed(self, call: ToolCall, problems: list[Problem]) -> bool:
        """Whether `call` is a valid GUI step the caller routed to the screen (not a catalogue tool of that name)."""
        return call.name == SCREEN_TOOL and SCREEN_TOOL not in self.catalogue.names and not problems

    def _all_screen_work(self, calls: list[ToolCall], validation: list[list[Problem]]) -> bool:
        """Whether the caller routed the whole request to the screen (every call a valid `operate_screen`)."""
        return bool(calls) and all(self._routed(c, v) for c, v in zip(calls, validation))

    # ------------------------------------------------------------------ caller turns
    def _caller_turn(self, turn: int, messages: list[dict]) -> dict[str, Any]:
        key = f"caller:{turn}"
        done = self.prior.finished(key) if self.prior else None
        if done is not None:
            self.report.caller_turns += 1
            return done
        from mobile_actions import wire

        caller = self.caller
        t0 = time.perf_counter()
        tools = self.caller_catalogue
        res = caller.call_messages(messages, tools)
        ms = (time.perf_counter() - t0) * 1e3
        layout = getattr(caller, "layout", "official")
        prompt = wire.render(messages, tools, add_generation_prompt=True, layout=layout)
        # The gate before any dispatch, whatever the caller did already: a call the request does not ask for
        # (negated, a question, taken back, ...) or whose recipient the person did not write is refused here.
        from mobile_actions.decoding.turn import GATE

        notes: list[str] = []
        calls, refused = gate_messages(list(res.calls), messages, tools, notes)
        refused = [*getattr(res, "refused", []), *refused]
        validation = [{"call": c.to_json(), "problems": [asdict(p) for p in validate_call(c, tools)]}
                      for c in calls]
        output_problems = [str(p) for p in res.problems if p.tool == "<output>"]
        self.report.caller_turns += 1
        return self._write(StepRecord("caller", key, "done", ms=ms, data={
            "turn": turn, "messages": messages, "prompt": prompt, "raw": res.raw, "text": res.text,
            "calls": [c.to_json() for c in calls], "validation": validation,
            "refused": [r.to_json() for r in refused],
            "rules": [*getattr(res, "rules", []), *(f"{GATE.name}: {n}" for n in notes)],
            "output_problems": output_problems, "timings": dict(res.timings or {}),
            "unanswered": list(getattr(res, "unanswered", []))}))

    # ------------------------------------------------------------------ calls
    def _call(self, key: str, call: ToolCall, problems: list[Problem]) -> dict[str, Any]:
        """Dispatch one call (or refuse it); returns its tool result for the caller's follow-up."""
        from mobile_actions.android.device import DeviceError
        from mobile_actions.android.dispatch import (ConfirmationRequired, DeclinedStepError, DispatchError,
                                                     StepFailedError, dispatch)

        what = describe_call(call)
        if self._routed(call, problems):
            # A GUI step the caller routed, in the user's order: the navigator does it (resumable by its key).
            goal = str(call.arguments.get("goal", ""))
            whole = routed_goal(goal, self.report.request, self.goal_check,
                                [p for c in self._turn_calls if c.name != SCREEN_TOOL and c.name in self.catalogue
                                 for p in claimed(c, self.report.request, self.catalogue)
                                 if names_tool(p.text, self.catalogue[c.name])])
            if whole is None:
                reason = (f"the goal the caller routed to the screen ({goal!r}) is not the request's words, and "
                          "the part of the request it shares them with is another call's")
                self._write(StepRecord("gate", f"route:{key}", "refused", data={
                    "rule": "routed-goal-widened", "goal": goal, "reason": reason}))
                self._item(f"GUI: {goal}", "refused", f"not handed to the navigator: {reason}")
                return {"status": "refused", "reason": reason}
            if whole != goal:
                if whole in self._widened:   # "make a note" and "cabin wifi password is ...": one goal, done once
                    self._write(StepRecord("gate", f"route:{key}", "same", data={
                        "rule": "routed-goal-widened", "goal": goal, "widened": whole, "navigated": True}))
                    return {"status": "done" if self._widened[whole] == "done" else "not_done"}
                self._write(StepRecord("gate", f"route:{key}", "widened", data={
                    "rule": "routed-goal-widened", "goal": goal, "widened": whole}))
            outcome = self._navigate(key, self._addressed(key, whole), "the caller routed it to the screen")
            if whole != goal:
                self._widened[whole] = outcome
            return {"status": "done" if outcome == "done" else "not_done"}
        done = self.prior.finished(key) if self.prior else None
        if done is not None and done.get("fallback"):
            outcome = self._navigate(key, done["fallback"], "scripted GUI steps failed", what=what)
            return {"status": "done" if outcome == "done" else "not_done"}
        if done is not None:
            if done["status"] == "skipped" and done.get("item_status") != "planned":
                return done.get("result", {"status": "skipped"})
            self._item(what, done["item_status"], done.get("reason", ""))
            if done["status"] == "done":
                self._done_calls.append(call)
                self.report.calls_dispatched += 1
            return done.get("result", {"status": done["status"]})
        data: dict[str, Any] = {"call": call.to_json()}
        if problems:
            reason = "invalid call, not dispatched: " + "; ".join(map(str, problems))
            return self._call_end(key, what, "refused", reason, data, {"status": "refused", "reason": reason})
        if call in self._done_calls:
            return self._call_end(key, what, "skipped", "already done in this run", data,
                                  {"status": "skipped", "reason": "already done"}, item=False)
        filled = self._filled_on_screen(call)
        if filled is not None:   # "... and the description 'Use the new numbers'" made into a second event
            reason = f"its values are the {filled!r} handed to the navigator for the entry another call made"
            return self._call_end(key, what, "skipped", reason, data, {"status": "skipped", "reason": reason})
        told = clause_of(call, self.report.request, self.catalogue, [c.name for c in self._turn_calls])
        cue = self.goal_check.edits_by_adding(told, call.name) if told else None
        asked = self._asked_part(call, told) if told and cue is None else None
        if cue is not None or asked is not None:
            # "update Tom's number" -> create_contact would leave a second Tom; "new note, shopping list - milk,
            # eggs" -> a contact "milk eggs": the edit, or the other kind of entry, is the screen's to make
            part, goal = asked if asked is not None else (None, told)
            why = (f"{call.name} makes a new entry, and the request edits one ({cue!r} in {told!r})" if cue else
                   f"{call.name} does not make what the request asks for (its {part}: {goal!r})")
            if self.config.navigate == "never" or self.navigator is None:
                return self._call_end(key, what, "refused", f"not dispatched: {why}", data,
                                      {"status": "refused", "reason": why})
            outcome = self._hand_over(key, goal, why, call, "edits-by-adding" if cue else "names-another-part",
                                      cue=cue or part, piece=goal)
            return {"status": "done" if outcome == "done" else "not_done"}
        pieces = read_request(told) if told else []
        own = pieces[0].text if pieces else ""   # the piece that owns the call, not those that follow it
        absent = self._absent_app(own) if own else None
        if absent is not None:   # "telegram kai the address": no tool of this phone's stands in for Telegram
            why = f"its part of the request names {absent}, which this phone does not have ({own!r})"
            return self._call_end(key, what, "refused", f"not dispatched: {why}", data,
                                  {"status": "refused", "reason": why})
        binding = self.bindings[call.name] if call.name in self.bindings else None
        data["route"] = binding.route if binding else None
        serial = self.session.serial if self.session else "-"
        if self.prior is not None and binding is not None and self.prior.in_doubt(key) is not None:
            settled = self._settle_interrupted(key, what, call, binding, data)
            if settled is not None:
                return settled

        def confirm(plan: Any) -> bool:
            return self._confirm(f"{plan.tool} on {serial}", plan.describe())

        def intent(plan: Any) -> None:   # write-ahead: on disk before the first step acts on the phone
            self._write(StepRecord("intent", key, data={**data, "what": what, "plan": plan.describe()}))
        before = self._phone_view(key) if self._checked_on_phone(call, binding) else None
        t0 = time.perf_counter()
        try:
            res = dispatch(call, self.device, bindings=self.bindings, catalogue=self.catalogue, confirm=confirm,
                           dry_run=self.config.dry_run, on_start=intent, declines=self._declines)
        except (ConfirmationRequired, DeclinedStepError) as e:
            return self._call_end(key, what, "refused", str(e), data, {"status": "refused", "reason": str(e)})
        except StepFailedError as e:
            data["error"] = str(e)
            if binding is not None and binding.route == "gui" and self.navigator is not None:
                instruction = tool_instruction(call, self.catalogue)
                self._call_end(key, what, "failed", f"scripted GUI steps failed ({e}); handed to the navigator",
                               {**data, "fallback": instruction}, {"status": "failed"}, item=False,
                               ms=(time.perf_counter() - t0) * 1e3)
                outcome = self._navigate(key, instruction, "scripted GUI steps failed", what=what)
                return {"status": "done" if outcome == "done" else "not_done"}
            return self._call_end(key, what, "failed", str(e), data, {"status": "failed", "reason": str(e)})
        except DeviceError as e:
            self._write(StepRecord("dispatch", key, "interrupted", data={**data, "error": str(e)}))
            raise Interrupted(f"{call.name}: {e}") from e
        except (DispatchError, ValueError) as e:
            return self._call_end(key, what, "failed", str(e), data, {"status": "failed", "reason": str(e)})
        ms = (time.perf_counter() - t0) * 1e3
        data["plan"] = res.plan.describe()
        data["commands"] = [_outcome_json(o) for o in res.outcomes]
        if self.config.dry_run:
            return self._call_end(key, what, "skipped", "dry run: planned, not run", data,
                                  {"status": "planned"}, item_status="planned", ms=ms)
        result: dict[str, Any] = {"status": "done"}
        lost: DeviceError | None = None
        try:
            result.update(self._read_result(call.name))
            if self.config.screens:
                data["screen"] = self.writer.screen(screencap(self.device))
        except HybridError:
            pass                   # a screenshot that is not a PNG is not a reason to fail the call
        except DeviceError as e:   # the call itself ran: record it done (never redo it), then stop
            lost = e
        self._done_calls.append(call)
        self.report.calls_dispatched += 1
        notes = "; ".join(o.note for o in res.outcomes if o.note)
        item_status = None
        if before is not None and lost is None:
            # "done" only when the phone shows it: the call's own words judged against what changed, then what
            # the person said of it ("update Tom's number": not a second Tom; "for 45 minutes": not an hour)
            after = self._phone_view(key)
            verdict = None       # a binding's own check (`was_done`) already says whether the call happened
            if binding.was_done is None and self._effect(call.name) != "none":
                verdict = self.goal_check.judge(tool_instruction(call, self.catalogue), before, after)
            if told and before.state is not None and (verdict is None or verdict.status == "done"):
                said = self.goal_check.judge(told, before, after, strict=True)
                if said.status != "done":
                    verdict = replace(said, reason=f"not as asked ({told!r}): {said.reason}")
                elif verdict is None:
                    verdict = said
            if verdict is not None:
                data["check"] = verdict.to_json()
                if verdict.status != "done":
                    item_status = verdict.status
                    result = {"status": verdict.status, "reason": verdict.reason}
                notes = "; ".join(x for x in (notes, verdict.reason if verdict.status == "done" else
                                              f"dispatched, but {verdict.reason}") if x)
        out = self._call_end(key, what, "done", notes, data, result, ms=ms, item_status=item_status)
        if lost is not None:
            raise Interrupted(f"after {call.name}: {lost}") from lost
        finished = self._finish_entry(key, call, told) if item_status in (None, "unknown") and before is not None \
            and self._effect(call.name) != "none" else None
        if finished is not None:
            # the entry as the person described it: the call's part judged again, now with the fields filled
            said = self.goal_check.judge(told, before, self._phone_view(key), strict=True)
            if finished == "done" and said.status == "done":
                self._restate(what, "done", f"made by the call, its other fields by the navigator: {said.reason}")
                return {"status": "done"}
            return {"status": "not_done" if finished != "done" else said.status}
        looked = self._effect(call.name) == "none"
        if looked and told and item_status in ("not_done", "unknown") and self.navigator is not None \
                and self.config.navigate == "auto":
            # "save the wifi password in a note pls: Kf7pX92mz" answered by open_wifi_settings: a look-up
            # changed nothing the person asked for, so the part it answered is the screen's (a call that
            # changed something is not followed by a second try at it); the screen the look-up opened is no
            # place to start from, so the navigator starts at home
            self._go_home()
            outcome = self._hand_over(f"{key}:asked", told, f"{call.name} did not do what this part asks", call,
                                      "looked-not-asked", start="home")
            return {**out, "status": "done" if outcome == "done" else "not_done"}
        left = self._switches_left() if looked else ()
        if left and self.navigator is not None and self.config.navigate == "auto":
            # "turn off the flashlight and Wi-Fi" answered by open_wifi_settings: the screen it opened shows
            # the switch the request sets, in the other state; the navigator finishes on that screen (under
            # `always` it gets the whole request after the calls anyway)
            why = f"{call.name} opened a screen whose {', '.join(map(repr, left))} the request asks to switch"
            outcome = self._hand_over(f"{key}:switch", self.report.request, why, call, "opened-not-switched",
                                      switches=list(left))
            out = {**out, "status": "done" if outcome == "done" and out.get("status") == "done" else "not_done"}
        return out

    def _go_home(self) -> None:
        """The Home key, before a navigator task that the screen a call left is no place to start from."""
        from mobile_actions.android.device import DeviceError

        try:
            self.device.shell(["input", "keyevent", "KEYCODE_HOME"])
        except DeviceError as e:
            raise Interrupted(f"going home before the navigator: {e}") from e

    def _hand_over(self, task: str, instruction: str, why: str, call: ToolCall, rule: str, what: str | None = None,
                   part: str | None = None, pieces: Sequence[str] = (), **detail: Any) -> str:
        """Give the navigator a part of the request that `call` does not do as asked; the trace's `gate` record,
        written first, names the rule that handed it. A part already handed over in this run (two calls made of
        one note's list) is not done twice: its outcome stands for both."""
        self._write(StepRecord("gate", f"handover:{task}", "handed", data={"call": call.to_json(), "rule": rule,
                                                                           **detail}))
        if instruction not in self._handed:
            self._handed[instruction] = self._navigate(task, instruction, why, what=what, part=part, pieces=pieces)
        return self._handed[instruction]

    def _handed_over(self, part: str) -> bool:
        """Whether a part of the request is in what was already handed to the navigator in this run, word for
        word ("location Room 4B" inside "open the event 'Team sync' and location Room 4B"): one part, navigated once."""
        return any(word_set(part) <= word_set(handed) for handed in self._handed)

    def _switches_left(self) -> tuple[str, ...]:
        """The switches on the screen now shown that the request names and that show the other state
        (`navigator.guards.StepView.wrong_switches`, the navigator's own reading of switch goals)."""
        from mobile_actions.android.dispatch import StepFailedError, dump_ui
        from mobile_actions.errors import ScreenError
        from mobile_actions.navigator.guards import StepView
        from mobile_actions.navigator.screen import parse_hierarchy

        if self.config.dry_run or self.device is None:
            return ()
        try:
            return StepView(self.report.request, parse_hierarchy(dump_ui(self.device))).wrong_switches
        except (StepFailedError, ScreenError):
            return ()

    def _checked_on_phone(self, call: ToolCall, binding: Any) -> bool:
        """Whether a dispatched call's outcome is judged on the phone (`GoalCheck`, as a navigator's COMPLETE is):
        a call that changes something, run for real. One whose binding has a check of its own (`was_done`) is
        judged only against what the person said of it, where the phone's state can be read; so is a look-up
        that stands where the person asked for a change no tool names ("order me a pizza from Domino's": a map
        search for Domino's is not the order)."""
        if self.config.dry_run or binding is None or self.device is None:
            return False
        readable = self.session is not None and self.session.virtual
        if self._effect(call.name) == "none":
            told = clause_of(call, self.report.request, self.catalogue)
            return readable and self.goal_check.asks_change(told) and not any(
                self._effect(t) != "none" for t in self.catalogue.names if names_tool(told, self.catalogue[t]))
        return binding.was_done is None or readable

    def _asked_part(self, call: ToolCall, told: str) -> tuple[str, str] | None:
        """(the part of the phone the request asks for, the request from where it names it) when a call that
        changes something works on other parts (`GoalCheck.tool_parts`): "new note, shopping list - milk, eggs"
        -> create_contact("milk", "eggs"). None when `told`'s pieces name one of the tool's parts, or when the
        part asked for is one another call of this turn works on ("torch on, add Ana": the torch is the other
        call's). The part is the one `told`'s pieces name, else the one the nearest piece before them names ("new
        note" before the list); the goal runs on through the sentences after `told` that name no part ("new note
        called shopping - oat milk, eggs")."""
        tool = self.catalogue[call.name] if call.name in self.catalogue else None
        own = set(self.goal_check.tool_parts(tool.name, tool.description)) if tool and tool.effect != "none" else set()
        pieces = read_request(self.report.request)
        parts = [set(self.goal_check.parts_named(p.text, own)) for p in pieces]
        mine = [i for i, p in enumerate(pieces) if p.text and p.text in told]
        if not own or not mine or any(own & parts[i] for i in mine):
            return None
        at = next((i for i in [*mine, *range(min(mine) - 1, -1, -1)] if parts[i]), None)
        others = {p for c in self._turn_calls if c != call and c.name in self.catalogue
                  for p in self.goal_check.tool_parts(c.name, self.catalogue[c.name].description)}
        named = sorted(parts[at] - others) if at is not None else []
        if not named:
            return None
        first, last = min(pieces[at].sentence, pieces[min(mine)].sentence), self._runs_on(pieces, max(mine), call)
        spans = [(p.start, p.start + len(p.text)) for p in pieces if first <= p.sentence <= last]
        return named[0], self.report.request[min(a for a, _ in spans):max(b for _, b in spans)].strip()

    def _runs_on(self, pieces: Sequence[Piece], at: int, call: ToolCall) -> int:
        """The last sentence of what the person goes on to say of the thing piece `at` asks for: the sentences
        after its own that ask or state something, name no part of the phone and write no value of another
        call of the turn ("add Rahul's graduation on the 14th at 10. it's at Memorial Stadium")."""
        others = self._other_values(call)
        last = pieces[at].sentence
        while True:
            nxt = [p for p in pieces if p.sentence == last + 1]
            if not nxt or any(not p.asked or self.goal_check.parts_named(p.text)
                              or any(v in p.text.lower() for v in others) for p in nxt):
                return last
            last += 1

    def _finish_entry(self, key: str, call: ToolCall, told: str) -> str | None:
        """After a call made an entry: when what the person said of it (`told`) gives fields of that entry no
        argument of the tool takes (`GoalCheck.lacking_fields`: "new calendar event Team sync on friday at
        10am, location Room 4B"), the navigator opens the entry the call made and fills them (the lexicon's
        `navigator.made_entry_goal`), instead of a second entry made of the rest. Its outcome, or None when
        nothing is lacking or there is no navigator or readable phone state to tell."""
        tool = self.catalogue[call.name] if call.name in self.catalogue else None
        if (tool is None or not told or self.config.navigate == "never" or self.navigator is None
                or self.session is None or not self.session.virtual):
            return None
        made = " ".join(str(v) for v in call.arguments.values())
        lacking = self.goal_check.lacking_fields(told, tool.name, tool.description, list(tool.properties), made)
        parts = self.goal_check.tool_parts(tool.name, tool.description)
        name = self._entry_name(call)
        given = [(f, v) for f, _ in lacking for v in [field_value(told, f)] if v]
        if not parts or name is None:
            return None
        said = self._said_of(call, told)
        length = length_in_minutes(said, parts[0], _start_of(call)).removeprefix(", ")
        if given:
            fields = ", ".join([*(f"{f} {v}" for f, v in given), *([length] if length else [])])
            why = f"{call.name} has no argument for the {', '.join(f for f, _ in lacking)} the request gives"
            rule, values = "fields-the-tool-lacks", [v for _, v in given]
        elif tool.effect == "changes":
            # the entry's details as the person said them ("it's at St. Mary's, should take about 45 minutes"); a
            # sent message is not opened again: what its call left out is the call's miss, not a detail to add
            fields = self.goal_check.details_beyond(said, [v for v in call.arguments.values() if isinstance(v, str)],
                                                    tool.name, tool.description)
            fields = ", ".join(x for x in (fields, length) if x)
            if not fields:
                return None
            why = f"{call.name} has no argument for what the request says beyond its values"
            rule, values = "details-the-tool-lacks", [fields]
        else:
            return None
        goal = lexicons.load().navigator.made_entry_goal[0].format(entry=singular(parts[0]), name=quoted(name),
                                                                  fields=fields)
        self._fields_filled += values
        return self._hand_over(f"{key}:fields", goal, why, call, rule, part=parts[0], pieces=fields.split(", "),
                               fields=[f for f, _ in given],
                               values=values)

    def _other_values(self, call: ToolCall) -> set[str]:
        """The text values, lower case, of the turn's other calls: a piece that writes one is theirs, not `call`'s."""
        return {str(v).lower() for c in self._turn_calls if c != call for v in c.arguments.values()
                if isinstance(v, str) and v.strip()}

    def _said_of(self, call: ToolCall, told: str) -> str:
        """`told` (what the person said of `call`), and the pieces after it that go on about the same entry, in its
        sentence or the ones after ("... at 8 it's at the lotus studio and it goes for 75 minutes", "... at
        11:00? It's at St. Mary's Hospital"): a detail is told, not asked, so a piece that reports or recalls
        ("I said I'd bring the salad") is one. The run stops at a piece that declines or takes something back,
        names a part of the phone the tool does not work on, or writes a value of another call of the turn."""
        pieces = read_request(self.report.request)
        mine = [i for i, p in enumerate(pieces) if p.text and p.text in told]
        if not mine:
            return told
        tool = self.catalogue[call.name] if call.name in self.catalogue else None
        own = set(self.goal_check.tool_parts(tool.name, tool.description)) if tool else set()
        others = self._other_values(call)
        more: list[Piece] = []
        for p in pieces[max(mine) + 1:]:
            if (p.polarity in (Polarity.NEGATED, Polarity.CANCELLED)
                    or set(self.goal_check.parts_named(p.text, own)) - own
                    or any(v in p.text.lower() for v in others)):
                break
            more.append(p)
        return f"{told}. {self.report.request[more[0].start:more[-1].start + len(more[-1].text)]}" if more else told

    def _filled_on_screen(self, call: ToolCall) -> str | None:
        """The value handed to the navigator for a field of an entry (`_finish_entry`) that holds every value of
        `call` copied from the request, else None: the caller's second entry made of the same words (a value
        it resolved, a datetime, is not the request's words). A look-up makes no entry: "..., it's at 22 Alder
        Lane. Then show me where that is on the map" shows the place the event's details gave."""
        if self._effect(call.name) == "none":
            return None
        said = self.report.request.lower()
        values = [v.lower() for v in call.arguments.values() if isinstance(v, str) and v.strip() and v.lower() in said]
        return next((p for p in self._fields_filled if values and all(v in p.lower() for v in values)), None)

    def _entry_name(self, call: ToolCall) -> str | None:
        """The name a call gave the entry it made: its argument named as a name field is (`screens.json`
        ``title_fields``: an event's title), else None (the navigator could not tell the entry from others)."""
        from mobile_actions.android.screens import load_screens

        titles = load_screens().title_fields
        return next((str(v) for k, v in call.arguments.items()
                     if isinstance(v, str) and v.strip() and k.lower() in titles), None)

    def _effect(self, name: str) -> str:
        return self.catalogue[name].effect if name in self.catalogue else "changes"

    def _settle_interrupted(self, key: str, what: str, call: ToolCall, binding: Any, data: dict) -> dict | None:
        """A call whose intent was recorded but not its outcome (the connection dropped, or the process was
        killed, while it ran) may have happened: never run it again without proof it did not. The phone is
        asked (the binding's `was_done` check); if it cannot tell, a person is asked again, even under --yes;
        with nobody to ask the call is reported unknown. None: run it."""
        from mobile_actions.android.device import DeviceError
        from mobile_actions.android.dispatch import was_done

        try:
            happened = was_done(call, self.device, binding)
        except DeviceError as e:
            raise Interrupted(f"{call.name}: {e}") from e
        if happened:
            reason = "already done on the phone before the connection dropped: not repeated"
            self._done_calls.append(call)
            return self._call_end(key, what, "done", reason, data, {"status": "done"})
        if happened is False:
            return None
        details = ["the run stopped while it ran, and the phone cannot tell whether it happened",
                   "run it again (it may then happen twice)?"]
        if self._confirm(f"{what} may already have been done", details, again=True):
            return None
        reason = "unknown: the run stopped mid-call and nobody confirmed a retry; not repeated"
        return self._call_end(key, what, "unknown", reason, data, {"status": "unknown", "reason": reason})

    def _call_end(self, key: str, what: str, status: str, reason: str, data: dict, result: dict, *,
                  item: bool = True, item_status: str | None = None, ms: float | None = None) -> dict:
        item_status = item_status or {"failed": "not_done"}.get(status, status)
        self._write(StepRecord("dispatch", key, status, ms=ms, data={
            **data, "reason": reason, "result": result, "item_status": item_status, "what": what}))
        if item:
            self._item(what, item_status, reason)
        return result

    def _read_result(self, tool: str) -> dict[str, Any]:
        """What the screen shows after an informative tool (its binding's ``reads``), as tool-result fields. A
        call with a reader returns information, so the caller gets a follow-up turn (this is how "email the
        address of the Louvre" chains show_map -> send_email)."""
        readers = self.bindings[tool].reads if tool in self.bindings else ()
        if not readers or self.device is None:
            return {}
        from mobile_actions.android.dispatch import StepFailedError, dump_ui, find_node

        try:
            xml_text = dump_ui(self.device)
        except StepFailedError:
            return {}
        out = {}
        for reader in readers:
            node = find_node(xml_text, reader.selector)
            if node is not None and (node.get("text") or node.get("content-desc")):
                out[reader.field] = node.get("text") or node.get("content-desc")
        return out

    def _confirm(self, what: str, details: Sequence[str], again: bool = False) -> bool:
        """Go ahead? --yes answers, except ``again``: something that may already have happened is only
        repeated when a person says so."""
        if self.config.yes and not again:
            return True
        return bool(self.confirm and self.confirm(what, list(details)))

    # ------------------------------------------------------------------ navigator
    def _absent_app(self, instruction: str) -> str | None:
        """The first app the goal names (`goals.named_apps`) of which the phone has no package (``pm path``,
        an argument list), else None (also with no device to ask: a dry run)."""
        if self.device is None:
            return None
        for name, packages in named_apps(instruction):
            if not any(self.device.shell(["pm", "path", p]).exit_code == 0 for p in packages):
                return name
        return None

    def _addressed(self, task: str, part: str) -> str:
        """A part of the request handed to the screen alone, with the name its "him"/"her" stands for
        (`acting.named_addressee`), shown in the trace when it does."""
        named = named_addressee(part, self.report.request)
        if named != part:
            self._write(StepRecord("gate", f"addressee:{task}", "named", data={
                "rule": "addressee-named", "part": part, "goal": named}))
        return named

    def _values_for(self, task: str, goal: str, hierarchy: str) -> tuple[str, ...]:
        """The day, time and length of the entry `goal` makes, as the toolkit reads them, when the screen shows
        a form that keeps them (`outcome.when_and_length`: "dinner w/ the Okonkwos fri 7:30 ..." on Calendar's
        event form: "date 2025-06-06", "time 19:30"); written to the trace (rule `values-read`) when any."""
        from mobile_actions.errors import ScreenError
        from mobile_actions.navigator.screen import parse_hierarchy

        try:
            labels = [e.label for e in parse_hierarchy(hierarchy).elements if e.kind == "field"]
        except ScreenError:
            return ()
        now = datetime.fromisoformat(self.config.now) if self.config.now else self._clock()
        values = when_and_length(goal, form_part(labels), now)
        if values:
            self._write(StepRecord("gate", f"values:{task}", "read", data={"rule": "values-read", "goal": goal,
                                                                          "added": list(values)}))
        return values

    def _navigate(self, task: str, instruction: str, why: str, what: str | None = None, part: str | None = None,
                  makes: bool = False, pieces: Sequence[str] = ()) -> str:
        """The navigator loop for one GUI task; returns the report status (done / not_done / refused). `part`: the
        part of the phone the task works on, when the runner knows it (the entry a call made): its COMPLETE is
        judged there alone, and each of `pieces` (the details handed over for it) must show there. `makes`: the
        task is a part of the request the screen makes itself; once the screen shows a form that keeps a day and
        a time, the goal the navigator reads goes on with them as the toolkit reads them (`_values_for`), and the
        task gets `STEPS_PER_VALUE` more steps for each."""
        from mobile_actions.android.device import DeviceError
        from mobile_actions.android.dispatch import dump_ui

        cfg = self.config
        what = what or f"GUI: {instruction}"
        end_key = f"navtask:{task}"
        done = self.prior.finished(end_key) if self.prior else None
        if done is not None:
            self.report.nav_steps += len(self.prior.nav_steps(task))
            self._item(what, done["item_status"], done.get("reason", ""))
            self._handed.setdefault(instruction, done["item_status"])
            return done["item_status"]

        def end(outcome: str, item_status: str, reason: str) -> str:
            self._write(StepRecord("nav_end", end_key, item_status, data={
                "task": task, "instruction": instruction, "why": why, "outcome": outcome,
                "item_status": item_status, "reason": reason}))
            self._item(what, item_status, reason)
            # a goal navigated once is not handed over again in this run (a refused call that names the same
            # part: the note made, then opened again and its title typed over)
            self._handed.setdefault(instruction, item_status)
            return item_status

        if cfg.dry_run:
            return end("dry_run", "planned", f"dry run: would hand to the navigator ({why})")
        absent = self._absent_app(instruction)
        if absent is not None:   # "whatsapp jen ...": an SMS would be a substitute the person did not ask for
            return end("absent_app", "not_done", f"the goal names {absent}, which this phone does not have; "
                                                 "no other app is used instead")
        nav = self.navigator
        if nav is None:
            return end("no_navigator", "not_done", f"no navigator model ({why}); GUI work not done")
        prior_steps = self.prior.nav_steps(task) if self.prior else []
        doubt = self._nav_in_doubt(task, prior_steps)
        history: list[tuple[str, bytes]] = []
        hashes: list[str] = []
        typed: list[str] = []   # the texts the navigator typed in this task
        rows_seen: set[tuple[str, str]] = set()   # (package, text) of the list rows this task saw
        opened: ScreenItem | None = None   # the entry an edit typed over the name of (`items.typed_over`)
        for r in prior_steps:
            hashes.append(r.get("screen_hash", ""))
            if r.get("action") and r.get("argv"):
                shot = screen_file(self.writer.dir, r.get("screen"))
                if shot is None:
                    raise HybridError(f"{self.writer.dir}: trace record {r.get('seq')}: {r.get('screen')!r} is not "
                                      "a screenshot of this run folder; not resuming")
                history.append((r["action"]["command"], shot.read_bytes()))
                if r["action"].get("kind") == "TYPE":
                    typed.append(str(r["action"].get("text") or ""))
        self.report.nav_steps += len(prior_steps)
        step = len(prior_steps)
        start = self._task_start(task, resumed=bool(prior_steps))
        goal, limit, valued = instruction, cfg.max_steps, not makes
        try:
            while step < limit:
                try:
                    png = screencap(self.device)
                except HybridError as e:
                    return end("error", "not_done", str(e))
                h = hashlib.sha256(png).hexdigest()[:16]
                hashes.append(h)
                rel = self.writer.screen(png)
                base = {"task": task, "step": step, "instruction": goal, "screen": rel, "screen_hash": h}
                if len(hashes) >= cfg.stall_repeats and len(set(hashes[-cfg.stall_repeats:])) == 1:
                    self._write(StepRecord("nav", f"nav:{task}:{step}", "skipped", data={**base, "note": "stall"}))
                    return end("stall", "not_done",
                               f"the screen did not change for {cfg.stall_repeats - 1} actions (stalled)")
                t0 = time.perf_counter()
                hierarchy = None
                try:
                    if getattr(nav, "reads_hierarchy", False):   # the text navigator reads the accessibility tree
                        hierarchy = dump_ui(self.device)
                        rows_seen.update(list_rows(nodes(hierarchy)))
                        if not valued and (values := self._values_for(task, instruction, hierarchy)):
                            goal, valued = ", ".join([instruction, *values]), True
                            limit += STEPS_PER_VALUE * len(values)
                            base["instruction"] = goal
                        pred = nav.next_action(goal, png, history, hierarchy=hierarchy)
                    else:
                        pred = nav.next_action(goal, png, history)
                except Exception as e:  # a service or model failure ends this GUI task, not the run
                    self._write(StepRecord("nav", f"nav:{task}:{step}", "failed", data={**base, "error": str(e)}))
                    return end("error", "not_done", f"navigator failed: {e}")
                model_ms = (time.perf_counter() - t0) * 1e3
                rec = {**base, "raw": pred.text, "model_ms": round(model_ms, 1),
                       "action": pred.action.to_json() if pred.action is not None else None}
                if getattr(pred, "guards", ()):   # what the text navigator's guards narrowed on this screen
                    rec["guards_fired"] = [f.to_json() for f in pred.guards]
                key = f"nav:{task}:{step}"
                if pred.action is None:
                    self._write(StepRecord("nav", key, "refused", data={**rec, "error": pred.error}))
                    return end("unparseable", "not_done",
                               f"navigator output {pred.text!r} is not an action ({pred.error}); not acted on")
                kind = pred.action.kind
                if kind in ("COMPLETE", "IMPOSSIBLE"):
                    self._write(StepRecord("nav", key, "done", data=rec))
                    self.report.nav_steps += 1
                    if kind == "COMPLETE":
                        return end("complete", *self._judge_complete(task, instruction, start, step, part, pieces))
                    return end("impossible", "not_done", f"navigator said IMPOSSIBLE after {step} actions"
                               + (f": {pred.error}" if pred.error else ""))
                w, hgt = png_size(png)
                argv = action_argv(pred.action, w, hgt)
                rec["argv"] = argv
                guarded = self._guard(pred.action, argv)
                if guarded is not None:
                    guard, item = guarded
                    rec["guard"] = guard
                    # a form's item may be one the navigator named itself by typing it (a new note's title)
                    said = " ".join([instruction, *typed]) if item and item.source == "field" else instruction
                    wrong = unnamed(said, item, guard) if item is not None else None
                    if wrong is None and opened is not None and item is not None and item.source == "field":
                        wrong = unnamed(instruction, opened, guard)   # the entry opened, whatever its new name
                    seen = {t for p, t in rows_seen if item is not None and p == item.package}
                    every = item is not None and item.source != "switch" and removes_every(instruction)
                    if wrong is not None and every:
                        # "delete every note": any note is named; each tap is still confirmed
                        rec["note"] = f"{guard!r} on {wrong.item.text!r}: the goal removes every item of its kind"
                        wrong = None
                    if wrong is not None and loosely_named(said, wrong, seen):
                        # "priya changed her number": Priya Nair, the one row seen that the goal's words fit
                        rec["note"] = f"{guard!r} on {wrong.item.text!r}: the one item seen that the goal names"
                        rec["loosely_named"] = {"item": wrong.item.text, "missing": wrong.missing}
                        wrong = None
                    rival = better_named(said, item, seen) if (
                        wrong is None and item is not None and item.source != "switch" and not every) else None
                    if rival is not None:   # "delete the old wifi password note": not "Wifi password"
                        rec["better_named"] = {"item": item.text, "rival": rival}
                        self._write(StepRecord("nav", key, "refused", data=rec))
                        return end("refused", "refused", f"tap on {guard!r} refused: it acts on {item.text!r}, and "
                                                         f"{rival!r} fits the goal's words better")
                    if wrong is not None:   # "delete the 6:30 alarm" and the tap deletes the 6:00 one
                        rec["unnamed"] = {"item": wrong.item.text, "from": wrong.item.source, "missing": wrong.missing}
                        self._write(StepRecord("nav", key, "refused", data=rec))
                        return end("refused", "refused", f"tap on {guard!r} refused: {wrong.why}")
                    held = declined_tap(self.report.request, guard)
                    if held is not None:   # "draft it but dont send it": no confirmation makes this tap asked
                        rec["declined"] = {"piece": held.text, "cue": held.cue, "polarity": held.polarity.value}
                        self._write(StepRecord("nav", key, "refused", data=rec))
                        return end("refused", "refused", f"tap on {guard!r} refused: {declined_why(held)}")
                    if not self._confirm(f"navigator wants to tap {guard!r}"
                                         + (f" ({rec['note']})" if rec.get("note") else ""), [" ".join(argv)],
                                         again=bool(doubt and doubt.get("guard"))):
                        self._write(StepRecord("nav", key, "refused", data=rec))
                        return end("refused", "refused",
                                   f"tap on {guard!r} (it sends, stores, removes or switches an item) not confirmed")
                if kind == "TYPE" and opened is None and hierarchy is not None and edits_what_exists(instruction):
                    opened = typed_over(nodes(hierarchy))
                self._write(StepRecord("intent", key, data=rec))   # write-ahead, before the device acts
                t1 = time.perf_counter()
                r = self.device.shell(argv)
                rec.update(exit_code=r.exit_code, stderr=r.stderr[:RESULT_LIMIT])
                self._write(StepRecord("nav", key, "done", ms=model_ms + (time.perf_counter() - t1) * 1e3, data=rec))
                self.report.nav_steps += 1
                history.append((pred.action.to_command(), png))
                if kind == "TYPE":
                    typed.append(pred.action.text or "")
                step += 1
        except DeviceError as e:
            raise Interrupted(f"navigator ({task}): {e}") from e
        return end("step_limit", "not_done", f"step limit ({cfg.max_steps}) reached")

    def _nav_in_doubt(self, task: str, steps: list[dict[str, Any]]) -> dict[str, Any] | None:
        """The navigator action a stopped run set out to do (its intent, no outcome): it may or may not have
        happened, so it is never replayed. It is recorded *unknown* and joins `steps` (the navigator's
        history), and the navigator looks at the screen as it is now. Returns that record, else None."""
        key = f"nav:{task}:{len(steps)}"
        intent = self.prior.in_doubt(key) if self.prior else None
        if intent is None:
            return None
        data = {k: v for k, v in intent.items() if k not in ("seq", "t", "type", "key", "status")}
        rec = self._write(StepRecord("nav", key, "unknown", data={
            **data, "note": "the run stopped while this action ran: it may or may not have happened; not repeated"}))
        steps.append(rec)
        return rec

    def _task_start(self, task: str, resumed: bool) -> PhoneView | None:
        """The phone as a GUI task began, recorded (``nav_start``) so that a resumed task is judged against
        the same start. None when it cannot be known: a task resumed midway without that record."""
        key = f"navstart:{task}"
        rec = self.prior.finished(key) if self.prior else None
        if rec is not None:
            try:
                return PhoneView.from_json(rec.get("phone"))
            except ValueError:
                return None
        if resumed:
            return None
        view = self._phone_view(task)
        self._write(StepRecord("nav_start", key, "done", data={"task": task, "phone": view.to_json()}))
        return view

    def _phone_view(self, task: str) -> PhoneView:
        """What can be read of the phone now: its state (the virtual phone) and its accessibility tree."""
        from mobile_actions.android.device import DeviceError
        from mobile_actions.android.dispatch import StepFailedError, dump_ui

        try:
            dump: str | None = dump_ui(self.device)
        except StepFailedError:
            dump = None
        except DeviceError as e:
            raise Interrupted(f"navigator ({task}): {e}") from e
        return PhoneView.read(self.session.state() if self.session is not None else None, dump)

    def _judge_complete(self, task: str, instruction: str, start: PhoneView | None, step: int,
                        part: str | None = None, pieces: Sequence[str] = ()) -> tuple[str, str]:
        """(item status, reason) for a navigator's COMPLETE: done only when the phone shows it (`GoalCheck`), in
        `part` when the task works on one, with each of `pieces`."""
        verdict = self.goal_check.judge(instruction, start, self._phone_view(task), part=part, pieces=pieces)
        self._write(StepRecord("check", status=verdict.status, data={"task": task, "goal": instruction,
                                                                     **verdict.to_json()}))
        said = f"navigator said COMPLETE after {step} actions"
        if verdict.status == "done":
            return "done", f"{said}; {verdict.reason}"
        return verdict.status, f"{said}, but {verdict.reason}"

    def _declines(self, label: str) -> str | None:
        """Why the request declines a binding's tap on a send/save/delete-type button (`declined_tap`), or None:
        "fill in a new contact for derek but dont hit save" fills the form and leaves it unsaved."""
        held = declined_tap(self.report.request, label)
        return None if held is None else declined_why(held)

    def _guard(self, action: Any, argv: list[str] | None) -> tuple[str, ScreenItem | None] | None:
        """The label of a send/save/delete-type button a tap would hit and, for one that removes, saves or sends
        something, the item it acts on (`items.tapped_item`, `items.form_item`, `items.recipient_item`: whom it
        sends to); for a switch that names its item by a time or number, its label and that item
        (`items.switched_item`); None for any other tap."""
        if action.kind not in ("CLICK", "LONG_PRESS") or not argv:
            return None
        from mobile_actions.android.dispatch import StepFailedError, dump_ui

        try:
            dump = dump_ui(self.device)
        except StepFailedError:
            return None
        node = node_at(dump, int(argv[2]), int(argv[3]))
        if node is None:
            return None
        label = node.get("text") or node.get("content-desc") or ""
        verbs = confirm_button(label)
        if not verbs:   # a switch that names its item (an alarm's): a state change on that item, checked too
            switched = switched_item(node)
            return (label, switched) if switched is not None else None
        lex = lexicons.load()
        if any(lex.effect.removes.find(v) for v in verbs):
            return label, tapped_item(nodes(dump), node)
        if any(v in lex.navigator.save_buttons for v in verbs):
            return label, form_item(nodes(dump), node)
        if any(v in lex.effect.sends for v in verbs):
            return label, recipient_item(nodes(dump), node, goal_words().screens.address_fields)
        return label, None

    # ------------------------------------------------------------------ bookkeeping
    def _item(self, what: str, status: str, reason: str) -> None:
        self.report.items.append(Item(what, status, reason))

    def _restate(self, what: str, status: str, reason: str) -> None:
        """The last item reported for `what` now stands as `status` (a call's entry finished on the screen)."""
        at = max(i for i, item in enumerate(self.report.items) if item.what == what)
        self.report.items[at] = Item(what, status, reason)

    def _write(self, rec: StepRecord) -> dict[str, Any]:
        out = self.writer.append(rec.to_json())
        self.on_event(out)
        return out

    def _clock(self) -> datetime:
        """What "now" is for the caller: the virtual phone's own clock (a setup may have set it), else this
        computer's."""
        phone = self.session.phone if self.session is not None else None
        return phone.now().replace(tzinfo=None) if phone is not None else datetime.now()

    def _device_info(self) -> dict[str, Any]:
        if self.session is None:
            return {"serial": None, "virtual": False}
        return {"serial": self.session.serial, "virtual": self.session.virtual}


def _start_of(call: ToolCall) -> datetime | None:
    """The first value of `call` written as a date and time ("2025-06-07T08:00:00"): the start of the entry it
    makes, from which a time said of the entry's end gives its length."""
    for v in call.arguments.values():
        if isinstance(v, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?", v):
            try:
                return datetime.fromisoformat(v)
            except ValueError:
                continue
    return None


def describe_call(call: ToolCall) -> str:
    """``send_email(to="ana@example.com", subject="Hi")`` — how calls appear in reports."""
    args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in call.arguments.items())
    return f"{call.name}({args})"


def unclaimed_parts(request: str, calls: Sequence[ToolCall], catalogue: Any, check: GoalCheck) -> list[str]:
    """The parts of `request` the person asks for that no call answered (`acting.claimed`), routed to the screen
    (a routed goal sharing their words) or refused, and that name a part of the phone or a verb that changes,
    removes or looks something up (`GoalCheck.actionable`): steps no tool covered, for the navigator, each with
    the whole message it passes on and what the person tells just before it. An aside
    ("ugh long day") names nothing and is left alone; a part the person does not ask for is never one."""
    taken = {p for c in calls if c.name != SCREEN_TOOL for p in claimed(c, request, catalogue)
             if not _looks_elsewhere(c, p, catalogue, check)}
    routed = [check.keys(check.words(str(c.arguments.get("goal", "")))) for c in calls if c.name == SCREEN_TOOL]
    out, passed_on, told = [], (0, 0), None
    for piece in read_request(request):
        if passed_on[0] <= piece.start < passed_on[1]:
            continue    # inside the message a part before passes on ("reply saying yes and that i'll bring ...")
        if piece.polarity in (Polarity.STATED, Polarity.PAST):
            told = told or piece    # what the person tells just before a part is its context: "dad just texted
            continue                # me about sunday, can you reply ..." says whom to reply to
        if piece.polarity is not Polarity.ASKED or piece in taken or not check.actionable(piece.text):
            told = None
            continue
        if not any(check.keys(check.words(piece.text)) & goal for goal in routed):
            end = max(piece.start + len(piece.text), piece.message[1] if piece.message else 0)
            out.append(request[(told or piece).start:end])
            passed_on = piece.message or passed_on
        told = None
    return out


def _looks_elsewhere(call: ToolCall, piece: Piece, catalogue: Any, check: GoalCheck) -> bool:
    """Whether `call` is a look-up (it changes nothing) and `piece` names a part of the phone its tool does not work
    on, or asks a part of the phone for a state (`GoalCheck.sets_state`): a map shown of "make a note titled router
    saying model TP-Link AX55" copies the piece's words but makes no note, and Wi-Fi settings opened for "wifi on"
    switch nothing on, so the piece is still the screen's to do."""
    tool = catalogue[call.name] if call.name in catalogue else None
    if tool is None or tool.effect != "none":
        return False
    named = set(check.parts_named(piece.text))
    return bool(named - set(check.tool_parts(tool.name, tool.description))) or check.sets_state(piece.text)


def declined_tap(request: str, label: str) -> Piece | None:
    """The piece of `request` that does not ask for what a send/delete-type button does (its label's verb in a
    negated, cancelled, supposed, reported, past or questioned piece: "write it up but dont send it" for
    "Send"), else None. Such a tap is refused whatever is confirmed: `--yes` says yes to what was asked."""
    verbs = confirm_button(label)
    endings = lexicons.load().navigator.verb_endings
    for piece in read_request(request):
        if not piece.asked and any(re.search(rf"(?<![\w']){_inflected(v, endings)}(?![\w'])", piece.text, re.I)
                                   for v in verbs):
            return piece
    return None


def declined_why(piece: Piece) -> str:
    """How a declined tap is reported: the reason and the cue in its piece."""
    return f"{REASONS[piece.polarity]} ({piece.cue!r} in {piece.text.strip()!r})"


def _inflected(verb: str, endings: Sequence[str]) -> str:
    """A pattern for `verb` as a request writes it: "save", "saves", "saved", "saving" (the lexicon's
    `navigator.verb_endings`; a final "e" may drop before them)."""
    stem = verb[:-1] if verb.endswith("e") else verb
    return rf"(?:{re.escape(verb)}|{re.escape(stem)}(?:{lexicons.alternation(endings)}))"


def app_goals(request: str, check: GoalCheck) -> list[str]:
    """The request as consecutive goals, one for each part of the phone its pieces name in turn ("set an alarm
    for 6:30 on weekdays and text Ana I'll be late": the alarm, then the text), each in the person's own words:
    a navigator works one app at a time. A piece that names no part stays with the goal before it ("text mom
    and tell her i love you"). The whole request is the one goal when fewer than two parts are named in turn,
    or when a piece that names a part does not ask (the gate and `held_back` read those on the whole request);
    a piece that names none and asks nothing is the context of the goal after it ("going to bed. turn on do not
    disturb and set an alarm for 6:40": do not disturb, then the alarm)."""
    pieces = read_request(request)
    if not all(p.asked or not check.parts_named(p.text) for p in pieces):
        return [request]
    groups: list[tuple[list[Piece], set[str]]] = []
    for piece in pieces:
        # a piece that asks nothing of the phone names no part of its own: "screen is sooo dim i cant see
        # anything outside, brightness all the way up" is one goal, not a screen goal and a brightness goal
        # a word of the entry the goal before works on names its field ("... 3:45pm. ask about the ear thing (put
        # that in the notes)": the event's Description, not the Notes app)
        named = set(check.parts_named(piece.text, groups[-1][1] if groups else ())) \
            if check.actionable(piece.text) else set()
        # the goal before holds, whatever they name, a piece inside the message it passes on ("text maria: running
        # late, save me a seat"), and one that asks nothing itself after a colon or a dash ("make a note - cabin
        # wifi password is pinecone2025") or after a comma that follows a colon ("make a note: cabin door code
        # 4471, wifi pinecone88")
        before = groups[-1][0][-1] if groups else None
        gap = request[before.start + len(before.text):piece.start].strip() if before is not None else ""
        listed = gap == "," and before is not None and before.sentence == piece.sentence \
            and ":" in request[groups[-1][0][0].start:before.start + len(before.text)]
        content = before is not None and (
            any(p.message and p.message[0] <= piece.start < p.message[1] for p in groups[-1][0])
            or (gap in MESSAGE_MARKS or listed) and not check.leads_with_verb(piece.text))
        if groups and (content or not named or named & groups[-1][1] or not groups[-1][1]):
            groups[-1][0].append(piece)
            groups[-1][1].update(named)
        else:
            groups.append(([piece], named))
    if sum(1 for _, named in groups if named) < 2:
        return [request]
    return [request[g[0].start:g[-1].start + len(g[-1].text)] for g, _ in groups]


def routed_goal(goal: str, request: str, check: GoalCheck, claimed_pieces: Sequence[Piece]) -> str | None:
    """The goal the caller routed to the screen, widened to the words of the request it stands for: the one of
    `app_goals` (the request, or its part for one app) that holds it, unless that part has a piece that another
    call answers and that names that call's tool (`claimed_pieces`). A 270M router shortens a goal to its verb
    ("make a note" of "make a note: grocery list - eggs, oat milk"), and the navigator then has nothing to type.
    A goal that is not a span of the request is kept when its words are all the request's and a part or piece no
    other call answers shares half of them or more ("turn on Bluetooth" of "turn on the flashlight and
    Bluetooth"); else it is that part, the one sharing most of its words (the screen acts on the person's words
    only); None when there is no such part ("text WiFi guest" of "new note, title Wifi guest, text: ...", whose
    Wi-Fi piece another call answers)."""
    def free(part: str) -> bool:
        start = request.find(part)
        return not any(start <= p.start < start + len(part) for p in claimed_pieces)

    def words(text: str) -> set[str]:   # a word joined by a hyphen is one word ("Wi-Fi" is "wifi", not "wi", "fi")
        return set(re.findall(r"[^\W_]{4,}", joined(text.lower())))

    parts = app_goals(request, check)
    at = request.lower().find(" ".join(goal.split()).lower()) if goal.strip() else -1
    if at < 0:
        own = words(goal)
        shared = [(sum(says_word(words(part), w) for w in own), part)
                  for part in [*parts, *(p.text for p in read_request(request))] if free(part)]
        best = max(shared, default=(0, ""))
        if not best[0] or 2 * best[0] < len(own):   # mostly about a part no other call answers, or nowhere
            return None
        # the person's words put together ("turn on Bluetooth" of "turn on the flashlight and Bluetooth") stay
        return goal if own <= words(request) else best[1]
    for part in parts:
        start = request.find(part)
        if start <= at < start + len(part):
            return part if len(part) > len(goal) and free(part) else goal
    return goal


def held_back(request: str, check: GoalCheck) -> Declined | None:
    """The first piece of `request` that says not to do something, asks about it or tells it as done, when no
    piece that may ask something asks anything of the phone (`GoalCheck.actionable`): then the request is no
    goal for the screen ("dont text mom yet, still need to ask dad" had the navigator compose the text). The
    navigator otherwise gets the whole request, not its asked pieces: the polarity reader takes "yes ill be
    there around noon" for a supposition, and cutting it out loses the text to send."""
    pieces = read_request(request)
    if all(p.asked for p in pieces) or any(p.asked and check.actionable(p.text) for p in pieces):
        return None
    first = next(p for p in pieces if not p.asked)
    return Declined(first.text, first.polarity, first.cue)


def tool_instruction(call: ToolCall, catalogue: Any) -> str:
    """A navigator instruction for a tool call (its description, plus the arguments)."""
    desc = catalogue[call.name].description.rstrip(".") if call.name in catalogue else call.name
    args = ", ".join(f"{k}: {v}" for k, v in call.arguments.items())
    return desc + (f" ({args})" if args else "")


def _outcome_json(o: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"step": o.step.describe()}
    if o.result is not None:
        out.update(argv=list(o.result.argv), exit_code=o.result.exit_code,
                   stdout=o.result.stdout[:RESULT_LIMIT], stderr=o.result.stderr[:RESULT_LIMIT])
    if o.note:
        out["note"] = o.note
    return out



def run_request(request: str, config: RunConfig | None = None, **kwargs: Any) -> RunReport:
    """One-shot convenience: a `Runner`, one run, its own device session closed afterwards."""
    runner = Runner(config, **kwargs)
    try:
        return runner.run(request)
    finally:
        runner.close()


def resume_run(run_dir: str | Path, config: RunConfig | None = None, **kwargs: Any) -> RunReport:
    runner = Runner(config, **kwargs)
    try:
        return runner.resume(run_dir)
    finally:
        runner.close()
