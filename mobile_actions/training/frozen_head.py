"""The caller's LM head for training with a frozen table: log p(target) without the table's gradient.

Why: the control rows 46-52 train through peft's `trainable_token_indices`, which hands the tied head a merged
copy of the 262,144 x 640 table; its backward then builds a dense fp32 gradient for the whole table (671 MB
zeroed and filled per pass) to keep 7 of its rows. `FrozenHeadLogProb` keeps the table frozen and gives only
those rows a gradient. In bf16 it is one bf16 matmul per chunk of tokens over the whole vocabulary (oneDNN
accumulates in fp32 inside, so the result is rounded once), the softmax kept from the forward; in fp32 its
matmuls go through whichever BLAS is faster on this CPU (`FasterMatmul`). Its backward may run over the
softmax entries >= `min_prob` only (a sparse product; the loss stays exact).
"""
from __future__ import annotations

import logging
import time
import warnings
from typing import Any

import numpy as np
import torch

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
        np.matmul(a.detach().numpy(), b.detach().numpy(), out=out.numpy())
        return out

    def __call__(self, a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        if a.dtype != torch.float32 or b.dtype != torch.float32 or not out.is_contiguous():
            return torch.mm(a, b, out=out)
        if self.choice is None and a.shape[0] >= self.min_rows:
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
