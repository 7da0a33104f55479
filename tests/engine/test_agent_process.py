"""Agents in worker processes (engine/agent_process.py, engine/agent_worker.py): the context's
calls cross the pipe and run here; outputs, exceptions and deaths come back as the trial would
see them in process; a worker is reused after a trial that ended, killed after one that did not."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from wopeval.engine.agent import ToolResult, ToolSpec, TrialMemory, Usage
from wopeval.engine.agent_process import AgentWorkerDied, AgentWorkers, ProcessAgent
from wopeval.errors import describe

pytestmark = pytest.mark.anyio


@dataclass
class Ctx:
    """A context that records what the worker asked of it."""

    task_id: str = "t1"
    trial_index: int = 2
    agent_id: str = "a"
    memory: TrialMemory = field(default_factory=lambda: TrialMemory([{"key": "seed", "value": 1}]))
    budget_exceeded: bool = True
    has_user: bool = False
    calls: list[tuple[str, Any]] = field(default_factory=list)
    usage: list[Usage] = field(default_factory=list)

    def tools(self) -> list[ToolSpec]:
        return [ToolSpec("kb:look", "looks", {"type": "object"}), ToolSpec("t")]

    async def call_tool(self, tool: str, args: Any = None) -> ToolResult:
        self.calls.append((tool, args))
        if tool == "missing":
            return ToolResult(ok=False, error_code="wopeval.fixture_miss", error_message="no")
        await anyio.sleep(0.01 * (5 - (args or {}).get("n", 0)))  # later calls answer first
        return ToolResult(ok=True, value={"echo": args})

    async def refuse_call(self, tool: str, inputs: Any, code: str, message: str) -> ToolResult:
        return ToolResult(ok=False, error_code=code, error_message=message)

    async def report_usage(self, usage: Usage) -> None:
        self.usage.append(usage)

    async def ask_user(self, message: Any) -> Any:
        raise RuntimeError("this task has no simulated user")

    async def delegate(self, agent_id: str, task_input: Any) -> Any:
        return {"from": agent_id, "input": task_input}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_the_context_crosses_the_pipe_and_the_output_comes_back() -> None:
    workers = AgentWorkers()
    ctx = Ctx()
    try:
        agent = ProcessAgent("tests.engine.process_agents:echo", workers)
        output = await agent({"tools": ["kb:look", "missing"]}, ctx)
    finally:
        await workers.aclose()
    assert output["ids"] == ["t1", 2, "a"]
    assert output["tools"] == ["kb:look", "t"]
    assert output["results"] == [[True, {"echo": {"n": 0}}, None],
                                 [False, None, "wopeval.fixture_miss"]]  # fmt: skip
    assert output["delegated"] == {"from": "helper", "input": {"q": 1}}
    assert output["memory"] == 1
    assert output["budget"] is True
    assert output["pid"] != os.getpid()
    assert ctx.calls == [("kb:look", {"n": 0}), ("missing", {"n": 1})]
    assert ctx.usage == [Usage("p", "m", 3, 4, 0.5)]
    assert ctx.memory.get("k") == 2  # the worker's write, mirrored here


async def test_a_plain_agent_and_concurrent_calls() -> None:
    workers = AgentWorkers()
    try:
        plain = await ProcessAgent("tests.engine.process_agents:plain", workers)(None, Ctx())
        gathered = await ProcessAgent("tests.engine.process_agents:gathers", workers)(None, Ctx())
    finally:
        await workers.aclose()
    assert plain["ok"] is True
    assert gathered == [{"echo": {"n": i}} for i in range(5)]  # each reply to its own call


async def test_one_worker_serves_trial_after_trial_and_ends_with_the_host() -> None:
    workers = AgentWorkers()
    agent = ProcessAgent("tests.engine.process_agents:echo", workers)
    first = await agent({"tools": []}, Ctx())
    second = await agent({"tools": []}, Ctx())
    assert first["pid"] == second["pid"]
    assert workers.processes == [first["pid"]]
    await workers.aclose()
    assert workers.processes == []
    assert not _alive(first["pid"])
    with pytest.raises(AgentWorkerDied, match="stopping"):
        await agent({"tools": []}, Ctx())


async def test_the_agents_exception_is_named_as_in_process() -> None:
    workers = AgentWorkers()
    try:
        with pytest.raises(Exception, match="no such booking") as raised:
            await ProcessAgent("tests.engine.process_agents:raises", workers)(None, Ctx())
        with pytest.raises(Exception, match="JSON serializable") as not_json:
            await ProcessAgent("tests.engine.process_agents:not_json", workers)(None, Ctx())
        with pytest.raises(Exception, match="no attribute 'nowhere'") as not_found:
            await ProcessAgent("tests.engine.process_agents:nowhere", workers)(None, Ctx())
    finally:
        await workers.aclose()
    assert describe(raised.value) == "LookupError: no such booking"
    assert describe(not_json.value).startswith("TypeError: ")
    assert describe(not_found.value).startswith("AttributeError: ")


async def test_a_worker_that_dies_fails_its_trial_and_is_not_reused() -> None:
    workers = AgentWorkers()
    try:
        with pytest.raises(AgentWorkerDied, match=r"exited \(7\)"):
            await ProcessAgent("tests.engine.process_agents:dies", workers)(None, Ctx())
        assert workers.processes == []
        output = await ProcessAgent("tests.engine.process_agents:echo", workers)(
            {"tools": []}, Ctx()
        )
    finally:
        await workers.aclose()
    assert output["ids"] == ["t1", 2, "a"]


async def test_a_malformed_message_fails_the_trial_and_ends_the_worker() -> None:
    workers = AgentWorkers()
    try:
        with pytest.raises(AgentWorkerDied, match="malformed message"):
            await ProcessAgent("tests.engine.process_agents:forges", workers)(None, Ctx())
        assert workers.processes == []
    finally:
        await workers.aclose()


async def test_a_cancelled_trial_kills_its_spinning_worker(tmp_path: Path) -> None:
    workers = AgentWorkers()
    pid_file = tmp_path / "pid"
    agent = ProcessAgent("tests.engine.process_agents:spins", workers)
    try:
        with anyio.move_on_after(30) as scope:
            async with anyio.create_task_group() as group:
                group.start_soon(agent, {"pidFile": str(pid_file)}, Ctx())
                while not pid_file.exists() or not pid_file.read_text():  # noqa: ASYNC110
                    await anyio.sleep(0.02)
                group.cancel_scope.cancel()
        assert not scope.cancelled_caught
        pid = int(pid_file.read_text())
        assert workers.processes == []
    finally:
        await workers.aclose()
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        time.sleep(0.02)
    return True


PARENT = """
import sys, anyio
from tests.engine.test_agent_process import Ctx
from wopeval.engine.agent_process import AgentWorkers, ProcessAgent
async def main():
    agent = ProcessAgent("tests.engine.process_agents:spins", AgentWorkers())
    await agent({"pidFile": sys.argv[1]}, Ctx())
anyio.run(main)
"""


def test_a_worker_whose_host_dies_exits_even_mid_spin(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    host = subprocess.Popen([sys.executable, "-c", PARENT, str(pid_file)], cwd=Path.cwd())
    try:
        deadline = time.monotonic() + 60
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline
            assert host.poll() is None
            time.sleep(0.05)
        worker = int(pid_file.read_text())
        assert _alive_now(worker)
    finally:
        host.kill()
        host.wait(30)
    assert not _alive(worker)


def _alive_now(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
