"""Cost per success, tokens per success and latency quantiles, per task and per suite (pure).

wopeval's own numbers, computed from a run's detail (:func:`wopeval.grading.detail.run_detail`,
itself graded from the event log) wherever they are shown, never stored and never on the wire.
Informational only: RFC 0244 §C forbids gating on efficiency, so nothing here decides a verdict.

* A **trial** is a planned trial that was attempted (neither skipped by a cost ceiling nor
  missing from the log); a **success** is a trial whose cell is ``pass``.
* **Cost per success** is the cost of every trial (failed, errored and timed-out ones
  included) divided by the successes: ``C / s``. With no success it is ``None`` ("no
  success"), never 0. **Tokens per success** likewise, input plus output tokens.
* Its interval, :func:`per_success_interval`: with ``n`` trials and ``s`` successes, the
  Clopper–Pearson interval ``[L, U]`` of the success rate (Clopper and Pearson 1934; see
  :func:`wopeval.grading.intervals.clopper_pearson`) mapped through ``p ↦ C / (n·p)``, the cost
  per success the run's mean cost per trial ``C/n`` buys at rate ``p``: ``[C/(n·U), C/(n·L)]``,
  the upper bound unbounded (``None``) when ``L = 0``. The map is decreasing in ``p``, so the
  interval covers ``C/(n·p)`` exactly when ``[L, U]`` covers ``p``: Clopper–Pearson's coverage,
  conditional on the mean cost per trial (the spread of per-trial costs is not modelled).
  Per suite the trials of all tasks are pooled; independent trials of unequal rates are less
  spread than the binomial of their mean rate (Hoeffding 1963, "Probability inequalities for sums
  of bounded random variables", JASA 58(301):13–30, §5), so the pooled interval is conservative.
* **Latency** p50 and p95 are nearest-rank quantiles (the ``⌈q·m⌉``-th of the ``m`` latencies,
  as the summary's p95), each with the distribution-free order-statistic interval of
  :func:`quantile_interval` (Conover 1999, "Practical Nonparametric Statistics", 3rd ed., §3.2).

Spend recorded outside every trial bracket is not a trial's: the judge's calls and an LLM user's
(``x-wopeval-user``, marked ``nodeId``) count towards the run's ``totalCostUsd`` and never here
(RFC 0244 §C): a trial's cost, tokens and model calls are read from its bracket only.

Sums are exact (:class:`fractions.Fraction` of each recorded float), so a ratio does not depend
on the order of the trials.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from wopeval.grading.detail import RunDetail, TaskDetail, TrialCell
from wopeval.grading.intervals import DEFAULT_LEVEL, check_level, clopper_pearson
from wopeval.grading.quantiles import betainc

__all__ = [
    "METHODS",
    "NO_SUCCESS",
    "Efficiency",
    "Quantile",
    "RunEfficiency",
    "Span",
    "efficiency_of",
    "figure",
    "nearest_rank",
    "per_success_interval",
    "per_success_text",
    "quantile_interval",
    "run_efficiency",
]

METHODS = {
    "successRate": "clopper-pearson",
    "perSuccess": "clopper-pearson-mapped",
    "latency": "order-statistic",
}
_UNATTEMPTED = frozenset({"missing", "skipped"})


@dataclass(frozen=True)
class Span:
    """An interval whose upper bound may be unbounded (``None``)."""

    low: float
    high: float | None

    def to_json(self) -> dict[str, float | None]:
        return {"low": self.low, "high": self.high}

    def text(self) -> str:
        """``[0.107, 1.48]``; an unbounded upper bound is ``∞)``."""
        high = "∞)" if self.high is None else f"{figure(self.high)}]"
        return f"[{figure(self.low)}, {high}"


@dataclass(frozen=True)
class Quantile:
    """A nearest-rank latency quantile (ms) and its interval."""

    value: int
    interval: Span

    def to_json(self) -> dict[str, object]:
        return {"value": self.value, "interval": self.interval.to_json()}


@dataclass(frozen=True)
class Efficiency:
    """One task's (or the pooled suite's) trials, their spend and its ratios."""

    trials: int
    successes: int
    cost_usd: Fraction
    tokens: int
    latencies: tuple[int, ...]
    level: float

    @property
    def success_rate(self) -> Fraction | None:
        return Fraction(self.successes, self.trials) if self.trials else None

    @property
    def success_interval(self) -> Span | None:
        if not self.trials:
            return None
        rate = clopper_pearson(self.successes, self.trials, self.level)
        return Span(rate.low, rate.high)

    @property
    def cost_per_success(self) -> Fraction | None:
        """``None``: no success (never 0)."""
        return self.cost_usd / self.successes if self.successes else None

    @property
    def tokens_per_success(self) -> Fraction | None:
        return Fraction(self.tokens, self.successes) if self.successes else None

    @property
    def cost_interval(self) -> Span | None:
        return per_success_interval(self.cost_usd, self.successes, self.trials, self.level)

    @property
    def tokens_interval(self) -> Span | None:
        return per_success_interval(Fraction(self.tokens), self.successes, self.trials, self.level)

    def latency(self, q: Fraction) -> Quantile | None:
        """The ``q`` quantile of the trials' latencies, ``None`` without any."""
        if not self.latencies:
            return None
        ordered = sorted(self.latencies)
        return Quantile(nearest_rank(ordered, q), quantile_interval(ordered, q, self.level))

    def to_json(self) -> dict[str, object]:
        def num(value: Fraction | None) -> float | None:
            return None if value is None else float(value)

        def opt(span: Span | None) -> dict[str, float | None] | None:
            return None if span is None else span.to_json()

        def quant(q: Quantile | None) -> dict[str, object] | None:
            return None if q is None else q.to_json()

        return {
            "trials": self.trials,
            "successes": self.successes,
            "successRate": num(self.success_rate),
            "successRateInterval": opt(self.success_interval),
            "totalCostUsd": float(self.cost_usd),
            "costPerSuccessUsd": num(self.cost_per_success),
            "costPerSuccessInterval": opt(self.cost_interval),
            "tokens": self.tokens,
            "tokensPerSuccess": num(self.tokens_per_success),
            "tokensPerSuccessInterval": opt(self.tokens_interval),
            "latencyP50Ms": quant(self.latency(P50)),
            "latencyP95Ms": quant(self.latency(P95)),
        }


P50 = Fraction(1, 2)
P95 = Fraction(95, 100)


@dataclass(frozen=True)
class RunEfficiency:
    """A run's efficiency at ``level``: the pooled suite's and each task's."""

    level: float
    suite: Efficiency
    tasks: tuple[tuple[str, Efficiency], ...]

    def to_json(self) -> dict[str, object]:
        """The ``efficiency`` member of ``--json`` outputs (informational; never gated)."""
        return {
            "level": self.level,
            "methods": dict(METHODS),
            "suite": self.suite.to_json(),
            "tasks": [{"taskId": task_id, **eff.to_json()} for task_id, eff in self.tasks],
        }


NO_SUCCESS = "no success"


def figure(value: float) -> str:
    """Three significant digits, no exponent: ``0.125``, ``1.48``, ``1,250``."""
    if value == 0:
        return "0"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) < 1e-4:
        return f"{value:.2e}"
    return f"{value:.3g}"


def per_success_text(point: Fraction | None, span: Span | None) -> str:
    """``0.2 [0.107, 1.48]``, or ``no success [0.445, ∞)`` (never 0)."""
    head = NO_SUCCESS if point is None else figure(float(point))
    return head if span is None else f"{head} {span.text()}"


def per_success_interval(total: Fraction, s: int, n: int, level: float) -> Span | None:
    """``total / s``'s interval: ``[total/(n·U), total/(n·L)]`` with ``[L, U]`` the
    Clopper–Pearson interval of ``s/n`` (module docstring); the upper bound is ``None``
    (unbounded) when ``L = 0``. ``None`` without trials. A zero total gives ``[0, 0]``."""
    if n < 1:
        return None
    if total == 0:
        return Span(0.0, 0.0)
    rate = clopper_pearson(s, n, level)  # its upper bound is positive for every n ≥ 1
    mean = total / n
    high = float(mean / Fraction(rate.low)) if rate.low > 0 else None
    return Span(float(mean / Fraction(rate.high)), high)


def nearest_rank(ordered: Sequence[int], q: Fraction) -> int:
    """The nearest-rank ``q`` quantile: the ``max(1, ⌈q·m⌉)``-th smallest of ``m`` values."""
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[rank - 1]


def _binom_cdf(k: int, m: int, q: float) -> float:
    """``P(B ≤ k)`` for ``B ~ Binomial(m, q)``, as ``I_{1−q}(m − k, k + 1)``."""
    if k < 0:
        return 0.0
    if k >= m:
        return 1.0
    return betainc(m - k, k + 1, 1 - q)


def _last(holds: Callable[[int], bool], low: int, high: int) -> int:
    """The largest ``k`` in ``[low, high]`` where ``holds`` (true at ``low``, then false from
    some point on), by bisection."""
    while low < high:
        mid = (low + high + 1) // 2
        if holds(mid):
            low = mid
        else:
            high = mid - 1
    return low


def quantile_interval(ordered: Sequence[int], q: Fraction, level: float) -> Span:
    """The distribution-free interval of the ``q`` quantile ξ from ``m`` sorted values
    (Conover 1999, §3.2): ``[X₍ᵣ₎, X₍ₜ₎]`` where, with ``B ~ Binomial(m, q)``, ``r`` is the
    largest rank with ``P(B ≤ r − 1) ≤ α/2`` (``P(X₍ᵣ₎ > ξ) = P(B ≤ r − 1)``) and ``t`` the
    smallest with ``P(B ≥ t) ≤ α/2``. Its coverage is at least ``level``. Without such an ``r``
    the lower bound is 0 (a latency is never negative); without such a ``t`` the upper bound is
    ``None`` (unbounded): too few values to bound it."""
    half = (1 - check_level(level)) / 2
    m, p = len(ordered), float(q)
    # Both searches bisect over ranks (the binomial CDF is monotone): O(log m) CDF evaluations.
    r = _last(lambda rank: _binom_cdf(rank - 1, m, p) <= half, 0, m)  # rank 0: no bound
    t = _last(lambda rank: 1 - _binom_cdf(rank - 1, m, p) > half, 0, m) + 1  # m + 1: none
    low = float(ordered[r - 1]) if r >= 1 else 0.0
    high = float(ordered[t - 1]) if t <= m else None
    return Span(low, high)


def efficiency_of(cells: Iterable[TrialCell], level: float = DEFAULT_LEVEL) -> Efficiency:
    """The efficiency of these trial cells (one task's, or a whole run's)."""
    trials = successes = tokens = 0
    cost = Fraction(0)
    latencies: list[int] = []
    for cell in cells:
        usage = cell.usage
        if usage is not None:
            cost += Fraction(usage.cost_usd)
            tokens += usage.input_tokens + usage.output_tokens
            if usage.latency_ms is not None:
                latencies.append(usage.latency_ms)
        if cell.status in _UNATTEMPTED:
            continue
        trials += 1
        successes += cell.status == "pass"
    return Efficiency(trials, successes, cost, tokens, tuple(latencies), check_level(level))


def _cells(tasks: Sequence[TaskDetail]) -> Iterable[TrialCell]:
    for task in tasks:
        yield from task.cells


def run_efficiency(detail: RunDetail, level: float = DEFAULT_LEVEL) -> RunEfficiency:
    """Every task's efficiency and the suite's (every trial of every task pooled)."""
    level = check_level(level)
    return RunEfficiency(
        level=level,
        suite=efficiency_of(_cells(detail.tasks), level),
        tasks=tuple((task.task_id, efficiency_of(task.cells, level)) for task in detail.tasks),
    )
