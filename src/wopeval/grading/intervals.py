"""Confidence intervals for the RFC 0244 §B statistics (pure; wopeval's own numbers).

Each method is a named function of counts or scores and a confidence ``level`` in (0, 1):

* :func:`clopper_pearson`: a task's pass rate ``c/n``, exact (Clopper and Pearson 1934), the
  interval every view shows: its coverage is at least ``level`` for every ``n`` and true rate.
* :func:`wilson`: the score interval (Wilson 1927), shorter, but below ``level`` for some rates
  near 0 and 1 (Brown, Cai and DasGupta 2001); offered, not the default.
* :func:`pass_at_k_interval` and :func:`pass_hat_k_interval`: the Clopper–Pearson bounds of the
  per-trial rate ``p`` mapped through ``1 − (1 − p)^k`` and ``p^k``, the values the exact
  estimators of pass@k and pass^k are unbiased for; a monotone map keeps the coverage.
* :func:`mean_score_interval`: a task's mean score over its n trials (scores in [0, 1]), by the
  same bounded-mean Clopper–Pearson as a suite aggregate, the trial as the unit.
* :func:`task_clopper_pearson`: a suite aggregate (a mean over tasks of values in [0, 1]), the
  task being the unit: Clopper–Pearson on the sum of the per-task values over the task count, the
  interval every view shows (its coverage, checked in ``bench/intervals_coverage.py``, stays at
  ``level`` from one task up, where the t interval's collapses).
* :func:`cluster_t`: the t interval over the per-task values, clustered by task (Miller 2024,
  "Adding error bars to evals", §2.2); offered, not the default: with few tasks, or tasks that
  all score alike, it is far too narrow.

The per-count functions are cached (a suite's tasks share few ``(c, n)`` pairs). Intervals are
never stored: they are recomputed from the summary (itself graded from the log)
wherever they are shown. An :class:`Interval` keeps its bounds as floats for display and its
lower bound as an outward-rounded rational (:attr:`Interval.low_exact`), which a bound gate
compares with a threshold exactly.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from statistics import NormalDist

from wopeval.grading.exact import recorded
from wopeval.grading.quantiles import beta_ppf, t_ppf
from wopeval.grading.stats import pass_at_k, pass_hat_k

__all__ = [
    "CLOPPER_PEARSON",
    "CLUSTER_T",
    "DEFAULT_LEVEL",
    "TASK_CLOPPER_PEARSON",
    "WILSON",
    "Interval",
    "check_level",
    "clopper_pearson",
    "cluster_t",
    "mean_score_interval",
    "pass_at_k_interval",
    "pass_hat_k_interval",
    "task_clopper_pearson",
    "task_clopper_pearson_of_sum",
    "wilson",
]

DEFAULT_LEVEL = 0.95
CLOPPER_PEARSON = "clopper-pearson"
WILSON = "wilson"
CLUSTER_T = "cluster-t"
TASK_CLOPPER_PEARSON = "task-clopper-pearson"


@dataclass(frozen=True)
class Interval:
    """A two-sided interval at ``level`` by ``method``. ``low_exact`` is a rational no greater
    than the true lower bound (rounded outward), so that ``low_exact ≥ threshold`` never holds
    on a float's luck."""

    low: float
    high: float
    low_exact: Fraction
    method: str
    level: float

    def to_json(self) -> dict[str, float]:
        return {"low": self.low, "high": self.high}

    def text(self, digits: int = 2) -> str:
        """``[0.28, 0.99]``."""
        return f"[{self.low:.{digits}f}, {self.high:.{digits}f}]"


def check_level(level: float) -> float:
    """``level`` if it is a confidence level (strictly between 0 and 1), else ValueError."""
    if not (isinstance(level, float | int) and 0 < level < 1):
        raise ValueError(f"a confidence level is strictly between 0 and 1, got {level!r}")
    return float(level)


# Outward rounding: a relative margin well above the floating error of a quantile function, a
# power or a square root (a few units in the last place), and far below any printed digit.
_MARGIN = 1e-12


def _alpha(level: float) -> float:
    """``1 − level``, rounded once (0.05 for 0.95, not 1 − 0.95 = 0.050000000000000044)."""
    return float(1 - recorded(check_level(level)))


def _down(value: float) -> Fraction:
    """A rational a little below ``value`` (by :data:`_MARGIN`); 0 stays 0."""
    return Fraction(0) if value <= 0 else Fraction(value) * (1 - Fraction(_MARGIN))


def _check(c: int, n: int) -> None:
    if n < 1 or not 0 <= c <= n:
        raise ValueError(f"counts must satisfy 0 ≤ c ≤ n and n ≥ 1, got c={c}, n={n}")


@lru_cache(maxsize=8192)
def clopper_pearson(c: int, n: int, level: float = DEFAULT_LEVEL) -> Interval:
    """The exact binomial interval of Clopper and Pearson (1934), "The use of confidence or
    fiducial limits illustrated in the case of the binomial", Biometrika 26(4):404–413.

    With ``α = 1 − level``: low = Beta⁻¹(α/2; c, n − c + 1) (0 when c = 0) and
    high = Beta⁻¹(1 − α/2; c + 1, n − c) (1 when c = n). At c = n the lower bound is
    ``(α/2)^(1/n)`` exactly; at c = 0 the upper bound is ``1 − (α/2)^(1/n)``.
    """
    _check(c, n)
    alpha = _alpha(level)
    if c == 0:
        low = 0.0
    elif c == n:
        low = (alpha / 2) ** (1 / n)
    else:
        low = beta_ppf(alpha / 2, c, n - c + 1)
    if c == n:
        high = 1.0
    elif c == 0:
        high = 1 - (alpha / 2) ** (1 / n)
    else:
        high = beta_ppf(1 - alpha / 2, c + 1, n - c)
    return Interval(low, high, _down(low), CLOPPER_PEARSON, level)


def _z(level: float) -> float:
    return NormalDist().inv_cdf(1 - _alpha(level) / 2)


@lru_cache(maxsize=8192)
def wilson(c: int, n: int, level: float = DEFAULT_LEVEL) -> Interval:
    """The score interval of Wilson (1927), "Probable inference, the law of succession, and
    statistical inference", JASA 22(158):209–212: with ``p̂ = c/n`` and ``z`` the normal
    quantile at ``1 − α/2``, ``(p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n)``.
    """
    _check(c, n)
    z = _z(level)
    p = c / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low = 0.0 if c == 0 else max(0.0, centre - half)
    high = 1.0 if c == n else min(1.0, centre + half)
    return Interval(low, high, _down(low), WILSON, level)


def _mapped(rate: Interval, low: float, high: float, point: Fraction, method: str) -> Interval:
    """The rate's interval carried through a monotone map, widened to hold the exact estimate."""
    low, high = min(low, float(point)), max(high, float(point))
    return Interval(low, high, min(_down(low), point), method, rate.level)


@lru_cache(maxsize=8192)
def pass_at_k_interval(c: int, n: int, k: int, level: float = DEFAULT_LEVEL) -> Interval:
    """pass@k's interval: the Clopper–Pearson bounds ``[L, U]`` of the per-trial rate mapped
    through ``1 − (1 − p)^k``, the value Chen et al. (2021)'s estimator
    ``1 − C(n−c, k)/C(n, k)`` is unbiased for. The map is increasing in p, so the interval
    covers ``1 − (1 − p)^k`` exactly when ``[L, U]`` covers ``p``: the coverage is
    Clopper–Pearson's (at least ``level``). Widened, if need be, to hold the estimate."""
    rate = clopper_pearson(c, n, level)
    point = pass_at_k(n, c, k)
    low, high = 1 - (1 - rate.low) ** k, 1 - (1 - rate.high) ** k
    return _mapped(rate, low, high, point, f"{CLOPPER_PEARSON}-mapped")


@lru_cache(maxsize=8192)
def pass_hat_k_interval(c: int, n: int, k: int, level: float = DEFAULT_LEVEL) -> Interval:
    """pass^k's interval: the Clopper–Pearson bounds ``[L, U]`` of the per-trial rate mapped
    through ``p^k``, the value τ-bench's (Yao et al. 2024) estimator ``C(c, k)/C(n, k)`` is
    unbiased for (E[C(c, k)] = C(n, k)·p^k for c ~ Binomial(n, p)). Increasing in p, so its
    coverage is Clopper–Pearson's. Widened, if need be, to hold the estimate."""
    rate = clopper_pearson(c, n, level)
    point = pass_hat_k(n, c, k)
    return _mapped(rate, rate.low**k, rate.high**k, point, f"{CLOPPER_PEARSON}-mapped")


def cluster_t(values: Sequence[float], level: float = DEFAULT_LEVEL) -> Interval | None:
    """A suite aggregate's interval clustered by task (Miller 2024, "Adding error bars to evals:
    a statistical approach to language model evaluations", arXiv:2411.00640, §2.2): with ``m``
    tasks, per-task values ``x_i``, their mean ``x̄`` and sample standard deviation ``s``,
    ``x̄ ± t(1 − α/2; m − 1)·s/√m``, clipped to [0, 1]. ``None`` below two tasks (no spread
    to estimate). The mean is exact; the half-width is rounded outward before the lower bound
    is taken, so ``low_exact`` is the exact mean when every task has the same value.
    """
    m = len(values)
    if m < 2:
        return None
    mean = sum((recorded(v) for v in values), Fraction(0)) / m
    square = sum(((recorded(v) - mean) ** 2 for v in values), Fraction(0)) / (m - 1)
    alpha = _alpha(level)
    half = 0.0
    if square:
        half = t_ppf(1 - alpha / 2, m - 1) * math.sqrt(square / m)
    low_exact = max(Fraction(0), mean - Fraction(half) * (1 + Fraction(_MARGIN)))
    low = max(0.0, float(mean) - half)
    high = min(1.0, float(mean) + half)
    return Interval(low, high, low_exact, CLUSTER_T, level)


def task_clopper_pearson(values: Sequence[float], level: float = DEFAULT_LEVEL) -> Interval | None:
    """A suite aggregate's interval with the task as the unit: the Clopper–Pearson interval
    (Clopper and Pearson 1934) of ``s/m``, ``s`` the exact sum of the ``m`` per-task values in
    [0, 1], read as ``s`` successes in ``m`` (a fractional ``s`` through the Beta quantiles:
    low = Beta⁻¹(α/2; s, m − s + 1), high = Beta⁻¹(1 − α/2; s + 1, m − s)).

    Among variables in [0, 1] with a given mean, the Bernoulli has the largest variance, and the
    sum of independent ones is dominated in convex order by the binomial of the same mean
    (Hoeffding 1963, "Probability inequalities for sums of bounded random variables", JASA
    58(301):13–30, §5): the binomial interval is the conservative one for task means. Unlike the
    t interval it does not collapse when every task scores alike, and it is defined for one task.
    ``None`` for no task.
    """
    m = len(values)
    if m == 0:
        return None
    exact = {value: recorded(value) for value in set(values)}  # task values repeat: c/n
    if not all(0 <= v <= 1 for v in exact.values()):
        raise ValueError("task values must lie in [0, 1]")
    counts = Counter(values)
    total = sum((count * exact[value] for value, count in counts.items()), Fraction(0))
    return task_clopper_pearson_of_sum(total, m, level)


def task_clopper_pearson_of_sum(total: Fraction, m: int, level: float = DEFAULT_LEVEL) -> Interval:
    """:func:`task_clopper_pearson` from the exact sum ``total`` of ``m`` task values."""
    if m < 1 or not 0 <= total <= m:
        raise ValueError(f"a sum of {m} values in [0, 1] lies in [0, {m}], got {total}")
    if total.denominator == 1:  # whole successes: the binomial's own interval
        whole = clopper_pearson(int(total), m, level)
        return Interval(whole.low, whole.high, whole.low_exact, TASK_CLOPPER_PEARSON, level)
    alpha = _alpha(level)
    s = float(total)
    low = beta_ppf(alpha / 2, s, m - s + 1)
    high = beta_ppf(1 - alpha / 2, s + 1, m - s)
    return Interval(low, high, _down(low), TASK_CLOPPER_PEARSON, level)


@lru_cache(maxsize=8192)
def mean_score_interval(mean: float, n: int, level: float = DEFAULT_LEVEL) -> Interval:
    """A task's mean score over its ``n`` trials (each score in [0, 1]): the bounded-mean
    Clopper–Pearson interval of :func:`task_clopper_pearson` with the trial as the unit, from the
    reported mean (``n × mean`` successes of ``n``; Hoeffding 1963, §5, as there). With 0/1
    scores it is the pass rate's interval."""
    total = min(max(recorded(mean) * n, Fraction(0)), Fraction(n))
    whole = round(total)
    if abs(total - whole) < Fraction(1, 10**9):  # a float mean of whole successes: c/n
        total = Fraction(whole)
    return task_clopper_pearson_of_sum(total, n, level)
