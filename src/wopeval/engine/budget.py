"""Cost ceilings that count every trial (RFC 0244 §B Cost, §H Cost amplification)."""

from __future__ import annotations

import math
from collections.abc import Iterable

from wopeval.grading.exact import ExactTotal


class CostMeter:
    """Sums ``provider.usage`` cost across all trials of a run against the tightest ceiling.

    Once the total exceeds a ceiling no new trial starts (in-flight trials finish and are
    recorded), and the suite cannot pass: grading re-checks the total against the same ceilings.
    Both decisions read the costs exactly (:class:`wopeval.grading.exact.ExactTotal`): costs 0.1
    and 0.2 do not exceed a 0.3 ceiling.
    """

    def __init__(self, ceilings: Iterable[float | None]) -> None:
        limits = [c for c in ceilings if c is not None]
        self.ceiling: float | None = min(limits) if limits else None
        self._costs: list[float] = []
        self._exact = ExactTotal()

    def add(self, cost_usd: float) -> None:
        self._costs.append(cost_usd)
        self._exact.add(cost_usd)

    @property
    def costs(self) -> tuple[float, ...]:
        """Every cost added, in order (what a run-wide meter elsewhere is seeded with)."""
        return tuple(self._costs)

    @property
    def total(self) -> float:
        return math.fsum(self._costs)

    @property
    def exceeded(self) -> bool:
        return self.ceiling is not None and self._exact.exceeds(self.ceiling)
