"""Grading a conversation with a scripted user (pure): a user miss or max-turns fails the trial
with score 0 whatever the output, the reason names the unmatched message and the replies left,
and the summary counts the user side apart (``x-wopeval-userSide``)."""

from __future__ import annotations

from typing import Any

from wopeval.grading.reasons import Verdict, explain
from wopeval.grading.trial import grade_trial, recorded_outcome
from wopeval.grading.user_reasons import user_reasons
from wopeval.grading.views import TrialView, _user_turn
from wopeval.suite import parse_suite
from wopeval.suite.models import Task
from wopeval.suite.user import ScriptedUser, WhenLiteral
from wopeval.wire.events import EvalScored, UserTurn

TARGET = "core.test.talker"
KEY = "x-wopeval-user"


def _task(**user: Any) -> Task:
    replies = [
        {"when": {"literal": "ref?"}, "reply": "ABC"},
        {"when": {"regex": "^bye"}, "reply": "ok", "stop": True},
        {"when": {"json": {"ask": "seat"}}, "reply": "3A"},
    ]
    doc = {
        "suiteId": "core.acme.evals.talk",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [
            {
                "taskId": "t",
                "input": {},
                "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "done"}},
                KEY: {"kind": "scripted", "replies": replies, "order": "keyed", **user},
            }
        ],
    }
    return parse_suite(doc).tasks[0]


def _view(*turns: tuple[str, Any, int | None], output: Any = "done") -> TrialView:
    view = TrialView(task_id="t", trial_index=0, root_event_id="e", root_agent_id=TARGET)
    view.output, view.has_output, view.outcome = output, True, "completed"
    for number, (kind, message, index) in enumerate(turns):
        payload = UserTurn(agentId=TARGET, turn=number, kind=kind, message=message,
                           replyIndex=index)  # fmt: skip
        _user_turn(view, payload)
    return view


def test_33_2_a_conversation_that_stopped_is_graded_on_its_output() -> None:
    view = _view(("reply", "ref?", 0), ("stop", "bye", 1))
    grade = grade_trial(_task(), view, target_agent_id=TARGET, pass_score=1.0)
    assert (grade.passed, grade.score, grade.label) == (True, 1.0, "pass")
    assert view.user_turns == 2
    assert view.user_replies == [0, 1]
    assert view.user_end == "stop"


def test_33_2_a_user_miss_fails_with_score_0_whatever_the_output() -> None:
    view = _view(("reply", "ref?", 0), ("miss", "what?", None), ("ended", "bye", None))
    grade = grade_trial(_task(), view, target_agent_id=TARGET, pass_score=1.0)
    assert (grade.passed, grade.score, grade.label, grade.gated) == (False, 0.0, "user-miss", True)
    assert view.user_turns == 2  # the answer after the end is no turn
    assert view.user_missed == "what?"
    verdict = Verdict(False, 0.0, "user-miss", None, 1.0)
    reason = explain(_task(), view, verdict, target_agent_id=TARGET)
    assert reason is not None
    assert reason.kind == "user-miss"
    assert reason.message == (
        'user miss (onMiss: fail): the user\'s script has no reply to "what?" (unconsumed '
        'then: #1 regex "^bye", #2 json {"ask": "seat"})'
    )
    assert reason.details["left"] == [
        {"index": 1, "when": 'regex "^bye"'},
        {"index": 2, "when": 'json {"ask": "seat"}'},
    ]
    assert reason.reasons is None  # the output is not graded on its own after a miss


def test_33_2_a_recorded_pass_the_log_contradicts_fails_closed() -> None:
    view = _view(("miss", "what?", None))
    view.scored = EvalScored(taskId="t", score=1.0, passed=True, scoreLabel="pass",
                             evaluatorType="deterministic")  # fmt: skip
    outcome = recorded_outcome(_task(), view, TARGET)
    assert outcome is not None
    assert (outcome.passed, outcome.gated) == (False, True)
    turns = _view(("max-turns", "ref?", None))
    turns.scored = view.scored
    assert recorded_outcome(_task(), turns, TARGET) == outcome


def test_33_2_max_turns_fails_as_the_agents_and_names_the_limit() -> None:
    view = _view(("reply", "ref?", 0), ("max-turns", "seat", None))
    grade = grade_trial(_task(maxTurns=1), view, target_agent_id=TARGET, pass_score=1.0)
    assert (grade.passed, grade.score, grade.label) == (False, 0.0, "max-turns")
    (reason,) = user_reasons(_task(maxTurns=1), view)
    assert reason.kind == "max-turns"
    assert reason.message == "max-turns: the agent sent the user more than maxTurns = 1 messages"
    assert reason.details == {"maxTurns": 1}


def test_33_2_a_miss_after_every_reply_was_consumed_says_so() -> None:
    view = _view(("reply", "ref?", 0), ("reply", '{"ask":"seat"}', 2), ("stop", "bye", 1))
    view.user_end = "miss"  # as if a later message had missed
    view.user_missed = "x" * 100
    (reason,) = user_reasons(_task(), view)
    shortened = '"' + "x" * 58 + "…"  # 60 characters of its JSON
    assert reason.message == (
        f"user miss (onMiss: fail): the user's script has no reply to {shortened} "
        "(every reply was consumed by then)"
    )
    assert reason.details == {"message": "x" * 100, "repliesServed": [0, 2, 1], "left": []}


def test_33_2_exactly_three_replies_left_are_all_listed() -> None:
    (reason,) = user_reasons(_task(), _view(("miss", "q", None)))
    assert reason.message.endswith('#2 json {"ask": "seat"})')
    assert " more" not in reason.message


def test_33_2_a_long_reason_is_cut_at_300_characters() -> None:
    task = _task()
    script = task.x_wopeval_user
    assert isinstance(script, ScriptedUser)
    long = [r.model_copy(update={"when": WhenLiteral(literal="y" * 80)}) for r in script.replies]
    wide = task.model_copy(update={"x_wopeval_user": script.model_copy(update={"replies": long})})
    (reason,) = user_reasons(wide, _view(("miss", "z" * 80, None)))
    assert len(reason.message) == 300


def test_33_2_max_turns_without_the_script_says_so() -> None:
    task = _task().model_copy(update={"x_wopeval_user": None})
    (reason,) = user_reasons(task, _view(("max-turns", "q", None)))
    assert reason.message == (
        "max-turns: the agent sent the user more than maxTurns = None messages"
    )
    assert user_reasons(task, _view(("miss", "q", None)))[0].details["left"] == []


def test_33_2_the_reason_lists_three_replies_then_a_count() -> None:
    view = _view(("miss", "q", None))
    task = _task()
    script = task.x_wopeval_user
    assert isinstance(script, ScriptedUser)
    many = script.model_copy(update={"replies": [*script.replies, *script.replies]})
    (reason,) = user_reasons(task.model_copy(update={"x_wopeval_user": many}), view)
    assert reason.message.endswith(" and 3 more)")
    assert '#2 json {"ask": "seat"} and 3 more' in reason.message


def test_33_2_no_reason_without_a_user_end_on_the_agents_side() -> None:
    assert user_reasons(_task(), _view(("reply", "ref?", 0))) == []
    assert user_reasons(_task(), _view(("stop", "bye", 1))) == []
    assert user_reasons(_task(), _view()) == []
