"""A plain agent for the outage tests: it looks the order up through its tools."""

from __future__ import annotations

from typing import Any

from wopeval.engine.agent import AgentContext


async def looks_up(task_input: Any, ctx: AgentContext) -> str:
    found = await ctx.call_tool("crm:lookup", {"orderId": "A1"})
    return "late" if found.ok else "no answer"
