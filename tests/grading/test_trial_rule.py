"""The per-trial grade rule (:mod:`wopeval.grading.trial`) on hand-built views, no store.

Each row is one sentence of the rule in the module's docstring: RFC 0081 output grading, the
RFC 0244 §A trajectory gate, the §D fail-closed miss, and §H replay (scores are recorded facts,
the gate is re-derived from the log).
"""

from __future__ import annotations

from typing import Any

import pytest

from wopeval.grading.trajectory import ObservedCall
from wopeval.grading.trial import (
    LABEL_FIXTURE_MISS,
    LABEL_SKIPPED,
    LABEL_TRAJECTORY,
    LABEL_UNSCORED,
    TrialGrade,
    grade_trial,
    recorded_outcome,
    trajectory_of,
)
from wopeval.grading.views import TrialView
from wopeval.suite.models import Task
from wopeval.wire.events import EvalScored
from wopeval.wire.summary import TrajectoryBlock

AGENT = "agent.target"
LOOKUP = {"tool": "crm:lookup", "args": {"id": 7}, "argsMatch": "exact"}
GOLDEN = {"kind": "golden", "match": {"strategy": "exact", "value": "done"}}
RUBRIC = {"kind": "rubric", "rubric": [{"criterion": "polite", "weight": 1}]}


def _task(expected: dict[str, Any], trajectory: bool = False) -> Task:
    expected = dict(expected)
    if trajectory:
        expected["trajectory"] = {"match": "exact", "calls": [LOOKUP]}
    return Task.model_validate({"taskId": "t1", "input": "hi", "expected": expected})


def _view(output: Any = "done", *, calls: bool = True, **members: Any) -> TrialView:
    view = TrialView(task_id="t1", trial_index=0, **members)
    if output is not None or "has_output" not in members:
        view.output = output
        view.has_output = output is not None
    if calls:
        view.calls = [ObservedCall("crm:lookup", {"id": 7}, AGENT)]
    return view


def _grade(task: Task, view: TrialView, **kwargs: Any) -> TrialGrade:
    """Grade, and check what every outcome reports: the trial's trajectory block (§A, the one
    given or else the view's) and the evaluator type (the caller's for rubric, else
    deterministic)."""
    grade = grade_trial(task, view, target_agent_id=AGENT, pass_score=0.5, **kwargs)
    block = kwargs["trajectory"] if "trajectory" in kwargs else trajectory_of(task, view, AGENT)
    assert grade.trajectory == block
    assert (grade.trajectory is None) == (block is None)
    rubric = task.expected.kind == "rubric"
    evaluator = kwargs.get("rubric_evaluator", "llm_judge") if rubric else "deterministic"
    assert grade.evaluator_type == evaluator
    return grade


def _facts(grade: TrialGrade) -> tuple[float, bool, bool, str]:
    return grade.score, grade.passed, grade.gated, grade.label


# --- golden -------------------------------------------------------------------------------


def test_0081_golden_output_that_matches_passes() -> None:
    grade = _grade(_task(GOLDEN), _view("done"))
    assert _facts(grade) == (1.0, True, False, "pass")
    assert grade.evaluator_type == "deterministic"
    assert grade.trajectory is None


def test_0081_golden_output_that_differs_fails_ungated() -> None:
    assert _facts(_grade(_task(GOLDEN), _view("nope"))) == (0.0, False, False, "fail")


def test_0081_golden_null_is_not_matched_by_a_trial_without_output() -> None:
    task = _task({"kind": "golden", "match": {"strategy": "exact", "value": None}})
    assert _facts(_grade(task, _view(None))) == (0.0, False, False, "fail")
    answered = _view(None)
    answered.has_output = True  # the agent answered null itself
    assert _facts(_grade(task, answered)) == (1.0, True, False, "pass")


# --- rubric -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("judge", "score", "passed"),
    [
        (1.7, 1.0, True),  # clamped into [0, 1]
        (1.0, 1.0, True),
        (0.5, 0.5, True),  # at passScore: passes (score >= passScore)
        (0.49, 0.49, False),
        (0.0, 0.0, False),
        (-0.3, 0.0, False),  # clamped into [0, 1]
    ],
)
def test_0244_rubric_judge_score_is_clamped_and_passes_at_pass_score(
    judge: float, score: float, passed: bool
) -> None:
    grade = _grade(_task(RUBRIC), _view(), judge_score=judge)
    assert _facts(grade) == (score, passed, False, "pass" if passed else "fail")
    assert grade.evaluator_type == "llm_judge"


def test_0244_rubric_judge_above_one_cannot_lift_a_low_pass_score_check_past_one() -> None:
    grade = grade_trial(
        _task(RUBRIC), _view(), target_agent_id=AGENT, pass_score=1.0, judge_score=3.0
    )
    assert _facts(grade) == (1.0, True, False, "pass")


@pytest.mark.parametrize("trajectory", [False, True])
def test_0244_rubric_without_a_judge_score_is_unscored_and_gated(trajectory: bool) -> None:
    grade = _grade(_task(RUBRIC, trajectory=trajectory), _view())
    assert _facts(grade) == (0.0, False, True, LABEL_UNSCORED)


def test_0244_rubric_evaluator_is_the_callers() -> None:
    grade = _grade(_task(RUBRIC), _view(), judge_score=1.0, rubric_evaluator="human")
    assert grade.evaluator_type == "human"
    golden = _grade(_task(GOLDEN), _view(), rubric_evaluator="human")
    assert golden.evaluator_type == "deterministic"


# --- trajectory ---------------------------------------------------------------------------


def test_0244_A_trajectory_task_scores_its_match() -> None:
    task = _task({"kind": "trajectory"}, trajectory=True)
    matched = _grade(task, _view(None))
    assert _facts(matched) == (1.0, True, False, "pass")
    assert matched.trajectory is not None
    assert matched.trajectory.matched
    assert matched.evaluator_type == "deterministic"
    unmatched = _grade(task, _view(None, calls=False))
    assert _facts(unmatched) == (0.0, False, True, "fail")  # no output to pass: a plain fail


def test_0244_A_golden_with_unmatched_trajectory_keeps_its_score_and_is_gated() -> None:
    grade = _grade(_task(GOLDEN, trajectory=True), _view("done", calls=False))
    assert _facts(grade) == (1.0, False, True, LABEL_TRAJECTORY)
    assert grade.outcome.gated
    assert not grade.outcome.passed
    assert grade.outcome.score == 1.0


def test_0244_A_rubric_with_unmatched_trajectory_is_gated() -> None:
    grade = _grade(_task(RUBRIC, trajectory=True), _view(calls=False), judge_score=0.9)
    assert _facts(grade) == (0.9, False, True, LABEL_TRAJECTORY)


def test_0244_A_golden_with_matched_trajectory_passes() -> None:
    grade = _grade(_task(GOLDEN, trajectory=True), _view("done"))
    assert _facts(grade) == (1.0, True, False, "pass")


def test_0244_A_only_the_target_agents_calls_count() -> None:
    view = _view("done", calls=False)
    view.calls = [ObservedCall("crm:lookup", {"id": 7}, "agent.other")]
    block = trajectory_of(_task(GOLDEN, trajectory=True), view, AGENT)
    assert block is not None
    assert not block.matched
    assert trajectory_of(_task(GOLDEN), view, AGENT) is None


def test_a_trajectory_given_by_the_caller_is_used_as_given() -> None:
    task = _task(GOLDEN, trajectory=True)
    unmatched = TrajectoryBlock(
        mode="exact",
        matched=False,
        expectedCount=1,
        observedCount=0,
        matchedCount=0,
        forbiddenCount=0,
    )
    grade = _grade(task, _view("done"), trajectory=unmatched)
    assert _facts(grade) == (1.0, False, True, LABEL_TRAJECTORY)
    assert _facts(_grade(task, _view("done", calls=False), trajectory=None)) == (
        1.0,
        True,
        False,
        "pass",
    )


# --- failures ------------------------------------------------------------------------------


@pytest.mark.parametrize("trajectory", [False, True])
def test_0244_D_a_trial_that_failed_closed_scores_zero_and_is_gated(trajectory: bool) -> None:
    view = _view("done", failed_closed=True)
    grade = _grade(_task(GOLDEN, trajectory=trajectory), view)
    assert _facts(grade) == (0.0, False, True, LABEL_FIXTURE_MISS)


@pytest.mark.parametrize(
    ("members", "label"),
    [({"error_label": "timeout"}, "timeout"), ({"outcome": "failed"}, "error")],
)
def test_a_failed_agent_scores_zero_and_keeps_its_label(members: Any, label: str) -> None:
    grade = _grade(_task(GOLDEN), _view("done", **members))
    assert _facts(grade) == (0.0, False, False, label)
    gated = _grade(_task(GOLDEN, trajectory=True), _view("done", calls=False, **members))
    assert _facts(gated) == (0.0, False, True, label)


def test_a_completed_trial_is_not_a_failure() -> None:
    grade = _grade(_task(GOLDEN), _view("done", outcome="completed"))
    assert _facts(grade) == (1.0, True, False, "pass")


# --- replay: recorded outcomes -------------------------------------------------------------


def _scored(passed: bool = True, score: float = 1.0, label: str | None = "pass") -> EvalScored:
    return EvalScored(taskId="t1", score=score, passed=passed, scoreLabel=label)


def test_0244_H_an_unscored_trial_has_no_recorded_outcome() -> None:
    assert recorded_outcome(_task(GOLDEN), _view(), AGENT) is None


def test_0244_H_a_recorded_pass_is_read_as_recorded() -> None:
    view = _view(scored=_scored(score=0.75))
    outcome = recorded_outcome(_task(GOLDEN, trajectory=True), view, AGENT)
    assert outcome is not None
    assert (outcome.score, outcome.passed, outcome.gated) == (0.75, True, False)
    failed = recorded_outcome(_task(GOLDEN), _view(scored=_scored(False, 0.25, "fail")), AGENT)
    assert failed is not None
    assert (failed.score, failed.passed, failed.gated) == (0.25, False, False)


def test_0244_D_an_imported_pass_whose_log_shows_a_fixture_miss_fails_closed() -> None:
    view = _view(scored=_scored(), failed_closed=True)
    outcome = recorded_outcome(_task(GOLDEN), view, AGENT)
    assert outcome is not None
    assert (outcome.score, outcome.passed, outcome.gated) == (1.0, False, True)


def test_0244_A_an_imported_pass_whose_log_misses_the_trajectory_fails_closed() -> None:
    view = _view(scored=_scored(), calls=False)
    outcome = recorded_outcome(_task(GOLDEN, trajectory=True), view, AGENT)
    assert outcome is not None
    assert (outcome.passed, outcome.gated) == (False, True)
    given = recorded_outcome(_task(GOLDEN, trajectory=True), view, AGENT, trajectory=None)
    assert given is not None
    assert (given.passed, given.gated) == (True, False)


@pytest.mark.parametrize(
    "label", [LABEL_TRAJECTORY, LABEL_FIXTURE_MISS, LABEL_SKIPPED, LABEL_UNSCORED]
)
def test_0246_a_recorded_gating_label_gates_the_trial(label: str) -> None:
    outcome = recorded_outcome(_task(GOLDEN), _view(scored=_scored(label=label)), AGENT)
    assert outcome is not None
    assert (outcome.passed, outcome.gated) == (False, True)
