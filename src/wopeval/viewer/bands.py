"""The run page's intervals (:mod:`wopeval.grading.intervals`), recomputed on each view: a task's
pass@k and pass^k per k (Clopper–Pearson mapped) and the suite's means per k (the task as the
unit), as ``(k, pass@k low, high, pass^k low, high)`` rows for the plots."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from functools import lru_cache

from wopeval.grading.intervals import (
    DEFAULT_LEVEL,
    pass_at_k_interval,
    pass_hat_k_interval,
    task_clopper_pearson_of_sum,
)
from wopeval.grading.stats import pass_at_k, pass_hat_k

Band = tuple[int, float, float, float, float]

__all__ = ["Band", "suite_bands", "task_bands"]


@lru_cache(maxsize=4096)
def task_bands(n: int, c: int, level: float = DEFAULT_LEVEL) -> tuple[Band, ...]:
    """A task's pass@k and pass^k intervals for k = 1..n, with c of n trials passed."""
    rows = []
    for k in range(1, n + 1):
        at, hat = pass_at_k_interval(c, n, k, level), pass_hat_k_interval(c, n, k, level)
        rows.append((k, at.low, at.high, hat.low, hat.high))
    return tuple(rows)


def suite_bands(
    passed: list[int], n: int | Sequence[int], level: float = DEFAULT_LEVEL
) -> list[Band]:
    """Per k, the interval of the mean over tasks of pass@k and of pass^k (the exact sums,
    grouped by each task's trial and passed counts). ``n`` is every task's trial count, or
    each task's (adaptive tasks differ): k goes up to the fewest."""
    sizes = [n] * len(passed) if isinstance(n, int) else list(n)
    counts = Counter(zip(sizes, passed, strict=True))
    m = len(passed)
    if m == 0:
        return []
    rows = []
    for k in range(1, min(sizes) + 1):
        at = sum((count * pass_at_k(t, c, k) for (t, c), count in counts.items()), Fraction(0))
        hat = sum((count * pass_hat_k(t, c, k) for (t, c), count in counts.items()), Fraction(0))
        at_iv = task_clopper_pearson_of_sum(at, m, level)
        hat_iv = task_clopper_pearson_of_sum(hat, m, level)
        rows.append((k, at_iv.low, at_iv.high, hat_iv.low, hat_iv.high))
    return rows
