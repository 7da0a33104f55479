"""The suite-defined scripted agent ``core.conformance.agents.scripted`` (contract: docs/agents.md).

It performs exactly the tool calls listed in its task input, in order, and returns the output
listed there, so every trajectory is known in advance. Its input::

    {
      "calls":   [{"tool": "crm:lookup-order", "args": {...}},
                  {"delegate": {"agentId": "core.conformance.agents.scripted.helper",
                                "input": {...scripted input...}}},
                 {"ask": "What is your booking reference?"}],
      "output":  <any JSON>,
      "usage":   [{"provider": "mock", "model": "m", "inputTokens": 10, "outputTokens": 5,
                   "costEstimateUsd": 0.001}],
      "recall":  "key",            # output becomes {"recalled": <memory value or null>}, read first
      "remember": [{"key": "k", "value": 1}],   # written to memory after the calls
      "trials":  {"1": {"calls": [...], "output": ...}}   # per-trialIndex overrides
    }

Every member is optional. ``trials["<i>"]`` replaces the named members for trial ``i`` only.
An ``ask`` step says its message to the task's simulated user (``x-wopeval-user``); once the
conversation has ended (``ConversationEnded``) the agent goes on with its next step.
"""

from __future__ import annotations

import contextlib
from typing import Any

from wopeval.engine.agent import AgentContext, ConversationEnded, Usage


def _plan(task_input: Any, trial_index: int) -> dict[str, Any]:
    if not isinstance(task_input, dict):
        raise ValueError("the scripted agent's input must be an object")
    plan = {k: v for k, v in task_input.items() if k != "trials"}
    overrides = (task_input.get("trials") or {}).get(str(trial_index))
    if isinstance(overrides, dict):
        plan.update(overrides)
    return plan


async def scripted_agent(task_input: Any, ctx: AgentContext) -> Any:
    plan = _plan(task_input, ctx.trial_index)
    recalled = ctx.memory.get(str(plan["recall"])) if "recall" in plan else None
    for usage in plan.get("usage") or ():
        await ctx.report_usage(
            Usage(
                provider=str(usage["provider"]),
                model=str(usage["model"]),
                input_tokens=int(usage["inputTokens"]),
                output_tokens=int(usage["outputTokens"]),
                cost_usd=usage.get("costEstimateUsd"),
            )
        )
    for call in plan.get("calls") or ():
        if "ask" in call:
            with contextlib.suppress(ConversationEnded):  # the log has the turn; go on
                await ctx.ask_user(call["ask"])
        elif "delegate" in call:
            delegate = call["delegate"]
            await ctx.delegate(str(delegate["agentId"]), delegate.get("input", {}))
        else:
            await ctx.call_tool(str(call["tool"]), call.get("args"))
    for entry in plan.get("remember") or ():
        ctx.memory.write(dict(entry))
    if "recall" in plan:
        return {"recalled": recalled}
    return plan.get("output")
