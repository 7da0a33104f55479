"""RFC 0244 §B trial statistics, with the RFC 0246 gating correction.

* pass@k (Chen et al. 2021, "Evaluating Large Language Models Trained on Code", the unbiased
  estimator): ``1 − C(n−c, k) / C(n, k)``.
* pass^k (Yao et al. 2024, τ-bench): ``C(c, k) / C(n, k)``.
* The suite's score standard error, clustered by task (Miller 2024, "Adding error bars to
  evals"): the sample standard deviation of the per-task ``meanScore`` over √(taskCount).

pass@k and pass^k are exact rationals (``fractions.Fraction`` over ``math.comb``), as the
suite's reference computes them; they become floats only on the wire.

RFC 0246 (correcting RFC 0244 §A–§B): a trial that failed its trajectory, or failed closed on a
fixture miss, keeps its output ``score`` but counts 0 in the *gating* score; ``passRule: mean``
compares the task's mean gating score with ``thresholds.passScore``. ``meanScore`` stays the
plain mean of the scores.

The gating score is an exact rational and the ``mean`` decision is exact
(:mod:`wopeval.grading.exact`): three trials scoring 0.7 meet ``passScore: 0.7``.
"""

from __future__ import annotations

import math
import statistics
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from wopeval.grading.exact import at_least, recorded
from wopeval.suite.models import PassRule
from wopeval.wire.summary import TrialsBlock, TrialStats

__all__ = [
    "OutcomeTally",
    "TaskTrialResult",
    "TrialOutcome",
    "clustered_stderr",
    "mean_or_zero",
    "pass_at_k",
    "pass_hat_k",
    "task_result",
    "trial_stats",
]


def _check_counts(n: int, c: int, k: int) -> None:
    if n < 1:
        raise ValueError(f"n must be at least 1, got n={n}")
    if not 1 <= k <= n:
        raise ValueError(f"k must satisfy 1 ≤ k ≤ n, got k={k} with n={n}")
    if not 0 <= c <= n:
        raise ValueError(f"c must satisfy 0 ≤ c ≤ n, got c={c} with n={n}")


def pass_at_k(n: int, c: int, k: int) -> Fraction:
    """pass@k, the unbiased estimator of Chen et al. 2021: ``1 − C(n−c, k) / C(n, k)``.

    The probability that at least one of k trials drawn without replacement from the n run
    passed, given that c passed. 0 when ``c = 0`` (RFC 0244 §B).
    """
    _check_counts(n, c, k)
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def pass_hat_k(n: int, c: int, k: int) -> Fraction:
    """pass^k, τ-bench's consistency measure (Yao et al. 2024): ``C(c, k) / C(n, k)``.

    The probability that all k trials drawn without replacement passed. 0 when ``c < k``
    (RFC 0244 §B).
    """
    _check_counts(n, c, k)
    return Fraction(math.comb(c, k), math.comb(n, k))


@dataclass(frozen=True)
class TrialOutcome:
    """One graded trial. ``gated``: it failed its trajectory or failed closed on a fixture miss.

    A gated trial never passes when graded (RFC 0244 §A, §D); ``passed`` is still taken as given,
    so that replaying a recorded ``eval.scored`` fact never raises here.
    """

    score: float
    passed: bool
    gated: bool

    def __post_init__(self) -> None:
        if not 0 <= self.score <= 1:
            raise ValueError(f"score must be in [0, 1], got {self.score!r}")

    @property
    def gating_score(self) -> float:
        """RFC 0246: the score the pass decisions read; 0 for a gated trial."""
        return 0.0 if self.gated else self.score


@dataclass(frozen=True)
class TaskTrialResult:
    """RFC 0244 §B per-task statistics over ``n`` trials, and the task's ``passed``.

    ``gating_score`` is the exact mean of the trials' gating scores (RFC 0246), which the pass
    decisions read; ``mean_score`` is the reported float.
    """

    n: int
    passed_count: int
    mean_score: float
    gating_score: Fraction
    pass_at_k: Fraction
    pass_hat_k: Fraction
    passed: bool

    def trials_block(self) -> TrialsBlock:
        """The summary's per-task ``trials`` block (the gating score is not on the wire)."""
        return TrialsBlock(
            n=self.n,
            passedCount=self.passed_count,
            meanScore=self.mean_score,
            passAtK=float(self.pass_at_k),
            passHatK=float(self.pass_hat_k),
        )


def mean_or_zero(values: Sequence[float]) -> float:
    """The reported mean of ``values`` (``math.fsum`` over their count); 0.0 for none."""
    return math.fsum(values) / len(values) if values else 0.0


class OutcomeTally:
    """One task's trial outcomes, streamed: what :func:`task_result` reads, without the outcomes.

    Holds the counts, the exact sum of the gating scores and the scores themselves (8 bytes a
    trial, so that ``meanScore`` is the same ``math.fsum`` as over the list).
    """

    def __init__(self) -> None:
        self.n = 0
        self.passed_count = 0
        self._scores = array("d")
        self._gating = Fraction(0)
        self._whole = 0  # gating scores of exactly 1 (and 0): counted, not parsed to fractions

    def add(self, outcome: TrialOutcome) -> None:
        self.n += 1
        self.passed_count += 1 if outcome.passed else 0
        self._scores.append(outcome.score)
        gating = outcome.gating_score
        if gating.__class__ is float and (gating == 1.0 or gating == 0.0):
            self._whole += int(gating)  # what recorded() gives, exactly: 1 or 0
        else:
            self._gating += recorded(gating)

    def result(self, k: int, pass_rule: PassRule, pass_score: float) -> TaskTrialResult:
        """Aggregate (RFC 0244 §B; ``mean`` reads the gating score, RFC 0246)."""
        if self.n == 0:
            raise ValueError("outcomes must hold at least one trial")
        n, c = self.n, self.passed_count
        gating = (self._gating + self._whole) / n
        if pass_rule == "all":
            passed = c == n
        elif pass_rule == "any":
            passed = c >= 1
        elif pass_rule == "mean":
            passed = at_least(gating, pass_score)
        else:
            raise ValueError(f"passRule must be all, any or mean, got {pass_rule!r}")
        return TaskTrialResult(
            n=n,
            passed_count=c,
            mean_score=mean_or_zero(self._scores),
            gating_score=gating,
            pass_at_k=pass_at_k(n, c, k),
            pass_hat_k=pass_hat_k(n, c, k),
            passed=passed,
        )


def task_result(
    outcomes: Sequence[TrialOutcome], k: int, pass_rule: PassRule, pass_score: float
) -> TaskTrialResult:
    """Aggregate one task's trials (RFC 0244 §B; ``mean`` reads the gating score, RFC 0246).

    ``passed``: ``all`` ⇔ every trial passed; ``any`` ⇔ at least one did; ``mean`` ⇔ the mean
    gating score is at least ``pass_score``, compared exactly (a tie passes).
    """
    tally = OutcomeTally()
    for outcome in outcomes:
        tally.add(outcome)
    return tally.result(k, pass_rule, pass_score)


def clustered_stderr(task_mean_scores: Sequence[float]) -> float | None:
    """Standard error of the aggregate score clustered by task (Miller 2024, RFC 0244 §B).

    The sample standard deviation (n − 1 denominator) of the per-task ``meanScore`` values over
    √(taskCount). ``None`` below two tasks, where the summary omits ``scoreStderr``.
    """
    count = len(task_mean_scores)
    if count < 2:
        return None
    return statistics.stdev(task_mean_scores) / math.sqrt(count)


def trial_stats(results: Sequence[TaskTrialResult], k: int) -> TrialStats:
    """The suite's ``trialStats`` (RFC 0244 §B): mean pass@k and pass^k, clustered stderr.

    The means are taken exactly over the rationals and rounded to float once.
    """
    if not results:
        raise ValueError("results must hold at least one task")
    count = len(results)
    return TrialStats(
        k=k,
        passAtK=float(sum((result.pass_at_k for result in results), Fraction(0)) / count),
        passHatK=float(sum((result.pass_hat_k for result in results), Fraction(0)) / count),
        scoreStderr=clustered_stderr([result.mean_score for result in results]),
    )
