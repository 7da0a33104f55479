"""``--agent-cmd`` processes end with their trial: the command runs in its own session, and what
is left of its process group when it exits (or when its trial ends first) is terminated, then
killed; a command that never reads its input is an agent like any other."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.engine.helpers import Ran, make_suite, run_suite
from wopeval.engine import cmd_agent
from wopeval.engine.cmd_agent import CommandAgent
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunSettings
from wopeval.events.store import EventStore
from wopeval.wire.vocab import X_ERROR

AGENT_ID = "core.test.agents.cmd"
# Starts a grandchild that holds our stdout (and, with "stubborn", ignores SIGTERM), writes its
# pid to argv[1], answers "done" and exits (or, with "hang", sleeps past the trial's timeout).
PARENT = """
import subprocess, sys, time
child = "import signal, sys, time\\n"
if "stubborn" in sys.argv:
    child += "signal.signal(signal.SIGTERM, signal.SIG_IGN)\\n"
child += "time.sleep(120)\\n"
grandchild = subprocess.Popen([sys.executable, "-c", child])
open(sys.argv[1], "w").write(str(grandchild.pid))
print('"done"', flush=True)
if "hang" in sys.argv:
    time.sleep(120)
"""


@pytest.fixture
async def sqlite_store(tmp_path: Path) -> AsyncIterator[EventStore]:
    opened = await EventStore.open(str(tmp_path / "store.db"))
    try:
        yield opened
    finally:
        await opened.close()


async def _run(store: EventStore, command: str, task_input: Any, timeout_s: float) -> Ran:
    registry = Registry()
    registry.register_agent(AGENT_ID, CommandAgent(command))
    match = {"strategy": "exact", "value": "done"}
    task = {"taskId": "t", "input": task_input, "expected": {"kind": "golden", "match": match}}
    settings = RunSettings(trial_timeout_s=timeout_s)
    suite = make_suite([task])
    return await run_suite(store, suite, agent_id=AGENT_ID, registry=registry, settings=settings)


def _gone(pid: int) -> bool:
    """No such process, or only its zombie (its adoptive parent may reap it later)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


@pytest.mark.parametrize("how", ["exits", "stubborn", "hang"])
async def test_what_a_command_started_ends_with_its_trial(
    sqlite_store: EventStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    monkeypatch.setattr(cmd_agent, "GRACE_S", 0.3)
    pid_file = tmp_path / "grandchild.pid"
    script = tmp_path / "parent.py"
    script.write_text(PARENT)
    command = f"{sys.executable} {script} {pid_file} {how}"
    # The grandchild sleeps 120 s holding stdout: waiting for its EOF would hit this timeout.
    ran = await _run(sqlite_store, command, {}, timeout_s=1.0 if how == "hang" else 60.0)
    pid = int(pid_file.read_text())
    try:
        assert _gone(pid)
    finally:
        if not _gone(pid):
            os.kill(pid, 9)
    (completed,) = ran.of_type("agent.invocation-completed")
    if how == "hang":
        assert completed.payload[X_ERROR] == "timeout"
    else:
        assert completed.payload.get(X_ERROR) is None
        assert ran.done.passed


@pytest.mark.parametrize("size", [0, 1_000_000])
async def test_a_command_that_never_reads_its_input_passes(
    sqlite_store: EventStore, size: int
) -> None:
    """The input fills the pipe (1 MB) or fits it; the command exits without reading it."""
    command = f"{sys.executable} -c \"print('done')\""
    ran = await _run(sqlite_store, command, {"pad": "p" * size}, timeout_s=60.0)
    (completed,) = ran.of_type("agent.invocation-completed")
    assert completed.payload.get(X_ERROR) is None
    assert ran.done.passed
