"""How many trials decide a gate: exact binomial planning for a task's and a suite's pass rule.

A gate *decides* at a planned rate ``p`` with the stated error rates when a task (or suite) whose
true per-trial pass rate is ``p`` passes with probability at least ``power`` and one at
``p − mde`` passes with probability at most ``alpha``. Every gate wopeval decides on 0/1 trials
is a threshold on a count: a task passes when at least ``c_min(n)`` of its ``n`` trials pass, a
suite when the total count over its tasks reaches a threshold. So the probabilities are exact
binomial (or Poisson-binomial) tails, never normal approximations, and the thresholds are the
grader's own: the RFC's ``passRule`` read exactly (:mod:`wopeval.grading.exact`), and the
Clopper–Pearson lower bounds of :mod:`wopeval.grading.intervals` compared as the gate compares
them (``low_exact ≥ passScore``).

numpy and scipy are imported inside the functions that need them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from wopeval.grading.exact import exact_sum, recorded
from wopeval.grading.intervals import clopper_pearson, task_clopper_pearson_of_sum
from wopeval.suite.models import PassRule

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    IntArray = npt.NDArray[np.int64]
    FloatArray = npt.NDArray[np.float64]

MAX_TASK_TRIALS = 1000
"""Trials per task searched for a task's gate; beyond it the plan says none decides."""

MAX_SUITE_TRIALS = 200
"""Trials per task searched for a suite gate (each needs the exact law of the total count)."""


def lowered(rate: float, mde: float) -> float:
    """The regressed rate ``rate − mde``, floored at 0 (a rate cannot fall below none), taken
    between the decimals as written (0.9 − 0.2 is 0.7, not 0.6999999999999999)."""
    return max(0.0, float(Fraction(repr(float(rate))) - Fraction(repr(float(mde)))))


def rule_minimum(rule: PassRule, n: int, pass_score: Fraction) -> int:
    """The fewest passing trials of ``n`` with which a task passes by ``rule`` (RFC 0244 §B).

    ``all``: every trial (c = n); ``any``: one (c ≥ 1); ``mean``: the mean of 0/1 scores c/n
    meets ``passScore``, exactly: c ≥ ⌈passScore · n⌉.
    """
    if rule == "all":
        return n
    if rule == "any":
        return 1
    return math.ceil(pass_score * n)


def _bound_met(c: int, n: int, pass_score: Fraction, level: float) -> bool:
    return clopper_pearson(c, n, level).low_exact >= pass_score


def bound_minimum(n: int, pass_score: Fraction, level: float) -> int:
    """The fewest passes of ``n`` whose Clopper–Pearson lower bound meets ``passScore``, as the
    ``every-task-lower-bound`` gate compares it; ``n + 1`` when no count does.

    The bound grows with c (Clopper and Pearson 1934), so the count is found by bisection over
    the grader's own :func:`~wopeval.grading.intervals.clopper_pearson`.
    """
    if not _bound_met(n, n, pass_score, level):
        return n + 1
    low, high = 0, n  # the bound is not met below ``low`` … is met at ``high``
    if _bound_met(0, n, pass_score, level):
        return 0
    while high - low > 1:
        middle = (low + high) // 2
        if _bound_met(middle, n, pass_score, level):
            high = middle
        else:
            low = middle
    return high


def tail(minimum: IntArray | int, n: IntArray | int, rate: float) -> FloatArray:
    """P(Binomial(n, rate) ≥ minimum), exactly (``scipy.stats.binom.sf``); 1 for minimum ≤ 0."""
    import numpy as np
    from scipy import stats

    return np.asarray(stats.binom.sf(np.asarray(minimum) - 1, n, rate), dtype=np.float64)


@dataclass(frozen=True)
class GatePlan:
    """The fewest trials per task with which ``gate`` decides, or why none does.

    ``pass_at_rate`` is the probability of passing at the planned rate(s) with ``trials``,
    ``pass_at_lowered`` at the rate(s) lowered by the mde: at least ``power`` and at most
    ``alpha`` when ``trials`` is not ``None``.
    """

    gate: str
    trials: int | None
    pass_at_rate: float | None
    pass_at_lowered: float | None
    reason: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "gate": self.gate,
            "trials": self.trials,
            "passAtRate": self.pass_at_rate,
            "passAtLowered": self.pass_at_lowered,
            "reason": self.reason,
        }


def _none(gate: str, reason: str) -> GatePlan:
    return GatePlan(gate, None, None, None, reason)


def check_errors(alpha: float, power: float) -> None:
    """Refuse error rates no plan can meet (ValueError naming the argument)."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    if not alpha < power < 1.0:
        raise ValueError(f"power must lie strictly between alpha ({alpha:g}) and 1, got {power!r}")


def plan_task_gate(
    rate: float,
    mde: float,
    rule: PassRule,
    pass_score: Fraction,
    *,
    alpha: float,
    power: float,
    level: float | None = None,
) -> GatePlan:
    """The fewest trials n ≤ :data:`MAX_TASK_TRIALS` with which a task's gate decides.

    The gate is ``rule`` (``level=None``), or ``rule`` and the Clopper–Pearson lower bound at
    ``level`` (the task half of ``every-task-lower-bound``): the task passes when
    c ≥ max(rule minimum, bound minimum). The smallest n with P(pass | rate) ≥ power and
    P(pass | rate − mde) ≤ alpha, both exact binomial tails.
    """
    import numpy as np

    check_errors(alpha, power)
    name = rule if level is None else f"{rule} + lower bound"
    ns = np.arange(1, MAX_TASK_TRIALS + 1, dtype=np.int64)
    minimum = np.array([rule_minimum(rule, int(n), pass_score) for n in ns], dtype=np.int64)
    if level is not None:
        minimum = np.maximum(minimum, _bound_candidates(ns, pass_score, level))
    good = tail(minimum, ns, rate)
    bad = tail(minimum, ns, lowered(rate, mde))
    for index in np.flatnonzero((good >= power) & (bad <= alpha) & (minimum <= ns)):
        n = int(ns[index])
        c_min = rule_minimum(rule, n, pass_score)
        if level is not None:
            c_min = max(c_min, bound_minimum(n, pass_score, level))
        exact_good, exact_bad = (
            float(tail(c_min, n, rate)),
            float(tail(c_min, n, lowered(rate, mde))),
        )
        if c_min <= n and exact_good >= power and exact_bad <= alpha:
            return GatePlan(name, n, exact_good, exact_bad)
    return _none(name, _task_reason(rule, rate, mde, pass_score, level))


def _bound_candidates(ns: IntArray, pass_score: Fraction, level: float) -> IntArray:
    """:func:`bound_minimum` for every n at once, by the Clopper–Pearson duality.

    The lower bound at c meets s exactly when P(Binomial(n, s) ≥ c) ≤ α/2 (the bound is where
    that tail equals α/2, and the tail grows with the rate): the smallest such c is
    ``binom.isf(α/2, n, s) + 1``. Floats decide it only as a candidate; the plan then checks its
    chosen n with :func:`bound_minimum`, the grader's comparison.
    """
    import numpy as np
    from scipy import stats

    half = (1.0 - level) / 2.0
    if pass_score <= 0:
        return np.zeros_like(ns)
    found = np.asarray(stats.binom.isf(half, ns, float(pass_score)), dtype=np.float64) + 1
    return np.minimum(np.nan_to_num(found, nan=0.0).astype(np.int64), ns + 1)


def _task_reason(
    rule: PassRule, rate: float, mde: float, pass_score: Fraction, level: float | None
) -> str:
    if rule == "mean" or level is not None:
        if recorded(rate) < pass_score:
            return f"the rate {rate:g} is below passScore {float(pass_score):g}"
        if recorded(lowered(rate, mde)) >= pass_score:
            return f"the lowered rate {lowered(rate, mde):g} still meets passScore"
    return f"no trial count up to {MAX_TASK_TRIALS} passes {rule!r} as asked"


def _aggregate_bound_met(total: int, m: int, n: int, pass_score: Fraction, level: float) -> bool:
    bound = task_clopper_pearson_of_sum(Fraction(total, n), m, level)
    return bound.low_exact >= pass_score


def _aggregate_candidate(m: int, n: int, pass_score: Fraction, level: float) -> int:
    """The smallest total whose aggregate lower bound meets ``passScore``, by the duality of
    :func:`_bound_candidates` for a fractional count S = total / n of m: the bound
    Beta⁻¹(α/2; S, m − S + 1) meets s exactly when the Beta CDF at s, I_s(S, m − S + 1), is at
    most α/2. A float candidate; :func:`suite_minimum` settles it with the grader's function."""
    import numpy as np
    from scipy import special

    totals = np.arange(1, m * n + 1)
    shares = totals / n
    cdf = special.betainc(shares, m - shares + 1.0, float(pass_score))
    met = np.flatnonzero(cdf <= (1.0 - level) / 2.0)
    return int(totals[met[0]]) if met.size else m * n + 1


def suite_minimum(m: int, n: int, pass_score: Fraction, level: float | None) -> int:
    """The fewest total passes over m tasks × n trials with which the suite gate passes.

    The RFC gate: the aggregate (the mean of the task means, c_total / (m·n)) meets
    ``passScore`` exactly. With ``level``, the ``lower-bound`` gate too: the aggregate's
    task-clustered Clopper–Pearson lower bound (``task_clopper_pearson_of_sum`` of c_total / n
    over m tasks) meets it, settled by the grader's own comparison from the float candidate of
    :func:`_aggregate_candidate`. ``m·n + 1`` when no total does.
    """
    point = math.ceil(pass_score * m * n)
    if level is None or pass_score <= 0:
        return point
    top = m * n
    total = min(_aggregate_candidate(m, n, pass_score, level), top + 1)
    while total <= top and not _aggregate_bound_met(total, m, n, pass_score, level):
        total += 1
    while total > 1 and _aggregate_bound_met(total - 1, m, n, pass_score, level):
        total -= 1
    return max(total, point)


def _one_more_trial(law: FloatArray, rates: Sequence[float]) -> FloatArray:
    """The law of the total after one more trial on every task: one Bernoulli convolution per
    task (new[t] = law[t]·(1 − p) + law[t − 1]·p)."""
    import numpy as np

    for rate in rates:
        grown = np.zeros(law.size + 1)
        grown[:-1] = law * (1.0 - rate)
        grown[1:] += law * rate
        law = grown
    return law


def total_law(rates: Sequence[float], n: int) -> FloatArray:
    """The law of the total passes of ``n`` trials on each task (Poisson-binomial), exact up to
    float rounding: the law of a sum of independent counts is the convolution of their laws,
    built one trial (one Bernoulli per task) at a time."""
    import numpy as np

    law = np.ones(1)
    for _ in range(n):
        law = _one_more_trial(law, rates)
    return law


def upper_tail(law: FloatArray, minimum: int) -> float:
    """P(total ≥ minimum) under ``law`` (0 above its largest total), at most 1."""
    return 0.0 if minimum >= law.size else min(float(law[max(minimum, 0) :].sum()), 1.0)


MAX_BOUND_TASKS = 100_000
"""Tasks searched by :func:`tasks_for_bound`."""


def tasks_for_bound(mean: float, pass_score: Fraction, level: float) -> int | None:
    """The fewest tasks whose aggregate lower bound meets ``passScore`` when the aggregate is
    exactly ``mean`` (the limit of many trials): the smallest m with the task-clustered
    Clopper–Pearson bound of m·mean over m at passScore or above. At a fixed mean the bound
    grows with m, so doubling then bisection finds it. ``None`` when none up to
    :data:`MAX_BOUND_TASKS` does (a mean at or below passScore never does, short of 1 = 1)."""
    exact_mean = Fraction(mean).limit_denominator(10**9)

    def met(m: int) -> bool:
        return task_clopper_pearson_of_sum(exact_mean * m, m, level).low_exact >= pass_score

    high = 1
    while not met(high):
        if high >= MAX_BOUND_TASKS:
            return None
        high = min(2 * high, MAX_BOUND_TASKS)
    low = high // 2  # not met at ``low`` (or 0)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if met(middle) else (middle, high)
    return high


def plan_suite_gate(
    rates: Sequence[float],
    mde: float,
    pass_score: Fraction,
    *,
    alpha: float,
    power: float,
    level: float | None = None,
) -> GatePlan:
    """The fewest trials per task n ≤ :data:`MAX_SUITE_TRIALS` with which the suite gate
    decides: a suite whose tasks pass at ``rates`` passes with probability ≥ power and one at
    every rate lowered by ``mde`` with probability ≤ alpha, from the exact law of the total
    (:func:`total_law`, grown a trial at a time) and the gate's threshold on it
    (:func:`suite_minimum`).
    """
    check_errors(alpha, power)
    name = "suite" if level is None else "lower-bound"
    if not rates:
        return _none(name, "the suite has no task")
    m = len(rates)
    mean = sum(rates) / m
    if exact_sum(rates) < pass_score * m:
        return _none(name, f"the mean rate {mean:.3g} is below passScore {float(pass_score):g}")
    import numpy as np

    low_rates = [lowered(rate, mde) for rate in rates]
    good_law = bad_law = np.ones(1)
    for n in range(1, MAX_SUITE_TRIALS + 1):
        good_law, bad_law = _one_more_trial(good_law, rates), _one_more_trial(bad_law, low_rates)
        minimum = suite_minimum(m, n, pass_score, level)
        good, bad = upper_tail(good_law, minimum), upper_tail(bad_law, minimum)
        if good >= power and bad <= alpha:
            return GatePlan(name, n, good, bad)
    lowered_mean = sum(low_rates) / m
    needed = None if level is None else tasks_for_bound(mean, pass_score, level)
    if exact_sum(low_rates) >= pass_score * m:
        why = f"the lowered mean rate {lowered_mean:.3g} still meets passScore"
    elif needed is not None and needed > m:
        why = f"its lower bound needs ≥ {needed} tasks at the mean rate {mean:.3g}"
    elif needed is None and level is not None:
        why = f"no number of tasks up to {MAX_BOUND_TASKS} lifts its lower bound to passScore"
    else:
        why = f"no trial count up to {MAX_SUITE_TRIALS} per task decides it with {m} tasks"
    return _none(name, why)


__all__ = [
    "MAX_BOUND_TASKS",
    "MAX_SUITE_TRIALS",
    "MAX_TASK_TRIALS",
    "GatePlan",
    "bound_minimum",
    "check_errors",
    "lowered",
    "plan_suite_gate",
    "plan_task_gate",
    "rule_minimum",
    "suite_minimum",
    "tail",
    "tasks_for_bound",
    "total_law",
    "upper_tail",
]
