"""trl's fused LM head (what `SFTTrainer` computes the loss with) where it does not fit as it comes.

Both are context managers that change something for a training run's block and put it back after it.
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator


@contextlib.contextmanager
def head_bias_visible(model: Any) -> Iterator[None]:
    """The fused head of a peft `model` with trainable control rows finds the head's bias (None) in this block.

    Why: trl 1.16 reads `lm_head.weight` and `lm_head.bias` directly. With a tied embedding and
    `trainable_token_indices`, peft wraps the head in a `TrainableTokensWrapper` whose `.weight` is already the
    merged (trained) matrix, but which has no `.bias`, so the first step fails. The head has no bias: the wrapper
    says so while the block runs."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    head = base.get_output_embeddings()
    if head is None or type(head).__name__ != "TrainableTokensWrapper" or "bias" in vars(head):
        yield
        return
    head.bias = getattr(head.original_module, "bias", None)
    try:
        yield
    finally:
        vars(head).pop("bias", None)


@contextlib.contextmanager
def compact_head_on_cpu() -> Iterator[None]:
    """trl's fused head projects only the positions that carry a label on a CPU too, in this block.

    Why: trl projects only labelled positions on CUDA/XPU, but every position elsewhere (to keep tile shapes
    static for compilers such as Neuron's). On a CPU there is no compiler to keep happy, and a caller row is
    ~600 prompt tokens for ~40 completion tokens: the 262k-word head over every position is almost half the
    step. The compact path gives the same loss and gradients (the kernel's own torch fallback does the work).
    trl decides this in one module-level function (`trl.trainer.utils._use_triton`), so that function is
    replaced for the block, for the whole process, and put back after it."""
    import trl.trainer.utils as trl_utils

    plain = trl_utils._use_triton

    def compact(device: Any) -> bool:
        return device.type == "cpu" or plain(device)

    trl_utils._use_triton = compact
    try:
        yield
    finally:
        trl_utils._use_triton = plain
