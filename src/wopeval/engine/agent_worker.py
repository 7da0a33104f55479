"""``python -m wopeval.engine.agent_worker``: a process that runs a host's agents, one trial at a
time, for :mod:`wopeval.engine.agent_process` in the host.

It speaks JSON lines: the host's ``run`` message names the agent by import path and carries the
trial's input, ids, tools, memory and budget flag; the worker answers ``done`` with the output or
``raised`` with the exception's type and text. In between, each context call the agent makes
(``call_tool``, ``refuse_call``, ``report_usage``, ``delegate``, ``ask_user``) is a message with
an ``id`` that the host answers with a ``reply``; memory writes are sent without a reply (the
worker keeps the trial's memory and the host mirrors it). The agent's own prints go to stderr:
stdout is the protocol's.

When its input ends (the host closed it, or died), the worker exits at once, whatever its agent
is doing, so no worker outlives its host.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import json
import os
import sys
import threading
from typing import IO, Any

from wopeval.engine.agent import (
    AgentFn,
    ToolResult,
    ToolSpec,
    TrialMemory,
    Usage,
    conversation_ended,
)
from wopeval.engine.agent_process import raised_as
from wopeval.engine.syncagent import as_async_agent
from wopeval.errors import message_of

__all__ = ["main"]


class _Host:
    """The protocol's two ends in the worker: lines out, replies routed to their callers."""

    def __init__(self, out: IO[str], loop: asyncio.AbstractEventLoop) -> None:
        self._out = out
        self._loop = loop
        self._lock = threading.Lock()  # a plain agent's thread and the loop both send
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._next = 0
        self.budget_exceeded = False

    def send(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, separators=(",", ":"))
        with self._lock:
            self._out.write(line + "\n")
            self._out.flush()

    async def ask(self, message: dict[str, Any]) -> Any:
        self._next += 1
        future: asyncio.Future[dict[str, Any]] = self._loop.create_future()
        self._pending[self._next] = future
        self.send({**message, "id": self._next})
        reply = await future
        self.budget_exceeded = bool(reply.get("budgetExceeded", self.budget_exceeded))
        if "error" in reply:
            raise raised_as(reply["error"]["type"], reply["error"]["message"])
        return reply.get("result")

    def answer(self, reply: dict[str, Any]) -> None:
        future = self._pending.pop(int(reply["id"]), None)
        if future is not None and not future.done():
            future.set_result(reply)


class _MirroredMemory(TrialMemory):
    """The trial's memory, kept here; each write is also sent to the host's copy."""

    def __init__(self, entries: list[dict[str, Any]], host: _Host) -> None:
        super().__init__(list(entries))
        self._host = host

    def write(self, entry: dict[str, Any]) -> None:
        super().write(entry)
        self._host.send({"op": "memoryWrite", "entry": entry})


class _WorkerContext:
    """The :class:`~wopeval.engine.agent.AgentContext` an agent sees in the worker."""

    def __init__(self, run: dict[str, Any], host: _Host) -> None:
        self._host = host
        self._task_id = str(run["taskId"])
        self._trial_index = int(run["trialIndex"])
        self._agent_id = str(run["agentId"])
        self._tools = [ToolSpec(**spec) for spec in run["tools"]]
        self._memory = _MirroredMemory(run["memory"], host)
        self._has_user = bool(run.get("hasUser", False))

    @property
    def task_id(self) -> str:
        return self._task_id

    @property
    def trial_index(self) -> int:
        return self._trial_index

    @property
    def agent_id(self) -> str:
        return self._agent_id

    @property
    def memory(self) -> TrialMemory:
        return self._memory

    @property
    def budget_exceeded(self) -> bool:
        return self._host.budget_exceeded

    @property
    def has_user(self) -> bool:
        return self._has_user

    def tools(self) -> list[ToolSpec]:
        return list(self._tools)

    async def call_tool(self, tool: str, args: Any = None) -> ToolResult:
        return ToolResult(**await self._host.ask({"op": "callTool", "tool": tool, "args": args}))

    async def refuse_call(self, tool: str, inputs: Any, code: str, message: str) -> ToolResult:
        ask = {"op": "refuseCall", "tool": tool, "inputs": inputs, "code": code,
               "message": message}  # fmt: skip
        return ToolResult(**await self._host.ask(ask))

    async def report_usage(self, usage: Usage) -> None:
        await self._host.ask({"op": "reportUsage", "usage": dataclasses.asdict(usage)})

    async def delegate(self, agent_id: str, task_input: Any) -> Any:
        return await self._host.ask({"op": "delegate", "agentId": agent_id, "input": task_input})

    async def ask_user(self, message: Any) -> Any:
        result = await self._host.ask({"op": "askUser", "message": message})
        if "ended" in result:
            raise conversation_ended(str(result["ended"]), result.get("reply"))
        return result["reply"]


def _import(ref: str) -> Any:
    """The object at ``package.module:attr`` (the host checked the path at its start-up; the
    engine's registry is not imported here, to keep a worker's start short)."""
    module_name, _, attr = ref.partition(":")
    found: Any = importlib.import_module(module_name)
    for name in attr.split("."):
        found = getattr(found, name)
    return found


async def _run(run: dict[str, Any], host: _Host, agents: dict[str, AgentFn]) -> None:
    host.budget_exceeded = bool(run["budgetExceeded"])
    try:
        ref = str(run["ref"])
        agent = agents.get(ref)
        if agent is None:
            agent = agents[ref] = as_async_agent(_import(ref))
        output = await agent(run["input"], _WorkerContext(run, host))
        host.send({"op": "done", "output": output})
    except Exception as exc:
        host.send({"op": "raised", "type": type(exc).__name__, "message": message_of(exc)})


async def _serve(out: IO[str]) -> None:
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def read() -> None:
        for line in sys.stdin.buffer:
            loop.call_soon_threadsafe(inbox.put_nowait, json.loads(line))
        os._exit(0)  # the host is gone: end now, even mid-agent

    threading.Thread(target=read, name="wopeval-agent-worker-input", daemon=True).start()
    host = _Host(out, loop)
    agents: dict[str, AgentFn] = {}
    running: asyncio.Task[None] | None = None
    while True:
        message = await inbox.get()
        if message["op"] == "reply":
            host.answer(message)
        elif message["op"] == "run":
            if running is not None:
                await running
            running = asyncio.create_task(_run(message, host, agents))


def main() -> None:
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # what the agent prints goes to stderr, not into the protocol
    asyncio.run(_serve(out))


if __name__ == "__main__":
    main()
