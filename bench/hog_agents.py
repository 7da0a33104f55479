"""Agents that hog what they run on, for ``bench/agent_isolation.py`` (a separate ``wopeval
serve`` process, so they are steered through files in ``$WOPEVAL_BENCH_HOG_DIR``).

``hog_agent`` does what its input's ``mode`` says until the file ``release`` exists (at most
:data:`LONGEST` seconds): ``block`` waits in a blocking call, ``cpu`` spins, ``calls`` calls a
fixture-served tool in a loop. Each writes ``started-MODE`` first.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

MODES = ("block", "cpu", "calls")
LONGEST = 120.0


def _dir() -> Path:
    return Path(os.environ["WOPEVAL_BENCH_HOG_DIR"])


async def hog_agent(task_input: Any, ctx: Any) -> Any:
    mode = task_input["mode"]
    release = _dir() / "release"
    (_dir() / f"started-{mode}").touch()
    until = time.monotonic() + LONGEST
    if mode == "block":
        while not release.exists() and time.monotonic() < until:
            time.sleep(0.5)  # noqa: ASYNC251 - a blocking call in an async agent: it never yields
    elif mode == "cpu":
        spins = 0
        while time.monotonic() < until:
            spins += 1
            if spins % 100_000 == 0 and release.exists():
                break
    else:
        while not release.exists() and time.monotonic() < until:
            for _ in range(100):
                await ctx.call_tool("kb:look", {})
    return "done"
