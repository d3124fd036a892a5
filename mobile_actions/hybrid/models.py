"""The caller and the navigator a hybrid run talks to: what they must provide, and the shipped defaults.

Why a module of its own: the runner (hybrid.py) only needs ``call_messages`` / ``next_action``; which model
sits behind them (PyTorch, an ONNX export, a `navigator serve` URL, a scripted test double) is decided here.
"""
from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

from mobile_actions.hybrid.device import HybridError


# ============================================================================================ callers
class CallerLike(Protocol):
    def call_messages(self, messages: list[dict], tools: Any) -> Any: ...  # .calls .text .problems .raw .timings


def resolve_caller(spec: str = "default", progress: Callable[[str], None] | None = None) -> CallerLike:
    """The caller for a ``--model`` spec.

    ``default``: the bundled caller on PyTorch (`TorchCaller`).
    A directory with ``manifest.json`` is an ONNX export; any other spec goes to PyTorch.
    """
    say = progress or (lambda _m: None)
    from mobile_actions.runtime import Caller

    if spec == "default":
        # No export ships with the repo (the `mixed` export is 250 MB, made by `mobile-actions export`), so the
        # default is the adapter on PyTorch. That export matches fp32 (77.5 % = 77.5 % exact on 40 held-out
        # rows; int4 70 %, int8 writes no calls): `--model DIR` takes the ONNX runtime.
        say("caller: PyTorch (bundled default model)")
        from mobile_actions.caller.greedy import TorchCaller

        caller = TorchCaller("default")
        for w in caller.warnings:
            say(f"caller: {w}")
        return caller
    path = Path(spec).expanduser()
    if (path / "manifest.json").is_file():
        say(f"caller: ONNX export {path}")
        return Caller.from_pretrained(path)
    from mobile_actions.caller.greedy import TorchCaller

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
