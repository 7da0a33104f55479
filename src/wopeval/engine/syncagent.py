"""Plain (non-``async``) agents, and the trial timeout for agents that block.

A plain ``def agent(task_input, ctx)`` runs in a worker thread, so a blocking call inside it
(``time.sleep``, a synchronous HTTP client) cannot stall the event loop: at the trial timeout the
trial stops waiting, records ``timeout``, and the thread is abandoned (it ends when its blocking
call does). Its ``ctx`` is a :class:`SyncAgentContext`, whose methods are plain calls bridged back
to the event loop; once the trial is over they raise :class:`TrialOver` instead of recording
anything, so an abandoned thread can never write into a finished trial.

An ``async def`` agent that blocks the event loop cannot be pre-empted. It is detected when it
returns: a trial that ran past its deadline without yielding is failed as ``timeout`` all the
same (the run was delayed, but the verdict is the one the timeout promises). The trial's
timeout scope checks that (:mod:`wopeval.engine.deadlines`), so the agent itself is not wrapped.

Where other work shares the event loop with untrusted agents (the host: other tenants'
requests), an ``async`` agent runs *off the loop* instead (:func:`off_loop`): on an event loop of
its own in a worker thread, exactly as a plain agent's thread, its context's calls bridged back
to the trials' loop. Blocking there (``time.sleep``, a CPU loop) delays only that agent; at the
trial's timeout its loop's task is cancelled and, if it does not end, its thread abandoned.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread

from wopeval.engine.agent import AgentContext, AgentFn, Memory, ToolResult, ToolSpec, Usage
from wopeval.errors import RunError

T = TypeVar("T")

_abandoned: set[_Job] = set()
_abandoned_lock = threading.Lock()


class TrialOver(RunError):
    """Raised in an abandoned agent thread that touches its context after its trial ended."""


class SyncAgentContext:
    """The context a plain agent sees: :class:`~wopeval.engine.agent.AgentContext` with plain
    (blocking) methods, each run on the event loop for the calling worker thread."""

    def __init__(self, ctx: AgentContext) -> None:
        self._ctx = ctx
        self._over = False
        self._calls: set[anyio.CancelScope] = set()

    @property
    def task_id(self) -> str:
        return self._ctx.task_id

    @property
    def trial_index(self) -> int:
        return self._ctx.trial_index

    @property
    def agent_id(self) -> str:
        return self._ctx.agent_id

    @property
    def memory(self) -> Memory:
        return self._ctx.memory

    @property
    def budget_exceeded(self) -> bool:
        return self._ctx.budget_exceeded

    @property
    def has_user(self) -> bool:
        return self._ctx.has_user

    def tools(self) -> list[ToolSpec]:
        return self._ctx.tools()

    def call_tool(self, tool: str, args: Any = None) -> ToolResult:
        return self._bridge(self._ctx.call_tool, tool, args)

    def report_usage(self, usage: Usage) -> None:
        self._bridge(self._ctx.report_usage, usage)

    def delegate(self, agent_id: str, task_input: Any) -> Any:
        return self._bridge(self._ctx.delegate, agent_id, task_input)

    def ask_user(self, message: Any) -> Any:
        """The task's simulated user's reply (:meth:`AgentContext.ask_user`, blocking)."""
        return self._bridge(self._ctx.ask_user, message)

    def _bridge(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        return anyio.from_thread.run(self._on_loop, fn, *args)

    async def _on_loop(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        # Runs on the event loop thread, as does close(): no race on ``_over``.
        if not self._over:
            with anyio.CancelScope() as scope:
                self._calls.add(scope)
                try:
                    return await fn(*args)
                finally:
                    self._calls.discard(scope)
        raise TrialOver(f"trial {self.task_id}#{self.trial_index} is over (timed out or cancelled)")

    def close(self) -> None:
        """End the trial for this context: calls in flight are cancelled, later ones refused."""
        self._over = True
        for scope in self._calls:
            scope.cancel()


def is_async_agent(agent: Callable[..., Any]) -> bool:
    """Whether calling ``agent`` returns a coroutine (an ``async def`` function or method)."""
    call = getattr(agent, "__call__", None)  # noqa: B004 - an instance's async __call__
    return inspect.iscoroutinefunction(agent) or inspect.iscoroutinefunction(call)


def as_async_agent(agent: Callable[..., Any], *, off_loop: bool = False) -> AgentFn:
    """The agent as the engine calls it: ``async`` agents as they are (the trial's own timeout
    scope times out one that blocked the loop past its deadline when it returns: see
    :meth:`wopeval.engine.deadlines._Limit.overdue`), or with ``off_loop`` on their own loop in
    a worker thread; plain ones run in a worker thread."""
    if getattr(agent, "__wopeval_wrapped__", False):
        return agent
    if is_async_agent(agent):
        return _in_worker_thread(agent, own_loop=True) if off_loop else agent
    return _in_worker_thread(agent)


class _LoopJob:
    """The task an off-loop agent runs as, on its thread's loop (set once it started)."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[Any] | None = None
        self.over = False

    def cancel(self) -> None:
        """From the trials' loop: cancel the agent's task (it ends at its next ``await``)."""
        self.over = True
        loop, task = self.loop, self.task
        if loop is not None and task is not None:
            with contextlib.suppress(RuntimeError):  # its loop closed: the agent ended
                loop.call_soon_threadsafe(task.cancel)


class _ThreadedContext:
    """The async context an off-loop agent sees: each call runs on the trials' loop through
    the :class:`SyncAgentContext` bridge (its calls end with the trial), awaited here."""

    def __init__(self, sync_ctx: SyncAgentContext, trials_loop: asyncio.AbstractEventLoop) -> None:
        self._sync = sync_ctx
        self._trials_loop = trials_loop

    @property
    def task_id(self) -> str:
        return self._sync.task_id

    @property
    def trial_index(self) -> int:
        return self._sync.trial_index

    @property
    def agent_id(self) -> str:
        return self._sync.agent_id

    @property
    def memory(self) -> Memory:
        return self._sync.memory

    @property
    def budget_exceeded(self) -> bool:
        return self._sync.budget_exceeded

    @property
    def has_user(self) -> bool:
        return self._sync.has_user

    def tools(self) -> list[ToolSpec]:
        return self._sync.tools()

    async def call_tool(self, tool: str, args: Any = None) -> ToolResult:
        return await self._bridge(self._sync._ctx.call_tool, tool, args)

    async def report_usage(self, usage: Usage) -> None:
        await self._bridge(self._sync._ctx.report_usage, usage)

    async def delegate(self, agent_id: str, task_input: Any) -> Any:
        return await self._bridge(self._sync._ctx.delegate, agent_id, task_input)

    async def ask_user(self, message: Any) -> Any:
        return await self._bridge(self._sync._ctx.ask_user, message)

    async def _bridge(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        on_loop = self._sync._on_loop(fn, *args)
        future = asyncio.run_coroutine_threadsafe(on_loop, self._trials_loop)
        return await asyncio.wrap_future(future)  # cancelled here: cancelled there too


class _Job:
    """One agent call in a worker thread (the thread outlives it: anyio pools them)."""

    def __init__(self) -> None:
        self.thread: threading.Thread | None = None
        self.finished = False


def _run_on_own_loop(
    agent: Callable[..., Awaitable[Any]],
    task_input: Any,
    ctx: _ThreadedContext,
    job: _LoopJob,
) -> Any:
    """Run ``agent`` to its end on a new event loop in the calling (worker) thread."""

    async def main() -> Any:
        job.loop, job.task = asyncio.get_running_loop(), asyncio.current_task()
        if job.over:
            raise TrialOver("the trial ended before its agent started")
        return await agent(task_input, ctx)

    return asyncio.run(main())


def _in_worker_thread(agent: Callable[..., Any], *, own_loop: bool = False) -> AgentFn:
    """``agent`` called in a worker thread: a plain one with a :class:`SyncAgentContext`, an
    ``async`` one (``own_loop``) on its own loop there with a :class:`_ThreadedContext`. The
    loops are asyncio's, as the trials' is wherever ``own_loop`` is used (the host)."""

    @functools.wraps(agent)
    async def threaded(task_input: Any, ctx: AgentContext) -> Any:
        sync_ctx = SyncAgentContext(ctx)
        job = _Job()
        loop_job = _LoopJob()
        threaded_ctx = _ThreadedContext(sync_ctx, asyncio.get_running_loop()) if own_loop else None

        def call() -> Any:
            job.thread = threading.current_thread()
            try:
                if threaded_ctx is not None:
                    return _run_on_own_loop(agent, task_input, threaded_ctx, loop_job)
                return agent(task_input, sync_ctx)
            finally:
                job.finished = True

        try:
            output = await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
        finally:
            sync_ctx.close()
            loop_job.cancel()
            if not job.finished:
                with _abandoned_lock:
                    _abandoned.add(job)
        if inspect.isawaitable(output):  # a plain function returning a coroutine
            output = await output
        return output

    threaded.__dict__["__wopeval_wrapped__"] = True
    return threaded


def abandoned_threads() -> list[threading.Thread]:
    """Worker threads still blocked in a plain agent whose trial timed out or was cancelled."""
    with _abandoned_lock:
        _abandoned.difference_update([job for job in _abandoned if job.finished])
        return [job.thread for job in _abandoned if job.thread is not None]


__all__ = [
    "SyncAgentContext",
    "TrialOver",
    "abandoned_threads",
    "as_async_agent",
    "is_async_agent",
    "off_loop_agent",
]


def off_loop_agent(agent: Callable[..., Any]) -> AgentFn:
    """``agent`` (``async`` or plain) as the engine calls it, never on the trials' loop."""
    return as_async_agent(agent, off_loop=True)
