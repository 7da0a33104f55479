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
(:mod:`wopeval.grading.exact`); the reported numbers stay floats.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from wopeval.grading.exact import at_least, exact_mean, exceeds
from wopeval.grading.stats import TaskTrialResult, TrialOutcome, task_result, trial_stats
from wopeval.grading.trial import LABEL_SKIPPED, grade_trial, recorded_outcome, trajectory_of
from wopeval.grading.views import TrialView, collect_trials
from wopeval.suite.models import AgentEvalSuite, Task
from wopeval.wire.events import PROVIDER_USAGE, ProviderUsage, RunEvent
from wopeval.wire.summary import Efficiency, EvalSummary, TaskSummary

DEFAULT_PASS_SCORE = 1.0
MISSING = TrialOutcome(score=0.0, passed=False, gated=True)


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

    views: dict[tuple[str, int], TrialView]
    tasks: list[_TaskGrade]
    pass_score: float
    gating_aggregate: Fraction
    costs: list[float]
    within_ceilings: bool

    @property
    def skipped(self) -> bool:
        return any(g.skipped for g in self.tasks)


def grade_run(suite: AgentEvalSuite, events: Iterable[RunEvent], options: GradingOptions) -> Graded:
    """Grade every task of a run from its log (pure); :func:`build_summary` reports it."""
    costs: list[float] = []

    def tapped() -> Iterable[RunEvent]:  # one pass: the log may be streamed in pages
        for e in events:
            if e.type == PROVIDER_USAGE and isinstance(usage := e.typed, ProviderUsage):
                costs.append(usage.costEstimateUsd or 0.0)
            yield e

    views = collect_trials(tapped())
    pass_score = pass_score_of(suite, options)
    graded = [_grade_task(suite, task, views, options, pass_score) for task in suite.tasks]
    return Graded(
        views=views,
        tasks=graded,
        pass_score=pass_score,
        gating_aggregate=exact_mean([g.result.gating_score for g in graded]),
        costs=costs,
        within_ceilings=_within_ceilings(suite, options, costs, graded),
    )


def build_summary(
    suite: AgentEvalSuite, events: Iterable[RunEvent], options: GradingOptions
) -> EvalSummary:
    run = grade_run(suite, events, options)
    graded = run.tasks
    results = [g.result for g in graded]
    aggregate = _mean([r.mean_score for r in results])
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
    )


def _within_ceilings(
    suite: AgentEvalSuite,
    options: GradingOptions,
    costs: Sequence[float],
    graded: Sequence[_TaskGrade],
) -> bool:
    thresholds = suite.thresholds
    ceilings = [options.host_max_cost_usd]
    if thresholds is not None:
        ceilings.append(thresholds.maxCostUsd)
    if any(c is not None and exceeds(costs, c) for c in ceilings):
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


def _grade_task(
    suite: AgentEvalSuite,
    task: Task,
    views: dict[tuple[str, int], TrialView],
    options: GradingOptions,
    pass_score: float,
) -> _TaskGrade:
    plan = suite.trial_plan
    trial_views = [views.get((task.taskId, i)) for i in range(plan.effective_count)]
    outcomes = [_outcome(task, v, options, pass_score) for v in trial_views]
    result = task_result(outcomes, plan.effective_k, plan.effective_pass_rule, pass_score)
    ran = [v for v in trial_views if v is not None and v.ran]
    last = ran[-1] if ran else None
    trajectory = trajectory_of(task, last, options.target_agent_id) if last else None
    misses = sum(v.fixture_misses for v in ran)
    fixtured = task.fixtures is not None and (
        task.fixtures.toolResponses is not None or task.fixtures.onMiss is not None
    )
    latencies = [v.latency_ms for v in ran if v.latency_ms is not None]
    summary = TaskSummary(
        taskId=task.taskId,
        score=result.mean_score,
        passed=result.passed,
        costUsd=math.fsum(v.cost_usd for v in ran),
        latencyMs=round(_mean(latencies)) if latencies else None,
        trajectory=trajectory,
        trials=result.trials_block() if suite.trials is not None else None,
        efficiency=_efficiency(ran),
        fixtureMissCount=misses if fixtured or misses else None,
    )
    skipped = any(
        v is None or (v.scored is not None and v.scored.scoreLabel == LABEL_SKIPPED)
        for v in trial_views
    )
    return _TaskGrade(summary=summary, result=result, skipped=skipped)


def _outcome(
    task: Task, view: TrialView | None, options: GradingOptions, pass_score: float
) -> TrialOutcome:
    if view is None:
        return MISSING
    recorded = recorded_outcome(task, view, options.target_agent_id)
    if recorded is not None:
        return recorded
    if not view.ran:
        return MISSING
    return grade_trial(
        task, view, target_agent_id=options.target_agent_id, pass_score=pass_score
    ).outcome


def _efficiency(ran: Sequence[TrialView]) -> Efficiency | None:
    if not ran:
        return None
    return Efficiency(
        toolCallCount=_mean([len(v.calls) for v in ran]),
        modelCallCount=_mean([v.model_call_count for v in ran]),
        inputTokens=_mean([v.input_tokens for v in ran]),
        outputTokens=_mean([v.output_tokens for v in ran]),
    )


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if values else 0.0
