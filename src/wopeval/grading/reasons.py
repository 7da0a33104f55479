"""Why a trial did not pass (pure): one short message and the details behind it.

:func:`trajectory_diff` marks every expected call matched or missing and every observed call
matched, unexpected or forbidden, from the same maximum matching as ``matchedCount``.
:func:`explain` turns a trial's view and grade into a :class:`~wopeval.wire.events.TrialFailed`
payload, in this order of precedence: budget skip, not run, fixture miss (the missed tool and
the fixture entries left unconsumed), agent error (exception, message, traceback), timeout,
cancellation, non-JSON output, judge or grader error, trajectory (missing, unexpected and
forbidden calls), output mismatch, score below ``passScore``.

The engine records the result as ``wopeval.trial-failed`` after the trial's ``eval.scored``; a
re-grade or an imported log gets the same answer from the same function. Its content stays in
the tenant's log and views: no ``eval.*`` event or summary carries any of it (RFC 0244 §H).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from wopeval.grading.matching import build
from wopeval.grading.patterns import compiled
from wopeval.grading.trajectory import (
    ObservedCall,
    class_matching,
    observed_trajectory,
)
from wopeval.grading.views import TrialView
from wopeval.suite.models import Task, TrajectoryExpectation
from wopeval.wire.events import FailureKind, TrialFailed
from wopeval.wire.vocab import ERROR_LABELS

ExpectedStatus = Literal["matched", "missing"]
ObservedStatus = Literal["matched", "unexpected", "forbidden"]
_MAX_LISTED = 5


@dataclass(frozen=True)
class TrajectoryDiff:
    """Expected against observed calls, each marked from the maximum matching."""

    mode: str
    expected: list[dict[str, Any]]  # {tool, args?, argsMatch, status}
    observed: list[dict[str, Any]]  # {tool, inputs, agentId, status}

    @property
    def missing(self) -> list[dict[str, Any]]:
        return [call for call in self.expected if call["status"] == "missing"]

    @property
    def unexpected(self) -> list[dict[str, Any]]:
        return [call for call in self.observed if call["status"] == "unexpected"]

    @property
    def forbidden(self) -> list[dict[str, Any]]:
        return [call for call in self.observed if call["status"] == "forbidden"]

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "expected": self.expected, "observed": self.observed}


def trajectory_diff(
    expectation: TrajectoryExpectation, calls: Sequence[ObservedCall], target_agent_id: str
) -> TrajectoryDiff:
    """Mark each call; a forbidden tool's call is ``forbidden`` even when also expected."""
    observed = observed_trajectory(expectation, calls, target_agent_id)
    graph = build(compiled(expectation), observed)  # the index its trials' grading built
    _, used_left, used_right = class_matching(graph)
    expected_rows: list[dict[str, Any]] = []
    for want, slot in zip(expectation.calls, graph.left_of, strict=True):
        status: ExpectedStatus = "matched" if used_left[slot] > 0 else "missing"
        used_left[slot] -= 1 if used_left[slot] > 0 else 0
        row: dict[str, Any] = {"tool": want.tool, "argsMatch": want.args_match, "status": status}
        if want.args_match != "ignore":
            row["args"] = want.args
        expected_rows.append(row)
    forbidden = expectation.forbidden_tools
    observed_rows: list[dict[str, Any]] = []
    for call, slot in zip(observed, graph.right_of, strict=True):
        taken = used_right[slot] > 0
        used_right[slot] -= 1 if taken else 0
        mark: ObservedStatus = (
            "forbidden" if call.tool in forbidden else "matched" if taken else "unexpected"
        )
        observed_rows.append(
            {"tool": call.tool, "inputs": call.inputs, "agentId": call.agent_id, "status": mark}
        )
    return TrajectoryDiff(expectation.match, expected_rows, observed_rows)


def _listed(rows: Sequence[dict[str, Any]]) -> str:
    names = [str(row["tool"]) for row in rows[:_MAX_LISTED]]
    more = f" and {len(rows) - _MAX_LISTED} more" if len(rows) > _MAX_LISTED else ""
    return ", ".join(names) + more


def _trajectory_message(diff: TrajectoryDiff) -> str:
    parts = []
    if diff.forbidden:
        parts.append(f"called forbidden {_listed(diff.forbidden)}")
    if diff.missing:
        parts.append(f"missing {_listed(diff.missing)}")
    if diff.unexpected and diff.mode in ("exact", "subset"):
        parts.append(f"unexpected {_listed(diff.unexpected)}")
    if not parts:
        parts.append("calls out of the expected order" if diff.mode != "subset" else "unmatched")
    return f"trajectory ({diff.mode}): " + "; ".join(parts)


@dataclass(frozen=True)
class Verdict:
    """What grading decided about one trial, as :func:`explain` needs it."""

    passed: bool
    score: float
    label: str | None
    trajectory_matched: bool | None
    pass_score: float


def explain(
    task: Task,
    view: TrialView,
    verdict: Verdict,
    *,
    target_agent_id: str,
    grader_error: str | None = None,
) -> TrialFailed | None:
    """The reason a trial did not pass, or None when it passed."""
    if verdict.passed:
        return None
    kind, message, details = _reason(task, view, verdict, target_agent_id, grader_error)
    return TrialFailed(
        taskId=task.taskId,
        trialIndex=view.trial_index,
        kind=kind,
        message=message[:300],
        details=details,
    )


def _reason(
    task: Task,
    view: TrialView,
    verdict: Verdict,
    target: str,
    grader_error: str | None,
) -> tuple[FailureKind, str, dict[str, Any]]:
    if verdict.label == "skipped-budget":
        return "skipped-budget", "not run: a cost ceiling was exceeded before it started", {}
    if not view.ran and view.scored is None:
        return "not-run", "planned but never run (no events recorded for it)", {}
    if view.failed_closed:
        return _fixture_miss(task, view)
    failure = view.failure
    if view.error_label in ERROR_LABELS:
        details: dict[str, Any] = failure.model_dump(exclude_none=True) if failure else {}
        text = failure.message if failure is not None else view.error_label
        raised = view.error_label in ("agent-error", "infrastructure")
        if raised and failure is not None and failure.exceptionType:
            text = f"{failure.exceptionType}: {failure.message}"
        return view.error_label, f"{view.error_label}: {text}"[:300], details  # type: ignore[return-value]
    if grader_error is not None or verdict.label in ("grader-error", "unscored"):
        kind: FailureKind = "judge-error" if task.expected.kind == "rubric" else "grader-error"
        kind = "infrastructure" if verdict.label == "infrastructure" else kind
        return kind, f"{kind}: {grader_error or 'no score was recorded'}", {}
    expectation = task.expected.trajectory
    if expectation is not None and verdict.trajectory_matched is False:
        diff = trajectory_diff(expectation, view.calls, target)
        return "trajectory", _trajectory_message(diff), {"trajectory": diff.to_json()}
    if task.expected.kind == "rubric":
        return (
            "below-pass-score",
            f"judge score {verdict.score:.3g} is below passScore {verdict.pass_score:.3g}",
            {"score": verdict.score, "passScore": verdict.pass_score},
        )
    match = task.expected.match
    if match is None:
        return "grader-error", "no expectation to grade against", {}
    if not view.has_output:
        return "output-mismatch", "the agent gave no output", {"expected": match.value}
    return (
        "output-mismatch",
        f"output does not match ({match.strategy}): expected {_short(match.value)}, "
        f"got {_short(view.output)}",
        {"strategy": match.strategy, "expected": match.value, "output": view.output},
    )


def _fixture_miss(task: Task, view: TrialView) -> tuple[FailureKind, str, dict[str, Any]]:
    """The missed tools, and the ``toolResponses`` entries this trial left unconsumed."""
    entries = (task.fixtures.toolResponses or []) if task.fixtures else []
    served = set(view.fixture_indexes)
    left = [
        {"index": index, "tool": entry.tool}
        for index, entry in enumerate(entries)
        if index not in served
    ]
    missed = ", ".join(dict.fromkeys(view.missed_tools)) or "a tool"
    message = f"fixture miss (onMiss: fail): no unconsumed fixture matches {missed}"
    if left:
        message += "; left: " + ", ".join(f"#{e['index']} {e['tool']}" for e in left[:5])
    else:
        message += "; every fixture entry was already consumed"
    details = {"missedTools": view.missed_tools, "fixturesServed": view.fixture_indexes}
    return "fixture-miss", message, {**details, "fixturesLeft": left}


def _short(value: Any, limit: int = 60) -> str:
    import json

    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
