"""Test doubles for the hybrid runner (tests only): a scripted caller and a scripted navigator.

The shipped defaults are the real bundled models; these exist so the runner's mechanics (dispatch,
follow-ups, safety, the navigator loop, resume) are tested fast and deterministically.
"""
from __future__ import annotations

from typing import Any

import pytest

from mobile_actions import wire
from mobile_actions.calls import ToolCall
from mobile_actions.hybrid.device import start_virtual_phone
from mobile_actions.hybrid.models import NavPrediction
from mobile_actions.navigator.actions import parse_command
from mobile_actions.runtime import result_from_raw


def raw_calls(*calls: tuple[str, dict]) -> str:
    return "".join(wire.render_call(ToolCall(n, a)) for n, a in calls)


class ScriptedCaller:
    """Returns prepared raw outputs turn by turn (then a plain reply); records what it was shown."""

    layout = "official"

    def __init__(self, *turns: str) -> None:
        self.turns = list(turns)
        self.seen: list[list[dict]] = []

    def call_messages(self, messages: list[dict], tools: Any):
        self.seen.append(messages)
        raw = self.turns.pop(0) if self.turns else "All done."
        return result_from_raw(raw, tools, {"total_ms": 0.0})


class NoCaller:
    """A caller that must not be asked (resume must reuse the recorded turns)."""

    layout = "official"

    def call_messages(self, messages, tools):  # pragma: no cover - failing is the point
        raise AssertionError("the caller was asked again")


def point_of(phone: Any, label: str) -> tuple[int, int]:
    """[0, 1000] coordinates of the clickable widget showing `label` on the phone's screen now."""
    from mobile_actions.android.phone.state import HEIGHT, WIDTH

    for w in reversed(phone.screen().interactive):
        if w.clickable and label in (w.text, w.desc, w.hint):
            x, y = w.center
            return round(1000 * x / WIDTH), round(1000 * y / HEIGHT)
    raise AssertionError(f"no {label!r} on screen")


class ScriptedNavigator:
    """Intentions resolved against the live phone: ``("tap", LABEL)``, ``("long", LABEL)`` or a command string
    (``TYPE: x``)."""

    def __init__(self, phone: Any, *script: Any) -> None:
        self.phone, self.script = phone, list(script)
        self.calls: list[tuple[str, int]] = []

    def next_action(self, instruction: str, screen: bytes, history) -> NavPrediction:
        self.calls.append((instruction, len(history)))
        step = self.script.pop(0) if self.script else "COMPLETE"
        if isinstance(step, tuple) and step[0] in ("tap", "long"):
            x, y = point_of(self.phone, step[1])
            step = f"{'CLICK' if step[0] == 'tap' else 'LONG_PRESS'}: ({x}, {y})"
        try:
            return NavPrediction(step, parse_command(step))
        except ValueError as e:
            return NavPrediction(step, None, str(e))


@pytest.fixture(scope="module")
def session():
    s = start_virtual_phone()
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def phone(session):
    session.phone.reset()
    session.phone.fail_next = None
    return session.phone
