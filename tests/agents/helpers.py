"""Helpers for agent tests: a one-task suite, a registry holding an OpenAI-compatible agent
pointed at a scripted server, and the run's failure reasons."""

from __future__ import annotations

from typing import Any

from tests.engine.helpers import Ran, make_suite, run_suite
from wopeval.agents.definition import AgentDefinition, parse_definition
from wopeval.agents.openai_compat import OpenAICompatAgent
from wopeval.agents.scripted_openai import ScriptedOpenAI
from wopeval.engine.gateway import LiveTool
from wopeval.engine.registry import Registry
from wopeval.events.store import EventStore
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.vocab import TRIAL_FAILED

AGENT_ID = "core.test.agents.llm"


def definition(base_url: str, **extra: Any) -> AgentDefinition:
    doc = {"kind": "openai-compatible", "model": "scripted-model", "baseUrl": base_url}
    return parse_definition({**doc, **extra})


def fixture(tool: str, args: Any, response: Any) -> dict[str, Any]:
    return {"tool": tool, "args": args, "argsMatch": "exact", "response": response}


def one_task_suite(fixtures: list[dict[str, Any]], expected: Any) -> AgentEvalSuite:
    task: dict[str, Any] = {
        "taskId": "refund",
        "input": "Where is order A1?",
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": expected}},
    }
    if fixtures:
        task["fixtures"] = {"toolResponses": fixtures, "onMiss": "fail"}
    return make_suite([task])


def agent_registry(
    server: ScriptedOpenAI,
    *,
    tools: dict[str, LiveTool] | None = None,
    agent: dict[str, Any] | None = None,
) -> Registry:
    registry = Registry()
    llm = OpenAICompatAgent(definition(server.base_url, **(agent or {})))
    registry.register_agent(AGENT_ID, llm)
    for name, tool in (tools or {}).items():
        registry.register_tool(name, tool)
    return registry


class AgentRan(Ran):
    def reasons(self) -> list[dict[str, Any]]:
        return [e.payload for e in self.of_type(TRIAL_FAILED)]


async def run_agent_suite(
    store: EventStore,
    server: ScriptedOpenAI,
    fixtures: list[dict[str, Any]],
    expected: Any,
    *,
    registry: Registry | None = None,
    agent: dict[str, Any] | None = None,
) -> AgentRan:
    registry = registry or agent_registry(server, agent=agent)
    suite = one_task_suite(fixtures, expected)
    ran = await run_suite(store, suite, agent_id=AGENT_ID, registry=registry)
    return AgentRan(ran.run_id, ran.summary, ran.events)
