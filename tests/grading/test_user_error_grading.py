"""Grading a conversation whose LLM user failed (an ``error`` user turn): ``user-error``, score
0 whatever the agent answered, a recorded pass the log contradicts fails closed, the reason names
the real cause, the output is not graded on its own, and the run's user side counts it apart."""

from __future__ import annotations

from typing import Any

from tests.grading.test_user_grading import TARGET, _view
from wopeval.grading.detail import STATUS_MARK, _status
from wopeval.grading.fold import RunFold
from wopeval.grading.reasons import Verdict, explain
from wopeval.grading.summary import user_side
from wopeval.grading.trial import grade_trial, recorded_outcome
from wopeval.grading.user_reasons import NO_DETAIL, user_reasons
from wopeval.grading.views import TrialView, _user_turn
from wopeval.suite import parse_suite
from wopeval.suite.models import AgentEvalSuite, Task
from wopeval.wire.events import EvalScored, UserTurn

LLM = {"kind": "llm", "model": "m", "persona": "P", "instructions": "I"}


def _suite(user: dict[str, Any] | None = LLM, tasks: int = 1) -> AgentEvalSuite:
    expected = {"kind": "golden", "match": {"strategy": "exact", "value": "done"}}
    rows = [
        {
            "taskId": f"t{i}",
            "input": {},
            "expected": expected,
            **({"x-wopeval-user": user} if user else {}),
        }
        for i in range(tasks)
    ]
    return parse_suite({"suiteId": "core.acme.evals.talk", "version": "1.0.0",
                        "modes": ["golden"], "tasks": rows})  # fmt: skip


def _task() -> Task:
    task = _suite().tasks[0]
    return task.model_copy(update={"taskId": "t"})


def _failed_view(
    cause: str = "model-error", error: str = "HTTP 500", output: Any = "done"
) -> TrialView:
    view = _view(("reply", "ref?", None), output=output)
    _user_turn(view, UserTurn(agentId=TARGET, turn=1, kind="error", message="more?",
                              cause=cause, error=error))  # fmt: skip
    _user_turn(view, UserTurn(agentId=TARGET, turn=2, kind="ended", message="hello?"))
    return view


def test_33_2_a_user_error_fails_with_score_0_whatever_the_output() -> None:
    view = _failed_view()
    assert (view.user_end, view.user_error, view.user_turns) == (
        "error",
        ("model-error", "HTTP 500"),
        2,
    )
    grade = grade_trial(_task(), view, target_agent_id=TARGET, pass_score=1.0)
    assert (grade.passed, grade.score, grade.label, grade.gated) == (False, 0.0, "user-error", True)


def test_33_2_the_user_errors_reason_names_its_cause_not_the_agent() -> None:
    view = _failed_view("format", "the user's model answered dict, not a text")
    verdict = Verdict(False, 0.0, "user-error", None, 1.0)
    reason = explain(_task(), view, verdict, target_agent_id=TARGET)
    assert reason is not None
    assert reason.kind == "user-error"
    assert reason.message == (
        "user-error (format): the simulated user failed, not the agent: the user's model "
        "answered dict, not a text"
    )
    assert reason.details == {"cause": "format", "turn": 1,
                              "error": "the user's model answered dict, not a text"}  # fmt: skip
    assert reason.reasons is None  # the output is not graded on its own


def test_33_2_a_user_error_reason_is_cut_at_300_characters() -> None:
    (reason,) = user_reasons(_task(), _failed_view(error="e" * 400))
    assert len(reason.message) == 300


def test_33_2_an_error_turn_without_cause_is_still_a_user_error() -> None:
    view = _view(("reply", "ref?", None))
    _user_turn(view, UserTurn(agentId=TARGET, turn=1, kind="error"))
    (reason,) = user_reasons(_task(), view)
    expected = f"user-error (unknown): the simulated user failed, not the agent: {NO_DETAIL}"
    assert reason.message == expected


def test_33_2_a_view_ended_in_error_without_its_turn_still_says_user_error() -> None:
    view = _view(("reply", "ref?", None))
    view.user_end = "error"  # a view built by hand: no error turn read
    (reason,) = user_reasons(_task(), view)
    expected = f"user-error (unknown): the simulated user failed, not the agent: {NO_DETAIL}"
    assert reason.message == expected
    assert reason.details == {"cause": "unknown", "turn": 0, "error": ""}


def test_33_2_a_recorded_pass_a_user_error_contradicts_fails_closed() -> None:
    view = _failed_view()
    view.scored = EvalScored(taskId="t", score=1.0, passed=True, scoreLabel="pass",
                             evaluatorType="deterministic")  # fmt: skip
    outcome = recorded_outcome(_task(), view, TARGET)
    assert outcome is not None
    assert (outcome.passed, outcome.gated) == (False, True)
    view.scored = EvalScored(taskId="t", score=0.0, passed=False, scoreLabel="user-error",
                             evaluatorType="deterministic")  # fmt: skip
    clean = _view(("stop", "bye", None))
    clean.scored = view.scored
    gated = recorded_outcome(_task(), clean, TARGET)
    assert gated is not None
    assert gated.gated


def test_33_2_the_user_side_counts_user_errors_apart() -> None:
    suite = _suite(tasks=3)
    fold = RunFold(suite, TARGET, 1.0)
    views = [
        _failed_view(),
        _view(("stop", "bye", None)),
        _view(("stop", "bye", None), output="no"),
    ]
    for index, view in enumerate(views):
        view.task_id = f"t{index}"
        fold.tasks[index].add(view)
    side = user_side(suite, fold)
    assert side is not None
    assert (side.trials, side.passedTrials, side.userMiss, side.userError) == (3, 1, 0, 1)
    assert side.passRate == 1 / 3
    assert side.passRateExcludingUserSide == 1 / 2
    assert user_side(_suite(user=None), RunFold(_suite(user=None), TARGET, 1.0)) is None


def test_33_2_a_user_error_trial_shows_as_an_error_not_a_wrong_answer() -> None:
    view = _failed_view()
    verdict = Verdict(False, 0.0, "user-error", None, 1.0)
    reason = explain(_task(), view, verdict, target_agent_id=TARGET)
    assert _status(view, reason) == "error"
    assert STATUS_MARK[_status(view, reason)] == "E"
