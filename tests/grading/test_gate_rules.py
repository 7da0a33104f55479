"""The gates' rules over hand-built summaries (store-free): each gate's reasons, in order, their
words and JSON, and the verdict of a stored run read back from its JSON."""

from __future__ import annotations

from typing import Any

import pytest

from wopeval.grading.gate import (
    GATES,
    GateFailure,
    GateVerdict,
    UnknownGate,
    check_gate,
    decide,
    stored_verdict,
)
from wopeval.wire.summary import EvalSummary, TaskSummary, TrialsBlock

SUITE_FAILED = "the suite did not pass (aggregate 0.250, 1/2 tasks passed)"


def _summary(*tasks: TaskSummary, passed: bool, aggregate: float = 0.25) -> EvalSummary:
    return EvalSummary(
        suiteId="core.acme.evals.gate",
        suiteVersion="1.0.0",
        aggregateScore=aggregate,
        passed=passed,
        taskCount=len(tasks),
        passedCount=sum(t.passed for t in tasks),
        tasks=list(tasks),
    )


def _task(task_id: str, score: float, passed: bool) -> TaskSummary:
    return TaskSummary(taskId=task_id, score=score, passed=passed)


def _trials(task_id: str, n: int, passed_count: int) -> TaskSummary:
    """``n`` 0/1 trials, ``passRule: all`` (k = n): pass@n = 1 − C(n−c, n) = 1 if c > 0."""
    trials = TrialsBlock(
        n=n,
        passedCount=passed_count,
        meanScore=passed_count / n,
        passAtK=1.0 if passed_count else 0.0,
        passHatK=1.0 if passed_count == n else 0.0,
    )
    return TaskSummary(
        taskId=task_id, score=passed_count / n, passed=passed_count == n, trials=trials
    )


# A suite that failed with one of two tasks failed (scores 0.5 and 0.0 → aggregate 0.25).
FAILED = _summary(_task("ok", 0.5, True), _task("bad", 0.0, False), passed=False)
# The same tasks, the suite passed (passScore 0.25, say): only every-task fails.
PASSED = _summary(_task("ok", 0.5, True), _task("bad", 0.0, False), passed=True)
CLEAN = _summary(_task("ok", 1.0, True), passed=True, aggregate=1.0)


@pytest.mark.parametrize(
    ("summary", "gate", "reasons"),
    [
        (CLEAN, "suite", []),
        (CLEAN, "every-task", []),
        (PASSED, "suite", []),
        (PASSED, "every-task", [("bad", "did not pass (score 0.000)")]),
        (FAILED, "suite", [(None, SUITE_FAILED), ("bad", "did not pass (score 0.000)")]),
        (FAILED, "every-task", [(None, SUITE_FAILED), ("bad", "did not pass (score 0.000)")]),
    ],
)
def test_0244_B_each_gate_gives_its_reasons_suite_first(
    summary: EvalSummary, gate: str, reasons: list[tuple[str | None, str]]
) -> None:
    verdict = decide(summary, gate)
    assert verdict.gate == gate
    assert verdict.passed is (not reasons)
    assert [(f.task_id, f.why) for f in verdict.failures] == reasons


def test_0244_B_the_suite_failing_with_every_task_passed_is_one_suite_reason() -> None:
    """A ceiling failed the suite though its one task passed: no task is named."""
    summary = _summary(_task("ok", 1.0, True), passed=False, aggregate=1.0)
    for gate in [name for name, rule in GATES.items() if rule.bound is None]:  # point gates
        verdict = decide(summary, gate)
        assert verdict.failures == (
            GateFailure(None, "the suite did not pass (aggregate 1.000, 1/1 tasks passed)"),
        )
        assert verdict.failing_task_ids == ()
        assert verdict.headline() == (
            f"gate {gate} failed: the suite did not pass (aggregate 1.000, 1/1 tasks passed)"
        )
        assert verdict.to_json()["reasons"] == [
            {"why": "the suite did not pass (aggregate 1.000, 1/1 tasks passed)"}
        ]


def test_a_failed_verdict_reads_the_same_in_its_headline_and_its_json() -> None:
    verdict = decide(FAILED)
    assert verdict.headline() == f"gate suite failed: {SUITE_FAILED}; 1 task(s) did not pass: bad"
    assert verdict.to_json() == {
        "name": "suite",
        "passed": False,
        "failingTaskIds": ["bad"],
        "reasons": [{"why": SUITE_FAILED}, {"taskId": "bad", "why": "did not pass (score 0.000)"}],
    }
    assert decide(CLEAN).to_json() == {
        "name": "suite",
        "passed": True,
        "failingTaskIds": [],
        "reasons": [],
    }


def test_a_task_with_trials_says_how_many_passed() -> None:
    summary = _summary(_trials("a", 3, 2), _trials("b", 1, 1), passed=True)
    verdict = decide(summary, "every-task")
    assert [(f.task_id, f.why) for f in verdict.failures] == [
        ("a", "did not pass (score 0.667, 2/3 trials passed)")
    ]


def test_the_headline_lists_five_task_ids_then_counts_the_rest() -> None:
    """Boundary: 5 ids are all named; the sixth is counted ("and 1 more")."""

    def failing(count: int) -> GateVerdict:
        tasks = [GateFailure(f"t{i}", "did not pass (score 0.000)") for i in range(count)]
        return GateVerdict("every-task", False, tuple(tasks))

    assert failing(1).headline() == "gate every-task failed: 1 task(s) did not pass: t0"
    assert failing(5).headline().endswith("5 task(s) did not pass: t0, t1, t2, t3, t4")
    assert failing(6).headline().endswith("6 task(s) did not pass: t0, t1, t2, t3, t4 and 1 more")
    assert failing(8).headline().endswith(": t0, t1, t2, t3, t4 and 3 more")


def test_an_unknown_gate_names_the_field_it_came_from() -> None:
    assert check_gate("every-task") is GATES["every-task"]
    names = ", ".join(GATES)
    with pytest.raises(UnknownGate, match=rf"^--gate: 'x' is not one of {names}$"):
        check_gate("x", field="--gate")


def _stored(summary: EvalSummary) -> dict[str, Any]:
    return summary.model_dump(mode="json", exclude_none=True)


@pytest.mark.parametrize(
    ("request_doc", "gate", "passed"),
    [
        ({}, "suite", True),  # no gate stored: the default
        ({"gate": "suite"}, "suite", True),
        ({"gate": "every-task"}, "every-task", False),
        (None, "suite", True),  # no request stored at all
        ("not a mapping", "suite", True),
    ],
)
def test_a_stored_run_is_judged_by_the_gate_it_stored(
    request_doc: Any, gate: str, passed: bool
) -> None:
    verdict = stored_verdict(_stored(PASSED), request_doc)
    assert verdict is not None
    assert (verdict.gate, verdict.passed) == (gate, passed)


@pytest.mark.parametrize("request_doc", [{"gate": "nope"}, {"gate": 3}, {"gate": None}])
def test_a_stored_gate_this_version_does_not_know_gives_no_verdict(request_doc: Any) -> None:
    assert stored_verdict(_stored(PASSED), request_doc) is None


def test_a_stored_run_without_a_summary_gives_no_verdict() -> None:
    assert stored_verdict(None, {"gate": "suite"}) is None
