"""The trials progress bar (``wopeval.cli.progress``): its total counts every planned trial, an
adaptive task's at its maximum, and a task whose sequential test stops early takes the trials it
will not run out of the total, counted as saved, so the bar ends full."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console
from rich.progress import Progress

from wopeval.cli.progress import ProgressView
from wopeval.grading.trial import TrialGrade
from wopeval.suite import parse_suite

OK = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}


def _suite(adaptive: bool, count: int = 20) -> Any:
    doc: dict[str, Any] = {
        "suiteId": "core.acme.evals.progress",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [
            {"taskId": "pass", "input": "x", "expected": OK},
            {"taskId": "fail", "input": "x", "expected": OK},
        ],
        "trials": {"count": count, "k": 1},
        "thresholds": {"passScore": 0.8},
    }
    if adaptive:
        doc["x-wopeval-adaptive"] = {"rule": "sprt", "alpha": 0.05, "minTrials": 1}
    return parse_suite(doc, source="progress test")


def _grade(passed: bool) -> TrialGrade:
    return TrialGrade(
        float(passed), passed, False, "pass" if passed else "fail", "deterministic", None
    )


def _bar() -> Progress:
    return Progress(console=Console(file=io.StringIO(), force_terminal=False))


def test_adaptive_stops_take_the_unrun_trials_out_of_the_total() -> None:
    # sprt at threshold 0.8 over at most 20 trials: 12 passes in a row decide "above" (8 saved),
    # 3 failures in a row "below" (17 saved): 15 of the 40 planned trials run, the bar ends full
    progress = _bar()
    view = ProgressView(progress, 40, _suite(True))
    for trial in range(12):
        view("pass", trial, _grade(True))
    assert (view.total, view.saved) == (32, 8)
    for trial in range(3):
        view("fail", trial, _grade(False))
    task = progress.tasks[0]
    assert (task.total, task.completed) == (15, 15)
    assert (view.done, view.passed, view.saved) == (15, 12, 25)
    assert task.fields["rate"] == "80% passing, 25 saved"


def test_an_adaptive_stop_waits_for_every_earlier_trial() -> None:
    # trials finish out of order: the test reads them in trial order, so trial 11's pass decides
    # nothing until trial 0 is in (a wave's trials run concurrently)
    view = ProgressView(_bar(), 40, _suite(True))
    for trial in range(1, 12):
        view("pass", trial, _grade(True))
    assert (view.total, view.saved) == (40, 0)
    view("pass", 0, _grade(True))
    assert (view.total, view.saved) == (32, 8)


def test_a_skipped_trial_counts_as_a_failure_for_the_stop() -> None:
    # a trial skipped by the budget (no grade) is a failure to the test, as the engine reads it
    view = ProgressView(_bar(), 40, _suite(True))
    for trial in range(3):
        view("fail", trial, None)
    assert (view.total, view.saved, view.passed) == (23, 17, 0)


def test_a_plain_suite_keeps_its_total_and_says_nothing_saved() -> None:
    # no adaptive member: every planned trial runs; a view without the suite reads no stops
    for view in (ProgressView(_bar(), 2, _suite(False, count=1)), ProgressView(_bar(), 2)):
        view("pass", 0, _grade(True))
        view("fail", 0, _grade(False))
        assert (view.total, view.done, view.saved) == (2, 2, 0)
        assert view.text == "50% passing"


def test_without_a_terminal_the_view_only_counts() -> None:
    view = ProgressView(None, 40, _suite(True))
    assert view.text == "-"
    for trial in range(12):
        view("pass", trial, _grade(True))
    assert (view.done, view.saved, view.total) == (12, 8, 32)
