"""Agents that hog what they run on, for the host's isolation tests and
``bench/agent_isolation.py``. They run in the host's worker processes or threads, so they are
steered through files in ``$WOPEVAL_HOG_DIR``.

``hog_agent`` does what its input's ``mode`` says until the file ``release`` exists (at most
:data:`LONGEST` seconds): ``block`` waits in a blocking call, ``cpu`` spins, ``calls`` calls a
fixture-served tool in a loop. Each writes its pid to ``started-MODE`` first and, when it stops,
creates ``stopped-MODE``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

MODES = ("block", "cpu", "calls")
LONGEST = 120.0
DIRECTORY = "WOPEVAL_HOG_DIR"


def hog_suite(suite_id: str) -> dict[str, Any]:
    """A suite of one task per mode, each with a fixture for ``kb:look``."""
    return {
        "suiteId": suite_id,
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [
            {
                "taskId": mode,
                "input": {"mode": mode},
                "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "done"}},
                "fixtures": {
                    "onMiss": "fail",
                    "toolResponses": [{"tool": "kb:look", "response": {"hit": True}}],
                },
            }
            for mode in MODES
        ],
    }


def started(directory: Path) -> dict[str, int]:
    """The pid of each mode's agent that has started."""
    return {
        mode: int((directory / f"started-{mode}").read_text())
        for mode in MODES
        if (directory / f"started-{mode}").exists()
    }


async def hog_agent(task_input: Any, ctx: Any) -> Any:
    mode = task_input["mode"]
    directory = Path(os.environ[DIRECTORY])
    release = directory / "release"
    (directory / f"started-{mode}.part").write_text(str(os.getpid()))
    (directory / f"started-{mode}.part").rename(directory / f"started-{mode}")
    until = time.monotonic() + LONGEST
    try:
        if mode == "block":
            while not release.exists() and time.monotonic() < until:
                time.sleep(0.2)  # noqa: ASYNC251 - a blocking call in an async agent
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
    finally:
        (directory / f"stopped-{mode}").touch()
    return "done"
