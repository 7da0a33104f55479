"""A framework agent's tool call whose argument text is not a JSON object is recorded (its name
and the raw text, marked malformed), never executed, and answered with an error: trajectory rules
and ``forbidden`` see the attempt (RFC 0244 §A, §D fail closed). Each framework's own loop runs:
pydantic-ai on its ``FunctionModel``, the Agents SDK against the scripted OpenAI-compatible
server on loopback, LangChain's ``create_agent`` on a scripted chat model whose message carries
the call in ``invalid_tool_calls`` (how its integrations report unparsable arguments)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from openai import AsyncOpenAI

from tests.agents.apps import unreadable
from tests.agents.helpers import AgentRan
from tests.engine.helpers import make_suite, run_suite
from wopeval.agents.adapters import adapt
from wopeval.agents.scripted_openai import Reply, ScriptedOpenAI, call
from wopeval.engine.agent import INVALID_ARGUMENTS, MALFORMED_ARGUMENTS
from wopeval.engine.registry import Registry
from wopeval.events.store import EventStore
from wopeval.wire.vocab import TOOL_CALLED, TOOL_RETURNED

AGENT_ID = "core.test.agents.framework"


def sdk_client(server: ScriptedOpenAI) -> AsyncOpenAI:
    return AsyncOpenAI(base_url=server.base_url, api_key="not-needed", max_retries=0)


TRUNCATED = '{"order_id": "A1"'


def _suite(expected: str, *, forbidden: bool = True, fixtured: bool = True) -> Any:
    task: dict[str, Any] = {
        "taskId": "refund",
        "input": "Refund order A1.",
        "expected": {"kind": "golden", "match": {"strategy": "contains", "value": expected}},
    }
    if forbidden:
        trajectory = {"match": "any-order", "calls": [], "forbidden": ["refund_all"]}
        task["expected"]["trajectory"] = trajectory
    if fixtured:
        response = {"status": "late"}
        entry = {"tool": "lookup_order", "args": {"order_id": "A1"}, "response": response}
        task["fixtures"] = {"toolResponses": [entry], "onMiss": "fail"}
    return make_suite([task])


async def _run(store: EventStore, agent: Any, suite: Any) -> AgentRan:
    registry = Registry()
    registry.register_agent(AGENT_ID, adapt(agent))
    ran = await run_suite(store, suite, agent_id=AGENT_ID, registry=registry)
    return AgentRan(ran.run_id, ran.summary, ran.events)


def _assert_recorded_refused(ran: AgentRan, text: str) -> None:
    (called,) = ran.of_type(TOOL_CALLED)
    assert called.payload["toolName"] == "refund_all"
    assert called.payload["inputs"] == {MALFORMED_ARGUMENTS: text}
    (returned,) = ran.of_type(TOOL_RETURNED)
    assert returned.payload["status"] == "error"
    assert returned.payload["error"]["code"] == INVALID_ARGUMENTS
    assert "x-wopeval-fixture" not in returned.payload  # the gateway never saw it
    assert unreadable.REAL_CALLS == []


def _assert_forbidden(ran: AgentRan) -> None:
    assert not ran.done.passed
    (reason,) = ran.reasons()
    assert reason["kind"] == "trajectory", reason
    assert "forbidden tool refund_all" in reason["message"]


@pytest.mark.parametrize("text", [TRUNCATED, '["A1"]', "null", "A1"])
async def test_0244_A_pydantic_ai_malformed_arguments_fail_forbidden(
    store: EventStore, text: str
) -> None:
    ran = await _run(store, unreadable.pydantic_agent(text), _suite("InvalidToolArguments"))
    _assert_recorded_refused(ran, text)
    _assert_forbidden(ran)  # the output matched: only the recorded attempt fails the trial


async def test_0244_A_openai_agents_malformed_arguments_fail_forbidden(store: EventStore) -> None:
    script = [Reply(tool_calls=(call("refund_all", TRUNCATED),)), Reply(content="done")]
    with ScriptedOpenAI(script) as server:
        async with sdk_client(server) as client:
            ran = await _run(store, unreadable.sdk_agent(client), _suite("done"))
        told = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    _assert_recorded_refused(ran, TRUNCATED)
    _assert_forbidden(ran)
    assert json.loads(told[0]["content"])["error"]["code"] == INVALID_ARGUMENTS


async def test_0244_A_langgraph_invalid_tool_calls_fail_forbidden(store: EventStore) -> None:
    invalid = {"name": "refund_all", "args": TRUNCATED, "id": "t1", "error": "bad JSON",
               "type": "invalid_tool_call"}  # fmt: skip
    turns = [AIMessage(content="done", invalid_tool_calls=[invalid])]
    ran = await _run(store, unreadable.langchain_agent(turns), _suite("done"))
    _assert_recorded_refused(ran, TRUNCATED)
    _assert_forbidden(ran)


async def test_plainest_task_a_malformed_call_is_recorded_and_the_trial_still_grades(
    store: EventStore,
) -> None:
    suite = _suite("InvalidToolArguments", forbidden=False, fixtured=False)
    ran = await _run(store, unreadable.pydantic_agent(TRUNCATED), suite)
    _assert_recorded_refused(ran, TRUNCATED)
    assert ran.done.passed, ran.reasons()  # no rule against it: the model was told, and answered


async def test_valid_arguments_still_reach_the_gateway(store: EventStore) -> None:
    ran = await _run(store, unreadable.pydantic_agent('{"order_id": "A1"}'), _suite("ok"))
    (called,) = ran.of_type(TOOL_CALLED)
    assert called.payload["inputs"] == {"order_id": "A1"}
    (reason,) = ran.reasons()
    assert reason["kind"] == "fixture-miss"  # refund_all has no fixture: fails closed as before


async def test_0244_D_a_refused_call_is_not_recorded_as_a_fixture(store: EventStore) -> None:
    from wopeval.exports.record import record_suite

    suite = _suite("InvalidToolArguments", forbidden=False, fixtured=False)
    ran = await _run(store, unreadable.pydantic_agent(TRUNCATED), suite)
    assert len(ran.of_type(TOOL_CALLED)) == 1
    document = suite.model_dump(mode="json", exclude_none=True)
    recorded, _ = record_suite(document, ran.events)
    assert recorded["tasks"][0]["fixtures"] == {"onMiss": "fail", "toolResponses": []}


async def test_a_langgraph_invalid_call_without_name_or_text_is_still_recorded(
    store: EventStore,
) -> None:
    invalid = {"name": None, "args": None, "id": None, "error": None, "type": "invalid_tool_call"}
    turns = [AIMessage(content="done", invalid_tool_calls=[invalid])]
    ran = await _run(store, unreadable.langchain_agent(turns), _suite("done", forbidden=False))
    (called,) = ran.of_type(TOOL_CALLED)
    assert called.payload["toolName"] == "unnamed-tool"
    assert called.payload["inputs"] == {MALFORMED_ARGUMENTS: ""}
    assert ran.done.passed, ran.reasons()  # recorded; nothing in the suite forbids it
