"""Plain agents run in a worker thread, so ``--trial-timeout`` holds for an agent that blocks.

A blocking agent here waits on a gate the test opens only after the run has returned: the run
ending while the agent still blocks is the fact checked, not an elapsed time.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import anyio
import anyio.to_thread

from tests.engine.helpers import make_suite, run_suite
from wopeval.engine.agent import Usage
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunSettings
from wopeval.engine.syncagent import SyncAgentContext, TrialOver, abandoned_threads
from wopeval.events.store import EventStore
from wopeval.grading.views import X_ERROR
from wopeval.wire.events import INVOCATION_COMPLETED, TOOL_CALLED

TIMEOUT = 0.3

TASK = {
    "taskId": "t",
    "input": {"orderId": "A-1"},
    "expected": {
        "kind": "golden",
        "match": {"strategy": "exact", "value": "refund approved"},
        "trajectory": {"match": "exact", "calls": [{"tool": "crm:lookup-order"}]},
    },
    "fixtures": {
        "onMiss": "fail",
        "toolResponses": [{"tool": "crm:lookup-order", "response": {"status": "damaged"}}],
    },
}


def _registry(agent: Any) -> Registry:
    registry = Registry()
    registry.register_agent("local.agent", agent)
    return registry


def _errors(events: list[Any]) -> list[str | None]:
    return [e.payload.get(X_ERROR) for e in events if e.type == INVOCATION_COMPLETED]


async def test_a_plain_agent_uses_its_context_with_plain_calls(store: EventStore) -> None:
    seen: list[bool] = []

    def agent(task_input: Any, ctx: SyncAgentContext) -> Any:
        seen.append(threading.current_thread() is not threading.main_thread())
        order = ctx.call_tool("crm:lookup-order", {"orderId": task_input["orderId"]})
        ctx.report_usage(Usage("mock", "m", 1, 1, 0.001))
        helper = ctx.delegate("core.conformance.agents.scripted.helper", {"output": "hi"})
        assert helper == "hi"
        return "refund approved" if order.ok and order.value["status"] == "damaged" else "no"

    suite = make_suite([TASK])
    ran = await run_suite(store, suite, agent_id="local.agent", registry=_registry(agent))
    assert ran.done.passed
    assert seen == [True]  # ran off the event loop's thread
    assert ran.done.totalCostUsd is not None
    assert ran.done.totalCostUsd > 0


async def test_0244_B_trial_timeout_stops_waiting_for_a_blocking_plain_agent(
    store: EventStore,
) -> None:
    after_timeout: list[BaseException] = []
    gate, thread_done = threading.Event(), threading.Event()

    def agent(task_input: Any, ctx: SyncAgentContext) -> Any:
        gate.wait(60)
        try:
            ctx.call_tool("crm:lookup-order", {"orderId": "A-1"})  # the trial is over by now
        except TrialOver as exc:
            after_timeout.append(exc)
        thread_done.set()
        return "refund approved"

    suite = make_suite([TASK])
    ran = await run_suite(
        store,
        suite,
        agent_id="local.agent",
        registry=_registry(agent),
        settings=RunSettings(trial_timeout_s=TIMEOUT),
    )
    assert not thread_done.is_set()  # the run returned while the agent still blocked
    gate.set()
    assert not ran.done.passed
    assert _errors(ran.events) == ["timeout"]
    assert abandoned_threads(), "the blocked thread is known as abandoned"
    # Wait off the loop: the thread's late call needs the loop to answer it.
    assert await anyio.to_thread.run_sync(thread_done.wait, 60)
    assert len(after_timeout) == 1  # the abandoned thread was refused its late tool call,
    late = [e for e in await store.events(ran.run_id) if e.type == TOOL_CALLED]
    assert late == []  # and nothing was recorded


async def test_an_async_agent_blocking_the_loop_is_still_timed_out(store: EventStore) -> None:
    async def agent(task_input: Any, ctx: Any) -> Any:
        await ctx.call_tool("crm:lookup-order", {"orderId": "A-1"})
        time.sleep(TIMEOUT * 2)  # noqa: ASYNC251 - blocks the event loop, on purpose
        return "refund approved"

    suite = make_suite([TASK])
    ran = await run_suite(
        store,
        suite,
        agent_id="local.agent",
        registry=_registry(agent),
        settings=RunSettings(trial_timeout_s=TIMEOUT),
    )
    assert not ran.done.passed
    assert _errors(ran.events) == ["timeout"]


async def test_an_async_agent_within_its_timeout_passes(store: EventStore) -> None:
    async def agent(task_input: Any, ctx: Any) -> Any:
        await ctx.call_tool("crm:lookup-order", {"orderId": "A-1"})
        return "refund approved"

    suite = make_suite([TASK])
    ran = await run_suite(
        store,
        suite,
        agent_id="local.agent",
        registry=_registry(agent),
        settings=RunSettings(trial_timeout_s=5),
    )
    assert ran.done.passed
    assert _errors(ran.events) == [None]
