"""A starter agent, written by ``wopeval init``: replace its body with your own agent.

wopeval calls ``answer`` once per trial with the task's ``input``. The agent reaches tools only
through ``ctx.call_tool``, so the suite's fixtures answer them (a call no fixture covers fails
the trial: ``onMiss: fail``) and its calls are graded against the task's ``trajectory``.
Run it from this directory: ``wopeval run suite.yaml --agent agent:answer``.
"""

from __future__ import annotations

from typing import Any

from wopeval import AgentContext


async def answer(task_input: Any, ctx: AgentContext) -> str:
    order_id = task_input["orderId"]
    order = await ctx.call_tool("orders:lookup", {"orderId": order_id})
    if not order.ok:
        return f"could not look order {order_id} up: {order.error_message}"
    return f"order {order_id} is {order.value['status']}"
