"""Recipe: fine-tune an OdysseyAgent on GUI Odyssey(-format) episodes with the Hugging Face Trainer.

Defaults are the paper's: AdamW lr 2e-5, cosine schedule, β=(0.9, 0.95), weight decay 0.1, warm-up 1 %,
global batch 128, one epoch, bf16, gradient checkpointing, frozen ViT (LLM + resampler + VL adapter train).
The same file runs on one CPU with a tiny model and unchanged under ``accelerate launch`` (multi-GPU,
DeepSpeed ZeRO via ``deepspeed=``): the global batch is split as per-device batch × accumulation × processes.

    mobile-actions navigator train --episodes DATA --split random --base /models/Qwen2-VL-2B-Instruct --out runs/odyssey
    accelerate launch -m mobile_actions.recipes.train_navigator --episodes DATA --split random --base ... --out ...
"""
from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from mobile_actions.training.allocator import use_allocator
from mobile_actions.training.curves import run_files_callback


@dataclass
class NavigatorTrainConfig:
    """Everything a run needs; saved next to the checkpoint as ``train_config.json``."""

    episodes: str
    out: str
    split: str | None = "random"  # None: every episode under `episodes`
    part: str = "train"
    base: str | None = None  # local Qwen2-VL(-style) checkpoint; None: a fresh model of `size`
    size: str = "tiny"  # fresh models only: tiny (tests) | small (offline default)
    vocab_size: int = 512  # fresh models only: byte-level BPE trained on the training prompts
    his_len: int = 4  # δ: history actions and screenshots
    image_size: int = 448  # --base only (fresh sizes fix their own)
    on_missing: str = "error"  # error | skip-step | skip-episode
    learning_rate: float = 2e-5
    adam_beta1: float = 0.9
    adam_beta2: float = 0.95
    weight_decay: float = 0.1
    warmup_ratio: float = 0.01
    lr_scheduler_type: str = "cosine"
    global_batch_size: int = 128
    per_device_batch_size: int = 2
    epochs: float = 1.0
    max_steps: int = -1
    bf16: bool = True  # used when the GPU supports it
    gradient_checkpointing: bool = True
    freeze_vit: bool = True
    save_steps: int = 500
    save_total_limit: int = 2
    logging_steps: int = 1
    seed: int = 2024
    dataloader_workers: int = 2
    resume: bool = True  # continue from the newest checkpoint-* in `out`
    progress: bool = True
    deepspeed: str | None = None  # a DeepSpeed JSON config, passed to TrainingArguments
    report_to: list[str] = field(default_factory=lambda: ["none"])
    allocator: str = "auto"  # preloaded at start (mobile_actions/training/allocator.py): auto | tcmalloc | jemalloc | system | a .so path


@dataclass(frozen=True)
class TrainResult:
    out: str
    steps: int
    train_loss: float | None
    examples: int
    screenshots_missing: int
    loss_csv: str
    loss_png: str
    seconds: float
    device: str


def _corpus(examples: list) -> list[str]:
    from mobile_actions.navigator.prompt import chatml

    return [chatml(x.prompt.render("", ""), x.target) for x in examples]


def prepare(cfg: NavigatorTrainConfig):
    """Examples, model and tokenizer for a run (a fresh tokenizer is reused from ``out`` on resume)."""
    from transformers import AutoTokenizer

    from mobile_actions.navigator.data import build_examples
    from mobile_actions.navigator.episodes import load_episodes
    from mobile_actions.navigator.model import SIZES, fresh_agent, from_base, build_tokenizer

    out = Path(cfg.out)
    episodes = load_episodes(cfg.episodes, cfg.split, cfg.part)  # type: ignore[arg-type]
    examples, report = build_examples(cfg.episodes, episodes, his_len=cfg.his_len, on_missing=cfg.on_missing)  # type: ignore[arg-type]
    if not examples:
        raise ValueError(f"{cfg.episodes}: no training examples ({cfg.split or 'all'} / {cfg.part})")
    if cfg.base:
        model, tokenizer = from_base(cfg.base, history_frames=cfg.his_len, image_size=cfg.image_size)
    else:
        if (out / "tokenizer.json").is_file():
            tokenizer = AutoTokenizer.from_pretrained(out)
        else:
            tokenizer = build_tokenizer(_corpus(examples), cfg.vocab_size)
        from dataclasses import replace

        model = fresh_agent(tokenizer, replace(SIZES[cfg.size], history_frames=cfg.his_len), seed=cfg.seed)
    if cfg.freeze_vit:
        model.freeze_vision_tower()
    return examples, report, model, tokenizer


def main(cfg: NavigatorTrainConfig) -> TrainResult:
    import torch
    from transformers import Trainer, TrainingArguments
    from transformers.trainer_utils import get_last_checkpoint

    from mobile_actions.navigator.data import Collator, ExampleDataset

    t0 = time.time()
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    examples, report, model, tokenizer = prepare(cfg)
    tokenizer.save_pretrained(out)
    (out / "train_config.json").write_text(json.dumps(asdict(cfg), indent=2))

    world = int(os.environ.get("WORLD_SIZE", "1"))
    accum = max(1, cfg.global_batch_size // (cfg.per_device_batch_size * world))
    cuda = torch.cuda.is_available()
    bf16 = cfg.bf16 and cuda and torch.cuda.is_bf16_supported()
    args = TrainingArguments(
        output_dir=str(out),
        per_device_train_batch_size=cfg.per_device_batch_size,
        gradient_accumulation_steps=accum,
        num_train_epochs=cfg.epochs,
        max_steps=cfg.max_steps,
        learning_rate=cfg.learning_rate,
        adam_beta1=cfg.adam_beta1,
        adam_beta2=cfg.adam_beta2,
        weight_decay=cfg.weight_decay,
        warmup_steps=cfg.warmup_ratio,  # a float < 1 is a ratio in transformers 5
        lr_scheduler_type=cfg.lr_scheduler_type,
        bf16=bf16,
        activation_checkpointing=cfg.gradient_checkpointing,
        activation_checkpointing_kwargs={"use_reentrant": False},
        logging_steps=cfg.logging_steps,
        save_strategy="steps",
        save_steps=cfg.save_steps,
        save_total_limit=cfg.save_total_limit,
        seed=cfg.seed,
        dataloader_num_workers=cfg.dataloader_workers,
        remove_unused_columns=False,
        disable_tqdm=not cfg.progress,
        report_to=cfg.report_to,
        deepspeed=cfg.deepspeed,
    )
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=ExampleDataset(examples, tokenizer, model.config),
        data_collator=Collator(tokenizer.pad_token_id or 0, model.config.image_token_id),
        callbacks=[run_files_callback(out, title="navigator fine-tuning")],
    )
    last = get_last_checkpoint(str(out)) if cfg.resume else None
    result = trainer.train(resume_from_checkpoint=last)
    trainer.save_model(str(out))
    csv_path, png_path = out / "loss.csv", out / "loss.png"   # written by the callback (main process, at the end)
    res = TrainResult(
        out=str(out),
        steps=trainer.state.global_step,
        train_loss=float(result.training_loss) if result.training_loss is not None else None,
        examples=len(examples),
        screenshots_missing=report.steps_missing,
        loss_csv=str(csv_path),
        loss_png=str(png_path),
        seconds=round(time.time() - t0, 1),
        device=torch.cuda.get_device_name(0) if cuda else "cpu",
    )
    if trainer.is_world_process_zero():
        (out / "train_summary.json").write_text(json.dumps(asdict(res), indent=2))
    return res


def add_arguments(p: argparse.ArgumentParser) -> None:
    """CLI flags for every config field (``--per-device-batch-size`` …), defaults from the dataclass."""
    from mobile_actions.recipes import train_caller

    train_caller.add_arguments(p, config=NavigatorTrainConfig, required=("episodes", "out"))


def config_from_args(ns: argparse.Namespace) -> NavigatorTrainConfig:
    """The config of the flags; ``--split none`` (or ``all``, ``""``) is every episode under ``--episodes``."""
    from mobile_actions.recipes import train_caller

    cfg = train_caller.config_from_args(ns, config=NavigatorTrainConfig)
    return replace(cfg, split=None) if cfg.split in ("", "none", "all") else cfg


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    cfg = config_from_args(parser.parse_args())
    use_allocator(cfg.allocator)
    r = main(cfg)
    print(json.dumps(asdict(r), indent=2))
