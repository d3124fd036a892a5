"""OdysseyAgent on a transformers-native Qwen2-VL backbone, plus the history resampler.

Why Qwen2-VL: the paper's Qwen-VL-Chat needs ``trust_remote_code`` pinned to an old transformers (the
complaint users hit most); Qwen2-VL ships inside transformers (``Qwen2VLForConditionalGeneration``), has the
same chat format, a 256-token-per-448²-image budget like Qwen-VL's resampler, and a 2B size that later work
fine-tuned to 74.9 AMS on Test-Random. Its ViT→LLM ``merger`` plays the role of Qwen-VL's VL adapter.

The history resampler follows the paper: Q learnable queries, one ``nn.MultiheadAttention`` over the
concatenated ViT tokens of the last δ=4 screenshots, LayerNorm, a hidden×hidden projection, and its Q outputs
replace the ``<|history_pad|>`` placeholder. Unlike the original (whose positional embedding is defined but
unused) a learned per-frame embedding is added to each frame's tokens, so the model knows which screenshot was
one step ago and which was four.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn
from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration

from .processing import HISTORY_PAD, IM_END, IMAGE_PAD, VISION_END, VISION_START, tokens_per_image

SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", IM_END, VISION_START, VISION_END, IMAGE_PAD, "<|video_pad|>", HISTORY_PAD)


class HistoryResampler(nn.Module):
    """Q queries cross-attend once over the history frames' vision tokens → Q tokens in the LLM's width."""

    def __init__(self, dim: int, num_queries: int, num_heads: int, max_frames: int, frame_order: bool = True):
        super().__init__()
        self.query = nn.Parameter(torch.empty(num_queries, dim))
        # frame order: slot 0 is the previous step's screenshot, slot δ-1 the oldest (absent in the original)
        self.frame_embed = nn.Parameter(torch.zeros(max_frames, dim)) if frame_order else None
        self.ln_q = nn.LayerNorm(dim)
        self.ln_kv = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, num_heads, batch_first=True)
        self.ln_post = nn.LayerNorm(dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, frames: torch.Tensor, frame_mask: torch.Tensor) -> torch.Tensor:
        """``frames`` [B, F, T, D] (slot-ordered), ``frame_mask`` [B, F] (True = present) → [B, Q, D]."""
        B, F, T, D = frames.shape
        if self.frame_embed is not None:
            frames = frames + self.frame_embed[:F, None, :].to(frames.dtype)
        kv = self.ln_kv(frames.reshape(B, F * T, D))
        q = self.ln_q(self.query).to(kv.dtype).unsqueeze(0).expand(B, -1, -1)
        ignore = ~frame_mask.repeat_interleave(T, dim=1)
        out, _ = self.attn(q, kv, kv, key_padding_mask=ignore, need_weights=False)
        return self.proj(self.ln_post(out))


class OdysseyAgent(Qwen2VLForConditionalGeneration):
    """Qwen2-VL whose prompt embeddings get the current screenshot (Qwen2-VL's own path) and the resampled
    history screenshots (``history_*`` inputs). Saved and loaded with ``save_pretrained``/``from_pretrained``;
    the resampler's settings live in ``config.odyssey``."""

    def __init__(self, config: Qwen2VLConfig):
        super().__init__(config)
        o = config.odyssey
        self.history_resampler = HistoryResampler(
            config.text_config.hidden_size, o["history_queries"], o["history_heads"], o["history_frames"], o["frame_order"]
        )
        self.post_init()

    def _init_weights(self, module: nn.Module) -> None:
        super()._init_weights(module)
        if isinstance(module, HistoryResampler):
            nn.init.normal_(module.query, std=0.02)
            if module.frame_embed is not None:
                nn.init.zeros_(module.frame_embed)

    @property
    def history_token_id(self) -> int:
        return int(self.config.odyssey["history_token_id"])

    def freeze_vision_tower(self) -> None:
        """Freeze the ViT (patch embedding + blocks); the merger — the VL adapter — stays trainable, as in the paper."""
        for name, p in self.model.visual.named_parameters():
            if not name.startswith("merger."):
                p.requires_grad_(False)

    def _vision_tokens(self, pixel_values: torch.Tensor, grid_thw: torch.Tensor) -> torch.Tensor:
        return torch.cat(self.model.get_image_features(pixel_values, grid_thw).pooler_output, dim=0)

    def embed_prompt(
        self,
        input_ids: torch.Tensor,
        pixel_values: torch.Tensor,
        image_grid_thw: torch.Tensor,
        history_pixel_values: torch.Tensor | None = None,
        history_grid_thw: torch.Tensor | None = None,
        history_index: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Token embeddings with image slots filled: [B, L, D]."""
        emb = self.get_input_embeddings()(input_ids)
        img = self._vision_tokens(pixel_values, image_grid_thw).to(emb.dtype)
        img_mask = input_ids == self.config.image_token_id
        if int(img_mask.sum()) != img.shape[0]:
            raise ValueError(f"{int(img_mask.sum())} image slots but {img.shape[0]} image tokens")
        emb = emb.masked_scatter(img_mask.unsqueeze(-1), img)
        hist_mask = input_ids == self.history_token_id
        if history_index is None or history_index.numel() == 0:
            if hist_mask.any():
                raise ValueError("the prompt has history slots but no history screenshots were given")
            return emb
        feats = self._vision_tokens(history_pixel_values, history_grid_thw).to(emb.dtype)
        n, frames = history_index.shape[0], self.config.odyssey["history_frames"]
        feats = feats.view(n, -1, emb.shape[-1])
        grid = feats.new_zeros(input_ids.shape[0], frames, feats.shape[1], feats.shape[2])
        present = torch.zeros(input_ids.shape[0], frames, dtype=torch.bool, device=emb.device)
        grid[history_index[:, 0], history_index[:, 1]] = feats
        present[history_index[:, 0], history_index[:, 1]] = True
        rows = present.any(1)
        out = self.history_resampler(grid[rows], present[rows]).to(emb.dtype)  # [B', Q, D]
        if int(hist_mask.sum()) != out.shape[0] * out.shape[1]:
            raise ValueError(f"{int(hist_mask.sum())} history slots but {out.shape[0]}×{out.shape[1]} resampled tokens")
        return emb.masked_scatter(hist_mask.unsqueeze(-1), out.reshape(-1, out.shape[-1]))

    def forward(
        self,
        input_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        past_key_values: Any = None,
        inputs_embeds: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        use_cache: bool | None = None,
        pixel_values: torch.Tensor | None = None,
        image_grid_thw: torch.Tensor | None = None,
        mm_token_type_ids: torch.Tensor | None = None,
        history_pixel_values: torch.Tensor | None = None,
        history_grid_thw: torch.Tensor | None = None,
        history_index: torch.Tensor | None = None,
        **kwargs: Any,
    ):
        """A full prompt (with ``pixel_values``) is embedded here and handed to Qwen2-VL as ``inputs_embeds`` with
        its M-RoPE positions; decoding steps (``input_ids`` + cache) pass straight through."""
        if pixel_values is not None:
            assert input_ids is not None
            inputs_embeds = self.embed_prompt(
                input_ids, pixel_values, image_grid_thw, history_pixel_values, history_grid_thw, history_index
            )
            if position_ids is None:
                if mm_token_type_ids is None:
                    mm_token_type_ids = (input_ids == self.config.image_token_id).int()
                position_ids, _ = self.model.get_rope_index(
                    input_ids, mm_token_type_ids, image_grid_thw, attention_mask=attention_mask
                )
            input_ids = None
        return super().forward(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=position_ids,
            past_key_values=past_key_values,
            inputs_embeds=inputs_embeds,
            labels=labels,
            use_cache=use_cache,
            **kwargs,
        )

    @torch.no_grad()
    def greedy(self, batch: dict[str, torch.Tensor], eos_token_ids: list[int], max_new_tokens: int = 30) -> list[int]:
        """Greedy decoding of one example (batch of 1), at least one token — the paper's setting.

        A plain loop over Qwen2-VL's cache instead of ``generate``: the prompt arrives as embeddings, and
        ``generate`` would recompute M-RoPE positions without the image grid.
        """
        input_ids = batch["input_ids"]
        if input_ids.shape[0] != 1:
            raise ValueError("greedy() decodes one example at a time")
        mm = batch.get("mm_token_type_ids")
        mm = (input_ids == self.config.image_token_id).int() if mm is None else mm
        pos, delta = self.model.get_rope_index(input_ids, mm, batch["image_grid_thw"])
        keys = ("pixel_values", "image_grid_thw", "history_pixel_values", "history_grid_thw", "history_index")
        out = self(input_ids=input_ids, position_ids=pos, use_cache=True, logits_to_keep=1, **{k: batch[k] for k in keys if k in batch})
        logits = out.logits[:, -1].float()
        logits[:, eos_token_ids] = float("-inf")  # min_new_tokens=1
        generated: list[int] = []
        length = input_ids.shape[1]
        for t in range(max_new_tokens):
            tok = logits.argmax(-1)
            if int(tok) in eos_token_ids:
                break
            generated.append(int(tok))
            p = (length + t + delta).view(1, 1, 1).expand(3, 1, 1).to(input_ids.device)
            out = self(input_ids=tok.view(1, 1), past_key_values=out.past_key_values, position_ids=p, use_cache=True)
            logits = out.logits[:, -1].float()
        return generated


# ------------------------------------------------------------------------------------------ building
@dataclass(frozen=True)
class AgentSize:
    """Sizes of a freshly initialised agent. ``tiny`` runs in the test suite; ``small`` is the offline default."""

    hidden: int = 64
    layers: int = 2
    heads: int = 4
    kv_heads: int = 2
    intermediate: int = 128
    vision_depth: int = 1
    vision_embed: int = 32
    vision_heads: int = 2
    image_size: int = 56
    history_frames: int = 4
    history_heads: int = 4
    history_queries: int | None = None  # default: as many as one image's tokens (256 at 448², like the paper)
    frame_order: bool = True


SIZES = {
    "tiny": AgentSize(),
    # CPU-trainable in minutes on 2 cores; 112² screens → 16 tokens each
    "small": AgentSize(hidden=128, layers=3, heads=4, kv_heads=2, intermediate=384, vision_depth=2,
                       vision_embed=64, vision_heads=2, image_size=112, history_queries=16),
}


def odyssey_settings(config: Qwen2VLConfig, tokenizer: Any, size: AgentSize | None = None, **override: Any) -> dict[str, Any]:
    """The ``config.odyssey`` dict: resampler shape, image size and the history placeholder id."""
    size = size or AgentSize(image_size=448, history_heads=32)
    tokens = tokens_per_image(size.image_size, config.vision_config.patch_size, config.vision_config.spatial_merge_size)
    o = {
        "image_size": size.image_size,
        "image_tokens": tokens,
        "history_frames": size.history_frames,
        "history_heads": size.history_heads,
        "history_queries": size.history_queries or tokens,
        "frame_order": size.frame_order,
        "history_token_id": tokenizer.convert_tokens_to_ids(HISTORY_PAD),
    }
    o.update(override)
    return o


def fresh_config(tokenizer: Any, size: AgentSize) -> Qwen2VLConfig:
    """A randomly initialisable Qwen2-VL config of the given size around ``tokenizer`` (no downloads)."""
    head_dim = size.hidden // size.heads
    t = head_dim // 8  # Qwen2-VL's M-RoPE split (16, 24, 24 of 64) scaled to this head size
    ids = {tok: tokenizer.convert_tokens_to_ids(tok) for tok in SPECIAL_TOKENS}
    cfg = Qwen2VLConfig(
        text_config=dict(
            vocab_size=len(tokenizer),
            hidden_size=size.hidden,
            intermediate_size=size.intermediate,
            num_hidden_layers=size.layers,
            num_attention_heads=size.heads,
            num_key_value_heads=size.kv_heads,
            max_position_embeddings=4096,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [t, (head_dim // 2 - t) // 2, head_dim // 2 - t - (head_dim // 2 - t) // 2]},
            bos_token_id=ids["<|endoftext|>"],
            eos_token_id=ids[IM_END],
            pad_token_id=ids["<|endoftext|>"],
        ),
        vision_config=dict(
            depth=size.vision_depth, embed_dim=size.vision_embed, hidden_size=size.hidden,
            num_heads=size.vision_heads, mlp_ratio=2,
        ),
        image_token_id=ids[IMAGE_PAD],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids[VISION_START],
        vision_end_token_id=ids[VISION_END],
        tie_word_embeddings=True,
    )
    cfg.odyssey = odyssey_settings(cfg, tokenizer, size)
    return cfg


def build_tokenizer(corpus: list[str], vocab_size: int = 512) -> Any:
    """A small byte-level BPE tokenizer with Qwen's special tokens, trained on ``corpus`` (for fresh agents;
    a real checkpoint brings its own). Byte-level, so any text still encodes."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False,
    )
    tok.train_from_iterator(corpus, trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token=IM_END, pad_token="<|endoftext|>",
        additional_special_tokens=[t for t in SPECIAL_TOKENS if t not in (IM_END, "<|endoftext|>")],
    )


def fresh_agent(tokenizer: Any, size: AgentSize | str = "tiny", seed: int = 0) -> OdysseyAgent:
    size = SIZES[size] if isinstance(size, str) else size
    torch.manual_seed(seed)
    return OdysseyAgent(fresh_config(tokenizer, size))


def from_base(path: str | Path, *, history_frames: int = 4, image_size: int = 448, frame_order: bool = True,
              dtype: torch.dtype | None = None) -> tuple[OdysseyAgent, Any]:
    """An agent from a local Qwen2-VL(-style) checkpoint: backbone weights loaded, resampler freshly initialised.

    Adds ``<|history_pad|>`` to the tokenizer (Qwen2-VL's embedding matrix has spare rows, so usually no
    resize is needed). A directory that already holds an OdysseyAgent (``config.odyssey``) loads as is.
    """
    from transformers import AutoTokenizer

    path = Path(path)
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"{path}: no config.json — expected a local Qwen2-VL checkpoint directory")
    tokenizer = AutoTokenizer.from_pretrained(path)
    config = Qwen2VLConfig.from_pretrained(path)
    if getattr(config, "odyssey", None) is None:
        if HISTORY_PAD not in tokenizer.get_vocab():
            tokenizer.add_special_tokens({"additional_special_tokens": [HISTORY_PAD]}, replace_extra_special_tokens=False)
        heads = config.text_config.num_attention_heads
        size = AgentSize(image_size=image_size, history_frames=history_frames, history_heads=heads, frame_order=frame_order)
        config.odyssey = odyssey_settings(config, tokenizer, size)
    model = OdysseyAgent.from_pretrained(path, config=config, dtype=dtype)
    if len(tokenizer) > model.get_input_embeddings().num_embeddings:
        model.resize_token_embeddings(len(tokenizer))
    return model, tokenizer


def load_agent(path: str | Path, dtype: torch.dtype | None = None) -> tuple[OdysseyAgent, Any]:
    """A trained agent directory (``save_pretrained`` output with its tokenizer)."""
    from transformers import AutoTokenizer

    path = Path(path)
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"{path}: not a navigator model directory (no config.json)")
    model = OdysseyAgent.from_pretrained(path, dtype=dtype)
    if getattr(model.config, "odyssey", None) is None:
        raise ValueError(f"{path}: a Qwen2-VL checkpoint without an OdysseyAgent resampler; use --base for training")
    return model, AutoTokenizer.from_pretrained(path)


def describe(model: OdysseyAgent) -> dict[str, Any]:
    total = sum(p.numel() for p in model.parameters())
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return {"parameters": total, "trainable": trainable, "odyssey": dict(model.config.odyssey)}


__all__ = ["AgentSize", "HistoryResampler", "OdysseyAgent", "SIZES", "build_tokenizer", "describe", "fresh_agent", "from_base", "load_agent"]
