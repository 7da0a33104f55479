"""The OpenAI-compatible tool-loop agent through the real ``openai`` SDK, against a scripted
server on a real loopback socket: tool calls via the gateway, parallel calls, malformed
arguments, 429 then success, 500s, a model that never stops, cost ceilings, §H data marking."""

from __future__ import annotations

import json
from typing import Any

from tests.agents.helpers import AGENT_ID, agent_registry, fixture, one_task_suite, run_agent_suite
from tests.engine.helpers import run_suite
from wopeval.agents.openai_compat import DATA_NOTE
from wopeval.agents.scripted_openai import HttpError, Reply, ScriptedOpenAI, call
from wopeval.agents.toolnames import ToolNames
from wopeval.engine.run import RunSettings
from wopeval.events.store import EventStore
from wopeval.wire.vocab import PROVIDER_USAGE, TOOL_CALLED, TOOL_RETURNED, TRIAL_FAILED, X_FIXTURE

LOOKUP = "crm:lookup-order"
API = ToolNames([LOOKUP]).api(LOOKUP)


def _tool_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


async def test_0244_D_tool_calls_go_through_the_gateway_under_their_real_name(
    store: EventStore,
) -> None:
    script = [Reply(tool_calls=(call(API, {"orderId": "A1"}),)), Reply(content="refund")]
    with ScriptedOpenAI(script) as server:
        ran = await run_agent_suite(
            store, server, [fixture(LOOKUP, {"orderId": "A1"}, {"status": "late"})], "refund"
        )
    assert ran.done.passed
    called = [e.payload for e in ran.of_type(TOOL_CALLED)]
    assert [(c["toolName"], c["inputs"]) for c in called] == [(LOOKUP, {"orderId": "A1"})]
    assert [e.payload[X_FIXTURE] for e in ran.of_type(TOOL_RETURNED)] == ["served"]
    first, second = server.requests
    assert first["messages"][1] == {"role": "user", "content": "Where is order A1?"}
    assert [t["function"]["name"] for t in first["tools"]] == [API]
    # The fixture's response reaches the model as data marked untrusted (RFC 0244 §H).
    assert _tool_messages(second) == [
        {"trust": "untrusted", "ok": True, "data": {"status": "late"}}
    ]
    assert DATA_NOTE in second["messages"][0]["content"]


async def test_parallel_tool_calls_run_and_are_recorded_in_the_models_order(
    store: EventStore,
) -> None:
    calls = tuple(call(API, {"orderId": o}) for o in ("B", "A", "C"))
    fixtures = [fixture(LOOKUP, {"orderId": o}, {"order": o}) for o in ("A", "B", "C")]
    with ScriptedOpenAI([Reply(tool_calls=calls), Reply(content="refund")]) as server:
        ran = await run_agent_suite(store, server, fixtures, "refund")
    assert [e.payload["inputs"]["orderId"] for e in ran.of_type(TOOL_CALLED)] == ["B", "A", "C"]
    answers = _tool_messages(server.requests[1])
    assert [a["data"]["order"] for a in answers] == ["B", "A", "C"]
    assert ran.done.passed


async def test_0244_D_a_miss_fails_closed_and_the_model_sees_the_error(store: EventStore) -> None:
    live_calls: list[Any] = []

    async def live(args: Any) -> Any:
        live_calls.append(args)
        return {"status": "live"}

    script = [Reply(tool_calls=(call(API, {"orderId": "ZZ"}),)), Reply(content="refund")]
    with ScriptedOpenAI(script) as server:
        registry = agent_registry(server, tools={LOOKUP: live})
        fixtures = [fixture(LOOKUP, {"orderId": "A1"}, {"status": "late"})]
        ran = await run_agent_suite(store, server, fixtures, "refund", registry=registry)
    assert live_calls == []
    assert not ran.done.passed
    assert _tool_messages(server.requests[1])[0]["error"]["code"] == "wopeval.fixture_miss"


async def test_malformed_arguments_are_a_recorded_explained_failure(store: EventStore) -> None:
    script = [Reply(tool_calls=(call(API, '{"orderId": "A1"'),)), Reply(content="refund")]
    with ScriptedOpenAI(script) as server:
        fixtures = [fixture(LOOKUP, {"orderId": "A1"}, {"status": "late"})]
        ran = await run_agent_suite(store, server, fixtures, "refund")
    assert ran.summary is not None  # the run completed; only the trial failed
    (reason,) = ran.reasons()
    assert reason["kind"] == "agent-error"
    assert "InvalidToolArguments" in reason["message"]
    assert "not valid JSON" in reason["message"]
    assert ran.of_type(TOOL_CALLED) == []


async def test_rate_limited_then_success_is_retried_by_the_sdk(store: EventStore) -> None:
    limited = HttpError(429, "slow down", {"retry-after-ms": "5"})
    with ScriptedOpenAI([limited, Reply(content="refund")]) as server:
        ran = await run_agent_suite(store, server, [], "refund")
    assert len(server.requests) == 2
    assert ran.done.passed


async def test_server_errors_are_an_infrastructure_failure_not_a_wrong_answer(
    store: EventStore,
) -> None:
    failing = HttpError(500, "boom", {"retry-after-ms": "1"})
    with ScriptedOpenAI([failing], repeat_last=True) as server:
        ran = await run_agent_suite(store, server, [], "refund", agent={"maxRetries": 2})
    assert len(server.requests) == 3  # one call and the SDK's two bounded retries
    (reason,) = ran.reasons()
    assert reason["kind"] == "infrastructure"
    assert reason["message"].startswith("infrastructure: ModelUnavailable: the model server at ")
    assert "HTTP 500" in reason["message"]


async def test_a_model_that_never_stops_is_stopped_by_max_turns(store: EventStore) -> None:
    looping = Reply(tool_calls=(call(API, {"orderId": "A1"}),))
    with ScriptedOpenAI([looping], repeat_last=True) as server:
        ran = await run_agent_suite(store, server, [], "refund", agent={"maxTurns": 4})
    assert len(server.requests) == 4
    (reason,) = ran.reasons()
    assert "AgentStopped: maxTurns" in reason["message"]
    assert len(ran.of_type(PROVIDER_USAGE)) == 4


async def test_each_model_call_is_one_usage_event_with_tokens_and_price(
    store: EventStore,
) -> None:
    script = [
        Reply(tool_calls=(call(API, {"orderId": "A1"}),), prompt_tokens=1000, completion_tokens=10),
        Reply(content="refund", prompt_tokens=2000, completion_tokens=20),
    ]
    price = {"inputPerMTok": 1.0, "outputPerMTok": 10.0}
    with ScriptedOpenAI(script) as server:
        ran = await run_agent_suite(store, server, [], "refund", agent={"price": price})
    usage = [e.payload for e in ran.of_type(PROVIDER_USAGE)]
    assert [(u["inputTokens"], u["outputTokens"]) for u in usage] == [(1000, 10), (2000, 20)]
    assert [u["costEstimateUsd"] for u in usage] == [0.0011, 0.0022]
    assert ran.done.totalCostUsd == 0.0033


async def test_0244_B_the_trial_cost_ceiling_stops_a_looping_model(store: EventStore) -> None:
    looping = Reply(tool_calls=(call(API, {}),), prompt_tokens=1_000_000, completion_tokens=0)
    agent = {"price": {"inputPerMTok": 1.0, "outputPerMTok": 1.0}, "maxCostUsd": 2.5}
    with ScriptedOpenAI([looping], repeat_last=True) as server:
        ran = await run_agent_suite(store, server, [], "refund", agent=agent)
    assert len(server.requests) == 3
    (reason,) = ran.reasons()
    assert "AgentStopped: maxCostUsd" in reason["message"]


async def test_declared_tools_are_offered_with_their_specs(store: EventStore) -> None:
    params = {"type": "object", "properties": {"orderId": {"type": "string"}}}
    tools = [{"name": LOOKUP, "description": "Look an order up.", "parameters": params}]
    with ScriptedOpenAI([Reply(content="refund")]) as server:
        await run_agent_suite(store, server, [], "refund", agent={"tools": tools})
    (offered,) = server.requests[0]["tools"]
    assert offered["function"] == {
        "name": API,
        "description": "Look an order up.",
        "parameters": params,
    }


async def test_0244_B_the_run_wide_cost_ceiling_stops_a_looping_model(store: EventStore) -> None:
    """No per-trial bound at all: the run's own ceiling (``--max-cost``) stops the loop."""
    looping = Reply(tool_calls=(call(API, {}),), prompt_tokens=1_000_000, completion_tokens=0)
    agent = {"price": {"inputPerMTok": 1.0, "outputPerMTok": 1.0}, "maxTurns": 50}
    with ScriptedOpenAI([looping], repeat_last=True) as server:
        registry = agent_registry(server, agent=agent)
        suite = one_task_suite([], "refund")
        settings = RunSettings(host_max_cost_usd=2.5)
        ran = await run_suite(store, suite, agent_id=AGENT_ID, registry=registry, settings=settings)
    assert len(server.requests) == 3  # $1, $2, $3: past the $2.50 ceiling after the third call
    (reason,) = [e.payload for e in ran.of_type(TRIAL_FAILED)]
    assert "AgentStopped: cost ceiling" in reason["message"]
