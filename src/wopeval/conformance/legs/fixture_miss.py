"""Leg ``0244.fixture-miss-fails`` (RFC 0244 §D) over ``conformance-eval-fixture-miss``.

The kit runs the §D selection over each task's scripted calls (first unconsumed entry whose
tool and arguments match) to know in advance which tasks miss. Under ``onMiss: "fail"``:

* a task that misses reports ``fixtureMissCount`` = its misses, ``passed: false`` and
  ``score: 0`` on the summary, and ``passed: false``, ``score: 0`` on every ``eval.scored``;
  its scripted output matches the expectation, so a host that lets a miss keep its output score
  is caught (the §D amendment of 2026-10-14);
* a task that is fully served passes, and reports no miss.
"""

from __future__ import annotations

from typing import Any

from wopeval.conformance.legs.common import Checker, RunCapture
from wopeval.conformance.suites import (
    Task,
    expected_pass,
    fixture_misses,
    scripted_calls,
    tasks_of,
    trial_plan,
)


def _check_missed(
    ck: Checker,
    task_id: str,
    entry: dict[str, Any],
    scored: list[dict[str, Any]],
    misses: int,
    count: int,
) -> None:
    reported = entry.get("fixtureMissCount")
    if count == 1:
        ck.check(reported == misses, f"{task_id}: fixtureMissCount {reported!r}, want {misses}")
    else:
        ck.check(
            isinstance(reported, int) and reported >= 1,
            f"{task_id}: fixtureMissCount {reported!r}, want at least 1",
        )
    ck.check(
        entry.get("passed") is False,
        f"{task_id}: missed a fixture under onMiss "
        f"'fail' but the summary says passed={entry.get('passed')!r}",
    )
    ck.check(
        entry.get("score") == 0,
        f"{task_id}: missed a fixture under onMiss 'fail' but "
        f"the summary score is {entry.get('score')!r}, want 0",
    )
    ck.check(len(scored) == count, f"{task_id}: {len(scored)} eval.scored, want {count}")
    for payload in scored:
        where = f"{task_id} eval.scored (trial {payload.get('trialIndex', 0)})"
        ck.check(payload.get("passed") is False, f"{where}: passed={payload.get('passed')!r}")
        ck.check(payload.get("score") == 0, f"{where}: score {payload.get('score')!r}, want 0")


def _check_served(
    ck: Checker, task: Task, entry: dict[str, Any], scored: list[dict[str, Any]], count: int
) -> None:
    task_id = str(task["taskId"])
    reported = entry.get("fixtureMissCount", 0)
    ck.check(reported == 0, f"{task_id}: every call was served, fixtureMissCount {reported!r}")
    if all(expected_pass(task, index) is True for index in range(count)):
        ck.check(
            entry.get("passed") is True,
            f"{task_id}: fully served task with a matching output did not pass",
        )
        for payload in scored:
            ck.check(
                payload.get("passed") is True,
                f"{task_id} eval.scored (trial {payload.get('trialIndex', 0)}) did not pass",
            )


def check_fixture_miss(capture: RunCapture) -> Checker:
    """Run the leg over a captured ``conformance-eval-fixture-miss`` run."""
    ck = Checker()
    count, _, _ = trial_plan(capture.suite)
    for task in tasks_of(capture.suite):
        task_id = str(task["taskId"])
        entry = capture.summary_task(task_id)
        if not ck.check(entry is not None, f"{task_id}: no summary entry"):
            continue
        assert entry is not None
        fails_closed = (task.get("fixtures") or {}).get("onMiss") == "fail"
        misses = [fixture_misses(task, scripted_calls(task.get("input"), i)) for i in range(count)]
        scored = capture.scored(task_id)
        if fails_closed and all(m > 0 for m in misses):
            _check_missed(ck, task_id, entry, scored, sum(misses), count)
        elif not any(misses):
            _check_served(ck, task, entry, scored, count)
    return ck
