"""The OpenAI-compatible agent converses with a scripted user (``x-wopeval-user``) through the
real ``openai`` SDK against the scripted server on a loopback socket: the conversation is the
message list; it ends on the user's stop or the model's ``final_answer`` call; a user miss ends
the trial with no further model call."""

from __future__ import annotations

import json
from typing import Any

from tests.agents.helpers import AGENT_ID, agent_registry, fixture
from tests.engine.helpers import make_suite, run_suite
from wopeval.agents.openai_compat import FINAL_ANSWER_TOOL
from wopeval.agents.scripted_openai import Reply, ScriptedOpenAI, call
from wopeval.agents.toolnames import ToolNames
from wopeval.events.store import EventStore
from wopeval.wire.vocab import EVAL_SCORED, TOOL_CALLED, TRIAL_FAILED, USER_TURN

LOOKUP = "crm:lookup-booking"
API = ToolNames([LOOKUP]).api(LOOKUP)
KEY = "x-wopeval-user"


def _suite(expected: str, *replies: dict[str, Any], **extra: Any) -> Any:
    task: dict[str, Any] = {
        "taskId": "change",
        "input": "I want to change my flight.",
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": expected}},
        KEY: {"kind": "scripted", "replies": list(replies)},
        **extra,
    }
    return make_suite([task])


def _roles(request: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(m["role"], m.get("content")) for m in request["messages"][1:]]


async def test_33_2_openai_agent_converses_over_several_turns_until_the_user_stops(
    store: EventStore,
) -> None:
    script = [
        Reply(content="What is your booking reference?"),
        Reply(tool_calls=(call(API, {"ref": "ABC123"}),)),
        Reply(content="Moved ABC123 to Friday. Anything else?"),
        Reply(content="Done: ABC123 moved to Friday."),
    ]
    replies: list[dict[str, Any]] = [
        {"when": {"regex": "(?i)booking reference"}, "reply": "ABC123"},
        {"when": {"literal": "Moved ABC123 to Friday. Anything else?"}, "reply": "No, thanks."},
        {"when": {"regex": "^Done"}, "reply": "Bye", "stop": True},
    ]
    fixtures = {"toolResponses": [fixture(LOOKUP, {"ref": "ABC123"}, {"ok": True})]}
    suite = _suite("Done: ABC123 moved to Friday.", *replies, fixtures=fixtures)
    with ScriptedOpenAI(script) as server:
        ran = await run_suite(store, suite, agent_id=AGENT_ID, registry=agent_registry(server))
    assert ran.done.passed
    kinds = [(t.payload["turn"], t.payload["kind"]) for t in ran.of_type(USER_TURN)]
    assert kinds == [(0, "reply"), (1, "reply"), (2, "stop")]
    assert [e.payload["toolName"] for e in ran.of_type(TOOL_CALLED)] == [LOOKUP]
    assert len(server.requests) == 4
    # The conversation is the message list: each user reply follows the message it answers.
    assert _roles(server.requests[1]) == [
        ("user", "I want to change my flight."),
        ("assistant", "What is your booking reference?"),
        ("user", "ABC123"),
    ]
    last = _roles(server.requests[3])
    assert last[-2:] == [("assistant", "Moved ABC123 to Friday. Anything else?"),
                         ("user", "No, thanks.")]  # fmt: skip
    offered = [t["function"]["name"] for t in server.requests[0]["tools"]]
    assert offered == [API, FINAL_ANSWER_TOOL]


async def test_33_2_openai_agent_ends_the_conversation_with_final_answer(
    store: EventStore,
) -> None:
    script = [
        Reply(content="Which date?"),
        Reply(tool_calls=(call(FINAL_ANSWER_TOOL, {"answer": "Friday"}),)),
    ]
    suite = _suite("Friday", {"when": {"literal": "Which date?"}, "reply": "Friday"})
    with ScriptedOpenAI(script) as server:
        ran = await run_suite(store, suite, agent_id=AGENT_ID, registry=agent_registry(server))
    assert ran.done.passed
    assert ran.of_type(TOOL_CALLED) == []  # the final answer is no tool call of the task
    assert [t.payload["kind"] for t in ran.of_type(USER_TURN)] == ["reply"]


async def test_33_2_openai_agent_user_miss_makes_no_further_model_call(
    store: EventStore,
) -> None:
    script = [Reply(content="What's your date of birth?"), Reply(content="never asked")]
    suite = _suite("x", {"when": {"regex": "booking"}, "reply": "ABC123"})
    with ScriptedOpenAI(script) as server:
        ran = await run_suite(store, suite, agent_id=AGENT_ID, registry=agent_registry(server))
    assert len(server.requests) == 1
    assert [e.payload["scoreLabel"] for e in ran.of_type(EVAL_SCORED)] == ["user-miss"]
    reason = ran.of_type(TRIAL_FAILED)[0].payload
    assert reason["kind"] == "user-miss"
    assert "date of birth" in reason["message"]


async def test_33_2_openai_agent_single_turn_task_is_unchanged(store: EventStore) -> None:
    task = {
        "taskId": "plain",
        "input": "hi",
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "hello"}},
    }
    with ScriptedOpenAI([Reply(content="hello")]) as server:
        ran = await run_suite(
            store, make_suite([task]), agent_id=AGENT_ID, registry=agent_registry(server)
        )
    assert ran.done.passed
    assert "tools" not in server.requests[0]  # no final_answer tool without a user
    assert ran.of_type(USER_TURN) == []
    assert "x-wopeval-userSide" not in json.loads(ran.done.to_json())
