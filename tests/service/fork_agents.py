"""Agents and a live tool for the fork tests (importable by the CLI as ``module:attr``).

``walker`` calls ``step`` ``task_input["steps"]`` times; each call's arguments carry the call's
index, the trial index the agent sees and the previous answer, so a call after a served prefix
shows what the prefix answered. ``LIVE`` lists every call that reached the live tool.
"""

from __future__ import annotations

from typing import Any

import anyio

from wopeval.engine.agent import AgentContext

LIVE: list[Any] = []
# Set by a test: ``hangs`` sets it once two trials have called their tool and wait forever.
ARRIVED: anyio.Event | None = None
# When set, call ``DIVERGE_AT`` carries an argument the recorded trial never sent.
DIVERGE_AT: int | None = None


async def step(args: Any) -> Any:
    LIVE.append(args)
    return {"n": 1000 + len(LIVE)}


async def walker(task_input: Any, ctx: AgentContext) -> Any:
    seen: list[Any] = []
    for index in range(int(task_input["steps"])):
        args: dict[str, Any] = {"i": index, "trial": ctx.trial_index}
        args["after"] = seen[-1] if seen else None
        if index == DIVERGE_AT:
            args["oops"] = True
        result = await ctx.call_tool("step", args)
        if not result.ok:
            return {"done": False, "error": result.error_code, "seen": seen}
        seen.append(result.value["n"])
    return {"done": True, "seen": seen}


async def hangs(task_input: Any, ctx: AgentContext) -> Any:
    await ctx.call_tool("step", {"i": 0})
    if ARRIVED is not None and len(LIVE) >= 2:
        ARRIVED.set()
    await anyio.sleep_forever()


async def boom(args: Any) -> Any:
    LIVE.append({"boom": args})
    raise RuntimeError("the ledger is locked")


async def mixed(task_input: Any, ctx: AgentContext) -> Any:
    """A fixture answer, a live tool's error, a call refused before the gateway, a miss."""
    first = await ctx.call_tool("step", {"i": 0})
    failed = await ctx.call_tool("boom", {"why": "no"})
    refused = await ctx.refuse_call("step", {"raw": "{"}, "wopeval.invalid_arguments", "not JSON")
    last = await ctx.call_tool(str(task_input["last"]), {"i": 1})
    return {
        "codes": [r.error_code for r in (first, failed, refused, last)],
        "first": first.value,
    }
