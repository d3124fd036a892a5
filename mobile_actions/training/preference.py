"""Preference tuning of the caller: trl `DPOTrainer` on the answer a row wants against the one the caller gave.

Supervised rows that ask for nothing did not teach the 270M caller to hold back: three runs with more of them
acted on more such requests, not fewer (docs/experiments.md). A preference step pushes directly against what
the caller itself answers. `preference_pairs` makes the pairs from rows and the caller's own answers to them
(`bench act --out`): a call it made where the row wants none or other calls, rejected against the row's own
turn; and, so that it does not learn to hold back from everything, a row's wanted calls against a reply that
makes none. `train_preference` goes on from an adapter, which trl copies as the frozen reference ("ref"), so
the step moves the shipped caller and not the base.
"""
from __future__ import annotations

import json
import logging
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from mobile_actions.calls import ToolCall
from mobile_actions.dataset import Row, prompt_completion
from mobile_actions.scoring import exact_match

logger = logging.getLogger("mobile_actions.train")

TURN_END = "<end_of_turn>"


@dataclass(frozen=True)
class Pair:
    """One preference: the same prompt, the turn the row wants (`chosen`) and one it does not (`rejected`)."""
    prompt: str
    chosen: str
    rejected: str
    where: str
    kind: str     # "acted" (a call made against the row), "held" (the row's calls against none)


def _turn(row: Row, calls: Sequence[ToolCall], reply: str, layout: str) -> str:
    """The model turn that makes `calls` (or, with none, says `reply`), rendered as the runtime reads it."""
    message = ({"role": "assistant", "tool_calls": [{"function": {"name": c.name, "arguments": c.arguments}}
                                                     for c in calls]}
               if calls else {"role": "assistant", "content": reply})
    turn = Row(row.metadata, row.tools, [*row.prompt_messages, message], list(calls), reply if not calls else "")
    return prompt_completion(turn, layout=layout)[1]


def preference_pairs(rows: Sequence[Row], answers: Mapping[str, Sequence[ToolCall]], *, layout: str = "cache",
                     held_share: float = 1.0, seed: int = 0) -> list[Pair]:
    """Pairs from `rows` and the caller's `answers` to them (by `Row.where`). A row whose answer differs from
    its calls gives ("acted") its own turn against the answer's; rows the caller answers rightly with calls give,
    for `held_share` as many rows as there are pairs of the first kind, their calls against a reply that makes
    none (a reply some row that asks for nothing says)."""
    rng = random.Random(seed)
    replies = sorted({r.reply for r in rows if not r.calls and r.reply}) or ["Okay."]
    acted: list[Pair] = []
    right: list[Row] = []
    for row in rows:
        if row.where not in answers:
            continue
        answer = list(answers[row.where])
        prompt, wanted = prompt_completion(row, layout=layout)
        if not exact_match(row.calls, answer):   # a miss as `bench act` counts it
            acted.append(Pair(prompt, wanted, _turn(row, answer, rng.choice(replies), layout), row.where, "acted"))
        elif row.calls:
            right.append(row)
    rng.shuffle(right)
    held = [Pair(*prompt_completion(r, layout=layout), _turn(r, [], rng.choice(replies), layout), r.where, "held")
            for r in right[:round(held_share * len(acted))]]
    pairs = acted + held
    rng.shuffle(pairs)
    return pairs


def write_pairs(pairs: Sequence[Pair], path: str | Path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for p in pairs:
            f.write(json.dumps(asdict(p), ensure_ascii=False) + "\n")


def read_pairs(path: str | Path) -> list[Pair]:
    from mobile_actions import jsontext

    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                data = jsontext.loads(line)
                out.append(Pair(**{k: str(data[k]) for k in ("prompt", "chosen", "rejected", "where", "kind")}))
            except (ValueError, TypeError, KeyError) as e:
                raise ValueError(f"{path}:{n}: not a preference pair ({e})") from None
    return out


@dataclass
class CallerDPOConfig:
    """One preference run (`mobile_actions.recipes.train_preference train`)."""
    pairs: str = field(default="", metadata={"help": "preference pairs (JSONL from `... pairs`)"})
    adapter: str = field(default="default", metadata={
        "help": "the adapter to go on from ('default': the bundled Mobile Actions caller); its copy is the reference"})
    out: str = field(default="runs/caller-dpo", metadata={"help": "output directory"})
    beta: float = field(default=0.1, metadata={"help": "DPO beta: how far from the reference the step may move"})
    sft_weight: float = field(default=0.5, metadata={
        "help": "weight of the wanted turn's own NLL beside the DPO loss (keeps values exact; 0: plain DPO)"})
    lr: float = 5e-6
    epochs: float = 1.0
    max_steps: int = -1
    batch_size: int = 2
    grad_accum: int = 4
    max_length: int = 1024
    warmup: float = 0.1
    seed: int = 42
    threads: int = 0
    save_steps: int = 20
    logging_steps: int = 1
    resume: str | None = field(default=None, metadata={"help": "'last' (latest checkpoint in --out) or a checkpoint dir"})


def same_reference(model) -> None:
    """Make the frozen "ref" adapter trl adds beside "default" a whole copy of it. trl copies the parameters whose
    names hold ".default." and so misses the trained control-token rows (`...trainable_tokens_delta.default`):
    the reference would read the wire format's control tokens as the base does, and every margin would be
    the control tokens' (tens of nats) instead of the answers'."""
    import torch

    with torch.no_grad():
        for name, param in model.named_parameters():
            if ".default." in name or name.endswith(".default"):
                twin = (name + ".").replace(".default.", ".ref.", 1).rstrip(".")
                try:
                    model.get_parameter(twin).data.copy_(param.data)
                except AttributeError:
                    pass


@dataclass
class PreferenceResult:
    out: Path
    pairs: int
    steps: int
    seconds: float


def train_preference(cfg: CallerDPOConfig) -> PreferenceResult:
    import shutil

    import torch
    from datasets import Dataset
    from peft import PeftModel
    from transformers import AutoModelForCausalLM
    from trl import DPOConfig, DPOTrainer

    from mobile_actions.caller.model import load_tokenizer, read_marker, resolve_model, write_marker
    from mobile_actions.decoding.grounding import POLICY_FILE
    from mobile_actions.training.caller import init_adapter_dir, last_checkpoint, use_bf16
    from mobile_actions.training.curves import run_files_callback
    from mobile_actions.training.fused_head import compact_head_on_cpu, head_bias_visible

    pairs = read_pairs(cfg.pairs)
    if not pairs:
        raise ValueError(f"{cfg.pairs}: no pairs")
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    start = init_adapter_dir(cfg.adapter)
    marker = read_marker(start)
    base = resolve_model(marker.get("base", "base"))
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = load_tokenizer(marker.get("base", "base"))
    tokenizer.eos_token = TURN_END       # a turn ends where the runtime stops; trl adds no `<eos>` after it
    # trl's tokenizer adds the `<bos>` the rendered prompt already has: the prompt goes in without it
    bos = tokenizer.bos_token
    rows = [{"prompt": p.prompt[len(bos):] if p.prompt.startswith(bos) else p.prompt,
             "chosen": p.chosen.rstrip("\n"), "rejected": p.rejected.rstrip("\n")} for p in pairs]
    bf16 = use_bf16("auto", torch.cuda.is_available())
    model = AutoModelForCausalLM.from_pretrained(str(base), dtype=torch.bfloat16 if bf16 else torch.float32)
    model = PeftModel.from_pretrained(model, str(start), is_trainable=True)   # trl copies it as the reference
    args = DPOConfig(
        output_dir=str(out), beta=cfg.beta, learning_rate=cfg.lr,
        num_train_epochs=cfg.epochs, max_steps=cfg.max_steps, per_device_train_batch_size=cfg.batch_size,
        gradient_accumulation_steps=cfg.grad_accum, max_length=cfg.max_length, warmup_steps=cfg.warmup,
        lr_scheduler_type="cosine", seed=cfg.seed, logging_steps=cfg.logging_steps, save_steps=cfg.save_steps,
        save_total_limit=2, report_to="none", bf16=bf16, use_cpu=not torch.cuda.is_available(),
        gradient_checkpointing=False, dataset_num_proc=None,
        loss_type=["sigmoid", "sft"] if cfg.sft_weight else ["sigmoid"],
        loss_weights=[1.0, cfg.sft_weight] if cfg.sft_weight else None)
    trainer = DPOTrainer(model=model, args=args, train_dataset=Dataset.from_list(rows), processing_class=tokenizer,
                         callbacks=[run_files_callback(out, title="caller preference tuning (DPO + wanted turn's NLL)")])
    same_reference(trainer.model)
    resume = last_checkpoint(out) if cfg.resume == "last" else cfg.resume
    t0 = time.time()
    with head_bias_visible(trainer.model), compact_head_on_cpu():   # as the SFT recipe runs trl's fused head
        trainer.train(resume_from_checkpoint=resume)
    seconds = time.time() - t0
    trainer.model.save_pretrained(str(out), selected_adapters=["default"])
    if (out / "default").is_dir():        # peft writes a named adapter into a folder of its name
        for f in (out / "default").iterdir():
            shutil.move(str(f), out / f.name)
        (out / "default").rmdir()
    load_tokenizer(marker.get("base", "base")).save_pretrained(str(out))
    for name in (POLICY_FILE, "chat_template.jinja"):
        if (start / name).is_file():
            shutil.copy(start / name, out / name)
    write_marker(out, {**marker, "steps": trainer.state.global_step,
                       "preference": {"from": str(cfg.adapter), "pairs": len(pairs), "config": asdict(cfg)}})
    return PreferenceResult(out, len(pairs), trainer.state.global_step, seconds)
