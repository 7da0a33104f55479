"""Resume with a scripted user: a trial interrupted mid-conversation that touched no live tool
is run again from the start (the scripted user is deterministic, so its turns replay the same),
and the new attempt's conversation alone is graded."""

from __future__ import annotations

from typing import Any

import anyio

from tests.engine.helpers import make_suite
from wopeval.engine.agent import AgentContext, ConversationEnded
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunHandle, RunSettings
from wopeval.events.store import EventStore
from wopeval.service.runs import RunService
from wopeval.wire.events import EvalScored, UserTurn

AGENT = "core.test.agents.talk-resume"
SCRIPT = {
    "kind": "scripted",
    "replies": [
        {"when": {"literal": "ref?"}, "reply": "ABC"},
        {"when": {"literal": "bye"}, "reply": "ok", "stop": True},
    ],
}


async def test_33_2_an_interrupted_conversation_is_run_again_from_the_start(
    store: EventStore,
) -> None:
    asked = anyio.Event()

    async def stalls(task_input: Any, ctx: AgentContext) -> Any:
        await ctx.ask_user("ref?")
        asked.set()
        await anyio.sleep_forever()  # the process dies here, mid-conversation

    registry = Registry()
    registry.register_agent(AGENT, stalls)
    expected = {"kind": "golden", "match": {"strategy": "exact", "value": "ABC"}}
    task = {"taskId": "t", "input": {}, "expected": expected, "x-wopeval-user": SCRIPT}
    suite = make_suite([task])
    service = RunService(store, registry)
    plan = await service.plan(suite, AGENT, RunSettings(concurrency=1))
    record = await service.create(plan)
    handle = RunHandle(record.run_id)

    async def crash_mid_conversation() -> None:
        await asked.wait()
        for _ in range(100):  # until the user turn is committed
            events = await store.events(record.run_id)
            if any(isinstance(e.typed, UserTurn) for e in events):
                break
            await anyio.sleep(0.02)
        handle.interrupt()
        handle.cancel()

    async with anyio.create_task_group() as group:
        group.start_soon(crash_mid_conversation)
        assert await service.execute(plan, handle) is None

    async def talks(task_input: Any, ctx: AgentContext) -> Any:
        reference = await ctx.ask_user("ref?")
        try:
            await ctx.ask_user("bye")
        except ConversationEnded:  # the stop
            return reference
        return None

    resumed = Registry()
    resumed.register_agent(AGENT, talks)
    resumer = RunService(store, resumed)
    _, summary = await resumer.resume(record.run_id)
    assert summary is not None
    assert summary.passed
    events = await store.events(record.run_id)
    turns = [e.typed for e in events if isinstance(e.typed, UserTurn)]
    assert [(t.turn, t.kind) for t in turns] == [(0, "reply"), (0, "reply"), (1, "stop")]
    assert sum(isinstance(e.typed, EvalScored) for e in events) == 1
    side = summary.user_side
    assert side is not None
    assert (side.trials, side.passedTrials, side.userMiss) == (1, 1, 0)
    regraded = await resumer.regrade(record.run_id)
    assert regraded.reproduces_stored
