"""A small support agent for the README quickstart (``wopeval.examples.support``).

It looks an order up, refunds it when the order arrived damaged, and answers. Like a real model
it is not perfectly reliable: on some trials (decided by a stable hash of task and trial, so a
run is reproducible) it skips the lookup and refunds straight away, which its suite's trajectory
expectation catches. That is what makes pass@k and pass^k differ in the quickstart.
"""

from __future__ import annotations

import hashlib
from typing import Any

from wopeval.engine.agent import AgentContext, Usage

FLAKY_PERCENT = 15


def _skips_lookup(task_id: str, trial_index: int) -> bool:
    digest = hashlib.sha256(f"{task_id}/{trial_index}".encode()).digest()
    return digest[0] * 100 // 256 < FLAKY_PERCENT


async def support_agent(task_input: Any, ctx: AgentContext) -> Any:
    order_id = str(task_input["orderId"])
    await ctx.report_usage(Usage("local", "rules-v1", 120, 30, cost_usd=0.0002))
    order: dict[str, Any] = {}
    if not _skips_lookup(ctx.task_id, ctx.trial_index):
        looked_up = await ctx.call_tool("crm:lookup-order", {"orderId": order_id})
        if not looked_up.ok:
            return f"sorry, I could not find order {order_id}"
        order = dict(looked_up.value or {})
    else:
        order = {"status": "damaged", "totalMinor": task_input.get("claimedMinor", 0)}
    if order.get("status") != "damaged":
        return f"order {order_id} is {order.get('status', 'unknown')}; no refund is due"
    refund = await ctx.call_tool(
        "billing:refund", {"orderId": order_id, "amountMinor": order.get("totalMinor", 0)}
    )
    await ctx.report_usage(Usage("local", "rules-v1", 80, 20, cost_usd=0.0001))
    if not refund.ok:
        return f"the refund for order {order_id} failed"
    return f"refund approved for order {order_id}"
