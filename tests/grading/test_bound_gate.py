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


def test_plainest_one_task_without_trials() -> None:
    """One task, one trial, passed: its interval over tasks is 1/1's, [0.025, 1] at 95 %, which
    meets passScore 0 and not 0.5; without bounds a bound gate fails, closed, saying why."""
    summary = EvalSummary(
        suiteId="core.test.evals.bound", suiteVersion="1.0.0", aggregateScore=1.0, passed=True,
        taskCount=1, passedCount=1, tasks=[TaskSummary(taskId="t", score=1.0, passed=True)],
    )  # fmt: skip
    assert decide(summary, "lower-bound", Bounds(0.0)).passed
    verdict = decide(summary, "lower-bound", Bounds(0.5))
    assert verdict.headline() == (
        "gate lower-bound failed: the aggregate's 95% lower bound 0.025 "
        "(task-clopper-pearson) is below passScore 0.5"
    )
    assert "no passScore" in decide(summary, "lower-bound").headline()


def test_a_tie_at_an_exact_bound_passes() -> None:
    """Every task scoring 0: the bound is exactly 0 (no float involved), and meets passScore 0."""
    summary = _summary([_task(f"t{i}", 0, 3, passed=True) for i in range(3)])
    for gate in ("lower-bound", "every-task-lower-bound"):  # each task's 0/3 bound: 0 too
        assert decide(summary, gate, Bounds(0.0)).passed
        assert not decide(summary, gate, Bounds(5e-324)).passed  # the least float above 0


def test_tasks_that_all_score_alike_do_not_certify_their_score() -> None:
    """Three tasks at 0.7 (a t interval would collapse to [0.7, 0.7] and pass passScore 0.7):
    s = 2.1 of 3, the bound Beta⁻¹(0.025; 2.1, 1.9) = 0.1085."""
    summary = _summary([_task(f"t{i}", 7, 10, passed=True) for i in range(3)])
    verdict = decide(summary, "lower-bound", Bounds(0.7))
    assert not verdict.passed
    assert "lower bound 0.109" in verdict.failures[0].why


def test_a_computed_bound_equal_to_pass_score_fails_outward() -> None:
    """The bound of 5/5 at 95 % is (0.025)^(1/5), irrational: its float 0.4781762498950186 set as
    passScore is not met, the bound being rounded outward (down) before the exact comparison;
    a hair below it is. Likewise the suite's: ten tasks at 1.0, 0.025^(1/10) = 0.6915."""
    bound = clopper_pearson(5, 5).low
    tasks = [_task("a", 5, 5)] + [_task(f"b{i}", 20, 20) for i in range(9)]
    every = decide(_summary(tasks), "every-task-lower-bound", Bounds(pass_score=bound))
    assert every.failing_task_ids == ("a",)
    assert every.failures[-1].why == (
        "pass rate 5/5: its 95% lower bound 0.478 (clopper-pearson) is below passScore 0.478176"
    )
    assert decide(_summary(tasks), "every-task-lower-bound", Bounds(bound * (1 - 1e-9))).passed
    suite_bound = 0.025 ** (1 / 10)
    assert suite_bound == pytest.approx(0.6915028921812392, abs=1e-15)
    assert not decide(_summary(tasks), "lower-bound", Bounds(suite_bound)).passed
    assert decide(_summary(tasks), "lower-bound", Bounds(suite_bound * (1 - 1e-9))).passed


def test_every_task_bound_names_the_tasks_its_point_rule_passed_on_luck() -> None:
    """19/20 passes a 'mean' rule at passScore 0.9, but its 95 % bound (0.7513) does not meet
    0.9; nor does 20/20's (0.025^(1/20) = 0.8316)."""
    tasks = [_task("nineteen", 19, 20, passed=True), _task("twenty", 20, 20)]
    assert clopper_pearson(19, 20).low == pytest.approx(0.7513, abs=1e-4)
    failing = decide(_summary(tasks), "every-task-lower-bound", Bounds(0.9))
    assert failing.failing_task_ids == ("nineteen", "twenty")


def test_the_bound_gate_never_passes_what_the_point_gate_fails() -> None:
    tasks = [_task("a", 10, 10), _task("b", 10, 10)]
    summary = _summary(tasks, passed=False)
    for gate in ("lower-bound", "every-task-lower-bound"):
        verdict = decide(summary, gate, Bounds(0.0))
        assert not verdict.passed
        assert verdict.failures[0].why.startswith("the suite did not pass")


def test_a_higher_level_lowers_the_bound() -> None:
    # ten tasks at 1.0: at 80 % the bound is 0.1^(1/10) = 0.7943, at 95 % 0.025^(1/10) = 0.6915
    tasks = [_task(f"t{i}", 3, 3) for i in range(10)]
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
