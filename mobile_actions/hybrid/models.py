"""The caller and the navigator a hybrid run talks to: what they must provide, and the shipped defaults.

Why a module of its own: the runner (runner.py) only needs ``call_messages`` / ``next_action``; which model
sits behind them (PyTorch, an ONNX export, a `navigator serve` URL, a scripted test double) is decided here.
"""
from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Protocol, Sequence

from mobile_actions.hybrid.device import HybridError

if TYPE_CHECKING:
    from mobile_actions.navigator.guards import Firing


# ============================================================================================ callers
class CallerLike(Protocol):
    def call_messages(self, messages: list[dict], tools: Any) -> Any: ...  # .calls .text .problems .raw .timings


TORCH_PREFIX = "torch:"  # `run --torch` / `bench hybrid --torch` pass the spec as "torch:SPEC"


def resolve_caller(spec: str = "auto", progress: Callable[[str], None] | None = None, *, torch: bool = False,
                   constrained: bool = True, tool_names: Iterable[str] = ()) -> CallerLike:
    """The caller for a ``--model`` spec. The default path is the on-device path:

    - ``auto`` (`runtime.prepared.auto_caller` picks by `tool_names`, the catalogue's), ``default`` (the
      Mobile Actions caller), ``general`` (the caller for any catalogue): the bundled caller's ONNX export
      that `mobile-actions model prepare` builds (torch-free); missing or stale, a `HybridError` says to run
      `mobile-actions model prepare` (or to use --torch);
    - a directory with ``manifest.json``: that ONNX export;
    - ``torch=True`` or a ``torch:SPEC`` spec: SPEC on PyTorch (`TorchCaller`: the names above, ``base``, a
      checkpoint or adapter directory, a cached hub id);
    - any other spec (a checkpoint or adapter directory, a hub id) has no export: PyTorch.
    Both runtimes decode under the call grammar (``constrained=False``: the bare model).
    """
    from mobile_actions.runtime.prepared import CALLER_SPECS, auto_caller

    say = progress or (lambda _m: None)
    if spec.startswith(TORCH_PREFIX):
        spec, torch = spec[len(TORCH_PREFIX):] or "auto", True
    if spec == "auto":
        spec = auto_caller(tool_names)
    bundled = spec in CALLER_SPECS
    path = Path(spec).expanduser()
    is_export = not bundled and (path / "manifest.json").is_file()
    if torch and is_export:
        raise HybridError(f"{spec} is an ONNX export: it runs on the ONNX runtime (drop --torch)")
    if not torch and (bundled or is_export):
        from mobile_actions.runtime import Caller, ExportFormatError
        from mobile_actions.runtime.prepared import NotPreparedError, prepared_caller

        try:
            folder = prepared_caller(spec) if bundled else path
            say(f"caller: ONNX {spec + ' (' + str(folder) + ')' if bundled else folder}")
            return Caller.from_pretrained(folder, constrained=constrained)
        except (NotPreparedError, ExportFormatError) as e:
            raise HybridError(str(e)) from e
    from mobile_actions.caller.greedy import TorchCaller

    say(f"caller: PyTorch {spec}" + (f" (bundled {spec} model)" if bundled else ""))
    caller = TorchCaller(spec, constrained=constrained)
    for w in getattr(caller, "warnings", ()):
        say(f"caller: {w}")
    return caller


# ============================================================================================ navigators
@dataclass(frozen=True)
class NavPrediction:
    text: str
    action: Any | None          # navigator.actions.Action
    error: str | None = None
    guards: tuple[Firing, ...] = ()   # what the text navigator's guards narrowed on this step


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


class TextNavigator:
    """The on-device navigator: a caller-style model (ONNX export or PyTorch) decoding one GUI action per
    step as a function call over the screen's accessibility tree (`navigator.text`).

    It asks the runner for the ``uiautomator dump`` (``reads_hierarchy``). The actions taken so far are
    kept as the prompt shows them (``tap "Bluetooth"``); a history it did not build (a resumed run) is
    shown as its GUI Odyssey commands.
    """

    reads_hierarchy = True

    def __init__(self, caller: CallerLike) -> None:
        self.caller = caller
        self._done: list[str] = []
        self._goal = None   # navigator.text.GoalSteps of the current instruction

    def next_action(self, instruction: str, screen: bytes, history: Sequence[tuple[str, bytes]],
                    hierarchy: str | None = None) -> NavPrediction:
        from mobile_actions.errors import ScreenError
        from mobile_actions.navigator import text
        from mobile_actions.navigator.screen import parse_hierarchy

        if hierarchy is None:
            return NavPrediction("", None, "the text navigator needs the screen's uiautomator dump")
        if len(self._done) != len(history):
            self._done = [command for command, _ in history]
        if self._goal is None or self._goal.goal != instruction or not history:
            self._goal = text.GoalSteps(instruction)
        try:
            shown = parse_hierarchy(hierarchy)
        except ScreenError as e:
            return NavPrediction("", None, f"unreadable screen: {e}")
        step = text.next_call(self.caller, self._goal, shown, self._done)
        out = step.result
        if not out.calls:
            return NavPrediction(out.raw or out.text, None, "the navigator wrote no action", step.guards)
        call = out.calls[0]
        try:
            action = text.to_action(call, shown)
        except ScreenError as e:
            return NavPrediction(out.raw, None, str(e), step.guards)
        self._done.append(text.describe_call(call))
        return NavPrediction(text.describe_call(call), action, guards=step.guards)


def _image(png: bytes):
    from PIL import Image

    with Image.open(io.BytesIO(png)) as im:
        return im.convert("RGB")


TEXT_PREFIX = "text:"   # `--navigator text:SPEC`: the text navigator on SPEC (a caller spec: export or adapter)


def resolve_navigator(spec: str | None, history: int = 4) -> tuple[NavigatorLike | None, str]:
    """(navigator or None, a line saying which).

    - ``default`` / ``text``: the bundled text navigator (`TEXT_NAVIGATOR_DIR`, an adapter on the caller's
      base); ``text:SPEC``: a text navigator of your own (its ONNX export, or an adapter run on PyTorch);
    - ``http(s)://…``: a `navigator serve` service; a folder with ``config.json``: an OdysseyAgent model.
    """
    from mobile_actions.navigator import TEXT_NAVIGATOR_DIR

    if spec in (None, "", "none"):
        return None, "navigator: none (GUI work will not be done)"
    if spec in ("default", "text") or spec.startswith(TEXT_PREFIX):
        target = spec[len(TEXT_PREFIX):] if spec.startswith(TEXT_PREFIX) else ""
        if not target:
            if not (TEXT_NAVIGATOR_DIR / "adapter_config.json").is_file():
                return None, f"navigator: no bundled navigator ({TEXT_NAVIGATOR_DIR} is empty): GUI work will not be done"
            from mobile_actions.runtime.prepared import NotPreparedError, prepared_navigator

            try:   # on-device: the export `model prepare` builds; else the adapter on PyTorch
                target = str(prepared_navigator())
            except NotPreparedError:
                target = str(TEXT_NAVIGATOR_DIR)
        try:
            caller = resolve_caller(target)
        except ImportError as e:   # an adapter runs on PyTorch: the [model] extra
            return None, (f"navigator: {target} needs PyTorch (pip install 'mobile-actions[model]') or its export "
                          f"(`mobile-actions model prepare`): {e}")
        return TextNavigator(caller), f"navigator: text navigator {target}"
    if spec.startswith(("http://", "https://")):
        from mobile_actions.navigator.client import NavigatorClient

        return ClientNavigator(NavigatorClient(spec), history), f"navigator: service {spec}"
    path = Path(spec).expanduser()
    if not (path / "config.json").is_file():
        raise HybridError(f"navigator {spec!r}: not a model folder (no config.json), not text[:SPEC] and not an "
                          "http(s) URL")
    from mobile_actions.navigator.infer import Navigator

    return PredictorNavigator(Navigator(path), history), f"navigator: {path}"
