"""A LoRA training step on a CPU without the work that changes nothing: `cpu_fast_path(model)`.

A step of the caller's training (trl's fused head, peft's LoRA and trainable control rows) spent most of its
time on the CPU outside the decoder's matmuls (profile: docs/experiments.md, "Training throughput on CPU").
Inside `with cpu_fast_path(model):` the model runs:

- its head as `FrozenHeadLogProb` (`frozen_head`): the table frozen, only the 7 control rows with gradients,
  one bf16 matmul per chunk of tokens, the backward over the softmax entries >= `head_min_prob` only;
- its embedding and tied head without peft's merged copy of the table (same values);
- its LoRA layers without peft's fp32 casts of every input (two copies of every activation for the same
  product), with LoRA's scalings on the r-wide product instead of full-width activations, dropout as
  `GapDropout` (`gap_dropout`), and passes without gradients as at inference (no dropout; on an fp32 base
  one product with the merged weight, merged again after every update);
- its attentions as `HeldPastAttention` inside `past_held()` (`held_attention`), and through SDPA's own GQA
  path elsewhere (transformers repeats the one key/value head 4x whenever there is a mask);
- with `fuse`, Gemma's norms, rotary embeddings and MLP activation as one compiled loop each (`elementwise`).

Loss and gradients are those of the plain path (in fp32 equal to rounding; a test holds them equal), so a run
can switch to it mid-way; with `head_min_prob` the hidden states' gradient moves by less than the probability
mass the head's backward leaves out.

Why a context manager over one model: these are changes to a peft/transformers model's modules (their
`forward`, dropout modules, one flag), not to the libraries. They are made on the model given, recorded, and
put back when the block ends, as is the one process-wide setting they need (`TRANSFORMERS_SDPA_FORCE_GQA`).
"""
from __future__ import annotations

import contextlib
import os
import types
from typing import Any, Iterator

import torch
import torch.nn.functional as F

from mobile_actions.training.elementwise import FUSED_GELU_MUL, FUSED_NORM, FUSED_ROTARY, recompile_limit
from mobile_actions.training.frozen_head import FrozenHeadLogProb, trainable_rows
from mobile_actions.training.gap_dropout import GapDropout
from mobile_actions.training.held_attention import HoldingPastAttentions

_ABSENT = object()


class Swaps:
    """Attributes and items of a model's modules, swapped and recorded so that `undo()` puts each back (last
    first): an instance attribute that was not there before is removed again, revealing the class's."""

    def __init__(self) -> None:
        self._undo: list[tuple[Any, str, Any, bool]] = []

    def set(self, obj: Any, name: str, value: Any) -> None:
        """`obj.name = value` (a plain attribute: a bound `forward`, a flag)."""
        self._undo.append((obj, name, vars(obj).get(name, _ABSENT), False))
        setattr(obj, name, value)

    def set_item(self, container: Any, key: str, value: Any) -> None:
        """`container[key] = value` (a `ModuleDict` entry: a LoRA dropout)."""
        self._undo.append((container, key, container[key], True))
        container[key] = value

    def undo(self) -> None:
        while self._undo:
            obj, name, old, item = self._undo.pop()
            if item:
                obj[name] = old
            elif old is _ABSENT:
                vars(obj).pop(name, None)
            else:
                setattr(obj, name, old)


def _lora_forward(self, x: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
    """peft's LoRA `Linear.forward` with the dropout's 1 / (1 - p) and LoRA's alpha / r applied to the
    r-wide product between A and B instead of the layer's full-width input and output (the same
    linear map, two full-width multiplies fewer per layer, forward and backward).

    A pass without gradients (a prompt held by `--prompt-gradients`, evaluation) runs without dropout, as at
    inference: in training it is the fixed context the answer reads, and no gradient is there to regularise.
    With an fp32 base it is one product with the merged weight (`_merged_weight`)."""
    if self.disable_adapters or self.merged or args or kwargs or self.lora_variant:
        return type(self).forward(self, x, *args, **kwargs)
    grad = torch.is_grad_enabled()
    if not grad and (merged := _merged_weight(self)) is not None:
        return F.linear(x, merged, self.base_layer.bias)
    result = self.base_layer(x)
    for name in self.active_adapters:
        if name not in self.lora_A:
            continue
        drop = self.lora_dropout[name]
        if not grad:
            a = self.lora_A[name](x) * self.scaling[name]
        elif isinstance(drop, GapDropout):
            a = self.lora_A[name](drop.keep(x)) * (self.scaling[name] * drop.scale())
        else:
            a = self.lora_A[name](drop(x)) * self.scaling[name]
        result = result + self.lora_B[name](a)
    return result


def _merged_weight(self) -> torch.Tensor | None:
    """The base weight with the active LoRA products added in (W + alpha/r · B A), for passes without gradients,
    kept until one of those weights changes (an optimizer step or a load bumps their version counters).

    Why: `--prompt-gradients none` runs most of a step's positions (the prompt) forward only, where LoRA's two
    narrow products, its dropout's copy of the input and the add cost ~a fifth of the frozen product for
    nothing a gradient needs. Merged, a layer is one product; the merge is ~0.1 % of a step's multiply-adds.
    A bf16 weight would round the small LoRA products away: None (LoRA's products run apart)."""
    weight = self.base_layer.weight
    names = [n for n in self.active_adapters if n in self.lora_A]
    if weight.dtype != torch.float32 or not names:
        return None
    parts = [(self.lora_A[n].weight, self.lora_B[n].weight, self.scaling[n]) for n in names]
    key = (id(weight), weight._version, *((id(a), a._version, id(b), b._version, s) for a, b, s in parts))
    cached = getattr(self, "_merged_lora", None)
    if cached is None or cached[0] != key:
        merged = weight.detach().clone()
        for a, b, scale in parts:
            merged.addmm_(b.detach().float(), a.detach().float(), alpha=scale)
        self._merged_lora = cached = (key, merged)
    return cached[1]


def _norm_forward(self, x: torch.Tensor) -> torch.Tensor:
    return FUSED_NORM(x, self.weight, self.eps)


def _mlp_forward(self, x: torch.Tensor) -> torch.Tensor:
    return self.down_proj(FUSED_GELU_MUL(self.gate_proj(x), self.up_proj(x)))


def _read_with(module: Any, swaps: Swaps, **names: Any) -> None:
    """`module.forward` (as swapped so far) reading `names` in place of the globals of those names, on a copy of
    the function: nothing of it is rewritten, and other models in the process keep the plain function."""
    plain = module.forward.__func__
    forward = types.FunctionType(plain.__code__, {**plain.__globals__, **names}, plain.__name__, plain.__defaults__,
                                 plain.__closure__)
    swaps.set(module, "forward", types.MethodType(forward, module))


def hold_past_attention(model: Any, swaps: Swaps) -> int:
    """Gemma 3's attentions run as `HeldPastAttention` inside `past_held()` (transformers' SDPA elsewhere), until
    `swaps.undo()`; returns how many modules changed."""
    changed = 0
    for module in model.modules():
        forward = module.forward
        if type(module).__name__ == "Gemma3Attention" and "ALL_ATTENTION_FUNCTIONS" in forward.__code__.co_names:
            plain = forward.__func__.__globals__["ALL_ATTENTION_FUNCTIONS"]
            _read_with(module, swaps, ALL_ATTENTION_FUNCTIONS=HoldingPastAttentions(plain))
            changed += 1
    return changed


def fuse_elementwise(model: Any, swaps: Swaps) -> int:
    """Gemma 3's norms, MLP activations and rotary embeddings run `Fused`, until `swaps.undo()`; returns how many
    modules changed.

    The attention keeps transformers' own forward, read with `FUSED_ROTARY` in place of the module's
    `apply_rotary_pos_emb` (its globals swapped on a copy of the function): nothing of it is rewritten here,
    and other models in the process keep the plain function."""
    changed = 0
    for module in model.modules():
        kind = type(module).__name__
        if kind == "Gemma3RMSNorm":
            swaps.set(module, "forward", types.MethodType(_norm_forward, module))
        elif kind == "Gemma3MLP" and getattr(module.config, "hidden_activation", None) == "gelu_pytorch_tanh":
            swaps.set(module, "forward", types.MethodType(_mlp_forward, module))
        elif kind == "Gemma3Attention" and "apply_rotary_pos_emb" in type(module).forward.__code__.co_names:
            _read_with(module, swaps, apply_rotary_pos_emb=FUSED_ROTARY)
        else:
            continue
        changed += 1
    return changed


def _rows_forward(layer: Any, x: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
    """peft's trainable-token embedding or tied head without a merged copy of the table (same values)."""
    base = layer.get_base_layer()
    if layer.disable_adapters or layer.merged:
        return type(layer).forward(layer, x, *args, **kwargs)
    table, index, rows = trainable_rows(layer)
    if isinstance(base, torch.nn.Linear):   # as a 2-D product: F.linear on a 3-D input copied the table
        flat = x.reshape(-1, x.shape[-1]).to(table.dtype)
        out = flat @ table.T
        out[:, index] = flat @ rows.to(out.dtype).T
        return out.view(*x.shape[:-1], out.shape[-1])
    out = F.embedding(x, table, padding_idx=base.padding_idx)
    hit = x[..., None] == index
    if bool(hit.any()):
        which = hit.int().argmax(-1)
        out = torch.where(hit.any(-1, keepdim=True), rows.to(out.dtype)[which], out)
    scale = layer._get_embed_scale()
    return out * scale.to(out.dtype) if scale is not None else out


def _frozen_head_forward(model: Any, head_min_prob: float) -> Any:
    """trl's fused-head forward for `model` (what `SFTTrainer.compute_loss` calls) with `FrozenHeadLogProb` as
    the head; without `fused_lm_head`, the model's own forward."""
    from trl.trainer.utils import FusedCausalLMOutput

    plain = types.MethodType(type(model).forward, model)

    def forward(*args: Any, fused_lm_head: bool = False, labels: Any = None, shift_labels: Any = None,
                num_items_in_batch: Any = None, **kwargs: Any):
        if not fused_lm_head:
            extra = {k: v for k, v in (("labels", labels), ("shift_labels", shift_labels),
                                       ("num_items_in_batch", num_items_in_batch)) if v is not None}
            return plain(*args, **kwargs, **extra)
        kwargs["use_cache"] = False
        hidden = model.model(*args, **kwargs).last_hidden_state
        if shift_labels is None:
            hidden, labels = hidden[:, :-1], labels[:, 1:]
        else:
            labels = shift_labels
        mask = labels != -100
        table, index, rows = trainable_rows(model.get_output_embeddings())
        logp, entropy, top1 = FrozenHeadLogProb.apply(hidden[mask], table, index, rows, labels[mask], head_min_prob)
        per_token = [x.new_zeros(mask.shape).masked_scatter(mask, x) for x in (logp, entropy, top1)]
        total = mask.sum().clamp(min=1) if num_items_in_batch is None else num_items_in_batch
        return FusedCausalLMOutput(loss=-per_token[0].sum() / total, log_probs=per_token[0], entropy=per_token[1],
                                   is_top1=per_token[2], label_mask=mask)

    return forward


def swap_in_cpu_step(model: Any, swaps: Swaps, fuse: bool = True, head_min_prob: float = 0.0) -> bool:
    """The changes `cpu_fast_path` makes to `model`'s modules, recorded in `swaps`. Returns False, changing
    nothing, for a model they do not fit (a head that trains whole, a softcapped head, no decoder)."""
    from peft.tuners.lora import Linear as LoraLinear, LoraLayer

    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    embed, head = base.get_input_embeddings(), base.get_output_embeddings()
    rows = type(head).__name__ == "TrainableTokensWrapper"
    if rows != (type(embed).__name__ == "TrainableTokensWrapper") or (not rows and head.weight.requires_grad):
        return False   # a head that trains whole (full fine-tune): trl's path
    if getattr(base.config, "final_logit_softcapping", None) or not hasattr(base, "model"):
        return False
    if rows:
        for wrapper in (embed, head):
            swaps.set(wrapper.token_adapter, "forward", types.MethodType(_rows_forward, wrapper.token_adapter))
    swaps.set(base, "forward", _frozen_head_forward(base, head_min_prob))
    for module in model.modules():
        if isinstance(module, LoraLayer):
            swaps.set(module, "cast_input_dtype_enabled", False)
            for name, drop in module.lora_dropout.items():
                if isinstance(drop, torch.nn.Dropout):
                    swaps.set_item(module.lora_dropout, name, GapDropout(drop.p))
            if isinstance(module, LoraLinear):
                swaps.set(module, "forward", types.MethodType(_lora_forward, module))
                swaps.set(module, "_merged_lora", None)   # `_merged_weight`'s copy: dropped with the rest
    if fuse:
        fuse_elementwise(base, swaps)
    hold_past_attention(base, swaps)
    return True


@contextlib.contextmanager
def sdpa_gqa_without_copies() -> Iterator[None]:
    """transformers' SDPA attention through SDPA's own GQA path in this block, also with a mask: without it,
    transformers repeats each key/value head for every query head that shares it (4x the keys and values of
    Gemma 3 270M) whenever there is a mask (ours: padding). transformers reads only an environment variable for
    this, at every call, so it is set for the block and put back after it."""
    name = "TRANSFORMERS_SDPA_FORCE_GQA"
    old = os.environ.get(name)
    os.environ[name] = "1"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


@contextlib.contextmanager
def cpu_fast_path(model: Any, fuse: bool = True, head_min_prob: float = 0.0) -> Iterator[bool]:
    """The cheap CPU step (this module's docstring) in `model` (a peft model with trainable control rows, set up
    by trl's SFTTrainer) for the block; yields whether it applies (False: `model` runs unchanged). `fuse`: also
    `fuse_elementwise`; `head_min_prob`: the head's backward leaves out softmax entries below it (0: none).
    After the block the model's modules are as they were."""
    swaps = Swaps()
    try:
        applied = swap_in_cpu_step(model, swaps, fuse=fuse, head_min_prob=head_min_prob)
        with contextlib.ExitStack() as settings:
            if applied:
                settings.enter_context(sdpa_gqa_without_copies())
                if fuse:
                    settings.enter_context(recompile_limit())
            yield applied
    finally:
        swaps.undo()
