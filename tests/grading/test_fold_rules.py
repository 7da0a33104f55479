"""The fold's rules over hand-built logs (store-free): a live fold hands each trial over as it
closes, and a trial the suite did not plan is not read."""

from __future__ import annotations

from tests.grading.hand_logs import AGENT, Log, golden_suite
from wopeval.grading.fold import RunFold
from wopeval.grading.summary import GradingOptions, build_summary
from wopeval.grading.views import TrialView
from wopeval.suite.models import Task

OPTIONS = GradingOptions(target_agent_id=AGENT)


def test_a_live_fold_hands_each_trial_over_as_it_closes() -> None:
    """RunFold's default (the live run's) closes trials as their last event arrives: the first
    trial is handed over before the second starts, not at the end of the log."""
    suite = golden_suite(2)
    log = Log()
    log.trial("t0")
    log.trial("t1")
    seen: list[str] = []
    fold = RunFold(suite, AGENT, 1.0, on_trial=lambda task, view: seen.append(task.taskId))
    handed: list[list[str]] = []
    for event in log.events:
        fold.feed_one(event)
        handed.append(list(seen))
    assert handed[2] == ["t0"]  # after t0's eval.scored
    assert handed[-1] == ["t0", "t1"]
    fold.close()
    assert seen == ["t0", "t1"]


def test_a_trial_the_suite_did_not_plan_is_not_read() -> None:
    """One trial planned per task: a task not in the suite, and trial indexes 1 and 5, are left
    out; the summary is the plain run's, and no hook sees them."""
    suite = golden_suite(1)
    plain = Log()
    plain.trial("t0")
    noisy = Log()
    noisy.trial("t0")
    noisy.trial("other", passed=False)
    noisy.trial("t0", index=1, passed=False)
    noisy.trial("t0", index=5, passed=False)
    expected = build_summary(suite, plain.events, OPTIONS)
    assert (expected.passed, expected.tasks[0].passed) == (True, True)
    assert build_summary(suite, noisy.events, OPTIONS).to_json() == expected.to_json()
    hooked: list[tuple[str, int]] = []

    def hook(task: Task, view: TrialView) -> None:
        hooked.append((task.taskId, view.trial_index))

    fold = RunFold(suite, AGENT, 1.0, on_trial=hook)
    fold.feed(noisy.events)
    assert hooked == [("t0", 0)]
