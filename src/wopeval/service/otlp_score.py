"""An imported trial's ``eval.scored`` (+ ``wopeval.trial-failed``), as the engine records
them, or *unscored* with the reason when the trace cannot grade the task (pure).

A trace fails closed where it says too little: a task is never passed on what a trace leaves
out. :func:`ungradable` names the cases: tool calls the model issued that the trace does not
name (content capture off, no tool spans), a target agent the trace does not identify,
arguments it did not capture or recorded in a form that cannot be compared.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from wopeval.grading.reasons import Verdict, explain
from wopeval.grading.summary import GradingOptions, pass_score_of
from wopeval.grading.trial import LABEL_UNSCORED, grade_trial
from wopeval.grading.views import collect_trials
from wopeval.service.otlp_read import OtlpSpan
from wopeval.suite.models import AgentEvalSuite, Task
from wopeval.wire.events import EvalScored, Payload, RunEvent, TrialFailed

__all__ = ["Gaps", "compares_args", "score_trial", "ungradable"]


class _Log(Protocol):
    events: list[RunEvent]

    def add(self, payload: Payload, ns: int, cause: str | None = None) -> str: ...


@dataclass
class Gaps:
    """What a trial's trace leaves out (filled while its events are made)."""

    missing_args: list[str] = field(default_factory=list)  # tools whose arguments are absent
    uncomparable_args: list[str] = field(default_factory=list)  # bare values, no schema
    blind_models: int = 0  # model spans that issued tool calls the trace does not name
    unordered_calls: int = 0  # tool spans run in parallel, in an order the trace does not say
    unidentified: list[str] = field(default_factory=list)  # agents none of which is the target


def compares_args(task: Task) -> bool:
    trajectory = task.expected.trajectory
    return trajectory is not None and any(c.args_match != "ignore" for c in trajectory.calls)


def _names(tools: Iterable[str]) -> str:
    return ", ".join(sorted(set(tools)))


def ungradable(task: Task, gaps: Gaps) -> tuple[str, dict[str, Any]] | None:
    """Why the trace cannot grade ``task`` (a message and content-free details), or None."""
    trajectory = task.expected.trajectory
    if trajectory is None:
        return None
    if gaps.blind_models:
        return (
            f"unscored: {gaps.blind_models} model span(s) report tool calls the trace does not "
            "name (no tool span, no output messages: content capture is off); the path is "
            "unknown, and this task grades it",
            {"blindModelSpans": gaps.blind_models},
        )
    if gaps.unidentified and not trajectory.include_delegates:
        return (
            "unscored: the root agent span names no agent and holds several "
            f"({_names(gaps.unidentified)}); which is the target is not said, and this task "
            "grades the target's calls (includeDelegates: true grades them all)",
            {"agents": sorted(set(gaps.unidentified))},
        )
    ordered = trajectory.match in ("exact", "in-order") and len(trajectory.calls) > 1
    if gaps.unordered_calls and ordered:
        return (
            f"unscored: {gaps.unordered_calls} tool spans ran in parallel after a model span "
            "that names none of its calls (content capture is off), so the order the model "
            f"issued them in is not said, and this task's {trajectory.match} path grades it",
            {"unorderedCalls": gaps.unordered_calls},
        )
    if not compares_args(task):
        return None
    if gaps.missing_args:
        return (
            f"unscored: the trace carries no arguments for {_names(gaps.missing_args)}"
            " (wopeval's own export never does; an instrumentation only with content capture"
            " on), and this task compares arguments (argsMatch is not ignore); it is never "
            "passed on tool names alone",
            {"missingArguments": sorted(set(gaps.missing_args))},
        )
    if gaps.uncomparable_args:
        return (
            f"unscored: the trace records a bare value as the input of "
            f"{_names(gaps.uncomparable_args)} and no tool schema in it maps the value to an "
            "argument; this task compares arguments (argsMatch is not ignore)",
            {"uncomparableArguments": sorted(set(gaps.uncomparable_args))},
        )
    return None


def score_trial(
    log: _Log,
    suite: AgentEvalSuite,
    key: tuple[str, int],
    spans: Sequence[OtlpSpan],
    gaps: Gaps,
    target: str,
) -> None:
    """Score one trial on its own events, ``log.events`` (the whole log so far made an import
    quadratic: 10,000 traces took more than 15 minutes)."""
    task = suite.task(key[0])
    view = collect_trials(log.events)[key]
    end = max(s.end_ns for s in spans)
    pass_score = pass_score_of(suite, GradingOptions(target_agent_id=target))
    why = ungradable(task, gaps)
    if why is not None:
        scored = EvalScored(
            taskId=task.taskId,
            score=0.0,
            passed=False,
            trialIndex=key[1],
            scoreLabel=LABEL_UNSCORED,
            evaluatorType="deterministic",
        )
        log.add(scored, end, view.root_event_id)
        message, details = why
        failed = TrialFailed(
            taskId=task.taskId,
            trialIndex=key[1],
            kind="grader-error",
            message=message[:300],
            details=details,
        )
        log.add(failed, end, view.root_event_id)
        return
    grade = grade_trial(task, view, target_agent_id=target, pass_score=pass_score)
    scored = EvalScored(
        taskId=task.taskId,
        score=grade.score,
        passed=grade.passed,
        latencyMs=view.latency_ms,
        trialIndex=key[1],
        scoreLabel=grade.label,
        evaluatorType=grade.evaluator_type,
    )
    log.add(scored, end, view.root_event_id)
    matched = grade.trajectory.matched if grade.trajectory is not None else None
    verdict = Verdict(grade.passed, grade.score, grade.label, matched, pass_score)
    reason = explain(task, view, verdict, target_agent_id=target)
    if reason is not None:
        log.add(reason, end, view.root_event_id)
