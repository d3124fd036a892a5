"""The caller and the navigator a hybrid run talks to: what they must provide, and the shipped defaults.

Why a module of its own: the runner (hybrid.py) only needs ``call_messages`` / ``next_action``; which model
sits behind them (PyTorch, an ONNX export, a `navigator serve` URL, a scripted test double) is decided here.
"""
from __future__ import annotations

import io
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

from mobile_actions.hybrid_device import HybridError


# ============================================================================================ callers
class CallerLike(Protocol):
    def call_messages(self, messages: list[dict], tools: Any) -> Any: ...  # .calls .text .problems .raw .timings


class TorchCaller:
    """The caller on PyTorch (until an ONNX export exists): greedy, KV-cached, stops on the turn's end,
    and (like the ONNX runtime) decodes under the catalogue's call grammar, so every call it writes
    parses and validates; `constrained=False` gives the bare model.

    Why a text cut-off: the runner needs calls; an answer that does not start with a call is a refusal
    whose words matter little, and an untrained model would otherwise ramble to ``max_new_tokens``.
    """

    def __init__(self, spec: str = "default", *, max_new_tokens: int = 128, text_tokens: int = 12,
                 constrained: bool = True) -> None:
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
        self.constrained = constrained
        self._constraints = None  # grammar.Constraints, built on the first call

    def call_messages(self, messages: list[dict], tools: Any):
        import torch

        from mobile_actions import wire
        from mobile_actions.evaluate import hf_constraints
        from mobile_actions.grammar import pick
        from mobile_actions.model import STOP_TOKEN_IDS
        from mobile_actions.runtime import result_from_raw

        if self.constrained and self._constraints is None:
            self._constraints = hf_constraints(self.tokenizer)
        t0 = time.perf_counter()
        con = self._constraints.for_tools(tools) if self.constrained else None
        prompt = wire.render(messages, tools, add_generation_prompt=True, layout=self.layout)
        ids = self.tokenizer(prompt, add_special_tokens=False)["input_ids"]
        start_call = wire.CONTROL_TOKEN_IDS[wire.START_CALL]
        out: list[int] = []
        with torch.inference_mode():
            res = self.model(input_ids=torch.tensor([ids]), use_cache=True)
            ttft = (time.perf_counter() - t0) * 1e3
            while len(out) < self.max_new_tokens:
                logits = res.logits[0, -1].float().numpy()
                nxt = pick(logits, con.allowed()) if con else int(logits.argmax())
                if nxt in STOP_TOKEN_IDS:
                    break
                out.append(nxt)
                if con is not None:
                    con.advance(nxt)
                if len(out) >= self.text_tokens and out[0] != start_call:
                    break
                res = self.model(input_ids=torch.tensor([[nxt]]), past_key_values=res.past_key_values, use_cache=True)
        raw = self.tokenizer.decode(out, skip_special_tokens=False)
        timings = {"prompt_tokens": len(ids), "new_tokens": len(out), "ttft_ms": round(ttft, 1),
                   "total_ms": round((time.perf_counter() - t0) * 1e3, 1)}
        return result_from_raw(raw, tools, timings)


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
