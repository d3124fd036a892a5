"""The summaries benchmark tables print, computed one way for all of them (missing values left out)."""
from __future__ import annotations

import statistics
from typing import Iterable


def median(xs: Iterable[float | None]) -> float | None:
    kept = [x for x in xs if x is not None]
    return statistics.median(kept) if kept else None


def p90(xs: Iterable[float | None]) -> float | None:
    """The 90th percentile as the nearest rank (a value that was measured, not one interpolated)."""
    kept = sorted(x for x in xs if x is not None)
    return kept[min(len(kept) - 1, int(round(0.9 * (len(kept) - 1))))] if kept else None
