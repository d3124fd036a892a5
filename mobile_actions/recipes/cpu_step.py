"""A LoRA training step on a CPU without the work that changes nothing.

A step of the caller recipe (trl's fused head, peft's LoRA and trainable control rows) spent most of
its time on the CPU outside the decoder's matmuls (profile: docs/experiments.md, "Training
throughput on CPU"):

- **The head's table gradient.** The control rows 46-52 train through peft's `trainable_token_indices`,
  which hands the head and the embedding a merged copy of the 262,144 x 640 table. Their backward
  passes then build a dense fp32 gradient for the whole table (671 MB zeroed and filled per pass) to
  keep 7 of its rows. Here the table stays frozen and only the 7 rows carry gradients.
- **The head in fp32.** trl's CPU fallback accumulates the head's backward in fp32 matmuls over
  vocabulary chunks. Here it is one bf16 matmul per chunk of tokens over the whole vocabulary (oneDNN
  accumulates in fp32 inside, so the result is rounded once, not once per chunk), and the softmax
  is kept from the forward instead of recomputed. Without bf16 matmuls the head stays in fp32; its two
  matmuls then run in chunks of 512 tokens through whichever BLAS is faster on this CPU (`FasterMatmul`).
  Its backward runs over the softmax entries >= `head_min_prob` only (a sparse product; the loss stays exact).
- **Input casts.** peft casts every LoRA input to the adapter's fp32 before autocast casts it back to
  bf16: two copies of every activation, forward and backward, for the same product.
- **Dropout's random numbers.** `nn.Dropout` draws one Bernoulli sample per element from the CPU
  generator (~2.6 M per LoRA layer and microbatch), then compares and selects through a mask.
  `GapDropout` draws only the gaps between dropped elements (geometric): the same distribution, 20x
  fewer draws at p = 0.05, and one scatter.
- **Full-width scalings.** peft scales LoRA's input by the dropout's 1 / (1 - p) and its output by
  alpha / r, each a pass over a full-width activation; the r-wide product between A and B takes both.
- **Attention's repeated keys.** transformers repeats the one key/value head 4x for SDPA whenever
  there is a mask (ours: padding); SDPA's own GQA path does the same product without the copies.
- **The held prompt's gradient in attention.** With `--prompt-gradients own|none` a suffix pass reads a
  prompt run forward only, and SDPA's backward would compute the gradient of all its keys and values for autograd to
  drop. `HeldPastAttention` computes the query's and the new positions' only (inside `past_held()`).
- **LoRA where no gradient is taken.** That prompt ran LoRA's two narrow products and its dropout on every
  position. Passes without gradients run without dropout (as at inference), and on an fp32 base each LoRA
  linear is one product with its merged weight, merged again after every update.
- **Elementwise chains.** Gemma's RMSNorm (six per layer, in fp32), the rotary embedding and the MLP's
  gelu(gate) * up are chains of 5-15 small ops, each a pass over memory, forward and backward; together
  they were about a fifth of a step. `Fused` compiles each chain into one loop (`torch.compile`,
  dynamic shapes); where that is not possible (no C++ compiler) they run as before.

`cheap_cpu_step(model)` swaps these in on one LoRA model. Loss and gradients are those of the plain path
(in fp32 equal to rounding; a test holds them equal), so a run can switch to it mid-way; with `head_min_prob`
the hidden states' gradient moves by less than the probability mass the head's backward leaves out.
"""
from __future__ import annotations

import contextlib
import contextvars
import logging
import math
import os
import types
import warnings
from typing import Any, Callable

import torch
import torch.nn.functional as F

logger = logging.getLogger(__name__)

TOKEN_CHUNK = 512   # labelled positions per head matmul: 512 x 262,144 fp32 logits are 537 MB; BLAS runs this
                    # wide shape ~1.6x faster at 512 rows than at 128


class FasterMatmul:
    """`a @ b` for fp32 CPU tensors through whichever BLAS ran it faster on its first full-size call: torch's
    (MKL on x86) or numpy's (OpenBLAS). On an AMD EPYC (Zen 3, 2 threads) OpenBLAS runs the head's shapes
    1.2–2x faster than MKL (512 x 640 @ 640 x 262,144: 140 against 76 GFLOP/s); on other CPUs MKL may win, so
    it is measured, not assumed. Both compute the same product (summed in another order: equal to rounding).
    Other dtypes (the bf16 head) take torch's."""

    def __init__(self, min_rows: int = 128):
        self.min_rows = min_rows
        self.choice: str | None = None
        self.seconds: dict[str, float] = {}

    @staticmethod
    def _numpy(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        import numpy as np

        np.matmul(a.detach().numpy(), b.detach().numpy(), out=out.numpy())
        return out

    def __call__(self, a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        if a.dtype != torch.float32 or b.dtype != torch.float32 or not out.is_contiguous():
            return torch.mm(a, b, out=out)
        if self.choice is None and a.shape[0] >= self.min_rows:
            import time

            for name, mm in (("torch", lambda: torch.mm(a, b, out=out)), ("numpy", lambda: self._numpy(a, b, out))):
                start = time.perf_counter()
                mm()
                self.seconds[name] = time.perf_counter() - start
            self.choice = min(self.seconds, key=self.seconds.get)
            logger.info("head matmuls through %s's BLAS (%s)", self.choice,
                        ", ".join(f"{k} {v:.2f} s" for k, v in self.seconds.items()))
            return out
        return self._numpy(a, b, out) if self.choice == "numpy" else torch.mm(a, b, out=out)


# The backward's dense products are the few rows kept whole: a handful at a time, where the product reads the
# whole table for little arithmetic (7 rows: OpenBLAS 120 ms, MKL 300 ms here), so its choice is made on any size.
HEAD_FORWARD_MM, HEAD_BACKWARD_MM = FasterMatmul(), FasterMatmul(min_rows=1)


DENSE_ROW = 1 / 64     # a row keeping more than this share of the vocabulary is kept whole (an early, flat one)


class FrozenHeadLogProb(torch.autograd.Function):
    """log p(target) under `hidden @ table.T`, with rows `index` of the table replaced by `rows`.

    `table` gets no gradient (frozen); `rows` and `hidden` do. Also returns each position's entropy
    and whether the target is the argmax (trl's logged metrics), without gradients.

    Why the backward is sparse: the gradient of log p(t) by the hidden state is table[t] - sum_v p_v table[v].
    A caller's answer tokens are nearly certain, so all but a few hundred of a row's 262,144 p_v are below
    1e-8, and together they move the gradient by less than their mass (< 0.26 % of it at worst). Keeping only
    the entries >= `min_prob` replaces the backward's dense 262,144-wide matmul (and the n x 262,144 softmax
    kept for it: 0.9 GB for a step's 845 answer tokens) with a sparse one over the kept entries. The loss,
    entropy and the control rows' gradient stay exact (those rows' entries are always kept); `min_prob` 0
    keeps everything: the plain gradient.
    """

    @staticmethod
    @torch.autocast("cpu", enabled=False)
    def forward(ctx, hidden: torch.Tensor, table: torch.Tensor, index: torch.Tensor, rows: torch.Tensor,
                targets: torch.Tensor, min_prob: float = 0.0):
        dtype = table.dtype
        h, r = hidden.to(dtype), rows.to(dtype)
        n, vocab = h.shape[0], table.shape[0]
        logp = torch.empty(n, dtype=torch.float32)
        entropy = torch.empty(n, dtype=torch.float32)
        top1 = torch.empty(n, dtype=torch.bool)
        p_rows = torch.empty((n, len(index)), dtype=torch.float32)   # the control rows' share, always kept
        is_row = torch.zeros(vocab, dtype=torch.bool)
        is_row[index] = True
        cols, vals, kept = [], [], torch.zeros(n, dtype=torch.int64)  # the other entries >= min_prob, by row
        whole: dict[int, torch.Tensor] = {}                            # or the whole row, where most are kept
        zb = torch.empty((min(n, TOKEN_CHUNK), vocab), dtype=dtype)
        # The softmax runs a row at a time: a 262,144-logit row in fp32 (1 MB) stays in cache through its
        # passes, where a whole chunk (134 MB) went to memory and back on each (4x slower).
        zf = torch.empty(vocab, dtype=torch.float32)
        pf = torch.empty(vocab, dtype=torch.float32)
        for s in range(0, n, TOKEN_CHUNK):
            e = min(s + TOKEN_CHUNK, n)
            z = HEAD_FORWARD_MM(h[s:e], table.T, out=zb[:e - s])
            z[:, index] = h[s:e] @ r.T
            logp[s:e] = z.gather(1, targets[s:e, None]).squeeze(1).float()
            for i in range(e - s):
                zs = z[i] if dtype == torch.float32 else zf.copy_(z[i])
                top = zs.max()
                p = torch.sub(zs, top, out=pf).exp_()     # unnormalised: only what is kept is divided
                total = p.sum()
                lse = top + total.log()
                top1[s + i] = logp[s + i] >= top
                logp[s + i] -= lse
                entropy[s + i] = lse - torch.dot(zs, p) / total    # H = log Z - sum_v p_v z_v
                p_rows[s + i] = p[index] / total
                at = (p >= min_prob * total).nonzero().squeeze(1) if min_prob > 0 else None
                if at is None or len(at) > DENSE_ROW * vocab:
                    whole[s + i] = p.masked_fill(is_row, 0).div_(total).to(dtype)
                else:
                    at = at[~is_row[at]]
                    cols.append(at)
                    vals.append(p[at] / total)
                    kept[s + i] = len(at)
        empty = torch.zeros(0, dtype=torch.int64)
        ctx.save_for_backward(h, table, index, r, targets, p_rows, torch.cat(cols) if cols else empty,
                              torch.cat(vals) if vals else empty.float(), kept)
        ctx.whole = whole
        ctx.rows_dtype = rows.dtype
        ctx.hidden_dtype = hidden.dtype
        ctx.mark_non_differentiable(entropy, top1)
        return logp, entropy, top1

    @staticmethod
    @torch.autocast("cpu", enabled=False)
    def backward(ctx, grad_logp: torch.Tensor, *_):
        h, table, index, r, targets, p_rows, cols, vals, kept = ctx.saved_tensors
        n = h.shape[0]
        g = grad_logp.float()
        whole, ctx.whole = ctx.whole, {}   # freed with this backward, not with the graph
        # d log p(t) / dz = onehot(t) - p. The -p part of the kept entries, as a sparse product over the table
        # rows they name (a bf16 table: those rows gathered in fp32 first)
        grad_h = torch.zeros(h.shape, dtype=torch.float32)
        if len(cols):
            if table.dtype == torch.float32:
                col, rows_used = cols, table
            else:
                used, col = torch.unique(cols, return_inverse=True)
                rows_used = table.index_select(0, used).float()
            with warnings.catch_warnings():   # "sparse CSR support is in beta": the product is checked by a test
                warnings.simplefilter("ignore", UserWarning)
                coef = torch.sparse_csr_tensor(torch.cat([kept.new_zeros(1), kept.cumsum(0)]), col,
                                               vals * -g.repeat_interleave(kept), size=(n, rows_used.shape[0]),
                                               check_invariants=False)
                grad_h = torch.sparse.mm(coef, rows_used)
        order = list(whole)
        for s in range(0, len(order), TOKEN_CHUNK):   # rows kept whole: dense products, a chunk at a time
            at = torch.tensor(order[s:s + TOKEN_CHUNK])
            gz = torch.stack([whole.pop(i) for i in at.tolist()]).mul_(-g[at, None].to(table.dtype))
            grad_h[at] += HEAD_BACKWARD_MM(gz, table, out=torch.empty((len(at), table.shape[1]), dtype=table.dtype)).float()
        # ... the onehot part, and the control rows (the replaced ones: `rows`, not the table)
        on_rows = (targets[:, None] == index).float()
        g_rows = g[:, None] * (on_rows - p_rows)
        plain = on_rows.sum(1) == 0
        grad_h[plain] += g[plain, None] * table[targets[plain]].float()
        grad_h += g_rows @ r.float()
        grad_rows = g_rows.T @ h.float()
        return grad_h.to(ctx.hidden_dtype), None, None, grad_rows.to(ctx.rows_dtype), None, None


class GapDropout(torch.nn.Module):
    """Dropout that draws only the dropped positions: the gaps between them, geometric with parameter p.

    Dropping each element independently with probability p is a Bernoulli process, and the gaps between
    its successes are independent geometric variables; drawing those gaps (p·n of them) gives the same
    dropped positions in distribution as one draw per element (n of them), with no mask to compare and
    select through. At LoRA's p = 0.05 that is 20x fewer random numbers, and the drop is one scatter.
    """

    def __init__(self, p: float):
        super().__init__()
        self.p = p

    def dropped(self, n: int) -> torch.Tensor:
        """Sorted positions in [0, n) each dropped with probability p, independently."""
        if self.p >= 1:
            return torch.arange(n)
        mean = n * self.p
        draws = int(mean + 8 * math.sqrt(mean) + 64)      # enough to cover n almost always; else draw on
        log_keep = math.log1p(-self.p)
        parts, last = [], -1
        while last < n - 1:
            u = torch.rand(draws, dtype=torch.float64)
            # 1 - u is uniform on (0, 1]; P(gap > k) = P(1 - u <= (1 - p)^k) = (1 - p)^k
            gaps = torch.log1p(-u).div_(log_keep).floor_().add_(1).to(torch.int64)
            at = gaps.cumsum_(0).add_(last)
            parts.append(at)
            last = int(at[-1])
        at = torch.cat(parts) if len(parts) > 1 else parts[0]
        return at[at < n]

    def keep(self, x: torch.Tensor) -> torch.Tensor:
        """`x` with its dropped elements zeroed, not yet scaled by 1 / (1 - p)."""
        if not self.training or self.p == 0:
            return x
        return x.reshape(-1).index_fill(0, self.dropped(x.numel()), 0).view(x.shape)

    def scale(self) -> float:
        return 1 / (1 - self.p) if self.training and self.p else 1.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        kept = self.keep(x)
        return kept * self.scale() if kept is not x else x

    def extra_repr(self) -> str:
        return f"p={self.p}"


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
        n, past = grad.shape[2], k.shape[2] - grad.shape[2]
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
def past_held():
    """Forward passes in this block promise that their `past_key_values` take no gradient (a prompt run
    forward only), so attention may run as `HeldPastAttention`."""
    token = HELD_PAST.set(True)
    try:
        yield
    finally:
        HELD_PAST.reset(token)


class _Attentions:
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


class Fused:
    """`fn` compiled into one loop per pass by `torch.compile` (dynamic shapes: one graph serves every batch
    and length), or `fn` itself from the first call that cannot be compiled (no C++ compiler, an op inductor
    lacks): the same values either way, so a run never stops for it."""

    RECOMPILES = 32   # variants per chain: grad and no-grad passes, batch, head and length sizes of 1 (specialised)

    def __init__(self, fn: Callable):
        import torch._dynamo.config

        self.fn = fn
        self.compiled: Callable | None = torch.compile(fn, dynamic=True)
        # dynamo's default of 8 variants runs out once the prompt also runs without gradients; past it the
        # chain would run op by op for the rest of the run
        torch._dynamo.config.recompile_limit = max(torch._dynamo.config.recompile_limit, self.RECOMPILES)

    def __call__(self, *args: Any) -> Any:
        if self.compiled is not None:
            try:
                return self.compiled(*args)
            except Exception as e:   # noqa: BLE001 - any compiler failure: the eager chain is the same function
                logger.warning("torch.compile of %s failed (%s); running it op by op", self.fn.__name__,
                               str(e).splitlines()[0] if str(e) else type(e).__name__)
                self.compiled = None
        return self.fn(*args)


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


def _norm_forward(self, x: torch.Tensor) -> torch.Tensor:
    return FUSED_NORM(x, self.weight, self.eps)


def _mlp_forward(self, x: torch.Tensor) -> torch.Tensor:
    return self.down_proj(FUSED_GELU_MUL(self.gate_proj(x), self.up_proj(x)))


def _read_with(module: Any, **names: Any) -> None:
    """`module.forward` (as patched so far) reading `names` in place of the globals of those names, on a copy of
    the function: nothing of it is rewritten, and other models in the process keep the plain function."""
    plain = module.forward.__func__
    forward = types.FunctionType(plain.__code__, {**plain.__globals__, **names}, plain.__name__, plain.__defaults__,
                                 plain.__closure__)
    module.forward = types.MethodType(forward, module)


def hold_past_attention(model: Any) -> int:
    """Gemma 3's attentions run as `HeldPastAttention` inside `past_held()` (transformers' SDPA elsewhere);
    returns how many modules changed."""
    changed = 0
    for module in model.modules():
        forward = module.forward
        if type(module).__name__ == "Gemma3Attention" and "ALL_ATTENTION_FUNCTIONS" in forward.__code__.co_names:
            _read_with(module, ALL_ATTENTION_FUNCTIONS=_Attentions(forward.__func__.__globals__["ALL_ATTENTION_FUNCTIONS"]))
            changed += 1
    return changed


def fuse_elementwise(model: Any) -> int:
    """Gemma 3's norms, MLP activations and rotary embeddings run `Fused`; returns how many modules changed.

    The attention keeps transformers' own forward, read with `FUSED_ROTARY` in place of the module's
    `apply_rotary_pos_emb` (its globals swapped on a copy of the function): nothing of it is rewritten here,
    and other models in the process keep the plain function."""
    changed = 0
    for module in model.modules():
        kind = type(module).__name__
        if kind == "Gemma3RMSNorm":
            module.forward = types.MethodType(_norm_forward, module)
        elif kind == "Gemma3MLP" and getattr(module.config, "hidden_activation", None) == "gelu_pytorch_tanh":
            module.forward = types.MethodType(_mlp_forward, module)
        elif kind == "Gemma3Attention" and "apply_rotary_pos_emb" in type(module).forward.__code__.co_names:
            _read_with(module, apply_rotary_pos_emb=FUSED_ROTARY)
        else:
            continue
        changed += 1
    return changed


def trainable_rows(layer: Any) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(frozen table, row ids, trainable rows) of a peft `TrainableTokensLayer` (or its wrapper), or
    of a frozen plain head (no rows)."""
    layer = getattr(layer, "token_adapter", layer)
    table = layer.get_base_layer().weight if hasattr(layer, "get_base_layer") else layer.weight
    if not hasattr(layer, "token_indices"):
        return table.detach(), torch.zeros(0, dtype=torch.long), table.new_zeros((0, table.shape[1]))
    (name,) = [a for a in layer.active_adapters if a in layer.token_indices]
    index = torch.tensor(layer.token_indices[name], device=table.device)
    return table.detach(), index, layer.trainable_tokens_delta[name]


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


def _fused_forward(self, *args: Any, fused_lm_head: bool = False, labels: Any = None, shift_labels: Any = None,
                   num_items_in_batch: Any = None, **kwargs: Any):
    """trl's fused-head forward (what `SFTTrainer.compute_loss` calls) with `FrozenHeadLogProb` as the head."""
    from trl.trainer.utils import FusedCausalLMOutput

    if not fused_lm_head:
        extra = {k: v for k, v in (("labels", labels), ("shift_labels", shift_labels),
                                   ("num_items_in_batch", num_items_in_batch)) if v is not None}
        return self._plain_forward(*args, **kwargs, **extra)
    kwargs["use_cache"] = False
    hidden = self.model(*args, **kwargs).last_hidden_state
    if shift_labels is None:
        hidden, labels = hidden[:, :-1], labels[:, 1:]
    else:
        labels = shift_labels
    mask = labels != -100
    table, index, rows = trainable_rows(self.get_output_embeddings())
    logp, entropy, top1 = FrozenHeadLogProb.apply(hidden[mask], table, index, rows, labels[mask],
                                                  getattr(self, "_head_min_prob", 0.0))
    per_token = [x.new_zeros(mask.shape).masked_scatter(mask, x) for x in (logp, entropy, top1)]
    total = mask.sum().clamp(min=1) if num_items_in_batch is None else num_items_in_batch
    return FusedCausalLMOutput(loss=-per_token[0].sum() / total, log_probs=per_token[0], entropy=per_token[1],
                               is_top1=per_token[2], label_mask=mask)


def cheap_cpu_step(model: Any, fuse: bool = True, head_min_prob: float = 0.0) -> bool:
    """Swap the cheap paths into `model` (a peft model with trainable control rows, set up by trl's
    SFTTrainer); `fuse`: also `fuse_elementwise`; `head_min_prob`: the head's backward leaves out softmax entries
    below it (`FrozenHeadLogProb`; 0: none). Returns False, changing nothing, for any other shape of model."""
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
            wrapper.token_adapter.forward = types.MethodType(_rows_forward, wrapper.token_adapter)
    base._plain_forward = types.MethodType(type(base).forward, base)
    base._head_min_prob = head_min_prob
    base.forward = types.MethodType(_fused_forward, base)
    for module in model.modules():
        if isinstance(module, LoraLayer):
            module.cast_input_dtype_enabled = False
            for name, drop in module.lora_dropout.items():
                if isinstance(drop, torch.nn.Dropout):
                    module.lora_dropout[name] = GapDropout(drop.p)
            if isinstance(module, LoraLinear):
                module.forward = types.MethodType(_lora_forward, module)
    if fuse:
        fuse_elementwise(base)
    hold_past_attention(base)
    os.environ["TRANSFORMERS_SDPA_FORCE_GQA"] = "1"
    return True
