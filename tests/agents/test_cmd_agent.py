"""``--agent-cmd``: an agent in another process reaches the trial's gateway over a per-trial MCP
endpoint (Streamable HTTP on loopback): fixtures, fail-closed misses and the trajectory hold as
for an in-process agent; the endpoint takes only its trial's token and dies with the trial."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.agents.helpers import AgentRan
from tests.engine.helpers import make_suite, run_suite
from wopeval.engine.cmd_agent import CommandAgent
from wopeval.engine.registry import Registry
from wopeval.events.store import EventStore
from wopeval.wire.vocab import TOOL_CALLED, TOOL_RETURNED, X_FIXTURE

# A subprocess per trial. SQLite only: fixtures, fail-closed misses and agent-error reasons
# are the engine's, recorded on both stores by tests/engine/test_fixtures_gateway.py and
# tests/engine/test_failure_reasons.py; here the process and its endpoint are the point.
SQLITE_ONLY = pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)

PROG = Path(__file__).parent / "progs" / "mcp_agent.py"
AGENT_ID = "core.test.agents.cmd"
LOOKUP = "crm:lookup-order"
TOOLS = {LOOKUP: {"type": "object", "additionalProperties": True}}  # the fixtured tool's spec


class Counting:
    def __init__(self) -> None:
        self.calls: list[Any] = []

    async def __call__(self, args: Any) -> Any:
        self.calls.append(args)
        return {"live": True}


async def _run(
    store: EventStore, task_input: Any, expected: Any, live: Counting | None = None
) -> AgentRan:
    registry = Registry()
    registry.register_agent(AGENT_ID, CommandAgent(f"{sys.executable} {PROG}"))
    if live is not None:
        registry.register_tool(LOOKUP, live)
    fixtures = {
        "toolResponses": [
            {
                "tool": LOOKUP,
                "args": {"orderId": "A1"},
                "argsMatch": "exact",
                "response": {"status": "late"},
            }
        ],
        "onMiss": "fail",
    }
    task = {
        "taskId": "cmd",
        "input": task_input,
        "fixtures": fixtures,
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": expected}},
    }
    ran = await run_suite(store, make_suite([task]), agent_id=AGENT_ID, registry=registry)
    return AgentRan(ran.run_id, ran.summary, ran.events)


@SQLITE_ONLY
async def test_0244_D_a_command_agent_calls_the_trials_gateway_over_mcp(
    store: EventStore,
) -> None:
    calls = [{"tool": LOOKUP, "args": {"orderId": "A1"}}]
    served = [{"isError": False, "text": ['{"status": "late"}']}]
    ran = await _run(store, {"calls": calls}, {"tools": TOOLS, "results": served})
    assert ran.done.passed, ran.reasons()
    assert [e.payload["toolName"] for e in ran.of_type(TOOL_CALLED)] == [LOOKUP]
    assert [e.payload[X_FIXTURE] for e in ran.of_type(TOOL_RETURNED)] == ["served"]


@SQLITE_ONLY
async def test_0244_D_a_command_agents_miss_fails_closed(store: EventStore) -> None:
    live = Counting()
    calls = [{"tool": LOOKUP, "args": {"orderId": "ZZ"}}]
    ran = await _run(store, {"calls": calls}, {"results": [{"isError": True}]}, live)
    assert live.calls == []
    assert not ran.done.passed
    (reason,) = ran.reasons()
    assert reason["kind"] == "fixture-miss"


@SQLITE_ONLY
async def test_the_endpoint_refuses_another_token(store: EventStore) -> None:
    expected = {"wrongTokenStatus": 401, "tools": TOOLS, "results": []}
    ran = await _run(store, {"wrongToken": True}, expected)
    assert ran.done.passed, ran.reasons()


@SQLITE_ONLY
async def test_a_failing_command_is_an_agent_error_with_its_stderr(store: EventStore) -> None:
    ran = await _run(store, {"exitCode": 3}, {})
    (reason,) = ran.reasons()
    assert reason["kind"] == "agent-error"
    assert "exited with status 3" in reason["message"]


async def test_the_endpoint_dies_with_the_trial() -> None:
    from wopeval.engine.cmd_agent import trial_endpoint

    class Ctx:
        def tools(self) -> list[Any]:
            return []

    async with trial_endpoint(Ctx()) as (url, _), httpx.AsyncClient() as client:  # type: ignore[arg-type]
        alive = await client.post(url, json={}, headers={"authorization": "Bearer x"})
    assert alive.status_code == 401
    async with httpx.AsyncClient() as client:
        try:
            await client.post(url, json={})
        except httpx.ConnectError:
            return
    raise AssertionError("the endpoint still answers after the trial")
