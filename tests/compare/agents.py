"""Agents for compare tests: one that fails every task of the quickstart suite."""

from __future__ import annotations

from typing import Any

from wopeval.engine.agent import AgentContext


async def broken_agent(task_input: Any, ctx: AgentContext) -> Any:
    """Calls no tool and answers nothing useful: every trial of the quickstart fails."""
    return "I cannot help with that"
