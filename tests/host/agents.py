"""Agents and a judge for the host tests, registered through the host config by import path."""

from __future__ import annotations

from typing import Any, Literal

import anyio

from wopeval.engine.agent import AgentContext
from wopeval.engine.trial import EventSink
from wopeval.suite.models import Task


async def slow_agent(task_input: Any, ctx: AgentContext) -> Any:
    """Sleeps ``task_input["sleep"]`` seconds (default 30), then returns its ``output``."""
    plan = task_input if isinstance(task_input, dict) else {}
    await anyio.sleep(float(plan.get("sleep", 30)))
    return plan.get("output")


class FixedJudge:
    """A deterministic stand-in judge: every rubric output scores ``0.75``."""

    evaluator_type: Literal["llm_judge", "human", "deterministic"] = "deterministic"

    async def score(self, task: Task, output: Any, sink: EventSink, run_id: str) -> float:
        return 0.75


fixed_judge = FixedJudge()
