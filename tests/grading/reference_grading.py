"""The full-view grading path as it was before the fold (main at 402dd97), kept verbatim as the
oracle that :mod:`wopeval.grading.fold` must agree with: every view of the run is collected
first, then each task is graded from its list of views."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

from wopeval.grading.detail import (
    ERROR_KINDS,
    RunDetail,
    TaskDetail,
    TrialCell,
    TrialStatus,
    usage_of,
)
from wopeval.grading.exact import at_least, exact_mean, exceeds
from wopeval.grading.reasons import Verdict, explain
from wopeval.grading.stats import TaskTrialResult, TrialOutcome, task_result, trial_stats
from wopeval.grading.summary import GradingOptions, pass_score_of
from wopeval.grading.trial import LABEL_SKIPPED, grade_trial, recorded_outcome, trajectory_of
from wopeval.grading.views import (
    TrialView,
    _apply,
    _as,
    _has_key,
    _open,
    _Positional,
)
from wopeval.suite.models import AgentEvalSuite, Task
from wopeval.wire.events import (
    PROVIDER_USAGE,
    EvalScored,
    InvocationStarted,
    ProviderUsage,
    RunEvent,
    TrialFailed,
)
from wopeval.wire.summary import Efficiency, EvalSummary, TaskSummary
from wopeval.wire.vocab import EVAL_SCORED, INVOCATION_STARTED, TRIAL_FAILED, X_TASK_ID

MISSING = TrialOutcome(score=0.0, passed=False, gated=True)


def _collect_trials(events: Iterable[RunEvent]) -> dict[tuple[str, int], TrialView]:
    """Group a run's events by ``(taskId, trialIndex)``. Pure; order of the log is kept.

    wopeval's own logs attribute by ``causationId`` (trials interleave). A log from another
    host without wopeval's markers is read by position (RFC 0081 order): a top-level bracket
    owns every event until it closes, and belongs to the next unattributed ``eval.scored``.
    Payloads are read through their typed models (:attr:`RunEvent.typed`).
    """
    views: dict[tuple[str, int], TrialView] = {}
    by_root: dict[str, TrialView] = {}
    positional = _Positional()
    for event in events:
        if event.type == INVOCATION_STARTED and _has_key(event, X_TASK_ID):
            started = _as(event, InvocationStarted)
            key = (started.task_id or "", started.trial_index or 0)
            view = views.get(key)
            if view is None or (view.ran and view.scored is None):  # a resume's new attempt
                view = views[key] = TrialView(task_id=key[0], trial_index=key[1])
            _open(view, event, started)
            by_root[event.eventId] = view
        elif event.type == EVAL_SCORED:
            scored = _as(event, EvalScored)
            key = (scored.taskId, scored.trialIndex or 0)
            if key not in views and positional.pending:
                view = positional.pending.pop(0)
                view.task_id, view.trial_index = key
                views[key] = view
            views.setdefault(key, TrialView(task_id=key[0], trial_index=key[1])).scored = scored
        elif event.type == TRIAL_FAILED:
            reason = _as(event, TrialFailed)
            key = (reason.taskId, reason.trialIndex)
            views.setdefault(key, TrialView(task_id=key[0], trial_index=key[1])).reason = reason
        elif event.causationId is not None and event.causationId in by_root:
            _apply(by_root[event.causationId], event)
        else:
            positional.feed(event)
    return views


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


def reference_grade_run(
    suite: AgentEvalSuite, events: Iterable[RunEvent], options: GradingOptions
) -> Graded:
    """Grade every task of a run from its log (pure); :func:`build_summary` reports it."""
    costs: list[float] = []

    def tapped() -> Iterable[RunEvent]:  # one pass: the log may be streamed in pages
        for e in events:
            if e.type == PROVIDER_USAGE and isinstance(usage := e.typed, ProviderUsage):
                costs.append(usage.costEstimateUsd or 0.0)
            yield e

    views = _collect_trials(tapped())
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


def reference_summary(
    suite: AgentEvalSuite, events: Iterable[RunEvent], options: GradingOptions
) -> EvalSummary:
    run = reference_grade_run(suite, events, options)
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


def reference_run_detail(
    suite: AgentEvalSuite, events: Iterable[RunEvent], options: GradingOptions
) -> RunDetail:
    graded = reference_grade_run(suite, events, options)
    tasks: list[TaskDetail] = []
    count = suite.trial_plan.effective_count
    for task, grade in zip(suite.tasks, graded.tasks, strict=True):
        cells = [
            _with_usage(
                _cell(task, i, graded.views.get((task.taskId, i)), options, graded.pass_score),
                graded.views.get((task.taskId, i)),
            )
            for i in range(count)
        ]
        tasks.append(
            TaskDetail(task.taskId, cells, float(grade.result.gating_score), grade.result.passed)
        )
    return RunDetail(
        tasks=tasks,
        gating_aggregate=float(graded.gating_aggregate),
        pass_score=graded.pass_score,
        aggregate_passes=at_least(graded.gating_aggregate, graded.pass_score),
        within_ceilings=graded.within_ceilings,
        skipped=graded.skipped,
    )


def _with_usage(cell: TrialCell, view: TrialView | None) -> TrialCell:
    return cell if view is None else replace(cell, usage=usage_of(view))


def _cell(
    task: Task, index: int, view: TrialView | None, options: GradingOptions, pass_score: float
) -> TrialCell:
    if view is None or (not view.ran and view.scored is None):
        return TrialCell(index, "missing", None, None)
    scored = view.scored
    passed = scored is not None and scored.passed
    if passed and not view.failed_closed:
        return TrialCell(index, "pass", scored.score if scored else None, None)
    reason = view.reason
    if reason is None:  # an imported or older log: explain it now, from the same pure function
        trajectory = trajectory_of(task, view, options.target_agent_id)
        verdict = Verdict(
            passed=False,
            score=scored.score if scored is not None else 0.0,
            label=scored.scoreLabel if scored is not None else None,
            trajectory_matched=trajectory.matched if trajectory is not None else None,
            pass_score=pass_score,
        )
        reason = explain(task, view, verdict, target_agent_id=options.target_agent_id)
    return TrialCell(index, _status(view, reason), scored.score if scored else None, reason)


def _status(view: TrialView, reason: TrialFailed | None) -> TrialStatus:
    if reason is not None and reason.kind == "skipped-budget":
        return "skipped"
    if view.failed_closed or view.user_end == "miss":
        return "fail-closed"
    if reason is not None and reason.kind in ERROR_KINDS:
        return "error"
    return "fail"
