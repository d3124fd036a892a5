"""Gemma's elementwise chains compiled into one loop each (`torch.compile`), or run op by op where that fails.

Why: Gemma's RMSNorm (six per layer, in fp32), the rotary embedding and the MLP's gelu(gate) * up are chains of
5-15 small ops, each a pass over memory, forward and backward; together they were about a fifth of a CPU LoRA
step. Compiled, each is one pass. Nothing is compiled at import: a `Fused` compiles on its first call.
"""
from __future__ import annotations

import logging
from typing import Any, Callable

import torch
import torch.nn.functional as F

logger = logging.getLogger(__name__)


class Fused:
    """`fn` compiled into one loop per pass by `torch.compile` (dynamic shapes: one graph serves every batch
    and length), or `fn` itself from the first call that cannot be compiled (no C++ compiler, an op inductor
    lacks): the same values either way, so a run never stops for it. Compiled on the first call."""

    # variants per chain: grad and no-grad passes, batch, head and length sizes of 1 (specialised). dynamo's
    # default of 8 runs out once the prompt also runs without gradients; past it the chain would run op by op
    # for the rest of the run. `recompile_limit()` raises it for a block (the CPU fast path's run).
    RECOMPILES = 32

    def __init__(self, fn: Callable):
        self.fn = fn
        self.compiled: Callable | None = None
        self.eager = False   # compiling failed once: op by op from then on

    def __call__(self, *args: Any) -> Any:
        if not self.eager:
            try:
                if self.compiled is None:
                    self.compiled = torch.compile(self.fn, dynamic=True)
                return self.compiled(*args)
            except Exception as e:   # noqa: BLE001 - any compiler failure: the eager chain is the same function
                logger.warning("torch.compile of %s failed (%s); running it op by op", self.fn.__name__,
                               str(e).splitlines()[0] if str(e) else type(e).__name__)
                self.compiled, self.eager = None, True
        return self.fn(*args)


def recompile_limit() -> Any:
    """A block in which dynamo keeps up to `Fused.RECOMPILES` compiled variants per chain (a context manager;
    the process's limit is back as it was after it)."""
    import torch._dynamo.config

    return torch._dynamo.config.patch(recompile_limit=max(torch._dynamo.config.recompile_limit, Fused.RECOMPILES))


def _rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """Gemma's RMSNorm (transformers' `Gemma3RMSNorm`): in fp32, times (1 + weight), rounded once."""
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * (1.0 + weight.float())).type_as(x)


def _rotary(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, unsqueeze_dim: int = 1):
    """transformers' `apply_rotary_pos_emb`: q and k rotated by their positions' angles."""
    def rotate_half(x: torch.Tensor) -> torch.Tensor:
        half = x.shape[-1] // 2
        return torch.cat((-x[..., half:], x[..., :half]), dim=-1)

    cos, sin = cos.unsqueeze(unsqueeze_dim), sin.unsqueeze(unsqueeze_dim)
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


def _gelu_tanh_mul(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    """Gemma's MLP activation: gelu (tanh approximation) of the gate times the up projection."""
    return F.gelu(gate, approximate="tanh") * up


FUSED_NORM, FUSED_ROTARY, FUSED_GELU_MUL = Fused(_rms_norm), Fused(_rotary), Fused(_gelu_tanh_mul)
