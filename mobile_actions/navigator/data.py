"""Training/evaluation examples from GUI Odyssey episodes: one per step, with the gold history.

Offline evaluation feeds the *gold* history (previous gold actions and screenshots), exactly as the paper
does, so one example depends only on its episode — examples can be shuffled freely.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from .episodes import Episode, MissingPolicy, OdysseyDir, require_screenshots, ScreenshotReport
from .prompt import DEFAULT_HISTORY_LEN, Prompt, build_prompt


@dataclass(frozen=True)
class Example:
    episode_id: str
    step: int
    category: str
    instruction: str
    screenshot: Path
    history_screenshots: tuple[Path, ...]  # most recent first, at most δ, missing ones left out
    history_actions: tuple[str, ...]  # all previous gold commands, oldest first
    target: str  # gold command
    prompt: Prompt


def episode_examples(ep: Episode, layout: OdysseyDir, his_len: int = DEFAULT_HISTORY_LEN) -> list[Example]:
    """One example per step whose current screenshot exists (the missing policy has run before this)."""
    out = []
    commands = [s.command.to_command() for s in ep.steps]
    paths = [layout.screenshot_path(s) for s in ep.steps]
    for i, s in enumerate(ep.steps):
        if not paths[i].is_file():
            continue
        hist = tuple(p for p in reversed(paths[max(0, i - his_len):i]) if p.is_file())
        prompt = build_prompt(ep.instruction, commands[:i], len(hist), his_len=his_len)
        out.append(Example(ep.episode_id, s.index, ep.category, ep.instruction, paths[i], hist, tuple(commands[:i]), commands[i], prompt))
    return out


def build_examples(
    root: str | Path, episodes: Iterable[Episode], *, his_len: int = DEFAULT_HISTORY_LEN, on_missing: MissingPolicy = "error"
) -> tuple[list[Example], ScreenshotReport]:
    layout = OdysseyDir.at(root)
    kept, report = require_screenshots(root, list(episodes), on_missing)
    return [x for ep in kept for x in episode_examples(ep, layout, his_len)], report


class ExampleDataset:
    """A map-style torch dataset of tokenised examples (images are read lazily, in the DataLoader workers)."""

    def __init__(self, examples: list[Example], tokenizer: Any, config: Any, with_answer: bool = True):
        from .processing import AgentGeometry, ScreenProcessor

        self.examples = examples
        self.tokenizer = tokenizer
        self.geometry = AgentGeometry.from_config(config)
        self.screens = ScreenProcessor(self.geometry.image_size, config.vision_config.patch_size, config.vision_config.spatial_merge_size)
        self.with_answer = with_answer

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, i: int) -> dict[str, Any]:
        from .processing import build_features, open_image

        x = self.examples[i]
        return build_features(
            self.tokenizer, self.screens, self.geometry, x.prompt, open_image(x.screenshot),
            [open_image(p) for p in x.history_screenshots], x.target if self.with_answer else None,
        )


class Collator:
    """Picklable collate function (DataLoader workers) bound to the pad and image token ids."""

    def __init__(self, pad_token_id: int, image_token_id: int):
        self.pad_token_id, self.image_token_id = pad_token_id, image_token_id

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        from .processing import collate

        return collate(features, self.pad_token_id, self.image_token_id)
