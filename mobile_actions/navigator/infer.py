"""Running a trained navigator: one step (the service, the hybrid runner) or a whole split (for ``eval``)."""
from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from .actions import Action, parse_command
from mobile_actions.errors import ActionParseError
from .prompt import DEFAULT_HISTORY_LEN, build_prompt

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

    from .data import Example


@dataclass(frozen=True)
class Prediction:
    text: str  # what the model wrote
    action: Action | None  # parsed, or None when unparseable
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "action": None if self.action is None else self.action.to_json(), "error": self.error}


class Navigator:
    """A loaded OdysseyAgent with its tokenizer and screen processor; thread-safe ``predict``."""

    def __init__(self, model_dir: str | Path, device: str | None = None, dtype: str | None = None, max_new_tokens: int = 30):
        import torch

        from .model import load_agent
        from .processing import IM_END, AgentGeometry, ScreenProcessor

        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        torch_dtype = getattr(torch, dtype) if dtype else (torch.bfloat16 if self.device.startswith("cuda") else torch.float32)
        self.model, self.tokenizer = load_agent(model_dir, dtype=torch_dtype)
        self.model.to(self.device).eval()
        self.geometry = AgentGeometry.from_config(self.model.config)
        vc = self.model.config.vision_config
        self.screens = ScreenProcessor(self.geometry.image_size, vc.patch_size, vc.spatial_merge_size)
        self.his_len = self.geometry.history_frames
        self.eos = [self.tokenizer.convert_tokens_to_ids(IM_END)]
        if self.tokenizer.eos_token_id is not None and self.tokenizer.eos_token_id not in self.eos:
            self.eos.append(self.tokenizer.eos_token_id)
        self.max_new_tokens = max_new_tokens
        self.model_dir = str(model_dir)
        self._lock = threading.Lock()

    def predict(
        self,
        instruction: str,
        screenshot: "Image.Image",
        history_actions: Sequence[str] = (),
        history_screenshots: Sequence["Image.Image"] = (),
    ) -> Prediction:
        """The next action. ``history_actions`` oldest first; ``history_screenshots`` are the screens *before*
        each of those actions, oldest first (as the caller naturally records them); the last δ are used."""
        frames = list(reversed(list(history_screenshots)[-self.his_len:]))
        prompt = build_prompt(instruction, list(history_actions), len(frames), his_len=self.his_len)
        return self._run(prompt, screenshot, frames)

    def _run(self, prompt: Any, screenshot: "Image.Image", frames_recent_first: list) -> Prediction:
        import torch

        from .processing import build_features, collate

        feats = build_features(self.tokenizer, self.screens, self.geometry, prompt, screenshot, frames_recent_first, None)
        batch = collate([feats], self.tokenizer.pad_token_id or 0, self.model.config.image_token_id)
        batch = {k: v.to(self.device) for k, v in batch.items() if k not in ("labels", "attention_mask")}
        batch["pixel_values"] = batch["pixel_values"].to(self.model.dtype)
        if "history_pixel_values" in batch:
            batch["history_pixel_values"] = batch["history_pixel_values"].to(self.model.dtype)
        with self._lock, torch.inference_mode():
            ids = self.model.greedy(batch, self.eos, self.max_new_tokens)
        text = self.tokenizer.decode(ids, skip_special_tokens=True).strip()
        try:
            return Prediction(text, parse_command(text))
        except ActionParseError as exc:
            return Prediction(text, None, str(exc))

    def predict_example(self, x: "Example") -> Prediction:
        from .processing import open_image

        return self._run(x.prompt, open_image(x.screenshot), [open_image(p) for p in x.history_screenshots])


def predict_examples(nav: Navigator, examples: Iterable["Example"]) -> Iterable[tuple[tuple[str, int], Prediction]]:
    """Yield ``((episode_id, step), prediction)`` for each example, gold history (offline evaluation)."""
    for x in examples:
        yield (x.episode_id, x.step), nav.predict_example(x)


__all__ = ["DEFAULT_HISTORY_LEN", "Navigator", "Prediction", "predict_examples"]
