"""Hybrid runs: the caller turns a request into tool calls, calls are dispatched, GUI work goes to the navigator.

One run, end to end (docs/hybrid.md has the whole picture)::

    request ─► caller turn (FunctionGemma prompt ─► raw ─► parsed calls)
            ─► per call: validate ─► confirm (send-type) ─► dispatch (adb) ─► tool result
            ─► follow-up caller turn with the tool results (FunctionGemma response format) while a tool
               returned information (show_map's place card read from `uiautomator dump`)
            ─► navigator loop for GUI work: screencap ─► navigator ─► action ─► `input …` ─► … until
               COMPLETE, IMPOSSIBLE, the step limit or a repeated-screen stall
    every step ─► trace (trace.py) ─► replay / resume / benchmark

How a request is split between tools and GUI (the honest route; see docs/hybrid.md):
- every call the caller makes is validated on its own and dispatched; an invalid call is refused, never
  "repaired", and nothing is dispatched from output that does not parse;
- a tool bound to GUI steps (the flashlight's Quick Settings tile) runs its scripted tap steps first;
  only when they fail is the navigator handed that call as an instruction;
- when the caller makes no valid call (it refused: the request is GUI work no tool covers), the navigator
  gets the whole request (``navigate="auto"``); ``navigate="always"`` also hands it over after the tool
  calls, for mixed requests whose GUI half no tool covers; ``"never"`` keeps runs tool-only.

Safety: send-type tools (``confirm`` in the bindings) and navigator taps on send/delete-type buttons are
asked for (``RunConfig.yes`` or the ``confirm`` callback); refused otherwise. The step limit bounds the
navigator. `RunReport` lists what was done, not done and refused, with reasons.

The caller and the navigator are injected (anything with ``call_messages(messages, tools)`` /
``next_action(...)``); `resolve_caller` / `resolve_navigator` build the shipped defaults. The library never
prints: progress goes to an ``on_event`` callback.
"""
from __future__ import annotations

import hashlib
import io
import json
import re
import sys
import time
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

from mobile_actions.calls import Problem, ToolCall, validate_call
from mobile_actions.trace import Trace, TraceWriter, new_run_dir

RESULT_LIMIT = 2000            # characters of device output kept per command in the trace
Confirm = Callable[[str, Sequence[str]], bool]   # (what, detail lines) -> go ahead?
Event = Callable[[dict[str, Any]], None]

# Buttons whose tap sends or destroys something: a navigator tap on one needs confirmation.
DANGEROUS_LABEL = re.compile(r"\b(send|delete|remove|discard|clear all|erase|uninstall|pay|buy|post|reset)\b", re.I)

# Tool results worth giving back to the caller: what the screen shows after the call, read from
# `uiautomator dump` by selector. A call with a reader returns information, so the caller gets a follow-up
# turn (this is how "email the address of the Louvre" chains show_map -> send_email).
RESULT_READERS: dict[str, dict[str, dict[str, str]]] = {
    "show_map": {"place": {"resource-id": "com.google.android.apps.maps:id/title"},
                 "address": {"resource-id": "com.google.android.apps.maps:id/address"},
                 "details": {"resource-id": "com.google.android.apps.maps:id/summary"}},
}


class HybridError(RuntimeError):
    """A run that cannot start (no caller, no device, a run folder that cannot be resumed)."""


# ============================================================================================ config / records
@dataclass
class RunConfig:
    """Everything that shapes a run; recorded in the trace header so `resume` repeats it."""

    model: str = "default"              # caller: default | DIR (ONNX export or PyTorch checkpoint/adapter)
    navigator: str | None = "default"   # default | DIR | http(s)://URL | none
    serial: str | None = None           # device; None: $ANDROID_SERIAL, the only device, else the virtual phone
    tools: str = "mobile_actions"
    bindings: str | None = None         # default: <tools>.android.json
    dry_run: bool = False
    yes: bool = False                   # confirm send-type actions without asking (not recorded: asked again on resume)
    max_steps: int = 15                 # navigator actions per GUI task
    max_turns: int = 3                  # caller turns (the first + follow-ups with tool results)
    navigate: str = "auto"              # auto | always | never
    stall_repeats: int = 3              # the same screen this many times in a row = stalled
    history: int = 4                    # navigator history frames
    screens: bool = True                # a screenshot after each dispatched call (the navigator always takes them)
    now: str | None = None              # the caller's clock, YYYY-MM-DDTHH:MM:SS (default: the run's start)
    runs_dir: str = "runs"

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("yes")
        return d

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "RunConfig":
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


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
    status: str          # done | not_done | refused | planned | skipped
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
    def not_done(self) -> list[Item]:
        return self.by_status("not_done", "skipped", "planned")

    @property
    def refused(self) -> list[Item]:
        return self.by_status("refused")

    def to_json(self) -> dict[str, Any]:
        return {"run_dir": str(self.run_dir), "request": self.request, "status": self.status,
                "items": [i.to_json() for i in self.items], "caller_turns": self.caller_turns,
                "calls_dispatched": self.calls_dispatched, "nav_steps": self.nav_steps, "steps": self.steps,
                "seconds": round(self.seconds, 2), "error": self.error}


# ============================================================================================ callers
class CallerLike(Protocol):
    def call_messages(self, messages: list[dict], tools: Any) -> Any: ...  # .calls .text .problems .raw .timings


class TorchCaller:
    """The caller on PyTorch (until an ONNX export exists): greedy, KV-cached, stops on the turn's end.

    Why a text cut-off: the runner needs calls; an answer that does not start with a call is a refusal
    whose words matter little, and an untrained model would otherwise ramble to ``max_new_tokens``.
    """

    def __init__(self, spec: str = "default", *, max_new_tokens: int = 128, text_tokens: int = 12) -> None:
        import warnings

        from mobile_actions.evaluate import model_layout
        from mobile_actions.model import load_caller

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self.model, self.tokenizer = load_caller(spec)
        self.warnings = [str(w.message) for w in caught if "adapter" in str(w.message)]
        self.layout = model_layout(spec)
        self.spec = spec
        self.max_new_tokens, self.text_tokens = max_new_tokens, text_tokens

    def call_messages(self, messages: list[dict], tools: Any):
        import torch

        from mobile_actions import wire
        from mobile_actions.model import STOP_TOKEN_IDS

        t0 = time.perf_counter()
        prompt = wire.render(messages, tools, add_generation_prompt=True, layout=self.layout)
        ids = self.tokenizer(prompt, add_special_tokens=False)["input_ids"]
        start_call = wire.CONTROL_TOKEN_IDS[wire.START_CALL]
        out: list[int] = []
        with torch.inference_mode():
            res = self.model(input_ids=torch.tensor([ids]), use_cache=True)
            ttft = (time.perf_counter() - t0) * 1e3
            while len(out) < self.max_new_tokens:
                nxt = int(res.logits[0, -1].argmax())
                if nxt in STOP_TOKEN_IDS:
                    break
                out.append(nxt)
                if len(out) >= self.text_tokens and out[0] != start_call:
                    break
                res = self.model(input_ids=torch.tensor([[nxt]]), past_key_values=res.past_key_values, use_cache=True)
        raw = self.tokenizer.decode(out, skip_special_tokens=False)
        return finish_result(raw, tools, {"prompt_tokens": len(ids), "new_tokens": len(out), "ttft_ms": round(ttft, 1),
                                          "total_ms": round((time.perf_counter() - t0) * 1e3, 1)})


def finish_result(raw: str, tools: Any, timings: dict):
    """Parse + validate raw model output into the runtime's `CallResult` shape."""
    from mobile_actions.runtime import result_from_raw

    return result_from_raw(raw, tools, timings)


def resolve_caller(spec: str = "default", progress: Callable[[str], None] | None = None) -> CallerLike:
    """The caller for a ``--model`` spec.

    ``default``: the bundled caller on PyTorch (`TorchCaller`).
    A directory with ``manifest.json`` is an ONNX export; any other spec goes to PyTorch.
    """
    say = progress or (lambda _m: None)
    from mobile_actions.runtime import Caller

    if spec == "default":
        # The bundled adapter's int4 export still loses accuracy (40 % vs 50 % exact match on 40
        # held-out rows, docs/runtime.md) and int8 writes no calls: PyTorch is the faithful default
        # until an export's self-check accuracy matches. `--model DIR` takes the ONNX runtime.
        say("caller: PyTorch (bundled default model)")
        caller = TorchCaller("default")
        for w in caller.warnings:
            say(f"caller: {w}")
        return caller
    path = Path(spec).expanduser()
    if (path / "manifest.json").is_file():
        say(f"caller: ONNX export {path}")
        return Caller.from_pretrained(path)
    say(f"caller: PyTorch {spec}")
    return TorchCaller(spec)


# ============================================================================================ navigators
@dataclass(frozen=True)
class NavPrediction:
    text: str
    action: Any | None          # navigator.actions.Action
    error: str | None = None


class NavigatorLike(Protocol):
    def next_action(self, instruction: str, screen: bytes, history: Sequence[tuple[str, bytes]]) -> NavPrediction: ...


class PredictorNavigator:
    """Any object with ``predict(instruction, screenshot, history_actions, history_screenshots)`` (a local
    `navigator.infer.Navigator`, the tiny random one in tests)."""

    def __init__(self, predictor: Any, history: int = 4) -> None:
        self.predictor, self.history = predictor, history

    def next_action(self, instruction: str, screen: bytes, history: Sequence[tuple[str, bytes]]) -> NavPrediction:
        hist = list(history)[-self.history:] if self.history else []
        p = self.predictor.predict(instruction, _image(screen), [a for a, _ in history],
                                   [_image(s) for _, s in hist])
        return NavPrediction(getattr(p, "text", str(p)), getattr(p, "action", None), getattr(p, "error", None))


class ClientNavigator:
    """A `navigator serve` service over HTTP (`navigator.client.NavigatorClient`)."""

    def __init__(self, client: Any, history: int = 4) -> None:
        self.client, self.history = client, history

    def next_action(self, instruction: str, screen: bytes, history: Sequence[tuple[str, bytes]]) -> NavPrediction:
        from mobile_actions.navigator.actions import parse_command

        hist = list(history)
        keep = len(hist) - self.history
        payload = [(a, s if i >= keep else None) for i, (a, s) in enumerate(hist)]
        out = self.client.act_raw(instruction, screen, payload)
        act = out.get("action")
        if act is None:
            return NavPrediction(out.get("text", ""), None, out.get("error") or "no action")
        return NavPrediction(out.get("text", act.get("command", "")), parse_command(act["command"]))


def _image(png: bytes):
    from PIL import Image

    with Image.open(io.BytesIO(png)) as im:
        return im.convert("RGB")


def resolve_navigator(spec: str | None, history: int = 4) -> tuple[NavigatorLike | None, str]:
    """(navigator or None, a line saying which). ``default`` is the bundled model when it exists."""
    from mobile_actions.navigator import DEFAULT_MODEL_DIR

    if spec in (None, "", "none"):
        return None, "navigator: none (GUI work will not be done)"
    if spec.startswith(("http://", "https://")):
        from mobile_actions.navigator.client import NavigatorClient

        return ClientNavigator(NavigatorClient(spec), history), f"navigator: service {spec}"
    path = DEFAULT_MODEL_DIR if spec == "default" else Path(spec).expanduser()
    if not (path / "config.json").is_file():
        if spec == "default":
            return None, f"navigator: no bundled model yet ({path} is empty): GUI work will not be done"
        raise HybridError(f"navigator {spec!r}: not a model folder (no config.json) and not an http(s) URL")
    from mobile_actions.navigator.infer import Navigator

    return PredictorNavigator(Navigator(path), history), f"navigator: {path}"


# ============================================================================================ device
def action_argv(action: Any, width: int, height: int) -> list[str] | None:
    """A navigator action as the device command that performs it; None for COMPLETE / IMPOSSIBLE.

    Coordinates are GUI Odyssey's [0, 1000] per axis, scaled to the screen's pixels. SCROLL names the
    finger's direction (as in GUI Odyssey), swiped along the codec's canonical path. `input text` needs
    spaces as ``%s``.
    """
    from mobile_actions.navigator.actions import to_raw

    def px(p: Sequence[float]) -> tuple[str, str]:
        x = min(max(round(float(p[0]) * width / 1000), 0), width - 1)
        y = min(max(round(float(p[1]) * height / 1000), 0), height - 1)
        return str(x), str(y)

    k = action.kind
    if k == "CLICK":
        return ["input", "tap", *px(action.point)]
    if k == "LONG_PRESS":
        x, y = px(action.point)
        return ["input", "swipe", x, y, x, y, "800"]
    if k == "SCROLL":
        _, (start, end) = to_raw(action)
        return ["input", "swipe", *px(start), *px(end), "300"]
    if k == "TYPE":
        return ["input", "text", (action.text or "").replace(" ", "%s")]
    keys = {"PRESS_BACK": "KEYCODE_BACK", "PRESS_HOME": "KEYCODE_HOME", "PRESS_RECENT": "KEYCODE_APP_SWITCH"}
    if k in keys:
        return ["input", "keyevent", keys[k]]
    return None


def screencap(device: Any, timeout: float = 30.0) -> bytes:
    """The screen as PNG bytes; a device that answers something else is an error, not a black image."""
    buf = device.exec_out(["screencap", "-p"], timeout)
    if not buf.startswith(b"\x89PNG"):
        raise HybridError(f"screencap on {device.serial} did not return a PNG: {buf[:80]!r}")
    return buf


def png_size(png: bytes) -> tuple[int, int]:
    w, h = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    return w, h


def node_at(xml_text: str, x: int, y: int) -> dict[str, str] | None:
    """The smallest clickable node whose bounds contain (x, y) (what a tap there would hit)."""
    import xml.etree.ElementTree as ET

    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError:
        return None
    best, best_area = None, None
    for node in root.iter("node"):
        if node.get("clickable") != "true":
            continue
        nums = [int(v) for v in re.findall(r"-?\d+", node.get("bounds", ""))[:4]]
        if len(nums) != 4:
            continue
        x1, y1, x2, y2 = nums
        if x1 <= x < x2 and y1 <= y < y2:
            area = (x2 - x1) * (y2 - y1)
            if best_area is None or area < best_area:
                best, best_area = dict(node.attrib), area
    return best


@dataclass
class DeviceSession:
    """The device a run talks to; for the virtual phone also the phone, its server and a private adb server."""

    device: Any
    serial: str
    virtual: bool = False
    phone: Any = None
    _server: Any = None
    _adb: Any = None

    def reconnect(self, timeout: float = 15.0) -> Any:
        """Re-establish the device after a disconnect (``adb connect`` again for a network device)."""
        from mobile_actions.android.device import DeviceError, ServerAddress, select_device

        if self._adb is not None:
            self._adb.connect(self.serial, timeout=timeout)
            self.device = select_device(self.serial, server=ServerAddress(port=self._adb.port), env={})
            return self.device
        deadline = time.monotonic() + timeout
        server = self.device.server if self.device is not None else ServerAddress.from_env()
        last: Exception | None = None
        while time.monotonic() < deadline:
            try:
                if ":" in self.serial:
                    import adbutils

                    adbutils.AdbClient(host=server.host, port=server.port).connect(self.serial, timeout=5)
                self.device = select_device(self.serial, server=server)
                return self.device
            except (DeviceError, OSError, Exception) as e:   # adbutils raises its own AdbError
                last = e
                time.sleep(0.5)
        raise HybridError(f"device {self.serial} did not come back within {timeout:g} s: {last}")

    def state(self) -> dict[str, Any] | None:
        """The virtual phone's state (in process, or ``dumpsys mobile-actions`` on an external one); None
        for a real phone."""
        if self.phone is not None:
            return self.phone.snapshot()
        try:
            r = self.device.shell(["dumpsys", "mobile-actions"])
            data = json.loads(r.stdout) if r.ok else None
            return data if isinstance(data, dict) and "stack" in data else None
        except Exception:
            return None

    def close(self) -> None:
        if self._adb is not None:
            self._adb.stop()
            self._adb = None
        if self._server is not None:
            self._server.close()
            self._server = None


def start_virtual_phone(state: dict[str, Any] | None = None, phone: Any = None) -> DeviceSession:
    """A virtual phone on loopback, reached through a private adb server: the same path as a real phone."""
    from mobile_actions.android.adbserver import PrivateAdbServer
    from mobile_actions.android.device import ServerAddress, select_device
    from mobile_actions.android.phone import PhoneServer, VirtualPhone

    phone = phone or VirtualPhone()
    if state is not None:
        restore_phone_state(phone, state)
    server = PhoneServer(phone, "127.0.0.1", 0).start()
    adb = None
    try:
        adb = PrivateAdbServer().start()
        serial = server.address.serial
        adb.connect(serial)
        device = select_device(serial, server=ServerAddress(port=adb.port), env={})
    except BaseException:
        if adb is not None:
            adb.stop()
        server.close()
        raise
    return DeviceSession(device, serial, True, phone, server, adb)


def open_session(serial: str | None = None, *, virtual: bool | None = None,
                 state: dict[str, Any] | None = None) -> DeviceSession:
    """The run's device: ``serial`` (or $ANDROID_SERIAL, or the only device); with none attached (or
    ``virtual=True``) an in-process virtual phone. ``state`` restores a virtual phone's saved state."""
    from mobile_actions.android.device import AdbServerUnavailableError, NoDeviceError, select_device

    if virtual:
        return start_virtual_phone(state)
    try:
        device = select_device(serial)
    except (NoDeviceError, AdbServerUnavailableError):
        if serial is not None or virtual is False:
            raise
        return start_virtual_phone(state)
    return DeviceSession(device, device.serial)


def restore_phone_state(phone: Any, snapshot: dict[str, Any]) -> None:
    """Put a `VirtualPhone.snapshot()` back into a phone (files come back empty: the snapshot has sizes only).

    Why: an in-process virtual phone dies with its process; a resumed run continues on the phone as the
    interrupted run left it, as it would on a real phone.
    """
    from mobile_actions.android.phone.state import Activity, PhoneState

    names = {f.name for f in fields(PhoneState)}
    data = {k: v for k, v in snapshot.items() if k in names and k != "files"}
    for k in ("stack", "recents"):
        data[k] = [Activity(**a) for a in snapshot.get(k, [])]
    with phone.lock:
        phone.state = PhoneState(**data)
        phone.changed()


# ============================================================================================ the runner
class Interrupted(Exception):
    """The device went away mid-run; the trace has everything up to here (resume continues)."""


def developer_message_for(now: str | None):
    from mobile_actions.dataset import developer_message

    return developer_message(datetime.fromisoformat(now) if now else None)


def ask_on_tty(yes: bool = False, stream_in=None, stream_out=None) -> Confirm:
    """The CLI's confirmation: yes → always; a terminal → ask y/N; no terminal → refuse."""
    def confirm(what: str, details: Sequence[str]) -> bool:
        if yes:
            return True
        sin = stream_in or sys.stdin
        if not sin.isatty():
            return False
        out = stream_out or sys.stderr
        print(f"{what}:", file=out)
        for line in details:
            print(f"  {line}", file=out)
        print("Go ahead? [y/N] ", end="", file=out, flush=True)
        return sin.readline().strip().lower() in ("y", "yes")
    return confirm


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

    def _load_tools(self) -> None:
        from mobile_actions.android.bindings import default_bindings_for, load_bindings
        from mobile_actions.catalog import load_catalogue

        self.catalogue = load_catalogue(self.config.tools)
        self.bindings = load_bindings(self.config.bindings or default_bindings_for(self.config.tools))
        self.bindings.check_against(self.catalogue)

    # ------------------------------------------------------------------ collaborators
    def _say(self, text: str) -> None:
        self.on_event({"type": "message", "text": text})

    @property
    def caller(self) -> CallerLike:
        if self._caller is None:
            self._caller = resolve_caller(self.config.model, self._say)
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

    def _ensure_session(self, state: dict[str, Any] | None = None, virtual: bool | None = None) -> None:
        if self.session is None and not self.config.dry_run:
            self.session = open_session(self.config.serial, virtual=virtual, state=state)
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
        if cfg.now is None:
            cfg.now = datetime.now().replace(microsecond=0).isoformat()
        folder = Path(run_dir) if run_dir else new_run_dir(cfg.runs_dir, request)
        self._ensure_session()
        self.writer = TraceWriter(folder)
        self.prior: Trace | None = None
        self._write(StepRecord("run", data={"request": request, "config": cfg.to_json(),
                                            "device": self._device_info()}))
        return self._execute(request)

    def resume(self, run_dir: str | Path) -> RunReport:
        """Continue an interrupted run: steps recorded as finished are not done again; the device is
        re-established (a virtual phone comes back in the state the run left it)."""
        prior = Trace.read(run_dir)
        if not prior.interrupted:
            raise HybridError(f"{run_dir}: the run already finished (nothing to resume)")
        header = prior.header
        cfg = RunConfig.from_json(header.get("config", {}))
        cfg.yes = self.config.yes
        for name in ("model", "navigator", "serial"):   # explicit overrides win (e.g. a new --serial)
            if getattr(self.config, name) != getattr(RunConfig(), name):
                setattr(cfg, name, getattr(self.config, name))
        self.config = cfg
        self._load_tools()
        dev = header.get("device") or {}
        if self.session is not None:
            self.session.reconnect()
        elif cfg.dry_run:
            pass
        elif dev.get("virtual") and not cfg.serial:
            state_file = prior.dir / "phone_state.json"
            state = json.loads(state_file.read_text(encoding="utf-8")) if state_file.is_file() else None
            self._ensure_session(state=state, virtual=True)
        elif cfg.serial or dev.get("serial"):
            self.session = DeviceSession(None, cfg.serial or dev["serial"])   # the same phone, reconnected
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
        if self.session is not None:
            rep.phone_state = self.session.state()
            if rep.phone_state is not None:
                self.writer.write_json("phone_state.json", rep.phone_state)
        if rep.status == "interrupted":
            self._write(StepRecord("interrupted", data={"error": rep.error}))
        self._write(StepRecord("report", status=rep.status, data={"report": rep.to_json()}))

    def _flow(self, request: str) -> None:
        cfg = self.config
        messages: list[dict] = [developer_message_for(cfg.now), {"role": "user", "content": request}]
        any_valid = False
        self._first_text = ""
        for turn in range(cfg.max_turns):
            rec = self._caller_turn(turn, messages)
            if turn == 0:
                self._first_text = " ".join(str(rec.get("text") or rec.get("raw") or "").split())
            calls = [ToolCall.from_json(c) for c in rec.get("calls", [])]
            responses, informative, new = [], False, 0
            for i, call in enumerate(calls):
                problems = [Problem(**p) for p in rec["validation"][i]["problems"]]
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
            self._navigate("request", request, why)

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
        res = caller.call_messages(messages, self.catalogue)
        ms = (time.perf_counter() - t0) * 1e3
        layout = getattr(caller, "layout", "official")
        prompt = wire.render(messages, self.catalogue, add_generation_prompt=True, layout=layout)
        calls = list(res.calls)
        validation = [{"call": c.to_json(), "problems": [asdict(p) for p in validate_call(c, self.catalogue)]}
                      for c in calls]
        output_problems = [str(p) for p in res.problems if p.tool == "<output>"]
        self.report.caller_turns += 1
        return self._write(StepRecord("caller", key, "done", ms=ms, data={
            "turn": turn, "messages": messages, "prompt": prompt, "raw": res.raw, "text": res.text,
            "calls": [c.to_json() for c in calls], "validation": validation,
            "output_problems": output_problems, "timings": dict(res.timings or {})}))

    # ------------------------------------------------------------------ calls
    def _call(self, key: str, call: ToolCall, problems: list[Problem]) -> dict[str, Any]:
        """Dispatch one call (or refuse it); returns its tool result for the caller's follow-up."""
        from mobile_actions.android.device import DeviceError
        from mobile_actions.android.dispatch import (ConfirmationRequired, DispatchError, StepFailedError,
                                                     dispatch)

        what = describe_call(call)
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
        binding = self.bindings[call.name] if call.name in self.bindings else None
        data["route"] = binding.route if binding else None
        serial = self.session.serial if self.session else "-"

        def confirm(plan: Any) -> bool:
            return self._confirm(f"{plan.tool} on {serial}", plan.describe())
        t0 = time.perf_counter()
        try:
            res = dispatch(call, self.device, bindings=self.bindings, catalogue=self.catalogue, confirm=confirm,
                           dry_run=self.config.dry_run)
        except ConfirmationRequired as e:
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
        out = self._call_end(key, what, "done", notes, data, result, ms=ms)
        if lost is not None:
            raise Interrupted(f"after {call.name}: {lost}") from lost
        return out

    def _call_end(self, key: str, what: str, status: str, reason: str, data: dict, result: dict, *,
                  item: bool = True, item_status: str | None = None, ms: float | None = None) -> dict:
        item_status = item_status or {"failed": "not_done"}.get(status, status)
        self._write(StepRecord("dispatch", key, status, ms=ms, data={
            **data, "reason": reason, "result": result, "item_status": item_status, "what": what}))
        if item:
            self._item(what, item_status, reason)
        return result

    def _read_result(self, tool: str) -> dict[str, Any]:
        """What the screen shows after an informative tool (`RESULT_READERS`), as tool-result fields."""
        readers = RESULT_READERS.get(tool)
        if not readers or self.device is None:
            return {}
        from mobile_actions.android.dispatch import StepFailedError, dump_ui, find_node

        try:
            xml_text = dump_ui(self.device)
        except StepFailedError:
            return {}
        out = {}
        for name, selector in readers.items():
            node = find_node(xml_text, tuple(selector.items()))
            if node is not None and (node.get("text") or node.get("content-desc")):
                out[name] = node.get("text") or node.get("content-desc")
        return out

    def _confirm(self, what: str, details: Sequence[str]) -> bool:
        if self.config.yes:
            return True
        return bool(self.confirm and self.confirm(what, list(details)))

    # ------------------------------------------------------------------ navigator
    def _navigate(self, task: str, instruction: str, why: str, what: str | None = None) -> str:
        """The navigator loop for one GUI task; returns the report status (done / not_done / refused)."""
        from mobile_actions.android.device import DeviceError

        cfg = self.config
        what = what or f"GUI: {instruction}"
        end_key = f"navtask:{task}"
        done = self.prior.finished(end_key) if self.prior else None
        if done is not None:
            self.report.nav_steps += len(self.prior.nav_steps(task))
            self._item(what, done["item_status"], done.get("reason", ""))
            return done["item_status"]

        def end(outcome: str, item_status: str, reason: str) -> str:
            self._write(StepRecord("nav_end", end_key, item_status, data={
                "task": task, "instruction": instruction, "why": why, "outcome": outcome,
                "item_status": item_status, "reason": reason}))
            self._item(what, item_status, reason)
            return item_status

        if cfg.dry_run:
            return end("dry_run", "planned", f"dry run: would hand to the navigator ({why})")
        nav = self.navigator
        if nav is None:
            return end("no_navigator", "not_done", f"no navigator model ({why}); GUI work not done")
        prior_steps = self.prior.nav_steps(task) if self.prior else []
        history: list[tuple[str, bytes]] = []
        hashes: list[str] = []
        for r in prior_steps:
            hashes.append(r.get("screen_hash", ""))
            if r.get("action") and r.get("argv"):
                history.append((r["action"]["command"], (self.writer.dir / r["screen"]).read_bytes()))
        self.report.nav_steps += len(prior_steps)
        step = len(prior_steps)
        try:
            while step < cfg.max_steps:
                try:
                    png = screencap(self.device)
                except HybridError as e:
                    return end("error", "not_done", str(e))
                h = hashlib.sha256(png).hexdigest()[:16]
                hashes.append(h)
                rel = self.writer.screen(png)
                base = {"task": task, "step": step, "instruction": instruction, "screen": rel, "screen_hash": h}
                if len(hashes) >= cfg.stall_repeats and len(set(hashes[-cfg.stall_repeats:])) == 1:
                    self._write(StepRecord("nav", f"nav:{task}:{step}", "skipped", data={**base, "note": "stall"}))
                    return end("stall", "not_done",
                               f"the screen did not change for {cfg.stall_repeats - 1} actions (stalled)")
                t0 = time.perf_counter()
                try:
                    pred = nav.next_action(instruction, png, history)
                except Exception as e:  # a service or model failure ends this GUI task, not the run
                    self._write(StepRecord("nav", f"nav:{task}:{step}", "failed", data={**base, "error": str(e)}))
                    return end("error", "not_done", f"navigator failed: {e}")
                model_ms = (time.perf_counter() - t0) * 1e3
                rec = {**base, "raw": pred.text, "model_ms": round(model_ms, 1),
                       "action": pred.action.to_json() if pred.action is not None else None}
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
                        return end("complete", "done", f"navigator said COMPLETE after {step} actions")
                    return end("impossible", "not_done", f"navigator said IMPOSSIBLE after {step} actions")
                w, hgt = png_size(png)
                argv = action_argv(pred.action, w, hgt)
                rec["argv"] = argv
                guard = self._guard(pred.action, argv)
                if guard is not None:
                    rec["guard"] = guard
                    if not self._confirm(f"navigator wants to tap {guard!r}", [" ".join(argv)]):
                        self._write(StepRecord("nav", key, "refused", data=rec))
                        return end("refused", "refused", f"tap on {guard!r} (send/delete-type) not confirmed")
                t1 = time.perf_counter()
                r = self.device.shell(argv)
                rec.update(exit_code=r.exit_code, stderr=r.stderr[:RESULT_LIMIT])
                self._write(StepRecord("nav", key, "done", ms=model_ms + (time.perf_counter() - t1) * 1e3, data=rec))
                self.report.nav_steps += 1
                history.append((pred.action.to_command(), png))
                step += 1
        except DeviceError as e:
            raise Interrupted(f"navigator ({task}): {e}") from e
        return end("step_limit", "not_done", f"step limit ({cfg.max_steps}) reached")

    def _guard(self, action: Any, argv: list[str] | None) -> str | None:
        """The label of a send/delete-type button a tap would hit, else None."""
        if action.kind not in ("CLICK", "LONG_PRESS") or not argv:
            return None
        from mobile_actions.android.dispatch import StepFailedError, dump_ui

        try:
            node = node_at(dump_ui(self.device), int(argv[2]), int(argv[3]))
        except StepFailedError:
            return None
        if node is None:
            return None
        label = node.get("text") or node.get("content-desc") or ""
        return label if DANGEROUS_LABEL.search(label) else None

    # ------------------------------------------------------------------ bookkeeping
    def _item(self, what: str, status: str, reason: str) -> None:
        self.report.items.append(Item(what, status, reason))

    def _write(self, rec: StepRecord) -> dict[str, Any]:
        out = self.writer.append(rec.to_json())
        self.on_event(out)
        return out

    def _device_info(self) -> dict[str, Any]:
        if self.session is None:
            return {"serial": None, "virtual": False}
        return {"serial": self.session.serial, "virtual": self.session.virtual}


def describe_call(call: ToolCall) -> str:
    """``send_email(to="ana@example.com", subject="Hi")`` — how calls appear in reports."""
    args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in call.arguments.items())
    return f"{call.name}({args})"


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
