"""Plain agents for the outage tests: one looks the order up through its tools, one is slow."""

from __future__ import annotations

from typing import Any

import anyio

from wopeval.engine.agent import AgentContext


async def looks_up(task_input: Any, ctx: AgentContext) -> str:
    found = await ctx.call_tool("crm:lookup", {"orderId": "A1"})
    return "late" if found.ok else "no answer"


async def slow(task_input: Any, ctx: AgentContext) -> str:
    await anyio.sleep(0.2)
    return "late"


async def answers(task_input: Any, ctx: AgentContext) -> str:
    return "the order is late"
