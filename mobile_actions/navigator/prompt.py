"""The official OdysseyAgent prompt (``src/eval_mm/evaluate_GUIOdyssey.py``), with image slots left open.

The question text is reproduced character for character — including the blank line the official code leaves
between the history list and the final instruction — because a fine-tuned model is sensitive to it. The
two image slots are :data:`SCREEN` and :data:`HISTORY`; :func:`official_text` fills them the way the
original Qwen-VL repo does (``<img>path</img>``), the model fills them with vision tokens.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

SYSTEM = "You are a helpful assistant."
SCREEN = "\x00SCREEN\x00"
HISTORY = "\x00HISTORY\x00"
DEFAULT_HISTORY_LEN = 4  # δ in the paper


@dataclass(frozen=True)
class Prompt:
    """A user turn with open image slots, and how many history screenshots go into :data:`HISTORY`."""

    text: str
    history_frames: int  # 0 when the prompt says "Previous screenshots: None"

    def render(self, screen: str, history: str) -> str:
        return self.text.replace(SCREEN, screen).replace(HISTORY, history)


def build_prompt(
    instruction: str, history_actions: Sequence[str], history_frames: int | None = None, *, his_len: int = DEFAULT_HISTORY_LEN
) -> Prompt:
    """The official question for one step.

    ``history_actions`` are all previous command strings (gold ones in offline evaluation); the last
    ``his_len`` are shown. ``history_frames`` is how many previous screenshots are available for the history
    slot (default: as many as actions shown); with no history the prompt says ``None`` for both.
    """
    shown = list(history_actions)[-his_len:] if his_len > 0 else []
    frames = len(shown) if history_frames is None else min(history_frames, his_len)
    q = f"Picture 1: {SCREEN}\nI'm looking for guidance on how to {instruction}"
    if shown:
        q += f"\nPrevious screenshots: {HISTORY}" if frames > 0 else "\nPrevious screenshots: None"
        q += "\nPrevious Actions: " + "".join(f"{i + 1}. {a}\n" for i, a in enumerate(shown))
    else:
        q += "\nPrevious screenshots: None\nPrevious Actions: None"
        frames = 0
    q += "\nProvide the command-style action directly."
    return Prompt(q, frames)


def official_text(prompt: Prompt, screenshot: str) -> str:
    """The question exactly as the original Qwen-VL-based repo writes it (image paths inside ``<img>``)."""
    return prompt.render(f"<img>{screenshot}</img>", f"<img>image-history: {screenshot}</img>")


def chatml(user: str, answer: str | None = None, system: str = SYSTEM) -> str:
    """Qwen's chat format (the same for Qwen-VL and Qwen2-VL); ``answer=None`` leaves the assistant turn open."""
    s = f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"
    return s if answer is None else s + answer + "<|im_end|>"
