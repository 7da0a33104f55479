"""``x-wopeval-user`` with ``kind: "llm"``: its shape and rules, refused before any trial runs
with every error at once, each naming its own field (never a union's tag); described in
``wopeval schema suite``; ``--user-model`` / ``--user-base-url`` replace every LLM user's."""

from __future__ import annotations

from typing import Any

import pytest

from tests.suite.test_pins import FIELD, pinned
from tests.suite.test_pins import errors_of as pin_errors
from tests.suite.test_pins import suite as pin_suite
from tests.suite.test_user_script import doc, errors_of
from wopeval.suite import parse_suite
from wopeval.suite.json_schemas import suite_json_schema
from wopeval.suite.models import Task
from wopeval.suite.pins import PIN_KEY
from wopeval.suite.user import ScriptedUser
from wopeval.suite.user_llm import (
    DEFAULT_MAX_REPLY_CHARS,
    DEFAULT_STOP_PHRASE,
    LlmUser,
)
from wopeval.suite.user_override import with_user_model

AT = "tasks[0].x-wopeval-user"
PLAIN = {"kind": "llm", "model": "m", "persona": "A traveller.", "instructions": "Move it."}


def test_33_2_the_plainest_llm_user() -> None:
    user = parse_suite(doc(PLAIN)).tasks[0].x_wopeval_user
    assert isinstance(user, LlmUser)
    assert (user.max_turns, user.stop_phrase, user.max_reply_chars) == (
        10, DEFAULT_STOP_PHRASE, DEFAULT_MAX_REPLY_CHARS
    )  # fmt: skip
    assert user.baseUrl is None
    assert user.facts is None
    assert user.price is None


def test_33_2_every_member_of_a_full_llm_user_is_read() -> None:
    full = {**PLAIN, "facts": ["Ref ABC123"], "stopPhrase": "<END>", "maxTurns": 3.0,
            "maxReplyChars": 100, "baseUrl": "https://h/v1", "apiKeyEnv": "USER_KEY",
            "temperature": 0.5, "seed": 7,
            "price": {"inputPerMTok": 1, "outputPerMTok": 2}}  # fmt: skip
    user = parse_suite(doc(full)).tasks[0].x_wopeval_user
    assert isinstance(user, LlmUser)
    assert (user.max_turns, user.stop_phrase, user.max_reply_chars) == (3, "<END>", 100)
    assert user.price is not None
    assert user.price.cost(1_000_000, 500_000) == 2.0
    priced = LlmUser.model_validate({**PLAIN, "price": {"inputPerMTok": 2, "outputPerMTok": 4}})
    assert priced.price is not None
    assert priced.price.cost(3_000_000, 1_000_000) == 10.0  # (3·2 + 1·4) USD


def test_33_2_a_user_built_in_code_is_kept_as_it_is() -> None:
    user = LlmUser.model_validate(PLAIN)
    expected = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}
    task = Task.model_validate({"taskId": "a", "input": "x", "expected": expected,
                                "x-wopeval-user": user})  # fmt: skip
    assert task.x_wopeval_user == user


def test_33_2_every_malformed_member_is_refused_at_once_naming_its_field() -> None:
    bad = {"kind": "llm", "model": "", "persona": "", "instructions": 5, "facts": [""],
           "stopPhrase": "", "maxTurns": 0, "maxReplyChars": 100_001, "baseUrl": "ftp://h",
           "apiKeyEnv": "1KEY", "temperature": 2.5, "seed": 1.5,
           "price": {"inputPerMTok": -1}, "extra": 1}  # fmt: skip
    errors = errors_of(bad)
    fields = [error.split(":")[0] for error in errors]
    assert fields == [
        f"{AT}.model", f"{AT}.persona", f"{AT}.instructions", f"{AT}.facts[0]",
        f"{AT}.stopPhrase", f"{AT}.maxTurns", f"{AT}.maxReplyChars", f"{AT}.baseUrl",
        f"{AT}.apiKeyEnv", f"{AT}.temperature", f"{AT}.seed", f"{AT}.price.inputPerMTok",
        f"{AT}.price.outputPerMTok", f"{AT}.extra",
    ]  # fmt: skip
    assert f"{AT}.instructions: expected a string, got integer" in errors


NO_MODEL = {k: v for k, v in PLAIN.items() if k != "model"}


@pytest.mark.parametrize(
    ("user", "error"),
    [
        (NO_MODEL, f"{AT}.model: required"),
        ({"model": "m", "persona": "P"}, f"{AT}.kind: required"),
        ("a user", f"{AT}: expected an object, got string"),
        ([PLAIN], f"{AT}: expected an object, got array"),
        ({"kind": "robot"}, f"{AT}.kind: 'robot' is not one of scripted, llm"),
        ({**PLAIN, "kind": None}, f"{AT}.kind: null is not one of scripted, llm"),
        ({**PLAIN, "replies": []}, f"{AT}.replies: unknown field"),
        ({**PLAIN, "maxTurns": 1001}, f"{AT}.maxTurns: 1001 is greater than the maximum 1000"),
        ({**PLAIN, "model": "x" * 201}, f"{AT}.model: must be at most 200 characters"),
        ({**PLAIN, "temperature": None}, f"{AT}.temperature: null is not allowed"),
    ],
)
def test_33_2_malformed_llm_user_refused_naming_the_field(user: Any, error: str) -> None:
    errors = errors_of(user)
    assert any(e.startswith(error) for e in errors), errors


def test_33_2_blank_texts_and_a_revealing_fact_are_refused_together() -> None:
    user = {**PLAIN, "persona": "  ", "instructions": "\n", "stopPhrase": "DONE",
            "facts": ["ok", " ", "say DONE now"]}  # fmt: skip
    assert errors_of(user) == [
        f"{AT}.persona: the persona is blank",
        f"{AT}.instructions: the instructions is blank",
        f"{AT}.facts[1]: the fact is blank",
        f"{AT}.stopPhrase: a fact holds the stop phrase: revealing it would end the conversation",
    ]
    assert errors_of({**PLAIN, "stopPhrase": " "}) == [f"{AT}.stopPhrase: the stop phrase is blank"]
    assert errors_of({**PLAIN, "facts": ["say ###STOP###"]}) == [  # the default phrase too
        f"{AT}.stopPhrase: a fact holds the stop phrase: revealing it would end the conversation"
    ]


def test_33_2_the_schema_describes_both_kinds() -> None:
    schema = suite_json_schema()
    defs = schema["$defs"]
    assert isinstance(defs, dict)
    member = defs["Task"]["properties"]["x-wopeval-user"]
    assert member["discriminator"]["mapping"] == {
        "llm": "#/$defs/LlmUser", "scripted": "#/$defs/ScriptedUser"
    }  # fmt: skip
    assert "played by a model" in member["description"]
    llm = defs["LlmUser"]
    assert set(llm["required"]) == {"kind", "model", "persona", "instructions"}
    assert llm["additionalProperties"] is False


def test_33_2_user_model_overrides_replace_every_llm_users_only() -> None:
    scripted = {"kind": "scripted", "replies": [{"when": {"literal": "a"}, "reply": "b"}]}
    base = doc(PLAIN)
    base["tasks"].append({**base["tasks"][0], "taskId": "b", "x-wopeval-user": scripted})
    base["tasks"].append({**base["tasks"][0], "taskId": "c"})
    del base["tasks"][2]["x-wopeval-user"]
    suite = parse_suite(base)
    assert with_user_model(suite, None, None) is suite
    changed = with_user_model(suite, "big-model", "http://u/v1")
    first, second, third = (task.x_wopeval_user for task in changed.tasks)
    assert isinstance(first, LlmUser)
    assert (first.model, first.baseUrl, first.persona) == (
        "big-model",
        "http://u/v1",
        "A traveller.",
    )
    assert isinstance(second, ScriptedUser)
    assert third is None
    only_url = with_user_model(suite, None, "http://v/v1").tasks[0].x_wopeval_user
    assert isinstance(only_url, LlmUser)
    assert (only_url.model, only_url.baseUrl) == (
        "m",
        "http://v/v1",
    )
    original = suite.tasks[0].x_wopeval_user
    assert isinstance(original, LlmUser)
    assert original.model == "m"


def test_33_2_a_pin_past_an_llm_users_max_turns_is_refused() -> None:
    user = {**PLAIN, "maxTurns": 2}
    assert pin_errors(pin_suite(pinned(2), user=user)) == []
    assert pin_errors(pin_suite(pinned(3), user=user)) == [
        f"{FIELD}[0].{PIN_KEY}.turn: turn 3 is above maxTurns = 2 (the agent's turns are 0 to 2)"
    ]
