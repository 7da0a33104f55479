"""The cost/accuracy frontier across runs (pure; informational, RFC 0244 §C gates nothing on it).

Each run is a point: its success rate (successes over trials, every task's trials pooled) and
its cost per success (:mod:`wopeval.grading.efficiency`). A run **dominates** another when its
success rate is at least as high and its cost per success at least as low, one of the two
strictly; a run is **on the frontier** when no run dominates it. Ties: two runs equal in both
are both on it; of two runs with the same success rate only the cheaper is (and of two with the
same cost per success, only the more successful). A run with no success buys nothing at any cost,
so it is never on the frontier. Both coordinates are compared exactly (rationals).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["Point", "dominates", "on_frontier"]


@dataclass(frozen=True)
class Point:
    """A run's success rate and cost per success (``None``: no success)."""

    success_rate: Fraction
    cost_per_success: Fraction | None


def dominates(a: Point, b: Point) -> bool:
    """``a`` is at least as successful and at least as cheap per success as ``b``, and strictly
    one of them. A run with no success dominates nothing."""
    if a.cost_per_success is None:
        return False
    if b.cost_per_success is None:
        return True
    at_least = a.success_rate >= b.success_rate and a.cost_per_success <= b.cost_per_success
    strictly = a.success_rate > b.success_rate or a.cost_per_success < b.cost_per_success
    return at_least and strictly


def on_frontier(points: Sequence[Point]) -> list[bool]:
    """For each point, whether it is on the frontier (no other point dominates it)."""
    return [
        point.cost_per_success is not None and not any(dominates(o, point) for o in points)
        for point in points
    ]
