"""A test agent for the live page: the scripted agent, held back while ``GATE`` is closed."""

from __future__ import annotations

import threading
from typing import Any

import anyio

from wopeval.agents.scripted import scripted_agent
from wopeval.engine.agent import AgentContext

GATE = threading.Event()


async def gated_agent(task_input: Any, ctx: AgentContext) -> Any:
    if isinstance(task_input, dict) and task_input.get("gate"):
        await anyio.to_thread.run_sync(GATE.wait, 60)
    plan = {k: v for k, v in task_input.items() if k != "gate"}
    return await scripted_agent(plan, ctx)
