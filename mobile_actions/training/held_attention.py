"""Attention whose cached keys and values take no gradient, for passes that read a prompt run forward only.

Why: with `--prompt-gradients own|none` a suffix pass reads a prompt held fixed, and SDPA's backward would still
compute the gradient of all its keys and values for autograd to drop. Inside `past_held()`, the attentions of a
model prepared by `hold_past_attention` (`mobile_actions.training.cpu_step`) run as `HeldPastAttention`, which
computes the query's and the new positions' gradients only.
"""
from __future__ import annotations

import contextlib
import contextvars
import math
from typing import Any, Callable, Iterator

import torch


class HeldPastAttention(torch.autograd.Function):
    """Attention whose cached (past) keys and values take no gradient: only the query and the new positions' keys
    and values do. The suffix pass of `--prompt-gradients own|none` reads a prompt run forward only; SDPA's backward
    would still compute the gradient of every cached key and value (most of its work: 576 of 641 positions)
    for autograd to drop. Here the backward is the query's product and the new positions' two small ones, from
    the probabilities kept by the forward (a batch x 4 x 65 x 641 step: 40 % less time forward and backward).

    `q` [batch, heads, n, dim]; `k`, `v` [batch, kv heads, past + n, dim], the past first (as a cache returns
    them); `mask` boolean [batch, 1, n, past + n] (True: attend) or None (causal). Heads sharing a kv head are
    one product (GQA without copies)."""

    @staticmethod
    def forward(ctx, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None, scaling: float):
        b, heads, n, dim = q.shape
        groups, keys = k.shape[1], k.shape[2]
        per = heads // groups
        qs = (q * scaling).reshape(b, groups, per * n, dim)
        s = torch.matmul(qs, k.transpose(-1, -2))
        if mask is None:
            mask = torch.ones((n, keys), dtype=torch.bool).tril(keys - n)
        s.view(b, groups, per, n, keys).masked_fill_(~mask[..., None, :, :] if mask.dim() == 4 else ~mask, -math.inf)
        p = torch.softmax(s, -1)
        if not bool(mask.any(-1).all()):   # a query that may attend to nothing (padding) reads nothing, as in SDPA
            p = p.nan_to_num(0.0)
        ctx.save_for_backward(qs, k, v, p)
        ctx.scaling = scaling
        return torch.matmul(p, v).view(b, heads, n, dim)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        qs, k, v, p = ctx.saved_tensors
        past = k.shape[2] - grad.shape[2]
        g = grad.reshape(qs.shape)
        ds = torch.matmul(g, v.transpose(-1, -2))                # d p
        ds = ds.sub_((ds * p).sum(-1, keepdim=True)).mul_(p)    # d s = p * (d p - sum(p * d p))
        dq = torch.matmul(ds, k).mul_(ctx.scaling).view(grad.shape)
        dk, dv = k.new_zeros(k.shape), v.new_zeros(v.shape)    # the past's share: zero, and dropped by the cache's cat
        torch.matmul(ds[..., past:].transpose(-1, -2), qs, out=dk[:, :, past:])
        torch.matmul(p[..., past:].transpose(-1, -2), g, out=dv[:, :, past:])
        return dq, dk, dv, None, None


HELD_PAST: contextvars.ContextVar[bool] = contextvars.ContextVar("held_past", default=False)


@contextlib.contextmanager
def past_held() -> Iterator[None]:
    """Forward passes in this block promise that their `past_key_values` take no gradient (a prompt run
    forward only), so attention may run as `HeldPastAttention`."""
    token = HELD_PAST.set(True)
    try:
        yield
    finally:
        HELD_PAST.reset(token)


class HoldingPastAttentions:
    """transformers' attention functions, with `sdpa` running as `HeldPastAttention` inside `past_held()` when
    a backward will follow (an additive mask, no mask on a non-causal layer, dropout or a softcap: transformers'
    own)."""

    def __init__(self, functions: Any):
        self.functions = functions

    def get_interface(self, name: str, default: Callable) -> Callable:
        plain = self.functions.get_interface(name, default)
        if name != "sdpa":
            return plain

        def attention(module, query, key, value, attention_mask, dropout=0.0, scaling=None, **kwargs):
            causal = kwargs.get("is_causal") if kwargs.get("is_causal") is not None else getattr(module, "is_causal", True)
            if not (HELD_PAST.get() and torch.is_grad_enabled() and not dropout and kwargs.get("softcap") is None
                    and (attention_mask.dtype == torch.bool if attention_mask is not None else causal)):
                return plain(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs)
            scale = query.shape[-1] ** -0.5 if scaling is None else scaling
            out = HeldPastAttention.apply(query, key, value, attention_mask, scale)
            return out.transpose(1, 2).contiguous(), None

        return attention
