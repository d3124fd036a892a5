"""Train the asks-now classifier: the first layers of the Gemma base, a LoRA on them and a one-logit head.

Why a transformer beside the word n-gram reader (`mobile_actions.asks.AsksNow`): people frame a message by its
context ("my physio sent this: 'please save my number ...'", "things before the move: open wifi settings ...")
more often than by a fixed opener, and n-grams only learn openers. Four layers of the base model read the context;
LoRA keeps what ships to a few megabytes (the layers themselves come from the base at `model prepare`), and four
layers of eighteen keep a message's reading to milliseconds on a phone-class CPU.

The run is plain PyTorch under `accelerate` (`accelerate launch -m mobile_actions.recipes.train_asks --model lm`
scales it out): the classes weighted to count alike, a linear warm-up then linear decay, the trainable state
(LoRA, head, optimiser, step) saved every `save_every` steps so `resume` continues a killed run.
"""
from __future__ import annotations

import json
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Sequence

HEAD_FILE = "head.safetensors"
READER_FILE = "reader.json"          # the config the export and the runtime read (layers, tokens, threshold)
CHECKPOINT = "checkpoint.pt"
TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


@dataclass
class AsksReaderConfig:
    """One training run of the asks-now classifier (`recipes/train_asks.py --model lm` has one flag per field)."""
    out: str
    base: str = ""                  # a Gemma 3 checkpoint folder; "" = the prepared base (`model prepare`)
    layers: int = 4                 # the base's first layers the classifier keeps
    lora_r: int = 16
    lora_alpha: int = 32
    max_tokens: int = 128           # a message's first tokens (framings open a message)
    epochs: float = 1.0
    batch_size: int = 32
    learning_rate: float = 5e-4
    warmup_steps: int = 50
    seed: int = 0
    save_every: int = 100
    resume: bool = False


def pool(hidden, mask):
    """The classifier's features: the mean of a message's final states and the state at its last token, the
    pair scaled to a fixed norm (the head then sees one scale for short and long messages). Used by training
    and by the ONNX export alike, so the two compute the same thing."""
    import torch

    m = mask.unsqueeze(-1).to(hidden.dtype)
    mean = (hidden * m).sum(1) / m.sum(1)
    last = hidden[torch.arange(hidden.shape[0]), mask.sum(1) - 1]
    z = torch.cat([mean, last], -1)
    return z / (z.norm(dim=-1, keepdim=True) + 1e-6) * 8.0


def truncated_base(base: str | Path, layers: int):
    """The base's text model with only its first `layers` decoder layers (and the matching layer types)."""
    import torch
    from transformers import AutoModelForCausalLM

    lm = AutoModelForCausalLM.from_pretrained(str(base), dtype=torch.float32)
    body = lm.model
    body.layers = body.layers[:layers]
    body.config.num_hidden_layers = layers
    if getattr(body.config, "layer_types", None):
        body.config.layer_types = list(body.config.layer_types[:layers])
    return body


def classifier(body):
    """nn.Module: (input_ids, attention_mask) -> one logit per message ("asks for nothing now")."""
    import torch

    class AsksClassifier(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = body
            self.head = torch.nn.Linear(2 * body.config.hidden_size, 1)

        def forward(self, input_ids, attention_mask):
            hidden = self.body(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            return self.head(pool(hidden, attention_mask)).squeeze(-1)

    return AsksClassifier()


def train(cfg: AsksReaderConfig, texts: Sequence[str], not_asking: Sequence[bool],
          say: Callable[[str], None] = print) -> Path:
    """Train on (`texts`, `not_asking`) and save the adapter, the head and `reader.json` into `cfg.out`."""
    import torch
    from accelerate import Accelerator
    from peft import LoraConfig, get_peft_model
    from safetensors.torch import save_file
    from transformers import AutoTokenizer

    from mobile_actions.caller.model import prepare_base, write_portable_base

    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    base = Path(cfg.base) if cfg.base else prepare_base()
    torch.manual_seed(cfg.seed)
    tok = AutoTokenizer.from_pretrained(str(base))
    tok.padding_side = "right"
    body = truncated_base(base, cfg.layers)
    body.embed_tokens.weight.requires_grad_(False)
    body = get_peft_model(body, LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=0.0,
                                           target_modules=TARGETS))
    model = classifier(body)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=cfg.learning_rate, weight_decay=0.01)
    pairs = list(zip(texts, not_asking))
    steps = max(1, int(len(pairs) / cfg.batch_size * cfg.epochs))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / cfg.warmup_steps) * max(0.05, 1 - s / steps))
    positive = max(1, sum(not_asking))
    pos_weight = torch.tensor((len(pairs) - positive) / positive)   # the classes count alike
    acc = Accelerator(cpu=not torch.cuda.is_available())
    model, opt, sched = acc.prepare(model, opt, sched)
    order: list[int] = []
    rng = random.Random(cfg.seed)
    while len(order) < steps * cfg.batch_size:
        idx = list(range(len(pairs)))
        rng.shuffle(idx)
        order += idx
    start = 0
    ckpt = out / CHECKPOINT
    if cfg.resume and ckpt.is_file():
        state = torch.load(ckpt, weights_only=True)
        acc.unwrap_model(model).load_state_dict(state["trainable"], strict=False)
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        start = int(state["step"])
        say(f"resumed at step {start}/{steps}")

    def save_checkpoint(step: int) -> None:
        if not acc.is_main_process:
            return
        trainable = {k: v for k, v in acc.unwrap_model(model).state_dict().items() if "lora_" in k or "head" in k}
        tmp = ckpt.with_suffix(".partial")
        torch.save({"trainable": trainable, "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
                    "step": step}, tmp)
        tmp.replace(ckpt)

    model.train()
    t0 = time.time()
    log = (out / "loss.csv").open("a", encoding="utf-8")
    for step in range(start, steps):
        batch = [pairs[i] for i in order[step * cfg.batch_size:(step + 1) * cfg.batch_size]]
        enc = tok([t for t, _ in batch], return_tensors="pt", padding=True, truncation=True,
                  max_length=cfg.max_tokens)
        y = torch.tensor([float(lab) for _, lab in batch])
        logits = model(enc["input_ids"].to(acc.device), enc["attention_mask"].to(acc.device))
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y.to(acc.device),
                                                                    pos_weight=pos_weight.to(acc.device))
        acc.backward(loss)
        acc.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        opt.zero_grad()
        log.write(f"{step},{loss.item():.5f}\n")
        if step % 20 == 0:
            log.flush()
            say(f"step {step}/{steps} loss {loss.item():.4f} ({time.time() - t0:.0f} s)")
        if (step + 1) % cfg.save_every == 0:
            save_checkpoint(step + 1)
    log.close()
    if acc.is_main_process:
        unwrapped = acc.unwrap_model(model)
        unwrapped.body.save_pretrained(str(out))
        write_portable_base(out, cfg.base or "base")
        (out / "README.md").unlink(missing_ok=True)   # peft's empty card: the reader's card is assets/asks-now.md
        save_file({"weight": unwrapped.head.weight.detach().contiguous(),
                   "bias": unwrapped.head.bias.detach().contiguous()}, str(out / HEAD_FILE))
        fields = {k: v for k, v in asdict(cfg).items() if k not in ("out", "resume")}   # no machine paths
        write_reader(out, {**fields, "threshold": None})   # base "": the prepared one, on any machine
    return out


def write_reader(folder: Path, fields: dict) -> None:
    (folder / READER_FILE).write_text(json.dumps(fields, indent=1) + "\n", encoding="utf-8")


def read_reader(folder: Path) -> dict:
    return json.loads((folder / READER_FILE).read_text(encoding="utf-8"))


def load_trained(folder: Path, base: str | Path):
    """The trained classifier (torch, eval mode, LoRA merged) from an adapter folder and the base."""
    import torch
    from peft import PeftModel
    from safetensors.torch import load_file

    cfg = read_reader(folder)
    body = PeftModel.from_pretrained(truncated_base(base, cfg["layers"]), str(folder)).merge_and_unload()
    model = classifier(body)
    head = load_file(str(folder / HEAD_FILE))
    with torch.no_grad():
        model.head.weight.copy_(head["weight"])
        model.head.bias.copy_(head["bias"])
    return model.eval()
