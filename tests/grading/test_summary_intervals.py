"""The intervals of a summary (:mod:`wopeval.grading.summary_intervals`), store-free: each
member is the named interval of the named counts, at the given level, present only when the rule
says so."""

from __future__ import annotations

import pytest

from wopeval.grading.intervals import (
    clopper_pearson,
    mean_score_interval,
    pass_at_k_interval,
    pass_hat_k_interval,
    task_clopper_pearson,
)
from wopeval.grading.summary_intervals import (
    METHODS,
    SuiteIntervals,
    TaskIntervals,
    summary_intervals,
    task_intervals,
)
from wopeval.wire.summary import EvalSummary, TaskSummary, TrialsBlock, TrialStats


def _trials(n: int, c: int, mean: float, at_k: float, hat_k: float) -> TrialsBlock:
    return TrialsBlock(n=n, passedCount=c, meanScore=mean, passAtK=at_k, passHatK=hat_k)


def _summary(
    tasks: list[TaskSummary], k: int | None = None, passed_count: int | None = None
) -> EvalSummary:
    return EvalSummary(
        suiteId="core.test.evals.ci", suiteVersion="1.0.0", aggregateScore=0.5, passed=True,
        taskCount=len(tasks),
        passedCount=sum(t.passed for t in tasks) if passed_count is None else passed_count,
        tasks=tasks,
        trialStats=None if k is None else TrialStats(k=k, passAtK=0.5, passHatK=0.5),
    )  # fmt: skip


def test_methods_name_each_member() -> None:
    assert METHODS == {
        "passRate": "clopper-pearson",
        "meanScore": "task-clopper-pearson",
        "passAtK": "clopper-pearson-mapped",
        "passHatK": "clopper-pearson-mapped",
        "suite": "task-clopper-pearson",
        "tasksPassed": "clopper-pearson",
    }


def test_plainest_one_passed_task_without_trials() -> None:
    """One trial, passed: 1/1, Clopper–Pearson [(α/2)^(1/1), 1] = [0.025, 1] at 95 %."""
    task = TaskSummary(taskId="t", score=1.0, passed=True)
    out = task_intervals(task, None, 0.95)
    assert (out.task_id, out.n, out.passed_count) == ("t", 1, 1)
    assert out.pass_rate.low == pytest.approx(0.025, rel=1e-12)
    assert out.pass_rate.high == 1.0
    assert out.pass_rate == clopper_pearson(1, 1, 0.95)
    assert out.mean_score == mean_score_interval(1.0, 1, 0.95)
    assert out.pass_at_k is None
    assert out.pass_hat_k is None
    assert out.to_json() == {
        "taskId": "t",
        "n": 1,
        "passedCount": 1,
        "passRate": clopper_pearson(1, 1, 0.95).to_json(),
        "meanScore": mean_score_interval(1.0, 1, 0.95).to_json(),
    }


def test_a_failed_task_without_trials_is_zero_of_one_and_its_score_is_the_mean() -> None:
    """0/1: [0, 1 − α/2] = [0, 0.95] at 90 %; the mean interval is of the score (0.5 of 1)."""
    task = TaskSummary(taskId="f", score=0.5, passed=False)
    out = task_intervals(task, 3, 0.9)
    assert (out.n, out.passed_count) == (1, 0)
    assert out.pass_rate.low == 0.0
    assert out.pass_rate.high == pytest.approx(0.95, rel=1e-12)
    assert out.pass_rate.level == 0.9
    assert out.mean_score == mean_score_interval(0.5, 1, 0.9)
    assert out.mean_score != mean_score_interval(0.0, 1, 0.9)
    assert out.pass_at_k is None
    assert out.pass_hat_k is None


def test_a_task_with_trials_maps_its_counts_at_k() -> None:
    """2 of 3 trials passed, k = 2: every interval is of (c=2, n=3), not of passed/score."""
    trials = _trials(3, 2, 0.6, 1.0, 1 / 3)
    task = TaskSummary(taskId="tr", score=0.1, passed=False, trials=trials)
    out = task_intervals(task, 2, 0.9)
    assert (out.task_id, out.n, out.passed_count) == ("tr", 3, 2)
    assert out.pass_rate == clopper_pearson(2, 3, 0.9)
    assert out.mean_score == mean_score_interval(0.6, 3, 0.9)
    assert out.pass_at_k == pass_at_k_interval(2, 3, 2, 0.9)
    assert out.pass_hat_k == pass_hat_k_interval(2, 3, 2, 0.9)
    assert out.pass_at_k != out.pass_hat_k
    doc = out.to_json()
    assert doc["passAtK"] == pass_at_k_interval(2, 3, 2, 0.9).to_json()
    assert doc["passHatK"] == pass_hat_k_interval(2, 3, 2, 0.9).to_json()
    assert list(doc) == [
        "taskId",
        "n",
        "passedCount",
        "passRate",
        "meanScore",
        "passAtK",
        "passHatK",
    ]


def test_k_equal_to_n_maps_and_k_above_n_or_absent_does_not() -> None:
    trials = _trials(2, 1, 0.5, 1.0, 0.0)
    task = TaskSummary(taskId="t", score=0.5, passed=False, trials=trials)
    at_n = task_intervals(task, 2, 0.95)
    assert at_n.pass_at_k == pass_at_k_interval(1, 2, 2, 0.95)
    assert at_n.pass_hat_k == pass_hat_k_interval(1, 2, 2, 0.95)
    above = task_intervals(task, 3, 0.95)
    assert above.pass_at_k is None
    assert above.pass_hat_k is None
    assert "passAtK" not in above.to_json()
    absent = task_intervals(task, None, 0.95)
    assert absent.pass_at_k is None
    assert absent.pass_hat_k is None


def test_task_json_needs_both_mapped_intervals() -> None:
    """Only one of pass@k and pass^k set (not a state the rule makes): neither is shown."""
    one = clopper_pearson(1, 2)
    for at_k, hat_k in ((one, None), (None, one)):
        doc = TaskIntervals("t", 2, 1, one, one, at_k, hat_k).to_json()
        assert "passAtK" not in doc
        assert "passHatK" not in doc


def test_suite_json_without_k_or_tasks() -> None:
    empty = SuiteIntervals(0.8, None, None, None, None, None, ())
    assert empty.to_json() == {
        "level": 0.8,
        "methods": METHODS,
        "suite": {"aggregateScore": None, "tasksPassed": None},
        "tasks": [],
    }


def test_suite_json_with_k() -> None:
    a, b, c, d = (clopper_pearson(i, 4) for i in range(1, 5))
    task = TaskIntervals("t", 1, 1, a, a, None, None)
    doc = SuiteIntervals(0.95, 2, a, b, c, d, (task,)).to_json()
    assert doc["suite"] == {
        "aggregateScore": a.to_json(),
        "tasksPassed": d.to_json(),
        "passAtK": b.to_json(),
        "passHatK": c.to_json(),
    }
    assert doc["tasks"] == [task.to_json()]
    none_k = SuiteIntervals(0.95, 1, a, None, None, d, ()).to_json()["suite"]
    assert none_k == {
        "aggregateScore": a.to_json(),
        "tasksPassed": d.to_json(),
        "passAtK": None,
        "passHatK": None,
    }
    methods = doc["methods"]
    assert isinstance(methods, dict)
    assert methods is not METHODS


def test_plainest_summary_at_the_default_level() -> None:
    """One passed task, no trials: 95 %; aggregate and tasks passed are 1/1's interval."""
    out = summary_intervals(_summary([TaskSummary(taskId="t", score=1.0, passed=True)]))
    assert out.level == 0.95
    assert out.k is None
    assert out.aggregate == task_clopper_pearson([1.0], 0.95)
    assert out.tasks_passed == clopper_pearson(1, 1, 0.95)
    assert out.pass_at_k is None
    assert out.pass_hat_k is None
    assert out.tasks == (
        task_intervals(TaskSummary(taskId="t", score=1.0, passed=True), None, 0.95),
    )
    assert "passAtK" not in out.to_json()["suite"]  # type: ignore[operator]


def test_a_summary_with_trials_at_another_level() -> None:
    """Two tasks with trials and one without: the suite's pass@k and pass^k are over the two."""
    tasks = [
        TaskSummary(taskId="a", score=0.75, passed=True, trials=_trials(2, 2, 0.75, 1.0, 1.0)),
        TaskSummary(taskId="b", score=0.0, passed=False),
        TaskSummary(taskId="c", score=0.25, passed=False, trials=_trials(2, 1, 0.25, 1.0, 0.0)),
    ]
    out = summary_intervals(_summary(tasks, k=2), 0.9)
    assert out.level == 0.9
    assert out.k == 2
    assert out.pass_at_k == task_clopper_pearson([1.0, 1.0], 0.9)
    assert out.pass_hat_k == task_clopper_pearson([1.0, 0.0], 0.9)
    assert out.pass_at_k != out.pass_hat_k
    assert out.aggregate == task_clopper_pearson([0.75, 0.0, 0.25], 0.9)
    assert out.tasks_passed == clopper_pearson(1, 3, 0.9)
    assert out.tasks == tuple(task_intervals(t, 2, 0.9) for t in tasks)
    assert out.tasks[0].pass_at_k == pass_at_k_interval(2, 2, 2, 0.9)


def test_tasks_passed_counts_the_summary_not_the_tasks() -> None:
    tasks = [TaskSummary(taskId=t, score=1.0, passed=True) for t in "ab"]
    out = summary_intervals(_summary(tasks, passed_count=1), 0.5)
    assert out.tasks_passed == clopper_pearson(1, 2, 0.5)


def test_no_task_has_no_suite_interval() -> None:
    out = summary_intervals(_summary([], k=1))
    assert out.aggregate is None
    assert out.tasks_passed is None
    assert out.pass_at_k is None
    assert out.pass_hat_k is None
    assert out.tasks == ()


@pytest.mark.parametrize("level", [0.0, 1.0, 1.5, -0.1])
def test_a_level_outside_zero_one_is_refused(level: float) -> None:
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        summary_intervals(_summary([TaskSummary(taskId="t", score=1.0, passed=True)]), level)
