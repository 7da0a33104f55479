"""Agents run in worker processes (a host's ``agentIsolation: process``).

A :class:`ProcessAgent` is an agent given by import path whose trials run in a worker process
(:mod:`wopeval.engine.agent_worker`) instead of the host's: whatever the agent does there (a CPU
loop, a blocking call, an endless series of tool calls) cannot hold the interpreter lock of the
process that answers other tenants, and a trial that times out or is cancelled ends its worker
with ``SIGKILL``, so nothing of a stopped trial keeps running. Its context's calls come back over
the worker's pipe and run here, on the trials' loop, where the gateway and the log are: the
engine has one code path.

:class:`AgentWorkers` keeps the idle workers of a host (a worker whose trial ended normally takes
the next one; one per concurrent trial at most), and ends them all when the host stops.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from contextlib import suppress
from typing import Any

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from wopeval.engine.agent import AgentContext, ConversationEnded, ToolResult, Usage
from wopeval.errors import RunError, message_of

__all__ = ["MAX_MESSAGE_BYTES", "AgentWorkerDied", "AgentWorkers", "ProcessAgent", "raised_as"]

# The longest line a worker may send: an output or tool call's JSON (the trial's own caps,
# maxOutputBytes and maxToolResultBytes, apply after it).
MAX_MESSAGE_BYTES = 64 * 1024 * 1024


class AgentWorkerDied(RunError):
    """The worker process running a trial's agent ended without an answer."""


class _Worker:
    def __init__(self, process: Process) -> None:
        assert process.stdin is not None  # opened with pipes (_start)
        assert process.stdout is not None
        self.process = process
        self._stdin = process.stdin
        self._stdout = BufferedByteReceiveStream(process.stdout)
        self._send_lock = anyio.Lock()

    async def send(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        async with self._send_lock:
            await self._stdin.send(line)

    async def receive(self) -> dict[str, Any]:
        try:
            line = await self._stdout.receive_until(b"\n", MAX_MESSAGE_BYTES)
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError) as exc:
            code = await self.process.wait()
            raise AgentWorkerDied(f"the agent's worker process exited ({code})") from exc
        except anyio.DelimiterNotFound as exc:
            raise AgentWorkerDied(
                f"the agent's worker sent a message over {MAX_MESSAGE_BYTES} bytes"
            ) from exc
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict) or not isinstance(message.get("op"), str):
            raise AgentWorkerDied("the agent's worker sent a malformed message")
        return message

    async def kill(self) -> None:
        with suppress(ProcessLookupError):
            self.process.kill()
        with anyio.CancelScope(shield=True):
            await self.process.wait()
            await self.process.aclose()


class AgentWorkers:
    """A host's worker processes for :class:`ProcessAgent` trials."""

    def __init__(self) -> None:
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._closed = False

    async def take(self) -> _Worker:
        if self._closed:
            raise AgentWorkerDied("the host is stopping: no agent worker starts")
        worker = self._idle.pop() if self._idle else await _start()
        self._busy.add(worker)
        return worker

    async def give_back(self, worker: _Worker) -> None:
        self._busy.discard(worker)
        if self._closed:
            await worker.kill()
        else:
            self._idle.append(worker)

    async def discard(self, worker: _Worker) -> None:
        self._busy.discard(worker)
        await worker.kill()

    async def aclose(self) -> None:
        """End every worker, idle or busy (the host is stopping)."""
        self._closed = True
        workers, self._idle = [*self._idle, *self._busy], []
        self._busy.clear()
        for worker in workers:
            await worker.kill()

    @property
    def processes(self) -> list[int]:
        """The pids of the workers alive now (idle and busy)."""
        return [worker.process.pid for worker in (*self._idle, *self._busy)]


async def _start() -> _Worker:
    # The worker imports agents by the same paths as this process: its search path, first.
    path = os.pathsep.join(entry or os.getcwd() for entry in sys.path)
    env = {**os.environ, "PYTHONPATH": path}
    process = await anyio.open_process(
        [sys.executable, "-m", "wopeval.engine.agent_worker"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None, env=env,
    )  # fmt: skip
    return _Worker(process)


class ProcessAgent:
    """The agent at import path ``ref``, each trial run in a worker of ``workers``."""

    def __init__(self, ref: str, workers: AgentWorkers) -> None:
        self.ref = ref
        self._workers = workers

    async def __call__(self, task_input: Any, ctx: AgentContext) -> Any:
        worker = await self._workers.take()
        try:
            output = await self._trial(worker, task_input, ctx)
        except BaseException:
            await self._workers.discard(worker)  # timed out, cancelled or broken: it ends here
            raise
        await self._workers.give_back(worker)
        return output

    async def _trial(self, worker: _Worker, task_input: Any, ctx: AgentContext) -> Any:
        await worker.send({
            "op": "run", "ref": self.ref, "input": task_input, "taskId": ctx.task_id,
            "trialIndex": ctx.trial_index, "agentId": ctx.agent_id,
            "tools": [spec.to_json() for spec in ctx.tools()],
            "memory": ctx.memory.entries(), "budgetExceeded": ctx.budget_exceeded,
            "hasUser": getattr(ctx, "has_user", False),  # a context from before conversations
        })  # fmt: skip
        died: AgentWorkerDied | None = None
        async with anyio.create_task_group() as calls:
            while True:
                try:
                    message = await worker.receive()
                except AgentWorkerDied as exc:  # raised out of the group, not in one
                    died = exc
                    calls.cancel_scope.cancel()
                    break
                if message["op"] in ("done", "raised"):
                    calls.cancel_scope.cancel()  # calls it left unawaited end with it
                    break
                if message["op"] == "memoryWrite":
                    ctx.memory.write(message["entry"])
                else:
                    calls.start_soon(_answer, worker, ctx, message)
        if died is not None:
            raise died
        if message["op"] == "raised":
            raise raised_as(str(message["type"]), str(message["message"]))
        return message["output"]


async def _answer(worker: _Worker, ctx: AgentContext, message: dict[str, Any]) -> None:
    reply: dict[str, Any] = {"op": "reply", "id": message["id"]}
    try:
        reply["result"] = await _call(ctx, message)
    except Exception as exc:
        reply["error"] = {"type": type(exc).__name__, "message": message_of(exc)}
    reply["budgetExceeded"] = ctx.budget_exceeded
    await worker.send(reply)


async def _call(ctx: AgentContext, message: dict[str, Any]) -> Any:
    op = message["op"]
    if op == "callTool":
        return _result(await ctx.call_tool(str(message["tool"]), message.get("args")))
    if op == "refuseCall":
        tool, code, text = str(message["tool"]), str(message["code"]), str(message["message"])
        return _result(await ctx.refuse_call(tool, message.get("inputs"), code, text))
    if op == "reportUsage":
        await ctx.report_usage(Usage(**message["usage"]))
        return None
    if op == "delegate":
        return await ctx.delegate(str(message["agentId"]), message.get("input"))
    if op == "askUser":
        try:
            return {"reply": await ctx.ask_user(message.get("message"))}
        except ConversationEnded as exc:  # the worker raises it again, of its class
            return {"ended": exc.how, "reply": exc.reply}
    raise AgentWorkerDied(f"the agent's worker asked for an unknown operation {op!r}")


def _result(result: ToolResult) -> dict[str, Any]:
    return dataclasses.asdict(result)


def raised_as(type_name: str, message: str) -> Exception:
    """An exception raised in the other process, as this one records it: of a type of the same
    name (a failure reason names it, as it would name the original) carrying its text."""
    kind: type[Exception] = type(type_name, (Exception,), {})
    return kind(message)
