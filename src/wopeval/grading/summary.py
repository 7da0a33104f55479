"""Build the ``EvalSummary`` from the suite and the event log alone (invariant 1).

Live runs, re-grades of stored runs and imported traces all go through :func:`build_summary`.
Per-trial ``score``/``passed`` come from the recorded ``eval.scored`` facts when present,
else from :func:`wopeval.grading.trial.grade_trial` (deterministic kinds only).

Aggregation (RFC 0081 §C, RFC 0244 §B with the RFC 0246 correction):

* task ``score`` = ``meanScore``; task ``passed`` per ``passRule``
  (``mean`` reads the gating score);
* ``aggregateScore`` = mean of task scores; the suite ``passed`` reads the *gating* aggregate
  (mean of task gating scores) against ``passScore``, and fails when the cost ceilings
  (``thresholds.maxCostUsd``, the host's per-suite ceiling), the p95 latency bar, or a skipped
  trial says so;
* a planned trial missing from the log counts as failed, score 0.

Every decision against a threshold (``passScore``, the cost ceilings) is exact
(:mod:`wopeval.grading.exact`); the reported numbers stay floats. The log is folded one closed
trial at a time (:mod:`wopeval.grading.fold`): memory holds the open trials, not the run.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction

from wopeval.grading.exact import ExactTotal, at_least, exact_mean
from wopeval.grading.fold import MISSING, RunFold, TaskFold, TrialHook
from wopeval.grading.log_event import LogEvent
from wopeval.grading.stats import TaskTrialResult, mean_or_zero, trial_stats
from wopeval.suite.models import AgentEvalSuite, PassRule
from wopeval.wire.summary import EvalSummary, TaskSummary, UserSide

__all__ = [
    "MISSING",
    "Graded",
    "GradingOptions",
    "build_summary",
    "grade_run",
    "graded_of",
    "pass_score_of",
    "summary_of",
]

DEFAULT_PASS_SCORE = 1.0


@dataclass(frozen=True)
class GradingOptions:
    """What grading needs beyond the suite and the log; stored with the run."""

    target_agent_id: str
    host_max_cost_usd: float | None = None
    default_pass_score: float = DEFAULT_PASS_SCORE


def pass_score_of(suite: AgentEvalSuite, options: GradingOptions) -> float:
    thresholds = suite.thresholds
    if thresholds is not None and thresholds.passScore is not None:
        return thresholds.passScore
    return options.default_pass_score


@dataclass(frozen=True)
class _TaskGrade:
    summary: TaskSummary
    result: TaskTrialResult
    skipped: bool


@dataclass(frozen=True)
class Graded:
    """Everything the summary is computed from, for views that explain it (grading.detail)."""

    tasks: list[_TaskGrade]
    pass_score: float
    gating_aggregate: Fraction
    costs: Sequence[float]
    within_ceilings: bool
    user_side: UserSide | None = None

    @property
    def skipped(self) -> bool:
        return any(g.skipped for g in self.tasks)


def grade_run(
    suite: AgentEvalSuite,
    events: Iterable[LogEvent],
    options: GradingOptions,
    *,
    on_trial: TrialHook | None = None,
) -> Graded:
    """Grade every task of a run from its log (pure); :func:`build_summary` reports it.

    One pass that folds each trial as it closes (:mod:`wopeval.grading.fold`), holding only the
    open trials. A log that the fold cannot read that way (:attr:`TrialCollector.anomaly`) is
    read again keeping every view, so the result never depends on the path. That second read
    needs a log that can be iterated again: a one-shot iterator is read once, keeping every
    view. ``on_trial`` sees each planned trial's final view (again, on a second read).
    """
    pass_score = pass_score_of(suite, options)
    target = options.target_agent_id
    one_shot = isinstance(events, Iterator)
    fold = RunFold(suite, target, pass_score, on_trial=on_trial, closing=not one_shot)
    fold.feed(events)
    if fold.anomaly is not None:
        fold = RunFold(suite, target, pass_score, on_trial=on_trial, closing=False)
        fold.feed(events)
    return graded_of(suite, options, fold)


def graded_of(suite: AgentEvalSuite, options: GradingOptions, fold: RunFold) -> Graded:
    """What a closed fold of the whole log grades to."""
    pass_score = pass_score_of(suite, options)
    plan = suite.trial_plan
    graded = [_task_grade(suite, f, plan.effective_k, plan.effective_pass_rule) for f in fold.tasks]
    return Graded(
        tasks=graded,
        pass_score=pass_score,
        gating_aggregate=exact_mean([g.result.gating_score for g in graded]),
        costs=fold.costs,
        within_ceilings=_within_ceilings(suite, options, fold.cost_total, graded),
        user_side=user_side(suite, fold),
    )


def build_summary(
    suite: AgentEvalSuite, events: Iterable[LogEvent], options: GradingOptions
) -> EvalSummary:
    """The run's summary from its whole log (pure)."""
    return summary_of(suite, grade_run(suite, events, options))


def summary_of(suite: AgentEvalSuite, run: Graded) -> EvalSummary:
    """The ``EvalSummary`` reporting a graded run."""
    graded = run.tasks
    results = [g.result for g in graded]
    aggregate = mean_or_zero([r.mean_score for r in results])
    total_cost = math.fsum(run.costs)
    passed = at_least(run.gating_aggregate, run.pass_score) and not run.skipped
    passed = passed and run.within_ceilings
    plan = suite.trials
    return EvalSummary(
        suiteId=suite.suiteId,
        suiteVersion=suite.version,
        aggregateScore=aggregate,
        passed=passed,
        taskCount=len(graded),
        passedCount=sum(1 for r in results if r.passed),
        totalCostUsd=total_cost,
        tasks=[g.summary for g in graded],
        trialStats=trial_stats(results, plan.effective_k) if plan is not None else None,
        user_side=run.user_side,
    )


def user_side(suite: AgentEvalSuite, fold: RunFold) -> UserSide | None:
    """``x-wopeval-userSide``, for a suite with a simulated user: trials failed on the user
    side, counted apart, and the per-trial pass rate with and without them."""
    if all(task.x_wopeval_user is None for task in suite.tasks):
        return None
    trials = sum(f.tally.n for f in fold.tasks)
    passed = sum(f.tally.passed_count for f in fold.tasks)
    misses = sum(f.user_misses for f in fold.tasks)
    errors = sum(f.user_errors for f in fold.tasks)
    agent_side = trials - misses - errors
    return UserSide(
        trials=trials,
        passedTrials=passed,
        userMiss=misses,
        userError=errors,
        passRate=passed / trials if trials else 0.0,
        passRateExcludingUserSide=passed / agent_side if agent_side else None,
    )


def _within_ceilings(
    suite: AgentEvalSuite,
    options: GradingOptions,
    cost_total: ExactTotal,
    graded: Sequence[_TaskGrade],
) -> bool:
    thresholds = suite.thresholds
    ceilings = [options.host_max_cost_usd]
    if thresholds is not None:
        ceilings.append(thresholds.maxCostUsd)
    if any(c is not None and cost_total.exceeds(c) for c in ceilings):
        return False
    if thresholds is not None and thresholds.maxP95LatencyMs is not None:
        latencies = [g.summary.latencyMs for g in graded if g.summary.latencyMs is not None]
        if latencies and p95(latencies) > thresholds.maxP95LatencyMs:
            return False
    return True


def p95(values: Sequence[int]) -> float:
    """Nearest-rank 95th percentile of per-task latencies."""
    ordered = sorted(values)
    rank = max(1, math.ceil(0.95 * len(ordered)))
    return float(ordered[rank - 1])


def _task_grade(suite: AgentEvalSuite, fold: TaskFold, k: int, rule: PassRule) -> _TaskGrade:
    task = fold.task
    result = fold.tally.result(k, rule, fold.pass_score)
    fixtured = (task.fixtures is not None and task.fixtures.fixtured) or task.world is not None
    summary = TaskSummary(
        taskId=task.taskId,
        score=result.mean_score,
        passed=result.passed,
        costUsd=fold.cost_usd,
        latencyMs=fold.latency_ms,
        trajectory=fold.trajectory,
        trials=result.trials_block() if suite.trials is not None else None,
        efficiency=fold.efficiency(),
        fixtureMissCount=fold.misses if fixtured or fold.misses else None,
        final_state=fold.final_state(),
    )
    return _TaskGrade(summary=summary, result=result, skipped=fold.skipped)
