"""The trials progress bar (``wopeval.cli.progress``): its total counts every planned trial, an
adaptive task's at its maximum, and a task whose sequential test stops early takes the trials it
will not run out of the total, counted as saved, so the bar ends full."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console
from rich.progress import Progress

from wopeval.cli.progress import ProgressView
from wopeval.cli.resume_cmd import finished_outcomes
from wopeval.engine.resume import ResumeState
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


# --- run --resume: the view is given the suite and the trials the log already holds ----------


def test_a_resumed_view_reads_on_from_the_stored_outcomes() -> None:
    # the log holds "pass" 0-6 (7 passes) and "fail" 0-1 (2 failures): 31 of 40 trials left.
    # 5 more passes decide "above" at 12 (8 saved), 1 more failure "below" at 3 (17 saved):
    # 6 trials run, the bar ends 6 of 6, and 25 saved as in a fresh run
    stored = {("pass", i): True for i in range(7)} | {("fail", 0): False, ("fail", 1): False}
    progress = _bar()
    view = ProgressView(progress, 31, _suite(True), stored)
    assert (view.total, view.saved) == (31, 0)
    for trial in range(7, 12):
        view("pass", trial, _grade(True))
    assert (view.total, view.saved) == (23, 8)
    view("fail", 2, _grade(False))
    task = progress.tasks[0]
    assert (task.total, task.completed) == (6, 6)
    assert task.fields["rate"] == "83% passing, 25 saved"
    # without the stored outcomes (the view --resume used to build) no stop is ever read: the
    # trials before the interruption are missing from each task's sequence
    blind = ProgressView(_bar(), 31, _suite(True))
    for trial in range(7, 12):
        blind("pass", trial, _grade(True))
    blind("fail", 2, _grade(False))
    assert (blind.total, blind.saved) == (31, 0)


def test_a_task_stopped_before_the_interruption_leaves_the_total_at_once() -> None:
    # "pass" stopped at 12 before the interruption; "fail" has 1 failure stored: 27 left.
    # At once: "pass"'s 8 unrun trials leave (19). Failures 1 and 2 stop "fail" (17 more out):
    # 2 trials run, 2 of 2, 25 saved over the whole run
    stored = {("pass", i): True for i in range(12)} | {("fail", 0): False}
    progress = _bar()
    view = ProgressView(progress, 27, _suite(True), stored)
    assert (view.total, view.saved) == (19, 8)
    assert progress.tasks[0].total == 19
    view("fail", 1, _grade(False))
    view("fail", 2, _grade(False))
    assert (progress.tasks[0].total, progress.tasks[0].completed) == (2, 2)
    assert view.saved == 25
    everything = {("pass", i): True for i in range(12)} | {("fail", i): False for i in range(3)}
    done = ProgressView(_bar(), 25, _suite(True), everything)
    assert (done.total, done.saved) == (0, 25)  # both stopped: nothing left, nothing shown


def test_a_stored_outcome_of_a_plain_task_changes_nothing() -> None:
    stored = {("pass", 0): True, ("fail", 0): False}
    view = ProgressView(_bar(), 2, _suite(False, count=2), stored)
    view("pass", 1, _grade(True))
    view("fail", 1, _grade(False))
    assert (view.total, view.done, view.saved, view.text) == (2, 2, 0, "50% passing")


def test_an_interrupted_trial_is_a_stored_failure() -> None:
    # as the engine reads a resumed adaptive task: an interrupted trial is not run again and
    # counts as a failure, even when the log scored it a pass first
    state = ResumeState()
    state.passed = {("fail", 0): False, ("fail", 1): True, ("pass", 0): True}
    state.interrupted = {("fail", 1): "it had already called a live tool", ("fail", 2): "x"}
    assert finished_outcomes(state) == {
        ("fail", 0): False,
        ("fail", 1): False,
        ("fail", 2): False,
        ("pass", 0): True,
    }
    view = ProgressView(_bar(), 37, _suite(True), finished_outcomes(state))
    assert (view.total, view.saved) == (20, 17)  # "fail" stopped "below" at 3: 17 unrun
    assert finished_outcomes(ResumeState()) == {}
