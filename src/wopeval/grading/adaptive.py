"""Adaptive trials (``x-wopeval-adaptive``): when a task's trials stop, and what was decided.

``rule: "sprt"`` is Wald's sequential probability ratio test (Wald, A., 1945, "Sequential tests
of statistical hypotheses", Ann. Math. Statist. 16(2):117–186) of a task's per-trial pass rate
``p``: H0 ``p ≤ p0`` against H1 ``p ≥ p1``, with ``p0 = threshold − indifference`` and ``p1 =
threshold + indifference``. After ``n`` trials of which ``c`` passed, the likelihood ratio is

    LR(n, c) = (p1 / p0)^c · ((1 − p1) / (1 − p0))^(n − c)

and, from ``minTrials`` on, the task stops at the first ``n`` where

- ``LR ≥ 1/α``: decided **above** the threshold;
- ``LR ≤ β``: decided **below** it;

or at ``maxTrials`` (``trials.count``) **undecided**. The boundaries ``1/α`` and ``β`` (not
Wald's approximate ``(1 − β)/α`` and ``β/(1 − α)``) make the error rates hold exactly, however
the test is truncated: under any ``p ≤ p0``, ``LR(n, c)`` is a non-negative supermartingale with
``LR(0, 0) = 1``, so by Ville's maximal inequality (Ville, J., 1939, *Étude critique de la notion
de collectif*, ch. V; Durrett, *Probability*, thm 5.4.2) it ever reaches ``1/α`` with
probability at most ``α``; likewise ``1/LR`` under ``p ≥ p1`` reaches ``1/β`` with probability at
most ``β``. Stopping early (``maxTrials``) or looking late (``minTrials``) only removes chances
to cross. Rates strictly between ``p0`` and ``p1`` carry no guarantee (the indifference zone).

Every comparison is exact: ``p0``, ``p1``, ``α`` and ``β`` are the decimals the suite wrote, as
fractions, and ``LR ≥ 1/α`` is ``α · p1^c (1 − p1)^(n−c) ≥ p0^c (1 − p0)^(n−c)`` in integers, so
a decision never depends on float rounding and a re-grade reproduces it anywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache, partial
from typing import Literal

from wopeval.suite.adaptive import AdaptivePlan

__all__ = [
    "Boundaries",
    "Decision",
    "OperatingCharacteristic",
    "Stop",
    "boundaries",
    "decision_at",
    "first_stop",
    "next_wave",
    "operating_characteristic",
]

Decision = Literal["above", "below"]


@dataclass(frozen=True)
class Boundaries:
    """Per trial count ``n`` (index ``0 … maxTrials``): ``above[n]``, the fewest passes that
    decide "above" (``n + 1`` when none can), and ``below[n]``, the most passes that decide
    "below" (``-1`` when none can). Before ``minTrials`` nothing decides."""

    above: tuple[int, ...]
    below: tuple[int, ...]


def _likelihoods(plan: AdaptivePlan, n: int, c: int) -> tuple[Fraction, Fraction]:
    """``(P(outcomes | p1), P(outcomes | p0))`` of one sequence: ``n`` trials, ``c`` passes."""
    h1 = plan.p1**c * (1 - plan.p1) ** (n - c)
    h0 = plan.p0**c * (1 - plan.p0) ** (n - c)
    return h1, h0


def _above(plan: AdaptivePlan, n: int, c: int) -> bool:
    """``LR(n, c) ≥ 1/α``, exactly."""
    h1, h0 = _likelihoods(plan, n, c)
    return plan.alpha * h1 >= h0


def _below(plan: AdaptivePlan, n: int, c: int) -> bool:
    """``LR(n, c) ≤ β``, exactly."""
    h1, h0 = _likelihoods(plan, n, c)
    return h1 <= plan.beta * h0


@cache
def boundaries(plan: AdaptivePlan) -> Boundaries:
    """The decision boundaries of ``plan`` for every ``n`` up to its maximum.

    ``LR`` grows with ``c`` (``p1 > p0``), so "above" holds from some ``c`` up and "below" up
    to some ``c``: each is found by bisection.
    """
    above = [1] + [0] * plan.max_trials
    below = [-1] * (plan.max_trials + 1)
    for n in range(plan.max_trials + 1):
        if n < plan.min_trials:
            above[n], below[n] = n + 1, -1
            continue
        above[n] = _least(partial(_above, plan, n), n)
        below[n] = _least(partial(_not_below, plan, n), n) - 1
    return Boundaries(tuple(above), tuple(below))


def _not_below(plan: AdaptivePlan, n: int, c: int) -> bool:
    return not _below(plan, n, c)


def _least(holds: Callable[[int], bool], n: int) -> int:
    """The least ``c`` in ``0 … n`` where the monotone ``holds`` is true, ``n + 1`` if none."""
    low, high = 0, n + 1
    while low < high:
        middle = (low + high) // 2
        if holds(middle):
            high = middle
        else:
            low = middle + 1
    return low


def decision_at(plan: AdaptivePlan, n: int, c: int) -> Decision | None:
    """What ``c`` passes out of ``n`` trials decide, if anything (``None`` before
    ``minTrials``, beyond ``maxTrials``, or inside the boundaries)."""
    if n < plan.min_trials or n > plan.max_trials:
        return None
    bounds = boundaries(plan)
    if c >= bounds.above[n]:
        return "above"
    if c <= bounds.below[n]:
        return "below"
    return None


@dataclass(frozen=True)
class Stop:
    """Where a task's sequential test stopped: after ``trials`` trials, ``passed`` of them
    passing, with ``decision`` (``None``: it reached ``maxTrials`` undecided, or its outcomes
    ran out first)."""

    trials: int
    passed: int
    decision: Decision | None


def first_stop(plan: AdaptivePlan, outcomes: Sequence[bool]) -> Stop:
    """The first stop of the test over ``outcomes`` (each trial's pass, in trial order).

    Outcomes past ``maxTrials`` are never read. When none decides, the stop is after the last
    outcome read, undecided.
    """
    passed = 0
    read = outcomes[: plan.max_trials]
    for n, outcome in enumerate(read, start=1):
        passed += bool(outcome)
        decision = decision_at(plan, n, passed)
        if decision is not None:
            return Stop(n, passed, decision)
    return Stop(len(read), passed, None)


def next_wave(plan: AdaptivePlan, n: int, c: int) -> int:
    """How many more trials to start after ``n`` trials with ``c`` passes, undecided.

    The fewest ``d`` after which *some* outcomes could decide: no outcome of the trials before
    it can, so running ``d`` at once never runs a trial past the stop. ``0`` once ``n`` is at
    the maximum.
    """
    bounds = boundaries(plan)
    for d in range(1, plan.max_trials - n + 1):
        m = n + d
        if m >= plan.min_trials and (c + d >= bounds.above[m] or c <= bounds.below[m]):
            return d
    return max(0, plan.max_trials - n)


@dataclass(frozen=True)
class OperatingCharacteristic:
    """What the test does at one true pass rate, exactly: the chance it decides ``above``, the
    chance it decides ``below``, and the expected number of trials it runs."""

    above: Fraction
    below: Fraction
    mean_trials: Fraction


def operating_characteristic(plan: AdaptivePlan, rate: Fraction) -> OperatingCharacteristic:
    """The test's operating characteristic at true per-trial pass rate ``rate``, summed exactly
    over every outcome sequence (Wald 1945 §3.2 approximates it; this needs no approximation):
    the sequences not yet stopped are carried by their pass count, ``maxTrials`` steps."""
    alive = {0: Fraction(1)}  # passes so far → probability, of the sequences still running
    above = below = trials = Fraction(0)
    for n in range(1, plan.max_trials + 1):
        step: dict[int, Fraction] = {}
        for c, weight in alive.items():
            step[c + 1] = step.get(c + 1, Fraction(0)) + weight * rate
            step[c] = step.get(c, Fraction(0)) + weight * (1 - rate)
        alive = {}
        for c, weight in step.items():
            decision = decision_at(plan, n, c)
            if decision is None:
                alive[c] = weight
                continue
            trials += n * weight
            if decision == "above":
                above += weight
            else:
                below += weight
    trials += plan.max_trials * sum(alive.values(), Fraction(0))
    return OperatingCharacteristic(above, below, trials)
