"""Framework adapters: ``--agent pkg.module:obj`` recognises the framework, and the framework's
real agent loop runs offline on its own test model while the tool calls go through the trial's
gateway (fixtures replace the framework's own tools; misses fail closed; calls are recorded)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.agents.helpers import AgentRan
from tests.engine.helpers import make_suite, run_suite
from wopeval.engine.registry import Registry
from wopeval.events.store import EventStore
from wopeval.wire.vocab import PROVIDER_USAGE, TOOL_CALLED, TOOL_RETURNED, X_FIXTURE

APPS = {
    "pydantic-ai": "tests.agents.apps.pyd_app:agent",
    "openai-agents": "tests.agents.apps.oai_agents_app:agent",
    "langgraph": "tests.agents.apps.lc_app:agent",
}


def _suite(order: str) -> Any:
    fixtures = {
        "toolResponses": [
            {
                "tool": "lookup_order",
                "args": {"order_id": "A1"},
                "argsMatch": "exact",
                "response": {"status": "late"},
            }
        ],
        "onMiss": "fail",
    }
    task = {
        "taskId": "where",
        "input": f"Where is order {order}?",
        "fixtures": fixtures,
        "expected": {
            "kind": "golden",
            "match": {"strategy": "exact", "value": '{"status": "late"}'},
        },
    }
    return make_suite([task])


async def _run(store: EventStore, ref: str, order: str = "A1") -> AgentRan:
    ran = await run_suite(store, _suite(order), agent_id=ref, registry=Registry())
    return AgentRan(ran.run_id, ran.summary, ran.events)


@pytest.mark.parametrize("framework", sorted(APPS))
async def test_0244_D_fixtures_replace_the_frameworks_tools(
    store: EventStore, framework: str
) -> None:
    import importlib

    module = importlib.import_module(APPS[framework].split(":")[0])
    ran = await _run(store, APPS[framework])
    assert ran.done.passed, ran.reasons()
    assert module.REAL_CALLS == []
    called = [(e.payload["toolName"], e.payload["inputs"]) for e in ran.of_type(TOOL_CALLED)]
    assert called == [("lookup_order", {"order_id": "A1"})]
    assert [e.payload[X_FIXTURE] for e in ran.of_type(TOOL_RETURNED)] == ["served"]
    assert len(ran.of_type(PROVIDER_USAGE)) == 2  # one per model response
