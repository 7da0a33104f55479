"""A plain wopeval agent (no framework): it reports its own usage, if any."""

from __future__ import annotations

from typing import Any


async def agent(task_input: Any, ctx: Any) -> Any:
    return "late"
