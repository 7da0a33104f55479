"""The detailed view's rules over hand-built cells (store-free): flaky, failures, the tasks
below passScore, the infrastructure count, each status's mark and a trial's status."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.grading.hand_logs import AGENT, Log, golden_suite
from wopeval.cli.render_detail import LEGEND
from wopeval.grading.detail import (
    STATUS_MARK,
    RunDetail,
    TaskDetail,
    TrialCell,
    TrialStatus,
    run_detail,
)
from wopeval.grading.summary import GradingOptions
from wopeval.grading.views import TrialView
from wopeval.suite.models import Task
from wopeval.wire.events import TrialFailed
from wopeval.wire.vocab import TRIAL_FAILED


def _cell(index: int, status: TrialStatus, kind: str | None = None) -> TrialCell:
    reason = None
    if kind is not None:
        reason = TrialFailed(taskId="t", trialIndex=index, kind=kind, message="m")
    return TrialCell(index, status, 0.0 if status != "pass" else 1.0, reason)


def _task(task_id: str, gating: float, *statuses: TrialStatus) -> TaskDetail:
    cells = [_cell(i, status) for i, status in enumerate(statuses)]
    return TaskDetail(task_id, cells, gating, all(s == "pass" for s in statuses))


def _run(*tasks: TaskDetail, pass_score: float = 0.5) -> RunDetail:
    return RunDetail(list(tasks), 0.5, pass_score, True, True, False)


@pytest.mark.parametrize(
    ("statuses", "flaky"),
    [
        (("pass",), False),
        (("fail",), False),
        (("pass", "pass"), False),
        (("fail", "error", "missing"), False),  # none passed: consistent, not flaky
        (("pass", "fail"), True),
        (("skipped", "pass", "pass"), True),
    ],
)
def test_a_task_is_flaky_when_some_trials_passed_and_some_did_not(
    statuses: tuple[TrialStatus, ...], flaky: bool
) -> None:
    assert _task("t", 0.0, *statuses).flaky is flaky


def test_a_tasks_failures_are_its_cells_that_did_not_pass_in_order() -> None:
    task = _task("t", 0.0, "pass", "fail-closed", "pass", "missing")
    assert [(c.trial_index, c.status) for c in task.failures] == [
        (1, "fail-closed"),
        (3, "missing"),
    ]
    assert _task("t", 1.0, "pass").failures == []


def test_0246_the_tasks_below_pass_score_lowest_first_a_tie_is_not_below() -> None:
    run = _run(
        _task("c", 0.25, "fail"),
        _task("at", 0.5, "pass"),  # at passScore: not below
        _task("b", 0.25, "fail"),
        _task("a", 0.0, "fail"),
        _task("up", 1.0, "pass"),
    )
    assert [t.task_id for t in run.below_pass_score()] == ["a", "b", "c"]
    assert _run(_task("up", 1.0, "pass")).below_pass_score() == []


def test_infrastructure_failures_count_only_trials_failed_by_a_component() -> None:
    cells = [
        _cell(0, "error", "infrastructure"),
        _cell(1, "error", "agent-error"),
        _cell(2, "fail"),  # no reason recorded
        _cell(3, "error", "infrastructure"),
    ]
    other = [_cell(0, "error", "infrastructure")]
    run = _run(TaskDetail("a", cells, 0.0, False), TaskDetail("b", other, 0.0, False))
    assert run.infrastructure_failures() == 3
    assert _run(_task("t", 1.0, "pass")).infrastructure_failures() == 0


def test_each_status_has_the_mark_the_legend_shows() -> None:
    """The marks every output draws (CLI, viewer, HTML): one per status, as the CLI legend."""
    words = {"not run": "missing"}
    legend = dict(
        (words.get(name, name), mark)
        for mark, name in (part.split(" ", 1) for part in LEGEND.split("  "))
        if name != "flaky"
    )
    assert legend == STATUS_MARK


def test_run_detail_passes_each_planned_trials_view_on_to_its_hook() -> None:
    """``on_trial`` (the EEE export keeps usage through it) sees each planned trial's task and
    view, as the cells are made; the cells are the run's."""
    log = Log()
    log.trial("t0")
    log.trial("t1", passed=False)
    seen: list[tuple[str, str, int]] = []

    def hook(task: Task, view: TrialView) -> None:
        seen.append((task.taskId, view.task_id, view.trial_index))

    detail = run_detail(golden_suite(2), log.events, GradingOptions(AGENT), on_trial=hook)
    assert seen == [("t0", "t0", 0), ("t1", "t1", 0)]
    assert [[c.status for c in t.cells] for t in detail.tasks] == [["pass"], ["fail"]]


def test_a_reason_recorded_for_a_trial_that_never_ran_leaves_it_missing() -> None:
    """Hostile log: t0's only event is a ``wopeval.trial-failed``; no bracket, no score. Its
    cell is ``missing`` (index 0, no score, no reason), as a trial with no event at all."""
    log = Log()
    reason = {"taskId": "t0", "trialIndex": 0, "kind": "trajectory", "message": "m"}
    log.add(TRIAL_FAILED, reason, 0, None)
    log.trial("t1")
    detail = run_detail(golden_suite(2), log.events, GradingOptions(AGENT))
    cells = [[replace(c, usage=None) for c in t.cells] for t in detail.tasks]  # spend: apart
    assert cells == [
        [TrialCell(0, "missing", None, None)],
        [TrialCell(0, "pass", 1.0, None)],
    ]
    usage = detail.tasks[0].cells[0].usage
    assert usage is None or not usage.ran  # it never ran: no trial for efficiency
