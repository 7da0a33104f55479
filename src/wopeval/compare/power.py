"""Power and sample size of the paired regression verdict (RFC 0244 §F) for a planned design.

A *design* is the baseline's per-trial pass rates (one per task; more tasks repeat them in
turn), the trials per task, the suite's ``passRule`` and ``passScore``, and the regression to
detect: every task's rate lowered by the mde (floored at 0). The candidate runs the same design
at the lowered rates. For each method :func:`~wopeval.compare.verdict.compare_summaries` offers,
the plan is the fewest paired tasks with which the verdict says ``regressed`` with probability
at least ``power``, and its false-regression rate there (the same design, nothing lowered).

- ``sign-test`` and ``mcnemar`` are exact: each task is independently up, down or tied (the sign
  of its mean difference; its pass decision changing either way), with probabilities from the
  binomial laws of its counts, so the law of (ups, downs) over m tasks is an exact convolution;
  the verdict is ``regressed`` exactly when the downs outnumber the ups by the method's critical
  count, found by running the method itself (:func:`verdict_of`)
  on tables of those counts.
- ``paired-t`` and ``paired-bootstrap`` read the sizes of the differences, whose law has no
  closed form worth trusting on a few tasks: they are simulated, seeded, by drawing each task's
  counts and asking the very same method and verdict about every draw, all draws at once
  (:func:`regressed_rows`, through the p-value functions the methods themselves call).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from wopeval.compare.methods import (
    DEFAULT_RESAMPLES,
    bootstrap_counts,
    bootstrap_p_values,
    paired_t_p_values,
)
from wopeval.compare.pairing import PairedTask
from wopeval.compare.verdict import decide, identical_on_pairs, reach, run_method
from wopeval.grading.planning import check_errors, lowered, rule_minimum, tail
from wopeval.suite.models import PassRule
from wopeval.wire.summary import Verdict

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float64]
    IntArray = npt.NDArray[np.int64]
    BoolArray = npt.NDArray[np.bool_]

EXACT_METHODS = ("sign-test", "mcnemar")
SIMULATED_METHODS = ("paired-t", "paired-bootstrap")
MAX_TASKS = 1000
"""Paired tasks searched for an exact method; beyond it the plan says none is enough."""
MAX_SIMULATED_TASKS = 500
"""Paired tasks searched for a simulated method."""
DEFAULT_SIMULATIONS = 5000
DEFAULT_SEED = 0


@dataclass(frozen=True)
class Design:
    """What is planned: see the module docstring. ``resamples`` is the bootstrap's B."""

    rates: tuple[float, ...]
    trials: int
    pass_rule: PassRule
    pass_score: Fraction
    mde: float
    alpha: float
    power: float
    resamples: int = DEFAULT_RESAMPLES

    def __post_init__(self) -> None:
        check_errors(self.alpha, self.power)
        if not self.rates:
            raise ValueError("rates: a design needs at least one task's rate")
        if any(not 0.0 <= rate <= 1.0 for rate in self.rates):
            raise ValueError(f"rates: each rate lies in [0, 1], got {list(self.rates)!r}")
        if self.trials < 1:
            raise ValueError(f"trials must be at least 1, got {self.trials!r}")
        if not 0.0 < self.mde < 1.0:
            raise ValueError(f"mde must lie strictly between 0 and 1, got {self.mde!r}")

    def rate(self, task: int) -> float:
        """Task ``task``'s baseline rate: the rates in turn, repeated."""
        return self.rates[task % len(self.rates)]

    @property
    def minimum(self) -> int:
        """Passing trials a task needs to pass by ``passRule``."""
        return rule_minimum(self.pass_rule, self.trials, self.pass_score)


@dataclass(frozen=True)
class MethodPlan:
    """The fewest paired tasks with which ``method`` detects the regression, or why none.

    ``power`` is the chance of a ``regressed`` verdict at ``tasks``; ``false_regression`` the
    chance of one when nothing changed; ``how`` is ``exact`` or ``simulated`` (then with
    ``simulations`` draws from ``seed``).
    """

    method: str
    tasks: int | None
    trials: int
    power: float | None
    false_regression: float | None
    how: str
    reason: str | None = None
    simulations: int | None = None
    seed: int | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "method": self.method,
            "tasks": self.tasks,
            "trialsPerTask": self.trials,
            "power": self.power,
            "falseRegression": self.false_regression,
            "how": self.how,
            "simulations": self.simulations,
            "seed": self.seed,
            "reason": self.reason,
        }


def verdict_of(method: str, pairs: Sequence[PairedTask], design: Design) -> Verdict:
    """The verdict :func:`~wopeval.compare.verdict.compare_summaries` gives on this paired
    table (no equivalence margin): the method's reach, the method itself, and ``decide``."""
    decidable = len(pairs) >= reach_needs(method, design)
    result = run_method(method, pairs, alpha=design.alpha, resamples=design.resamples)
    identical = identical_on_pairs(pairs)
    return decide(
        result, alpha=design.alpha, equivalent=None, identical=identical, decidable=decidable
    )


def reach_needs(method: str, design: Design) -> int:
    """The fewest paired tasks on which ``method`` can decide at alpha (the verdict's
    :func:`~wopeval.compare.verdict.reach`); ``MAX_TASKS + 1`` when none can."""
    needs = reach(method, 1, alpha=design.alpha, resamples=design.resamples).needs
    return MAX_TASKS + 1 if needs is None else needs


_UP = PairedTask("up", 0.0, 1.0, False, True, 0.0, 1.0)
_DOWN = PairedTask("down", 1.0, 0.0, True, False, 1.0, 0.0)


def regressed_on_counts(method: str, up: int, down: int, design: Design) -> bool:
    """Whether ``method`` says ``regressed`` on ``up`` tasks better and ``down`` worse (and no
    tie): the method itself, run on that table."""
    return verdict_of(method, [_UP] * up + [_DOWN] * down, design) == "regressed"


class CriticalUps:
    """For N discordant tasks, the most ups with which ``method`` still says ``regressed``
    (−1: none), extended on demand. It never falls as N grows (one more task down only makes the
    table more extreme) and grows by at most one per task (the two-sided binomial test's
    critical count), so each N costs one or two runs of the method itself."""

    def __init__(self, method: str, design: Design) -> None:
        self.method = method
        self.design = design
        self.found = [-1]

    def upto(self, most: int) -> list[int]:
        k = self.found[-1]
        for total in range(len(self.found), most + 1):
            while 2 * (k + 1) < total and regressed_on_counts(
                self.method, k + 1, total - k - 1, self.design
            ):
                k += 1
            self.found.append(k)
        return self.found[: most + 1]


def discordance(method: str, design: Design, rate: float, candidate: float) -> tuple[float, float]:
    """P(up), P(down) of one task at baseline ``rate`` and candidate ``candidate``.

    ``sign-test``: the sign of c′ − c, c ~ Binomial(n, rate), c′ ~ Binomial(n, candidate)
    independent. ``mcnemar``: the pass decision by ``passRule`` changing (fail → pass is up).
    """
    import numpy as np
    from scipy import stats

    n = design.trials
    if method == "sign-test":
        counts = np.arange(n + 1)
        joint = np.outer(stats.binom.pmf(counts, n, rate), stats.binom.pmf(counts, n, candidate))
        return float(np.triu(joint, 1).sum()), float(np.tril(joint, -1).sum())
    passes_base = float(tail(design.minimum, n, rate))
    passes_cand = float(tail(design.minimum, n, candidate))
    return (1.0 - passes_base) * passes_cand, passes_base * (1.0 - passes_cand)


def exact_powers(
    method: str, design: Design, critical: CriticalUps, *, shifted: bool = True
) -> Callable[[], tuple[int, float]]:
    """A stepper: each call adds one paired task and returns (m, P(regressed) on m tasks).

    The law of (ups, downs) is convolved task by task (cell [u, d] of a 2-D array); the verdict
    region is the method's own (:class:`CriticalUps`), and on fewer tasks than the method's
    reach (:func:`reach_needs`) nothing decides.
    """
    import numpy as np

    needs = reach_needs(method, design)
    law = np.ones((1, 1), dtype=np.float64)

    def step() -> tuple[int, float]:
        nonlocal law
        m = law.shape[0]  # tasks so far, plus one
        rate = design.rate(m - 1)
        up, down = discordance(method, design, rate, lowered(rate, design.mde) if shifted else rate)
        grown = np.zeros((m + 1, m + 1), dtype=np.float64)
        grown[:m, :m] += law * (1.0 - up - down)
        grown[1:, :m] += law * up
        grown[:m, 1:] += law * down
        law = grown
        if m < needs:
            return m, 0.0
        ups = np.arange(m + 1)[:, None]
        totals = np.minimum(ups + np.arange(m + 1)[None, :], m)
        region = ups <= np.asarray(critical.upto(m))[totals]
        return m, float(law[region].sum())

    return step


def plan_exact(method: str, design: Design, most: int = MAX_TASKS) -> MethodPlan:
    """The fewest paired tasks (≤ ``most``) with exact power ≥ ``design.power``, and the exact
    false-regression rate there."""
    critical = CriticalUps(method, design)
    step = exact_powers(method, design, critical)
    for _ in range(most):
        m, power = step()
        if power >= design.power:
            null = exact_powers(method, design, critical, shifted=False)
            false = 0.0
            for _ in range(m):
                _, false = null()
            return MethodPlan(method, m, design.trials, power, false, "exact")
    return MethodPlan(
        method, None, design.trials, None, None, "exact",
        f"no number of tasks up to {most} reaches power {design.power:g}",
    )  # fmt: skip


def simulated_counts(
    design: Design, m: int, *, shifted: bool, simulations: int, seed: int
) -> tuple[IntArray, IntArray]:
    """Passing-trial counts of m paired tasks in ``simulations`` seeded draws (rows: draws),
    baseline and candidate. Task j's counts come from its own stream ``default_rng([seed, j,
    shifted])``, so a draw of m tasks is the first m tasks of a draw of more: the power at every
    size of the search is read off the same draws (common random numbers)."""
    import numpy as np

    n = design.trials
    base = np.empty((simulations, m), dtype=np.int64)
    cand = np.empty((simulations, m), dtype=np.int64)
    for j in range(m):
        rng = np.random.default_rng([seed, j, int(shifted)])
        rate = design.rate(j)
        base[:, j] = rng.binomial(n, rate, size=simulations)
        cand[:, j] = rng.binomial(n, lowered(rate, design.mde) if shifted else rate, simulations)
    return base, cand


SIMULATION_ROWS = 1000
"""Draws whose bootstrap resamples are held in memory at once (rows × B floats, a few times)."""


def regressed_rows(method: str, base: IntArray, cand: IntArray, design: Design) -> BoolArray:
    """For each row of counts (a draw of m paired tasks), whether ``method``'s verdict is
    ``regressed`` (:func:`verdict_of`), the simulated methods for all rows at once: below the
    method's reach nothing decides; else the p-value of :func:`~wopeval.compare.methods.
    paired_t_p_values` or :func:`~wopeval.compare.methods.bootstrap_p_values` (the bootstrap's
    resamples summed from :func:`~wopeval.compare.methods.bootstrap_counts`, the very resamples
    the method draws, in whole numbers so a resample's zero spread stays exactly zero) below
    alpha, with the mean difference negative. A table with every difference zero has no p."""
    import numpy as np

    n, m = design.trials, base.shape[1]
    if m < reach_needs(method, design):
        return np.zeros(base.shape[0], dtype=np.bool_)
    diffs = cand / n - base / n
    if method == "paired-t":
        p_values = paired_t_p_values(cand / n, base / n)
    else:
        counts = bootstrap_counts(m, seed=0, resamples=design.resamples).T
        parts = []
        for start in range(0, base.shape[0], SIMULATION_ROWS):
            steps = (cand - base)[start : start + SIMULATION_ROWS].astype(np.float64)
            sums, squares = steps @ counts, (steps * steps) @ counts
            spread = np.maximum(m * squares - sums * sums, 0.0) / (m * (m - 1))
            parts.append(bootstrap_p_values(
                diffs[start : start + SIMULATION_ROWS], sums / (m * n), np.sqrt(spread) / n
            ))  # fmt: skip
        p_values = np.concatenate(parts)
    return np.asarray((p_values < design.alpha) & (diffs.mean(axis=1) < 0.0), dtype=np.bool_)


def simulated_regressed(
    method: str,
    design: Design,
    m: int,
    *,
    shifted: bool = True,
    simulations: int = DEFAULT_SIMULATIONS,
    seed: int = DEFAULT_SEED,
) -> float:
    """The share of ``simulations`` seeded draws of m paired tasks (:func:`simulated_counts`) on
    which ``method``'s verdict is ``regressed``: the simulated methods by :func:`regressed_rows`,
    the exact ones by running the method on each distinct count of ups and downs."""
    base, cand = simulated_counts(design, m, shifted=shifted, simulations=simulations, seed=seed)
    if method in SIMULATED_METHODS:
        return float(regressed_rows(method, base, cand, design).mean())
    n = design.trials
    minimum = design.minimum
    seen: dict[tuple[int, int], bool] = {}
    regressed = 0
    for row_b, row_c in zip(base.tolist(), cand.tolist(), strict=True):
        key = _signs(method, row_b, row_c, minimum)
        if key is not None and key in seen:
            regressed += seen[key]
            continue
        pairs = [
            PairedTask(str(j), b / n, c / n, b >= minimum, c >= minimum, b / n, c / n)
            for j, (b, c) in enumerate(zip(row_b, row_c, strict=True))
        ]
        outcome = verdict_of(method, pairs, design) == "regressed"
        if key is not None:
            seen[key] = outcome
        regressed += outcome
    return regressed / simulations


def _signs(method: str, base: list[int], cand: list[int], minimum: int) -> tuple[int, int] | None:
    """(ups, downs) for the methods whose verdict on a table of m tasks reads nothing else: the
    sign test the signs of the differences, McNemar the changed pass decisions. Each distinct
    count is run through the method once per simulation; ``None`` for the others."""
    if method == "sign-test":
        pairs = list(zip(base, cand, strict=True))
        return sum(c > b for b, c in pairs), sum(c < b for b, c in pairs)
    if method == "mcnemar":
        flips = [(b >= minimum, c >= minimum) for b, c in zip(base, cand, strict=True)]
        return sum(c and not b for b, c in flips), sum(b and not c for b, c in flips)
    return None


def normal_guess(design: Design) -> int | None:
    """The normal-approximation task count for a paired mean difference (the search's start):
    ⌈((z₁₋α/₂ + z_power)·σ/|μ|)²⌉, μ and σ² the mean and variance of a task's difference over
    the rates in turn (Chow, Shao and Wang 2008, *Sample Size Calculations in Clinical
    Research*, §3.1). ``None`` when no rate can fall."""
    from statistics import NormalDist

    drops = [lowered(rate, design.mde) - rate for rate in design.rates]
    mu = sum(drops) / len(drops)
    if mu >= 0.0:
        return None
    inner = [
        (r * (1 - r) + lowered(r, design.mde) * (1 - lowered(r, design.mde))) / design.trials
        for r in design.rates
    ]
    variance = sum(inner) / len(inner) + sum((d - mu) ** 2 for d in drops) / len(drops)
    z = NormalDist().inv_cdf(1 - design.alpha / 2) + NormalDist().inv_cdf(design.power)
    return max(2, math.ceil((z * math.sqrt(variance) / -mu) ** 2))


def plan_simulated(
    method: str,
    design: Design,
    *,
    simulations: int = DEFAULT_SIMULATIONS,
    seed: int = DEFAULT_SEED,
    most: int = MAX_SIMULATED_TASKS,
) -> MethodPlan:
    """The fewest paired tasks (≤ ``most``) whose simulated power reaches ``design.power``:
    from the normal guess, bracketed by halving or doubling, then bisected."""
    start = normal_guess(design)
    if start is None:
        return MethodPlan(method, None, design.trials, None, None, "simulated",
                          "no task's rate can fall by the mde", simulations, seed)  # fmt: skip
    seen: dict[int, float] = {}

    def power(m: int) -> float:
        if m not in seen:
            seen[m] = simulated_regressed(method, design, m, simulations=simulations, seed=seed)
        return seen[m]

    low, high = 1, min(start, most)
    if power(high) >= design.power:
        while high > 2 and power(high // 2) >= design.power:
            high //= 2
        low = max(1, high // 2)
    else:
        while power(high) < design.power:
            if high >= most:
                return MethodPlan(
                    method, None, design.trials, None, None, "simulated",
                    f"no number of tasks up to {most} reaches power {design.power:g}",
                    simulations, seed,
                )  # fmt: skip
            low, high = high, min(2 * high, most)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if power(middle) >= design.power else (middle, high)
    false = simulated_regressed(
        method, design, high, shifted=False, simulations=simulations, seed=seed
    )
    return MethodPlan(
        method, high, design.trials, power(high), false, "simulated", None, simulations, seed
    )


def plan_methods(
    design: Design,
    methods: Sequence[str] = (*EXACT_METHODS, *SIMULATED_METHODS),
    *,
    simulations: int = DEFAULT_SIMULATIONS,
    seed: int = DEFAULT_SEED,
) -> list[MethodPlan]:
    """A :class:`MethodPlan` per method, in the order given."""
    plans = []
    for method in methods:
        if method in EXACT_METHODS:
            plans.append(plan_exact(method, design))
        elif method in SIMULATED_METHODS:
            plans.append(plan_simulated(method, design, simulations=simulations, seed=seed))
        else:
            known = ", ".join((*EXACT_METHODS, *SIMULATED_METHODS))
            raise ValueError(f"unknown regression method {method!r}; registered methods: {known}")
    return plans


__all__ = [
    "DEFAULT_SEED",
    "DEFAULT_SIMULATIONS",
    "EXACT_METHODS",
    "SIMULATED_METHODS",
    "SIMULATION_ROWS",
    "CriticalUps",
    "Design",
    "MethodPlan",
    "discordance",
    "exact_powers",
    "normal_guess",
    "plan_exact",
    "plan_methods",
    "plan_simulated",
    "regressed_on_counts",
    "regressed_rows",
    "simulated_counts",
    "simulated_regressed",
    "verdict_of",
]
