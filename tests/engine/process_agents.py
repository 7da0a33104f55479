"""Agents for tests/engine/test_agent_process.py, imported by path in a worker process."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from wopeval.engine.agent import AgentContext, Usage


async def echo(task_input: Any, ctx: AgentContext) -> Any:
    """Calls each tool its input names, reports usage, delegates, writes memory; returns all
    it saw and its pid."""
    print("printed by the agent")  # must not reach the protocol
    results = [await ctx.call_tool(tool, {"n": i}) for i, tool in enumerate(task_input["tools"])]
    await ctx.report_usage(Usage("p", "m", 3, 4, 0.5))
    delegated = await ctx.delegate("helper", {"q": 1})
    ctx.memory.write({"key": "k", "value": 2})
    return {
        "ids": [ctx.task_id, ctx.trial_index, ctx.agent_id],
        "tools": [spec.name for spec in ctx.tools()],
        "results": [[r.ok, r.value, r.error_code] for r in results],
        "delegated": delegated,
        "memory": ctx.memory.get("seed"),
        "budget": ctx.budget_exceeded,
        "pid": os.getpid(),
    }


def plain(task_input: Any, ctx: Any) -> Any:
    """A plain (non-async) agent: its context's calls are blocking there too."""
    return {"ok": ctx.call_tool("t", {}).ok, "pid": os.getpid()}


async def raises(task_input: Any, ctx: AgentContext) -> Any:
    raise LookupError("no such booking")


async def not_json(task_input: Any, ctx: AgentContext) -> Any:
    return {1, 2}


async def dies(task_input: Any, ctx: AgentContext) -> Any:
    sys.stdout.flush()
    os._exit(7)


async def spins(task_input: Any, ctx: AgentContext) -> Any:
    Path(task_input["pidFile"]).write_text(str(os.getpid()))  # noqa: ASYNC240
    while True:
        time.sleep(0)  # noqa: ASYNC251 - never yields to its loop


async def gathers(task_input: Any, ctx: AgentContext) -> Any:
    import asyncio

    results = await asyncio.gather(*(ctx.call_tool("t", {"n": i}) for i in range(5)))
    return [result.value for result in results]


async def forges(task_input: Any, ctx: AgentContext) -> Any:
    """Writes a broken line where the protocol's messages go (the worker's stdout was fd 1)."""
    for fd in range(3, 64):
        try:
            os.write(fd, b"{not json\n")
        except OSError:
            continue
    await ctx.call_tool("t", {})
    return "unreachable"
