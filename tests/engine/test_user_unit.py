"""The scripted user's matching and cursor (:mod:`wopeval.engine.user`), pure: a boundary
table per rule, so a flipped comparison or a dropped condition fails a test next to it."""

from __future__ import annotations

from typing import Any

import pytest

from wopeval.engine.user import Answer, Conversation, when_matches
from wopeval.suite.user import ScriptedUser, WhenJson, WhenLiteral, WhenRegex
from wopeval.suite.user_regex import MAX_SUBJECT_CHARS


def script(*replies: tuple[dict[str, Any], Any, bool], **extra: Any) -> ScriptedUser:
    entries = [
        {"when": when, "reply": reply, **({"stop": True} if stop else {})}
        for when, reply, stop in replies
    ]
    return ScriptedUser.model_validate({"kind": "scripted", "replies": entries, **extra})


LIT = ({"literal": "a"}, "A", False)
LIT_B = ({"literal": "b"}, "B", False)
STOP_C = ({"literal": "c"}, "C", True)


def test_33_2_a_reply_is_consumed_once() -> None:
    talk = Conversation(script(LIT, order="keyed"))
    assert talk.answer("a") == Answer("reply", 0, 0, "A")
    assert talk.left == []
    assert talk.answer("a") == Answer("miss", 1)
    assert talk.ended == "miss"
    assert talk.turns == 2


def test_33_2_in_order_only_the_next_reply_may_match() -> None:
    talk = Conversation(script(LIT, LIT_B))
    assert talk.answer("b") == Answer("miss", 0)
    talk = Conversation(script(LIT, LIT_B))
    assert talk.answer("a").index == 0
    assert talk.answer("b") == Answer("reply", 1, 1, "B")
    assert talk.ended is None


def test_33_2_keyed_takes_the_first_unconsumed_match_in_document_order() -> None:
    twin = ({"regex": "a"}, "second", False)
    talk = Conversation(script(LIT_B, LIT, twin, order="keyed"))
    assert talk.answer("a") == Answer("reply", 0, 1, "A")
    assert talk.answer("a") == Answer("reply", 1, 2, "second")
    assert talk.left == [0]
    assert talk.answer("b") == Answer("reply", 2, 0, "B")


def test_33_2_a_stop_reply_ends_the_conversation() -> None:
    talk = Conversation(script(LIT, STOP_C))
    talk.answer("a")
    assert talk.answer("c") == Answer("stop", 1, 1, "C")
    assert talk.ended == "stop"
    assert talk.answer("a") == Answer("ended", 2)
    assert talk.turns == 2  # an answer after the end is no turn


def test_33_2_after_a_miss_nothing_is_ever_answered() -> None:
    talk = Conversation(script(LIT, LIT_B, order="keyed"))
    assert talk.answer("zzz").kind == "miss"
    for message in ("a", "b", "zzz"):
        assert talk.answer(message) == Answer("ended", 1)
    assert talk.left == [0, 1]


@pytest.mark.parametrize(("max_turns", "said", "last"), [
    (1, ["a"], "reply"),
    (1, ["a", "a"], "max-turns"),
    (2, ["a", "a"], "reply"),
    (2, ["a", "a", "a"], "max-turns"),
])  # fmt: skip
def test_33_2_max_turns_boundary(max_turns: int, said: list[str], last: str) -> None:
    many = ({"literal": "a"}, "A", False)
    talk = Conversation(script(many, many, many, order="keyed", maxTurns=max_turns))
    answers = [talk.answer(message) for message in said]
    assert answers[-1].kind == last
    assert answers[-1].turn == len(said) - 1
    assert talk.ended == (None if last == "reply" else "max-turns")


def test_33_2_max_turns_defaults_to_ten() -> None:
    many = ({"regex": "."}, "x", False)
    talk = Conversation(script(*[many] * 12, order="keyed"))
    kinds = [talk.answer("q").kind for _ in range(11)]
    assert kinds == ["reply"] * 10 + ["max-turns"]


def test_33_2_each_conversation_has_its_own_cursor_and_copies() -> None:
    user = script(({"literal": "a"}, {"ref": ["A"]}, False))
    one, two = Conversation(user), Conversation(user)
    first = one.answer("a").reply
    first["ref"].append("changed")
    assert two.answer("a") == Answer("reply", 0, 0, {"ref": ["A"]})
    assert user.replies[0].reply == {"ref": ["A"]}


@pytest.mark.parametrize(("message", "matched"), [
    ("a", True), ("a ", False), ("A", False), ("", False), (["a"], False), (None, False),
])  # fmt: skip
def test_33_2_literal_is_exact_text(message: Any, matched: bool) -> None:
    assert when_matches(WhenLiteral(literal="a"), message) is matched


@pytest.mark.parametrize(("message", "matched"), [
    ("my booking ref", True), ("ref", True), ("REF", False), ("re f", False),
    ({"ref": 1}, False), (7, False),
    ("ref" + "x" * (MAX_SUBJECT_CHARS - 3), True),  # exactly the cap
    ("ref" + "x" * (MAX_SUBJECT_CHARS - 2), False),  # one over it: no regex matches
])  # fmt: skip
def test_33_2_regex_is_searched_in_text_up_to_the_cap(message: Any, matched: bool) -> None:
    assert when_matches(WhenRegex(regex="ref"), message) is matched


@pytest.mark.parametrize(("mode", "message", "matched"), [
    (None, {"ask": "ref", "why": 1}, True),
    (None, '{"ask": "ref", "why": 1}', True),
    (None, {"ask": "seat"}, False),
    (None, "ask ref", False),
    (None, "NaN", False),
    (None, '{"ask": NaN}', False),
    ("exact", {"ask": "ref"}, True),
    ("exact", {"ask": "ref", "why": 1}, False),
    ("exact", '{"ask":"ref"}', True),
    (None, {"ask": {1, 2}}, False),  # not JSON data: matches nothing
])  # fmt: skip
def test_33_2_json_pattern_on_a_structured_question(
    mode: str | None, message: Any, matched: bool
) -> None:
    when = WhenJson.model_validate(
        {"json": {"ask": "ref"}, **({"argsMatch": mode} if mode else {})}
    )
    assert when_matches(when, message) is matched


def test_33_2_json_pattern_that_is_not_an_object_compares_exactly() -> None:
    when = WhenJson.model_validate({"json": "yes"})
    assert when_matches(when, '"yes"')
    assert when_matches(when, "yes") is False  # the text yes is not JSON
    assert when_matches(WhenJson.model_validate({"json": 3}), "3")
