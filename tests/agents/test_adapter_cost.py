"""Cost for framework agents (RFC 0244 §B Cost, §C efficiency): each model response of the
framework's own loop is one ``provider.usage`` as it arrives, priced with the agent definition's
``price``, so ``totalCostUsd``, the task's ``costUsd``, the efficiency token counts and the cost
ceilings hold for every adapter; a price or ceiling that cannot be applied is refused."""

from __future__ import annotations

import importlib
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from langchain_core.messages import AIMessage
from openai import AsyncOpenAI
from typer.testing import CliRunner

from tests.agents.apps import unreadable
from tests.agents.helpers import AgentRan
from tests.engine.helpers import make_suite, run_suite
from wopeval.agents.adapters import adapt
from wopeval.agents.build import build_agent
from wopeval.agents.definition import DefinitionError, Price, parse_definition
from wopeval.agents.scripted_openai import Reply, ScriptedOpenAI, call
from wopeval.cli.app import app
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunSettings
from wopeval.errors import UserError
from wopeval.events.store import EventStore
from wopeval.wire.vocab import PROVIDER_USAGE, TOOL_CALLED

AGENT_ID = "core.test.agents.framework"
APPS = {
    "pydantic-ai": "tests.agents.apps.pyd_app:agent",
    "openai-agents": "tests.agents.apps.oai_agents_app:agent",
    "langgraph": "tests.agents.apps.lc_app:agent",
}
PRICE = Price(inputPerMTok=2.0, outputPerMTok=8.0)
# Each looping response costs (1000·10 + 100·10) / 1e6 = $0.011: one passes a $0.001 ceiling.
DEAR = Price(inputPerMTok=10.0, outputPerMTok=10.0)
RESPONSE_USD = 0.011


def _task(**extra: Any) -> dict[str, Any]:
    fixtures = {
        "toolResponses": [
            {"tool": "lookup_order", "args": {"order_id": "A1"}, "response": {"status": "late"}}
        ]
        * 50,
        "onMiss": "fail",
    }
    expected = {"kind": "golden", "match": {"strategy": "contains", "value": "late"}}
    return {"taskId": "where", "input": "Where is order A1?", "fixtures": fixtures,
            "expected": expected, **extra}  # fmt: skip


async def _run(store: EventStore, agent: Any, suite: Any, concurrency: int = 8) -> AgentRan:
    registry = Registry()
    registry.register_agent(AGENT_ID, agent)
    settings = RunSettings(concurrency=concurrency)
    ran = await run_suite(store, suite, agent_id=AGENT_ID, registry=registry, settings=settings)
    return AgentRan(ran.run_id, ran.summary, ran.events)


def _framework_object(name: str) -> Any:
    module, attr = APPS[name].split(":")
    return getattr(importlib.import_module(module), attr)


@pytest.mark.parametrize("framework", sorted(APPS))
async def test_0244_B_every_adapters_usage_is_priced_and_counted(
    store: EventStore, framework: str
) -> None:
    agent = adapt(_framework_object(framework), price=PRICE)
    ran = await _run(store, agent, make_suite([_task()]))
    assert ran.done.passed, ran.reasons()
    usages = [e.payload for e in ran.of_type(PROVIDER_USAGE)]
    assert len(usages) == 2  # the tool call, then the answer
    for usage in usages:
        assert usage["costEstimateUsd"] == PRICE.cost(usage["inputTokens"], usage["outputTokens"])
        assert usage["costEstimateUsd"] > 0
    total = math.fsum(u["costEstimateUsd"] for u in usages)
    assert ran.done.totalCostUsd == pytest.approx(total)
    (task,) = ran.done.tasks
    assert task.costUsd == pytest.approx(total)
    assert task.efficiency is not None
    assert task.efficiency.modelCallCount == 2
    assert task.efficiency.inputTokens == sum(u["inputTokens"] for u in usages)
    assert task.efficiency.outputTokens == sum(u["outputTokens"] for u in usages)


async def test_an_unpriced_adapter_reports_tokens_without_a_cost(store: EventStore) -> None:
    ran = await _run(store, adapt(_framework_object("pydantic-ai")), make_suite([_task()]))
    usages = [e.payload for e in ran.of_type(PROVIDER_USAGE)]
    assert len(usages) == 2
    assert all("costEstimateUsd" not in u for u in usages)
    assert all(u["inputTokens"] > 0 for u in usages)


def _loop_reply() -> Reply:
    return Reply(
        tool_calls=(call("lookup_order", {"order_id": "A1"}),),
        prompt_tokens=unreadable.IN_TOKENS,
        completion_tokens=unreadable.OUT_TOKENS,
    )


def _lc_looping() -> Any:
    lookup = {"name": "lookup_order", "args": {"order_id": "A1"}, "id": "t", "type": "tool_call"}
    turn = AIMessage(content="", tool_calls=[lookup], usage_metadata=unreadable.lc_usage())
    return unreadable.langchain_agent([turn])


async def _with_looping(
    store: EventStore, framework: str, run: Callable[[Any], Any]
) -> tuple[AgentRan, int]:
    """``run(agent object)`` for a framework agent that never stops calling ``lookup_order``;
    returns its result and how many model calls the framework made."""
    if framework == "openai-agents":
        with ScriptedOpenAI([_loop_reply()], repeat_last=True) as server:
            client = AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0)
            async with client:
                ran = await run(unreadable.sdk_agent(client))
            return ran, len(server.requests)
    agent = unreadable.pydantic_looping() if framework == "pydantic-ai" else _lc_looping()
    ran = await run(agent)
    return ran, len(ran.of_type(PROVIDER_USAGE))


@pytest.mark.parametrize("framework", sorted(APPS))
async def test_0244_B_a_looping_framework_agent_hits_the_runs_ceiling(
    store: EventStore, framework: str
) -> None:
    suite = make_suite([_task()], trials={"count": 3, "k": 1}, thresholds={"maxCostUsd": 0.001})

    async def run(obj: Any) -> AgentRan:
        return await _run(store, adapt(obj, price=DEAR), suite, concurrency=1)

    ran, model_calls = await _with_looping(store, framework, run)
    assert model_calls == 1  # stopped before its second model call
    assert len(ran.of_type(TOOL_CALLED)) == 1
    assert ran.done.totalCostUsd == pytest.approx(RESPONSE_USD)
    assert not ran.done.passed
    kinds = [(r["trialIndex"], r["kind"]) for r in ran.reasons()]
    assert kinds == [(0, "agent-error"), (1, "skipped-budget"), (2, "skipped-budget")]
    assert "AgentStopped: cost ceiling" in ran.reasons()[0]["message"]


@pytest.mark.parametrize("framework", sorted(APPS))
async def test_an_adapters_max_cost_usd_stops_its_trial(store: EventStore, framework: str) -> None:
    async def run(obj: Any) -> AgentRan:
        agent = adapt(obj, price=DEAR, max_cost_usd=0.015)  # passed by the second response
        return await _run(store, agent, make_suite([_task()]), concurrency=1)

    ran, model_calls = await _with_looping(store, framework, run)
    assert model_calls == 2
    (reason,) = ran.reasons()
    assert reason["kind"] == "agent-error"
    assert "AgentStopped: maxCostUsd" in reason["message"]


def test_a_definitions_price_reaches_the_adapter() -> None:
    doc = {"kind": "pydantic-ai", "agent": APPS["pydantic-ai"], "maxCostUsd": 0.5,
           "price": {"inputPerMTok": 2.0, "outputPerMTok": 8.0}}  # fmt: skip
    built: Any = build_agent(parse_definition(doc), timeout_s=10, max_cost_usd=0.2)
    assert built.price == PRICE
    assert built.max_cost_usd == 0.2  # the tighter of the run's and the definition's


@pytest.mark.parametrize("kind", ["openai-agents", "pydantic-ai", "langgraph", "command"])
def test_max_cost_usd_without_a_price_is_refused_naming_the_field(kind: str) -> None:
    doc: dict[str, Any] = {"kind": kind, "maxCostUsd": 0.5}
    doc.update({"command": "true"} if kind == "command" else {"agent": APPS["pydantic-ai"]})
    with pytest.raises(DefinitionError) as caught:
        parse_definition(doc)
    (error,) = caught.value.errors
    assert error.path == "maxCostUsd"
    assert "needs price" in error.message


@pytest.mark.parametrize("member", ["price", "maxCostUsd"])
def test_a_price_for_a_plain_wopeval_agent_is_refused(member: str) -> None:
    doc: dict[str, Any] = {"kind": "python", "agent": "tests.agents.apps.plain:agent",
                           "price": {"inputPerMTok": 1.0, "outputPerMTok": 1.0}}  # fmt: skip
    if member == "maxCostUsd":
        doc["maxCostUsd"] = 1.0
    with pytest.raises(UserError, match=f"^{member}: "):
        build_agent(parse_definition(doc), timeout_s=10, max_cost_usd=None)


def test_cli_refuses_an_unenforceable_ceiling_with_exit_2(tmp_path: Path) -> None:
    suite = {"suiteId": "core.test.evals.cost", "version": "1.0.0", "modes": ["golden"],
             "tasks": [_task()]}  # fmt: skip
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
    agent = {"kind": "openai-agents", "agent": APPS["openai-agents"], "maxCostUsd": 0.1}
    (tmp_path / "agent.yaml").write_text(yaml.safe_dump(agent))
    args = ["run", str(tmp_path / "suite.yaml"), "--agent-file", str(tmp_path / "agent.yaml")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "maxCostUsd" in result.output
    assert "needs price" in result.output


def test_cli_an_agent_files_price_reaches_the_summary(tmp_path: Path) -> None:
    suite = {"suiteId": "core.test.evals.cost", "version": "1.0.0", "modes": ["golden"],
             "tasks": [_task()]}  # fmt: skip
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
    agent = {"kind": "pydantic-ai", "agent": APPS["pydantic-ai"],
             "price": {"inputPerMTok": 2.0, "outputPerMTok": 8.0}}  # fmt: skip
    (tmp_path / "agent.yaml").write_text(yaml.safe_dump(agent))
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    args = ["run", str(tmp_path / "suite.yaml"), "--agent-file", str(tmp_path / "agent.yaml"),
            "--store", store, "--json"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)["summary"]
    assert summary["totalCostUsd"] > 0
    assert summary["tasks"][0]["costUsd"] == summary["totalCostUsd"]
