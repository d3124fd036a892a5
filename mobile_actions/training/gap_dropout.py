"""Dropout that draws only the dropped positions (LoRA's dropout in a CPU training step).

Why: `nn.Dropout` draws one Bernoulli sample per element from the CPU generator (~2.6 M per LoRA layer and
microbatch), then compares and selects through a mask; at p = 0.05 `GapDropout` draws 20x fewer numbers for the
same distribution.
"""
from __future__ import annotations

import math

import torch


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
