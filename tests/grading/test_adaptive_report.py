"""The adaptive report: per adaptive task its decision at the trials its summary counts, and
the trials saved against the fixed count; a pure function of the suite and the summary."""

from __future__ import annotations

from typing import Any

import pytest

from wopeval.grading.adaptive import boundaries
from wopeval.grading.adaptive_report import adaptive_report, stored_adaptive
from wopeval.suite import parse_suite
from wopeval.wire.summary import EvalSummary, TaskSummary, TrialsBlock

OK = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}
SPRT = {"rule": "sprt", "alpha": 0.05, "minTrials": 1}


@pytest.fixture(autouse=True)
def _boundaries_afresh() -> None:
    """Each case computes its boundaries: an earlier test's cached table would hide the rule
    under test (a mutant, under mutation testing)."""
    boundaries.cache_clear()


def suite_doc(*task_ids: str, adaptive: bool = True, count: int = 20) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "suiteId": "core.acme.evals.demo",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [{"taskId": t, "input": {}, "expected": OK} for t in task_ids],
        "trials": {"count": count, "k": 1},
        "thresholds": {"passScore": 0.8},
    }
    if adaptive:
        doc["x-wopeval-adaptive"] = SPRT
    return doc


def summary_of(*rows: tuple[str, int, int]) -> EvalSummary:
    tasks = [
        TaskSummary(
            taskId=task_id,
            score=c / n,
            passed=c == n,
            trials=TrialsBlock(n=n, passedCount=c, meanScore=c / n, passAtK=c / n, passHatK=c / n),
        )
        for task_id, n, c in rows
    ]
    return EvalSummary(
        suiteId="core.acme.evals.demo",
        suiteVersion="1.0.0",
        aggregateScore=0.5,
        passed=False,
        taskCount=len(tasks),
        passedCount=0,
        tasks=tasks,
    )


def test_plain_suite_has_no_adaptive_report() -> None:
    suite = parse_suite(suite_doc("a", adaptive=False))
    assert adaptive_report(suite, summary_of(("a", 20, 20))) is None


def test_one_task_report() -> None:
    suite = parse_suite(suite_doc("a"))
    report = adaptive_report(suite, summary_of(("a", 12, 12)))
    assert report is not None
    (task,) = report.tasks
    assert (task.decision, task.trials, task.max_trials, task.saved) == ("above", 12, 20, 8)
    assert report.to_json() == {
        "rules": ["sprt"],
        "trialsRun": 12,
        "trialsFixed": 20,
        "trialsSaved": 8,
        "tasks": [
            {"taskId": "a", "rule": "sprt", "decision": "above", "trials": 12,
             "passedCount": 12, "maxTrials": 20, "trialsSaved": 8},
        ],
    }  # fmt: skip
    assert report.line() == (
        "adaptive (sprt): 12 of 20 trials run, 8 saved; above 1, below 0, undecided 0"
    )


def test_every_decision_kind() -> None:
    suite = parse_suite(suite_doc("above", "below", "undecided", "incomplete"))
    summary = summary_of(("above", 18, 17), ("below", 4, 1), ("undecided", 20, 16),
                         ("incomplete", 7, 5))  # fmt: skip
    report = adaptive_report(suite, summary)
    assert report is not None
    assert [t.decision for t in report.tasks] == ["above", "below", "undecided", "incomplete"]
    assert (report.trials_run, report.trials_fixed, report.saved) == (49, 80, 31)
    assert report.line().endswith("above 1, below 1, undecided 1, incomplete 1")


def test_only_adaptive_tasks_are_reported() -> None:
    doc = suite_doc("fixed", "own", adaptive=False)
    doc["tasks"][1]["x-wopeval-adaptive"] = SPRT
    report = adaptive_report(parse_suite(doc), summary_of(("fixed", 20, 20), ("own", 3, 0)))
    assert report is not None
    assert [(t.task_id, t.decision, t.saved) for t in report.tasks] == [("own", "below", 17)]


def test_stored_document_that_does_not_validate_reports_nothing() -> None:
    summary = summary_of(("a", 12, 12))
    assert stored_adaptive({"suiteId": "nope"}, summary) is None
    assert stored_adaptive(suite_doc("a"), summary) is not None
    hostile = suite_doc("a")
    hostile["x-wopeval-adaptive"] = {"rule": "sprt", "alpha": 2}
    assert stored_adaptive(hostile, summary) is None
