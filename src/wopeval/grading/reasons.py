"""Why a trial did not pass (pure): every reason, most decisive first, and the one wording of it.

:func:`explain` turns a trial's view and grade into a :class:`~wopeval.wire.events.TrialFailed`
payload listing each reason that holds, in this order:

1. each forbidden tool called (``forbidden tool X``): whatever else happened, calling it fails;
2. the fixture miss that failed the trial closed: the missed tool, and which ``toolResponses``
   entries were still unconsumed at the moment of that call; then the end of a conversation
   with a scripted user on the agent's side: the message its script did not cover
   (``user-miss``) or ``max-turns`` (:mod:`wopeval.grading.user_reasons`);
3. the agent's failure: error (exception, message, traceback), timeout, cancellation, non-JSON
   output; or the judge's or grader's error;
4. the rest of a failed trajectory (:mod:`wopeval.grading.trajectory_diff`): a call whose tool
   matched but whose arguments did not (the differing key paths, expected against observed),
   the calls missing or unexpected, or the order; an expected call pinned to a turn
   (``x-wopeval-pin``) not made in it (:mod:`wopeval.grading.turn_pins`);
5. the final world state (``x-wopeval-finalState``): the first JSON Pointer where it differs,
   expected against got (the rest in ``details``), or that no state was recorded;
6. the output: a mismatch (expected against got) or a judge score below ``passScore``, also
   when the trajectory failed too.

A budget skip or a trial never run has that one reason. The payload's ``kind`` classifies the
trial (it decides its status in every view) in this precedence: budget skip, not run, fixture
miss, agent failure, judge or grader error, trajectory, final state, output — so a forbidden
call that also missed a fixture is a trial failed closed, its forbidden call listed first. Its
``message`` and ``details`` are that reason's; ``details`` also carry the whole trajectory diff
when there is one.

:func:`reason_texts` is the one wording every output shows (CLI, ``--json``, Markdown, JUnit,
the pytest plugin, the viewer, the HTML report). The engine records the payload as
``wopeval.trial-failed`` after the trial's ``eval.scored``; a re-grade or an imported log gets
the same answer from the same function. Its content stays in the tenant's log and views: no
``eval.*`` event or summary carries any of it (RFC 0244 §H).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wopeval.grading.argdiff import ArgDifference, arg_differences, shown
from wopeval.grading.output import match_output
from wopeval.grading.trajectory import ObservedCall, grade_trajectory, observed_trajectory
from wopeval.grading.trajectory_diff import (
    MAX_LISTED,
    TrajectoryDiff,
    TrajectoryReasons,
    trajectory_diff,
    trajectory_reasons,
)
from wopeval.grading.turn_pins import pin_reasons
from wopeval.grading.user_reasons import user_reasons
from wopeval.grading.views import TrialView
from wopeval.grading.world_state import final_state_matched, state_differences
from wopeval.suite.models import Task, ToolResponse
from wopeval.wire.events import FailureKind, FailureReason, TrialFailed
from wopeval.wire.vocab import ERROR_LABELS, FORK_DIVERGED

__all__ = [
    "REASON_SEPARATOR",
    "TrajectoryDiff",
    "Verdict",
    "explain",
    "reason_line",
    "reason_texts",
    "trajectory_diff",
]

REASON_SEPARATOR = " · "
_NO_REASON = {"missing": "planned but not in this log"}


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
    """Why a trial did not pass (every reason, most decisive first), or None when it passed."""
    if verdict.passed:
        return None
    single = _single(view, verdict)
    if single is not None:
        return _payload(task, view, [single], single, {})
    trajectory = _trajectory(task, view, verdict, target_agent_id)
    forbidden = trajectory.forbidden if trajectory is not None else []
    failure = _failure(task, view, verdict, grader_error)
    rest = trajectory.others if trajectory is not None else []
    pins = _pins(task, view, verdict, target_agent_id)
    if pins and _matched_but_pins(task, view, target_agent_id):
        rest = []  # §A itself matched: its diff has no other reason to give
    rest = [*rest, *pins]
    output = _output(task, view, verdict) if _output_graded(task, view, failure) else []
    miss = [_fixture_miss(task, view)] if view.failed_closed else []
    if miss and _diverged(view):  # the miss is the divergence: one reason, in its words
        miss, failure = [_diverged_miss(view)], []
    user = user_reasons(task, view)
    failure = [f for f in failure if not user or f.kind != "agent-error"]  # the user end's raise
    state = _final_state(task, view) if not failure and not miss and not user else []
    ranked = [
        *miss,
        *user,
        *failure,
        *forbidden,
        *rest,
        *state,
        *output,
    ]  # the precedence of ``kind``
    if not ranked:
        ranked = [_fallback(task, view, verdict)]
    extra = {"trajectory": trajectory.diff.to_json()} if trajectory is not None else {}
    return _payload(task, view, [*forbidden, *[r for r in ranked if r not in forbidden]],
                    ranked[0], extra)  # fmt: skip


def reason_texts(reason: TrialFailed | None, status: str = "fail") -> list[str]:
    """Why a trial did not pass, one text per reason, most decisive first: the wording every
    output shows. Without a recorded reason, what the trial's ``status`` says."""
    if reason is None:
        return [_NO_REASON.get(status, "no reason recorded")]
    return [item.message for item in reason.every_reason]


def reason_line(reason: TrialFailed | None, status: str = "fail") -> str:
    """:func:`reason_texts` on one line."""
    return REASON_SEPARATOR.join(reason_texts(reason, status))


def _payload(
    task: Task,
    view: TrialView,
    ordered: list[FailureReason],
    primary: FailureReason,
    extra: dict[str, Any],
) -> TrialFailed:
    return TrialFailed(
        taskId=task.taskId,
        trialIndex=view.trial_index,
        kind=primary.kind,
        message=primary.message,
        details={**primary.details, **extra},
        reasons=ordered if len(ordered) > 1 else None,
    )


def _reason(
    kind: FailureKind, message: str, details: dict[str, Any] | None = None
) -> FailureReason:
    return FailureReason(kind=kind, message=message[:300], details=details or {})


def _single(view: TrialView, verdict: Verdict) -> FailureReason | None:
    if verdict.label == "skipped-budget":
        return _reason("skipped-budget", "not run: a cost ceiling was exceeded before it started")
    if not view.ran and view.scored is None:
        return _reason("not-run", "planned but never run (no events recorded for it)")
    return None


def _trajectory(
    task: Task, view: TrialView, verdict: Verdict, target: str
) -> TrajectoryReasons | None:
    expectation = task.expected.trajectory
    if expectation is None or verdict.trajectory_matched is not False:
        return None
    return trajectory_reasons(trajectory_diff(expectation, view.calls, target))


def _pins(task: Task, view: TrialView, verdict: Verdict, target: str) -> list[FailureReason]:
    """The expected calls pinned to a turn (``x-wopeval-pin``) not made in it."""
    expectation = task.expected.trajectory
    if expectation is None or verdict.trajectory_matched is not False:
        return []
    return pin_reasons(expectation, observed_trajectory(expectation, view.calls, target))


def _matched_but_pins(task: Task, view: TrialView, target: str) -> bool:
    expectation = task.expected.trajectory
    assert expectation is not None  # _pins found some
    return grade_trajectory(expectation, view.calls, target, pins=False).matched


def _failure(
    task: Task, view: TrialView, verdict: Verdict, grader_error: str | None
) -> list[FailureReason]:
    """The agent's failure (its invocation's label), else the judge's or grader's."""
    failure = view.failure
    if view.error_label in ERROR_LABELS:
        details: dict[str, Any] = failure.model_dump(exclude_none=True) if failure else {}
        text = failure.message if failure is not None else view.error_label
        raised = view.error_label in ("agent-error", "infrastructure", "model-miss")
        if raised and failure is not None and failure.exceptionType:
            text = f"{failure.exceptionType}: {failure.message}"
        kind: FailureKind = view.error_label  # type: ignore[assignment]
        return [_reason(kind, f"{view.error_label}: {text}", details)]
    if grader_error is not None or verdict.label in ("grader-error", "unscored"):
        kind = "judge-error" if task.expected.kind == "rubric" else "grader-error"
        kind = "infrastructure" if verdict.label == "infrastructure" else kind
        return [_reason(kind, f"{kind}: {grader_error or 'no score was recorded'}")]
    return []


def _output_graded(task: Task, view: TrialView, failure: list[FailureReason]) -> bool:
    """The output was graded on its own: the agent finished and a rubric score is the judge's
    (a trial failed closed is scored 0 whatever the judge would say)."""
    if failure or task.expected.kind == "trajectory" or view.user_end in ("miss", "max-turns"):
        return False
    return not (task.expected.kind == "rubric" and view.failed_closed)


def _output(task: Task, view: TrialView, verdict: Verdict) -> list[FailureReason]:
    if task.expected.kind == "rubric":
        if verdict.score >= verdict.pass_score:
            return []
        return [_below(verdict)]
    match = task.expected.match
    if match is None:
        return []
    if not view.has_output:
        return [_reason("output-mismatch", "the agent gave no output", {"expected": match.value})]
    try:
        if match_output(match, view.output):
            return []
    except (TypeError, ValueError):  # an output the strategy cannot read does not match
        pass
    return [_mismatch(task, view)]


def _final_state(task: Task, view: TrialView) -> list[FailureReason]:
    """The first pointer where the final world state differs from the asserted one."""
    final = task.expected.final_state
    if final is None or final_state_matched(task, view):
        return []
    if not view.has_world_state:
        message = "final state: the trial recorded no world state to compare"
        return [_reason("final-state", message, {"match": final.match})]
    differences = state_differences(final, view.world_state)
    first = differences[0].text() if differences else "(the whole state) differs"
    more = f" (and {len(differences) - 1} more)" if len(differences) > 1 else ""
    details = {"match": final.match, "differences": [d.to_json() for d in differences]}
    return [_reason("final-state", f"final state ({final.match}) differs at {first}{more}",
                    details)]  # fmt: skip


def _fallback(task: Task, view: TrialView, verdict: Verdict) -> FailureReason:
    """The trial failed and nothing above says why (a recorded score the log does not
    explain): its expectation's own reason, as a wrong answer."""
    if task.expected.kind == "rubric":
        return _below(verdict)
    match = task.expected.match
    if match is None:
        return _reason("grader-error", "no expectation to grade against")
    if not view.has_output:
        return _reason("output-mismatch", "the agent gave no output", {"expected": match.value})
    return _mismatch(task, view)


def _below(verdict: Verdict) -> FailureReason:
    return _reason(
        "below-pass-score",
        f"judge score {verdict.score:.3g} is below passScore {verdict.pass_score:.3g}",
        {"score": verdict.score, "passScore": verdict.pass_score},
    )


def _mismatch(task: Task, view: TrialView) -> FailureReason:
    match = task.expected.match
    assert match is not None  # only golden tasks get here
    return _reason(
        "output-mismatch",
        f"output does not match ({match.strategy}): expected {shown(match.value)}, "
        f"got {shown(view.output)}",
        {"strategy": match.strategy, "expected": match.value, "output": view.output},
    )


def _diverged(view: TrialView) -> bool:
    """A forked trial that left its recorded prefix (``wopeval fork``): its misses are that."""
    return view.failure is not None and view.failure.exceptionType == FORK_DIVERGED


def _diverged_miss(view: TrialView) -> FailureReason:
    failure = view.failure
    assert failure is not None  # _diverged
    details = {"missedTools": view.missed_tools, "diverged": failure.message}
    return _reason("fixture-miss", f"fixture miss (forked prefix): {failure.message}", details)


def _fixture_miss(task: Task, view: TrialView) -> FailureReason:
    """Each missed tool, with the ``toolResponses`` entries unconsumed at the moment of its
    call (``fixturesLeft``: the entries left at the end of the trial)."""
    entries = (task.fixtures.toolResponses or []) if task.fixtures else []
    missed = view.missed_tools
    served_at: list[int] = view.miss_served
    positions: list[int | None] = view.miss_calls
    if len(served_at) != len(missed) or len(positions) != len(missed):  # not read from a log
        served_at, positions = [len(view.fixture_indexes)] * len(missed), [None] * len(missed)
    misses = [
        {"tool": tool, "left": _left_then(entries, set(view.fixture_indexes[:count]), tool,
                                          view.calls[at] if at is not None else None)}
        for tool, count, at in zip(missed, served_at, positions, strict=True)
    ]  # fmt: skip
    if task.world is not None:
        calls = [view.calls[at] if at is not None else None for at in positions]
        for miss, call in zip(misses, calls, strict=True):
            miss["world"] = _world_clause(task, str(miss["tool"]), call)
    clauses = [_miss_clause(miss, bool(entries)) for miss in misses[:3]]
    if len(misses) > 3:
        clauses.append(f"and {len(misses) - 3} more misses")
    if not clauses:
        clauses.append("no unconsumed fixture matched a call")
    served = set(view.fixture_indexes)
    left_at_end = [{"index": i, "tool": e.tool} for i, e in enumerate(entries) if i not in served]
    details = {
        "missedTools": view.missed_tools,
        "fixturesServed": view.fixture_indexes,
        "fixturesLeft": left_at_end,
        "misses": misses,
    }
    return _reason("fixture-miss", "fixture miss (onMiss: fail): " + "; ".join(clauses), details)


def _left_then(
    entries: list[ToolResponse], served: set[int], tool: str, call: ObservedCall | None
) -> list[dict[str, Any]]:
    """The entries not served before the missed ``call``; for one of its tool, where the call's
    arguments differ from the entry's (under its ``argsMatch``)."""
    left = []
    for index, entry in enumerate(entries):
        if index in served:
            continue
        row: dict[str, Any] = {"index": index, "tool": entry.tool}
        if call is not None and entry.tool == tool:
            differences = arg_differences(entry.args_match, entry.args, call.inputs)
            if differences:
                row["differences"] = [d.to_json() for d in differences]
        left.append(row)
    return left


def _world_clause(task: Task, tool: str, call: ObservedCall | None) -> str:
    """Why the world served no call to ``tool``: it defines no such tool, or no rule's ``when``
    matched the arguments (shown)."""
    assert task.world is not None
    rules = task.world.tools.get(tool)
    if not rules:
        return f"the world defines no tool {tool}"
    args = f" {shown(call.inputs)}" if call is not None else ""
    return f"no world rule of {tool} matched its arguments{args}"


def _miss_clause(miss: dict[str, Any], any_entries: bool) -> str:
    left: list[dict[str, Any]] = miss["left"]
    if "world" in miss and not left:
        return f"{miss['world']} (fail closed)"
    text = f"no unconsumed fixture matched the call to {miss['tool']}"
    if "world" in miss:
        text = f"{miss['world']}, and {text}"
    if not any_entries:
        return text + " (the task has no toolResponses)"
    if not left:
        return text + " (every entry was consumed by then)"
    names = ", ".join(
        f"#{e['index']} {e['tool']}" + _differing(e.get("differences", []))
        for e in left[:MAX_LISTED]
    )
    more = f" and {len(left) - MAX_LISTED} more" if len(left) > MAX_LISTED else ""
    return f"{text} (unconsumed then: {names}{more})"


def _differing(rows: list[dict[str, Any]]) -> str:
    """`` (key: expected …, got …)`` for the first differences of an entry, else nothing."""
    if not rows:
        return ""
    return " (" + "; ".join(ArgDifference.of_json(row).text() for row in rows[:2]) + ")"
