"""Turning (prompt, screenshots, answer) into model tensors — shared by training, evaluation and the service.

Screenshots are resized to a fixed ``image_size`` square (the paper feeds 448×448 and does not keep the aspect
ratio); with Qwen2-VL's 14-px patches merged 2×2 that gives ``(image_size / 28)²`` tokens per image — 256 at 448,
the paper's count. The current screenshot fills ``<|image_pad|>`` slots (Qwen2-VL's own path, M-RoPE positions);
the history resampler's output fills ``<|history_pad|>`` slots.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from .prompt import Prompt, chatml

if TYPE_CHECKING:  # pragma: no cover
    import torch
    from PIL import Image

IMAGE_PAD = "<|image_pad|>"
HISTORY_PAD = "<|history_pad|>"
VISION_START = "<|vision_start|>"
VISION_END = "<|vision_end|>"
IM_END = "<|im_end|>"
IGNORE_INDEX = -100


def tokens_per_image(image_size: int, patch_size: int = 14, merge: int = 2) -> int:
    side = image_size // (patch_size * merge)
    return side * side


@dataclass(frozen=True)
class AgentGeometry:
    """What the text side must know about the vision side (read from the model config's ``odyssey`` dict)."""

    image_size: int
    image_tokens: int
    history_queries: int
    history_frames: int

    @classmethod
    def from_config(cls, config: Any) -> "AgentGeometry":
        o = config.odyssey
        return cls(o["image_size"], o["image_tokens"], o["history_queries"], o["history_frames"])


class ScreenProcessor:
    """PIL screenshot → Qwen2-VL patch tensor of a fixed-size square."""

    def __init__(self, image_size: int, patch_size: int = 14, merge_size: int = 2, temporal_patch_size: int = 2):
        from transformers import Qwen2VLImageProcessorPil

        if image_size % (patch_size * merge_size):
            raise ValueError(f"image_size {image_size} must be a multiple of {patch_size * merge_size}")
        self.image_size = image_size
        area = image_size * image_size
        self._proc = Qwen2VLImageProcessorPil(
            size={"shortest_edge": area, "longest_edge": area},
            patch_size=patch_size,
            merge_size=merge_size,
            temporal_patch_size=temporal_patch_size,
        )

    def __call__(self, images: Sequence["Image.Image"]) -> tuple["torch.Tensor", "torch.Tensor"]:
        """``(pixel_values [n·patches, dim], grid_thw [n, 3])``; an empty list gives empty tensors."""
        import torch

        if not images:
            return torch.zeros(0), torch.zeros(0, 3, dtype=torch.long)
        sq = [im.convert("RGB").resize((self.image_size, self.image_size)) for im in images]
        out = self._proc(images=sq, return_tensors="pt")
        return out["pixel_values"], out["image_grid_thw"]


def open_image(path: str | Path) -> "Image.Image":
    from PIL import Image

    with Image.open(path) as im:
        return im.convert("RGB")


def encode_text(tokenizer: Any, prompt: Prompt, answer: str | None, geometry: AgentGeometry) -> tuple[list[int], list[int]]:
    """``(input_ids, labels)``: the chat prompt with image slots expanded; only the answer (and the closing
    ``<|im_end|>``) is supervised. Prompt and answer are tokenised separately, as generation will see them."""
    screen = VISION_START + IMAGE_PAD * geometry.image_tokens + VISION_END
    history = VISION_START + HISTORY_PAD * geometry.history_queries + VISION_END
    ids = tokenizer(chatml(prompt.render(screen, history)), add_special_tokens=False)["input_ids"]
    if answer is None:
        return ids, [IGNORE_INDEX] * len(ids)
    ans = tokenizer(answer + IM_END, add_special_tokens=False)["input_ids"]
    return ids + ans, [IGNORE_INDEX] * len(ids) + ans


def build_features(
    tokenizer: Any,
    screens: ScreenProcessor,
    geometry: AgentGeometry,
    prompt: Prompt,
    screenshot: "Image.Image",
    history_screenshots: Sequence["Image.Image"],
    answer: str | None = None,
) -> dict[str, Any]:
    """One example's tensors. ``history_screenshots`` are most-recent-first (slot 0 = previous step)."""
    import torch

    frames = list(history_screenshots)[: prompt.history_frames]
    ids, labels = encode_text(tokenizer, prompt, answer, geometry)
    pv, grid = screens([screenshot])
    hpv, hgrid = screens(frames)
    return {
        "input_ids": torch.tensor(ids, dtype=torch.long),
        "labels": torch.tensor(labels, dtype=torch.long),
        "pixel_values": pv,
        "image_grid_thw": grid,
        "history_pixel_values": hpv,
        "history_grid_thw": hgrid,
        "history_slots": torch.arange(len(frames), dtype=torch.long),
    }


def collate(features: list[dict[str, Any]], pad_token_id: int, image_token_id: int) -> dict[str, Any]:
    """Right-pad a batch; images are concatenated; ``history_index`` rows are ``(example, slot)``."""
    import torch

    n = max(f["input_ids"].shape[0] for f in features)
    ids = torch.full((len(features), n), pad_token_id, dtype=torch.long)
    labels = torch.full((len(features), n), IGNORE_INDEX, dtype=torch.long)
    mask = torch.zeros((len(features), n), dtype=torch.long)
    for i, f in enumerate(features):
        k = f["input_ids"].shape[0]
        ids[i, :k], labels[i, :k], mask[i, :k] = f["input_ids"], f["labels"], 1
    hist = [f for f in features if f["history_slots"].numel()]
    batch: dict[str, Any] = {
        "input_ids": ids,
        "attention_mask": mask,
        "labels": labels,
        "mm_token_type_ids": (ids == image_token_id).int(),
        "pixel_values": torch.cat([f["pixel_values"] for f in features]),
        "image_grid_thw": torch.cat([f["image_grid_thw"] for f in features]),
    }
    if hist:
        batch["history_pixel_values"] = torch.cat([f["history_pixel_values"] for f in hist])
        batch["history_grid_thw"] = torch.cat([f["history_grid_thw"] for f in hist])
        batch["history_index"] = torch.cat(
            [torch.stack([torch.full_like(f["history_slots"], i), f["history_slots"]], 1) for i, f in enumerate(features) if f["history_slots"].numel()]
        )
    return batch
