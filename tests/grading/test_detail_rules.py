"""The detailed view's rules over hand-built cells (store-free): flaky, failures, the tasks
below passScore, the infrastructure count, each status's mark and a trial's status."""

from __future__ import annotations

import pytest

from wopeval.cli.render_detail import LEGEND
from wopeval.grading.detail import STATUS_MARK, RunDetail, TaskDetail, TrialCell, TrialStatus
from wopeval.wire.events import TrialFailed


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
