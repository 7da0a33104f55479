"""The lower-bound gates (wopeval.grading.gate): the point gate and more, decided exactly at ties,
on summaries made by hand (the plainest first)."""

from __future__ import annotations

from typing import Any

import pytest

from wopeval.grading.gate import Bounds, decide, suite_bounds
from wopeval.grading.intervals import clopper_pearson
from wopeval.grading.stats import pass_at_k, pass_hat_k
from wopeval.suite import parse_suite
from wopeval.wire.summary import EvalSummary, TaskSummary, TrialsBlock, TrialStats


def _task(
    task_id: str, c: int, n: int, *, passed: bool | None = None, score: float | None = None
) -> TaskSummary:
    k = 1
    return TaskSummary(
        taskId=task_id,
        score=c / n if score is None else score,
        passed=(c == n) if passed is None else passed,
        trials=TrialsBlock(n=n, passedCount=c, meanScore=c / n if score is None else score,
                           passAtK=float(pass_at_k(n, c, k)), passHatK=float(pass_hat_k(n, c, k))),
    )  # fmt: skip


def _summary(tasks: list[TaskSummary], *, passed: bool = True) -> EvalSummary:
    return EvalSummary(
        suiteId="core.test.evals.bound",
        suiteVersion="1.0.0",
        aggregateScore=sum(t.score for t in tasks) / len(tasks),
        passed=passed,
        taskCount=len(tasks),
        passedCount=sum(t.passed for t in tasks),
        tasks=tasks,
        trialStats=TrialStats(k=1, passAtK=0.5, passHatK=0.5),
    )


def test_plainest_one_task_without_trials_fails_the_bound_closed() -> None:
    summary = EvalSummary(
        suiteId="core.test.evals.bound", suiteVersion="1.0.0", aggregateScore=1.0, passed=True,
        taskCount=1, passedCount=1, tasks=[TaskSummary(taskId="t", score=1.0, passed=True)],
    )  # fmt: skip
    assert decide(summary, "suite", Bounds(0.0)).passed
    verdict = decide(summary, "lower-bound", Bounds(0.0))
    assert not verdict.passed
    assert verdict.headline() == (
        "gate lower-bound failed: "
        "the aggregate's task-clustered lower bound needs at least two tasks"
    )


def test_a_tie_at_the_exact_mean_passes() -> None:
    """Three tasks scoring 0.7: no spread, the lower bound is the exact mean 7/10, which meets
    passScore 0.7 (the float mean of the three, 0.7000000000000001 or 0.6999999999999999,
    would decide by luck)."""
    summary = _summary([_task(f"t{i}", 7, 10, passed=True) for i in range(3)])
    assert decide(summary, "lower-bound", Bounds(0.7)).passed
    assert not decide(summary, "lower-bound", Bounds(0.7000000000000001)).passed


def test_any_spread_puts_the_bound_below_a_tied_mean() -> None:
    tasks = [_task("a", 7, 10, passed=True), _task("b", 7, 10, passed=True),
             _task("c", 7, 10, passed=True, score=0.7000000000000001)]  # fmt: skip
    verdict = decide(_summary(tasks), "lower-bound", Bounds(0.7))
    assert not verdict.passed
    assert "below passScore 0.7" in verdict.failures[0].why


def test_a_computed_bound_equal_to_pass_score_fails_outward() -> None:
    """The bound of 5/5 at 95 % is (0.025)^(1/5), irrational: its float 0.4781762498950186 set as
    passScore is not met, the bound being rounded outward (down) before the exact comparison."""
    bound = clopper_pearson(5, 5).low
    tasks = [_task("a", 5, 5), _task("b", 20, 20)]
    every = decide(_summary(tasks), "every-task-lower-bound", Bounds(pass_score=bound))
    assert every.failing_task_ids == ("a",)
    assert every.failures[-1].why == (
        "pass rate 5/5: its 95% lower bound 0.478 (clopper-pearson) is below passScore 0.478176"
    )
    # a hair below it passes; so does a zero bound against passScore 0 (0/n: exactly 0)
    assert decide(_summary(tasks), "every-task-lower-bound", Bounds(bound * (1 - 1e-9))).passed


def test_every_task_bound_names_the_tasks_its_point_rule_passed_on_luck() -> None:
    """19/20 passes a 'mean' rule at passScore 0.9, but its 95 % bound (0.7513) does not; 20/20
    (bound 0.8316) does not either, 0.8316 < 0.9; at passScore 0.75 the 19/20 task is met."""
    tasks = [_task("nineteen", 19, 20, passed=True), _task("twenty", 20, 20)]
    assert clopper_pearson(19, 20).low == pytest.approx(0.7513, abs=1e-4)
    failing = decide(_summary(tasks), "every-task-lower-bound", Bounds(0.9))
    assert failing.failing_task_ids == ("nineteen", "twenty")
    # at 90 %: 19/20's bound 0.7839, 20/20's 0.05^(1/20) = 0.8609; the suite's mean 0.975,
    # stderr 0.025, t(0.95; 1) = 6.3138: 0.975 − 0.1578 = 0.8172, all at least 0.75
    assert decide(_summary(tasks), "every-task-lower-bound", Bounds(0.75, level=0.9)).passed


def test_the_bound_gate_never_passes_what_the_point_gate_fails() -> None:
    tasks = [_task("a", 10, 10), _task("b", 10, 10)]
    summary = _summary(tasks, passed=False)
    for gate in ("lower-bound", "every-task-lower-bound"):
        verdict = decide(summary, gate, Bounds(0.0))
        assert not verdict.passed
        assert verdict.failures[0].why.startswith("the suite did not pass")


def test_a_higher_level_lowers_the_bound() -> None:
    tasks = [_task("a", 9, 10, passed=True, score=0.9), _task("b", 10, 10, score=1.0)]
    # mean 0.95, s = 0.0707, stderr 0.05: t(0.9; 1) = 3.0777 → 0.95 − 0.1539 = 0.7961;
    # t(0.975; 1) = 12.706 → below 0
    assert decide(_summary(tasks), "lower-bound", Bounds(0.79, level=0.8)).passed
    assert not decide(_summary(tasks), "lower-bound", Bounds(0.79, level=0.95)).passed


def test_suite_bounds_read_pass_score_from_the_suite_or_default_to_one() -> None:
    expected = {"kind": "golden", "match": {"strategy": "exact", "value": 1}}
    doc: dict[str, Any] = {
        "suiteId": "core.test.evals.bound", "version": "1.0.0", "modes": ["golden"],
        "targetAgentId": "core.acme.agent",
        "tasks": [{"taskId": "t", "input": {}, "expected": expected}],
    }  # fmt: skip
    assert suite_bounds(doc) == Bounds(1.0, 0.95)
    assert suite_bounds(parse_suite(doc), 0.9) == Bounds(1.0, 0.9)
    doc["thresholds"] = {"passScore": 0.8}
    assert suite_bounds(doc).pass_score == suite_bounds(parse_suite(doc)).pass_score == 0.8
    with pytest.raises(ValueError, match="strictly between"):
        suite_bounds(doc, 1.0)
