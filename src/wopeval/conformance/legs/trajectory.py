"""Leg ``0244.trajectory-graded`` (RFC 0244 §A) over ``conformance-eval-trajectory``.

For each task, the kit recomputes the trajectory grade from the run's own ``agent.tool-called``
events (one trial's bracket at a time) with its reference grader, and requires:

* one ``agent.tool-called`` per scripted call, same tools and agents, in order;
* the summary's ``trajectory`` block to equal the reference grade of the last trial;
* an unmatched trial not to pass, and a task all of whose trials are unmatched not to pass;
* a ``kind: "trajectory"`` trial to score exactly 1 when matched and 0 otherwise;
* every trial whose outcome the script fixes (output and path known in advance) to report it.

When a host redacts ``inputs`` (RFC 0244 UQ 6), the scripted call's arguments stand in for the
missing ones: the suite chose them, and the tool sequence was checked first.
"""

from __future__ import annotations

from typing import Any

from wopeval.conformance.attribution import Attribution, TrialRecord, attribute
from wopeval.conformance.catalog import SCRIPTED_AGENT_ID
from wopeval.conformance.formulas import agrees, exact_mean
from wopeval.conformance.legs.common import Checker, RunCapture
from wopeval.conformance.reference import ObservedCall, TrajectoryGrade, grade, json_equal
from wopeval.conformance.suites import (
    Task,
    expectation_of,
    expected_pass,
    scripted_calls,
    tasks_of,
    trial_plan,
)


def _observed(record: TrialRecord, scripted: list[ObservedCall]) -> list[ObservedCall]:
    """The trial's calls, with redacted ``inputs`` filled from the aligned scripted call."""
    calls: list[ObservedCall] = []
    for position, (call, payload) in enumerate(
        zip(record.calls, record.call_payloads, strict=True)
    ):
        aligned = scripted[position] if position < len(scripted) else None
        if "inputs" not in payload and aligned is not None and aligned.tool == call.tool:
            call = ObservedCall(call.tool, aligned.inputs, call.agent_id)
        calls.append(call)
    return calls


def _check_calls(
    ck: Checker, where: str, record: TrialRecord, scripted: list[ObservedCall]
) -> None:
    seen = [(call.tool, call.agent_id) for call in record.calls]
    want = [(call.tool, call.agent_id) for call in scripted]
    ck.check(
        seen == want,
        f"{where}: the log has {len(seen)} agent.tool-called {seen}, the script made "
        f"{len(want)} {want} (one agent.tool-called per scripted call)",
    )


def _check_block(ck: Checker, task_id: str, entry: dict[str, Any], ref: TrajectoryGrade) -> None:
    block = entry.get("trajectory")
    want = ref.to_block()
    if not ck.check(
        isinstance(block, dict), f"{task_id}: the summary entry has no trajectory block"
    ):
        return
    assert isinstance(block, dict)
    diffs = [
        f"{key} {block.get(key)!r} (reference {value!r})"
        for key, value in want.items()
        if not json_equal(block.get(key), value)
    ]
    ck.check(
        not diffs,
        f"{task_id}: trajectory block differs from the reference grade: " + "; ".join(diffs),
    )


def _check_trial(
    ck: Checker, task: Task, index: int, record: TrialRecord, ref: TrajectoryGrade
) -> None:
    task_id = task["taskId"]
    where = f"{task_id} trial {index}"
    if not ck.check(len(record.scored) == 1, f"{where}: {len(record.scored)} eval.scored, want 1"):
        return
    scored = record.scored[0]
    if not ref.matched:
        ck.check(scored.get("passed") is False, f"{where}: unmatched trajectory but passed")
    if (task.get("expected") or {}).get("kind") == "trajectory":
        want = 1 if ref.matched else 0
        ck.check(
            scored.get("score") == want,
            f"{where}: trajectory-only score "
            f"{scored.get('score')!r}, want exactly {want} (matched={ref.matched})",
        )
    known = expected_pass(task, index)
    if known is not None:
        ck.check(
            scored.get("passed") is known,
            f"{where}: passed={scored.get('passed')!r}, the scripted trial must give {known}",
        )


def _check_task(
    ck: Checker, capture: RunCapture, found: Attribution, task: Task, plan: tuple[int, str]
) -> None:
    count, rule = plan
    task_id = str(task["taskId"])
    expectation = expectation_of(task)
    entry = capture.summary_task(task_id)
    if not ck.check(entry is not None, f"{task_id}: no summary entry"):
        return
    assert entry is not None
    if expectation is None:
        return
    grades: list[TrajectoryGrade] = []
    for index in range(count):
        record = found.trial(task_id, index)
        if not ck.check(
            record is not None,
            f"{task_id} trial {index}: no bracket in the log (trials found by {found.method})",
        ):
            continue
        assert record is not None
        scripted = scripted_calls(task.get("input"), index)
        _check_calls(ck, f"{task_id} trial {index}", record, scripted)
        ref = grade(expectation, _observed(record, scripted), SCRIPTED_AGENT_ID)
        grades.append(ref)
        _check_trial(ck, task, index, record, ref)
    if len(grades) == count:
        _check_block(ck, task_id, entry, grades[-1])
        _check_task_summary(ck, task, entry, grades, rule)


def _check_task_summary(
    ck: Checker, task: Task, entry: dict[str, Any], grades: list[TrajectoryGrade], rule: str
) -> None:
    """Task level: unmatched ⇒ not passed; trajectory-only score; a script-fixed ``passed``."""
    task_id = str(task["taskId"])
    if not any(g.matched for g in grades):
        ck.check(entry.get("passed") is False, f"{task_id}: every trial unmatched, task passed")
    if (task.get("expected") or {}).get("kind") == "trajectory":
        mean = exact_mean([1 if g.matched else 0 for g in grades])
        ck.check(
            agrees(entry.get("score"), mean),
            f"{task_id}: trajectory-only task score {entry.get('score')!r}, want {float(mean)}",
        )
    known = [expected_pass(task, index) for index in range(len(grades))]
    if rule == "all" and None not in known:
        want = all(known)
        ck.check(
            entry.get("passed") is want,
            f"{task_id}: summary passed={entry.get('passed')!r}, the script gives {want}",
        )


def check_trajectory(capture: RunCapture) -> Checker:
    """Run the leg over a captured ``conformance-eval-trajectory`` run."""
    ck = Checker()
    found = attribute(capture.events)
    count, _, rule = trial_plan(capture.suite)
    for task in tasks_of(capture.suite):
        _check_task(ck, capture, found, task, (count, rule))
    return ck
