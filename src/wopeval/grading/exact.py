"""Exact threshold decisions: every pass decision against a threshold is taken over the rationals.

A score, a cost or a threshold is a float in memory but a decimal where it is recorded: the event
log, the summary and the suite file write each float as its shortest round-tripping decimal
(Python's ``repr``, JavaScript's ``Number#toString``, so ``0.7`` reads ``0.7``), and a suite's
``passScore: 0.7`` is the decimal 7/10 in the file. A decision reads each value as that decimal,
``Fraction(repr(x))``, and sums, averages and compares those rationals exactly. So:

* three trials scoring 0.7 average exactly 7/10 and meet ``passScore: 0.7`` (a float mean gives
  ``0.6999999999999998``);
* scores 0.1 and 0.3 average exactly 0.2, a tie that meets ``passScore: 0.2`` — reading the
  floats' binary values instead (``Fraction(0.1)``, …) would make it miss, since
  ``Fraction(0.1) + Fraction(0.3) < 2 · Fraction(0.2)``;
* costs 0.1 and 0.2 total exactly 0.3 and do not exceed ``maxCostUsd: 0.3`` (a float sum gives
  ``0.30000000000000004``);
* a score that was *computed* as ``0.1 + 0.2`` is recorded as ``0.30000000000000004``: that is
  its decimal, a little above 0.3, and it is read as such.

Reading a float as its shortest decimal is strictly monotone, so comparing one value with a
threshold gives what the float comparison gives; only sums and means change. The reported
numbers (``meanScore``, ``aggregateScore``, ``totalCostUsd``) stay floats (``math.fsum``); only
the decisions read these rationals.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from fractions import Fraction

__all__ = ["ExactTotal", "at_least", "exact_mean", "exact_sum", "exceeds", "recorded"]

Exact = float | Fraction


def recorded(value: Exact) -> Fraction:
    """The rational a value denotes where it is recorded: a float's shortest decimal, exactly.

    A ``Fraction`` (an exact mean already) is taken as it is.
    """
    if isinstance(value, Fraction):
        return value
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"a recorded value must be finite, got {value!r}")
    return Fraction(repr(number))


def exact_sum(values: Iterable[Exact]) -> Fraction:
    """The exact sum of the recorded values."""
    return sum((recorded(value) for value in values), Fraction(0))


def exact_mean(values: Sequence[Exact]) -> Fraction:
    """The exact arithmetic mean of the recorded values."""
    if not values:
        raise ValueError("the mean of nothing is undefined")
    return exact_sum(values) / len(values)


def at_least(value: Exact, threshold: Exact) -> bool:
    """``value ≥ threshold``, both read exactly (a tie meets the threshold)."""
    return recorded(value) >= recorded(threshold)


class ExactTotal:
    """A running exact sum of costs, for ceiling decisions (a tie does not exceed a ceiling).

    A cost that is not a finite number (a bogus usage report) has no exact sum: the total then
    exceeds every ceiling, failing closed. An infinite ceiling is never exceeded otherwise.
    """

    def __init__(self, costs: Iterable[float] = ()) -> None:
        self._sum = Fraction(0)
        self._bogus = False
        for cost in costs:
            self.add(cost)

    def add(self, cost: float) -> None:
        if math.isfinite(cost):
            self._sum += recorded(cost)
        else:
            self._bogus = True

    def exceeds(self, ceiling: float) -> bool:
        if self._bogus:
            return True
        if math.isinf(ceiling):
            return ceiling < 0
        return self._sum > recorded(ceiling)


def exceeds(costs: Iterable[float], ceiling: float) -> bool:
    """Whether the exact sum of ``costs`` is above ``ceiling`` (:class:`ExactTotal`)."""
    return ExactTotal(costs).exceeds(ceiling)
