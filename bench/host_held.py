"""The agent of ``bench/host.py``'s ``held`` measurement: a run that starts and never ends, so
that a host answering creates executes nothing (the in-process peer executes nothing either).
"""

from __future__ import annotations

from typing import Any

import anyio

HELD_AGENT_ID = "bench.held"
HELD_AGENT_REF = "bench.host_held:held"


async def held(task_input: Any, ctx: Any) -> Any:
    await anyio.sleep_forever()
