"""Tool specs: ``ctx.tools()`` for every agent; specs from MCP ``list_tools`` (the
``inputSchema`` kept), from Python live tools (a pydantic model or annotation), permissive for
tools known only from fixtures; the reversible, collision-free chat-API name mapping; the
definition file's validation."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from tests.engine.helpers import make_suite, run_suite
from wopeval.agents.definition import DefinitionError, parse_definition
from wopeval.agents.toolnames import API_NAME, ToolNames
from wopeval.engine.agent import AgentContext
from wopeval.engine.mcp_tools import mcp_live_tools
from wopeval.engine.registry import Registry
from wopeval.events.store import EventStore
from wopeval.wire.vocab import DECIDED

DEMO = [sys.executable, str(Path(__file__).parents[1] / "engine" / "mcp_server_demo.py")]


class Refund(BaseModel):
    orderId: str
    amountMinor: int


async def refund(args: Refund) -> dict[str, Any]:
    """Refund an order.

    The rest of the docstring is not the description."""
    return {"refunded": args.amountMinor, "type": type(args).__name__}


async def tools_agent(task_input: Any, ctx: AgentContext) -> Any:
    listed = [spec.to_json() for spec in ctx.tools()]
    called = await ctx.call_tool("billing:refund", {"orderId": "A1", "amountMinor": 5})
    return {"tools": listed, "called": called.value}


async def test_ctx_tools_lists_live_specs_then_fixtured_tools(store: EventStore) -> None:
    registry = Registry()
    registry.register_tool("billing:refund", refund)
    registry.register_agent("core.test.agents.tools", tools_agent)
    fixtures = {"toolResponses": [{"tool": "kb:search", "response": "ok"}], "onMiss": "live"}
    task = {
        "taskId": "t",
        "input": None,
        "fixtures": fixtures,
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": None}},
    }
    ran = await run_suite(
        store, make_suite([task]), agent_id="core.test.agents.tools", registry=registry
    )
    (decided,) = ran.of_type(DECIDED)
    tools = decided.payload["decision"]["tools"]
    assert [t["name"] for t in tools] == ["billing:refund", "kb:search"]
    assert tools[0]["description"] == "Refund an order."
    assert tools[0]["parameters"]["properties"].keys() == {"orderId", "amountMinor"}
    assert tools[0]["parameters"]["required"] == ["orderId", "amountMinor"]
    assert tools[1]["parameters"] == {"type": "object", "additionalProperties": True}
    # a tool whose parameter is a pydantic model receives the validated model
    assert decided.payload["decision"]["called"] == {"refunded": 5, "type": "Refund"}


async def test_mcp_tools_keep_their_input_schema() -> None:
    async with mcp_live_tools(DEMO, prefix="billing:") as tools:
        spec = tools["billing:refund"].tool_spec  # type: ignore[attr-defined]
    assert spec.name == "billing:refund"
    assert spec.parameters["properties"].keys() == {"orderId", "amountMinor"}
    assert set(spec.parameters["required"]) == {"orderId", "amountMinor"}
    assert "refund" in spec.description
    registry = Registry()
    registry.register_tool(spec.name, tools["billing:refund"])
    assert registry.tool_specs[spec.name] is spec


@given(st.lists(st.text(min_size=1, max_size=90), max_size=12))
def test_tool_names_map_reversibly_and_without_collisions(names: list[str]) -> None:
    mapping = ToolNames(names)
    apis = [mapping.api(name) for name in dict.fromkeys(names)]
    assert len(set(apis)) == len(apis)
    assert all(API_NAME.match(api) for api in apis)
    assert [mapping.real(api) for api in apis] == list(dict.fromkeys(names))


def test_openwop_names_are_mapped_and_fitting_names_kept() -> None:
    mapping = ToolNames(["crm:lookup-order", "crm_lookup-order", "search"])
    assert mapping.api("search") == "search"
    assert mapping.api("crm_lookup-order") == "crm_lookup-order"
    assert re.fullmatch(r"crm_lookup-order_[0-9a-f]{8}", mapping.api("crm:lookup-order"))
    assert mapping.real("invented") is None


def test_a_kinds_requirements_are_named() -> None:
    with pytest.raises(DefinitionError) as caught:
        parse_definition({"kind": "command"})
    assert [str(e) for e in caught.value.errors] == ["$: kind 'command' needs command"]
