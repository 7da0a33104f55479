"""Agents that hog what they run on, for the host's isolation test (test_agent_isolation.py).

``hog_agent`` does what its input's ``mode`` says until :data:`RELEASE` is set (at most
:data:`LONGEST` seconds): ``block`` waits in a blocking call, ``cpu`` spins, ``calls`` calls a
fixture-served tool in a loop. Each sets its :data:`STARTED` event first; ``block`` and ``cpu``
clear :data:`HOGGING` of their mode when they stop.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from wopeval.engine.agent import AgentContext

MODES = ("block", "cpu", "calls")
LONGEST = 60.0
RELEASE = threading.Event()
STARTED = {mode: threading.Event() for mode in MODES}
HOGGING = {mode: threading.Event() for mode in MODES}


def reset() -> None:
    RELEASE.clear()
    for event in (*STARTED.values(), *HOGGING.values()):
        event.clear()


async def hog_agent(task_input: Any, ctx: AgentContext) -> Any:
    mode = task_input["mode"]
    HOGGING[mode].set()
    STARTED[mode].set()
    try:
        if mode == "block":
            RELEASE.wait(LONGEST)  # a blocking call in an async agent: it never yields
        elif mode == "cpu":
            until = time.monotonic() + LONGEST
            while not RELEASE.is_set() and time.monotonic() < until:
                pass
        else:
            while not RELEASE.is_set():
                await ctx.call_tool("kb:look", {})
    finally:
        HOGGING[mode].clear()
    return "done"
