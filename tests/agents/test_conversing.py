"""The one final-answer and user-turn rule every model loop shares (``agents/conversing.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from wopeval.agents.conversing import (
    FINAL_ANSWER_TOOL,
    FinalAnswer,
    converses,
    final_answer_of,
    message_text,
    offers_final_answer,
    user_reply,
)
from wopeval.engine.agent import ConversationEnded, TurnsExceeded, UserMiss, conversation_ended


class _Ctx:
    """Just what the rule reads of a context: ``has_user`` and ``ask_user``."""

    def __init__(self, has_user: bool, answers: list[Any] | None = None) -> None:
        self.has_user = has_user
        self.answers = list(answers or [])
        self.asked: list[Any] = []

    async def ask_user(self, message: Any) -> Any:
        self.asked.append(message)
        answer = self.answers.pop(0)
        if isinstance(answer, ConversationEnded):
            raise answer
        return answer


def test_33_4_final_answer_is_offered_on_conversational_tasks_only() -> None:
    assert offers_final_answer(_Ctx(True), ["lookup"])  # type: ignore[arg-type]
    assert not offers_final_answer(_Ctx(False), ["lookup"])  # type: ignore[arg-type]
    # A task tool already named so keeps its name and meaning.
    assert not offers_final_answer(_Ctx(True), ["lookup", FINAL_ANSWER_TOOL])  # type: ignore[arg-type]
    assert not converses(object())  # type: ignore[arg-type]  # a context from before users


@pytest.mark.parametrize(
    ("args", "output"),
    [
        ({"answer": "Friday"}, "Friday"),
        ({"answer": '{"day": "Friday"}'}, {"day": "Friday"}),  # a text that is JSON: parsed
        ({"answer": {"day": 5}}, {"day": 5}),
        ({"answer": "  padded  "}, "padded"),
        ({}, None),
        ("not an object", None),
    ],
)
def test_33_4_final_answer_output(args: Any, output: Any) -> None:
    assert final_answer_of(args) == output


def test_33_4_the_first_final_answer_counts() -> None:
    final = FinalAnswer()
    assert not final.given
    final.give({"answer": "one"})
    final.give({"answer": "two"})
    assert (final.given, final.value) == (True, "one")


def test_33_4_message_text() -> None:
    assert message_text("hi") == "hi"
    assert message_text({"a": 1}) == '{"a": 1}'


async def test_33_4_user_reply_goes_on_stops_or_ends_the_trial() -> None:
    ctx = _Ctx(True, ["ABC123", {"date": "Fri"}, conversation_ended("stop", "Bye")])
    first = await user_reply(ctx, "ref?")  # type: ignore[arg-type]
    assert first is not None
    assert (first.reply, first.text) == ("ABC123", "ABC123")
    second = await user_reply(ctx, {"ask": "date"})  # type: ignore[arg-type]
    assert second is not None
    assert second.text == '{"date": "Fri"}'
    assert await user_reply(ctx, "done") is None  # type: ignore[arg-type]  # the user stopped
    assert ctx.asked == ["ref?", {"ask": "date"}, "done"]


@pytest.mark.parametrize(("how", "kind"), [("miss", UserMiss), ("max-turns", TurnsExceeded)])
async def test_33_2_user_reply_raises_a_miss_or_max_turns(how: str, kind: type) -> None:
    ctx = _Ctx(True, [conversation_ended(how, None)])
    with pytest.raises(kind):
        await user_reply(ctx, "What's your date of birth?")  # type: ignore[arg-type]
