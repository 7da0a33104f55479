"""Resume with an LLM user: a trial interrupted mid-conversation that touched no live tool is
run again from the start, and its user answers the turns the log holds from the log (no model
call), so the agent never gets a different answer to a turn it already saw; an agent that now
says something else fails the trial closed (``user-error``, cause ``resume-diverged``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

from tests.agents.llm_user_helpers import TwoModels, llm_user, server_of
from tests.engine.helpers import make_suite
from wopeval.agents.scripted_openai import Reply
from wopeval.engine.agent import AgentContext, ConversationEnded
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunHandle, RunSettings
from wopeval.events.store import EventStore
from wopeval.service.runs import RunService
from wopeval.wire.events import EvalScored, TrialFailed, UserTurn

pytestmark = pytest.mark.slow  # a loopback server, a run interrupted and resumed

AGENT = "core.test.agents.llm-user-resume"
Agent = Callable[[Any, AgentContext], Awaitable[Any]]


async def _crash_then_resume(store: EventStore, models: TwoModels, talks: Agent) -> Any:
    asked = anyio.Event()

    async def stalls(task_input: Any, ctx: AgentContext) -> Any:
        await ctx.ask_user("ref?")
        asked.set()
        await anyio.sleep_forever()  # the process dies here, mid-conversation

    with server_of(models) as server:
        expected = {"kind": "golden", "match": {"strategy": "exact", "value": "ABC123"}}
        task = {"taskId": "t", "input": "hi", "expected": expected,
                "x-wopeval-user": llm_user(server.base_url)}  # fmt: skip
        suite = make_suite([task])
        registry = Registry()
        registry.register_agent(AGENT, stalls)
        service = RunService(store, registry)
        plan = await service.plan(suite, AGENT, RunSettings(concurrency=1))
        record = await service.create(plan)
        handle = RunHandle(record.run_id)

        async def crash_mid_conversation() -> None:
            await asked.wait()
            for _ in range(200):  # until the user turn is committed
                events = await store.events(record.run_id)
                if any(isinstance(e.typed, UserTurn) for e in events):
                    break
                await anyio.sleep(0.02)
            handle.interrupt()
            handle.cancel()

        async with anyio.create_task_group() as group:
            group.start_soon(crash_mid_conversation)
            assert await service.execute(plan, handle) is None
        assert len(models.user_bodies) == 1  # the user answered "ref?" once
        resumed = Registry()
        resumed.register_agent(AGENT, talks)
        resumer = RunService(store, resumed)
        _, summary = await resumer.resume(record.run_id)
        events = await store.events(record.run_id)
        regraded = await resumer.regrade(record.run_id)
    assert regraded.reproduces_stored
    assert sum(isinstance(e.typed, EvalScored) for e in events) == 1
    return summary, events


async def test_33_2_a_resumed_llm_user_answers_the_logged_turns_from_the_log(
    store: EventStore,
) -> None:
    models = TwoModels(agent=[], user=[Reply(content="ABC123"), Reply(content="ok ###STOP###")])
    seen: list[Any] = []

    async def talks(task_input: Any, ctx: AgentContext) -> Any:
        reference = await ctx.ask_user("ref?")
        seen.append(reference)
        try:
            await ctx.ask_user("bye")
        except ConversationEnded:  # the stop
            return reference
        return None

    summary, events = await _crash_then_resume(store, models, talks)
    assert summary is not None
    assert summary.passed
    assert seen == ["ABC123"]  # the answer the agent saw before the crash, again
    assert len(models.user_bodies) == 2  # one call before the crash, one for "bye" only
    # The user's model, asked about "bye", saw the whole conversation, the logged turn too.
    said = [(m["role"], m["content"]) for m in models.user_bodies[1]["messages"][1:]]
    assert said == [("user", "ref?"), ("assistant", "ABC123"), ("user", "bye")]
    turns = [e.typed for e in events if isinstance(e.typed, UserTurn)]
    assert [(t.turn, t.kind) for t in turns] == [(0, "reply"), (0, "reply"), (1, "stop")]


async def test_33_2_a_resumed_agent_that_diverges_fails_closed(store: EventStore) -> None:
    models = TwoModels(agent=[], user=[Reply(content="ABC123"), Reply(content="never")])

    async def other(task_input: Any, ctx: AgentContext) -> Any:
        return await ctx.ask_user("What is your date of birth?")

    summary, events = await _crash_then_resume(store, models, other)
    assert summary is not None
    assert not summary.passed
    assert len(models.user_bodies) == 1  # the diverging message reached no model
    (reason,) = [e.typed for e in events if isinstance(e.typed, TrialFailed)]
    assert (reason.kind, reason.details["cause"]) == ("user-error", "resume-diverged")
    side = summary.user_side
    assert side is not None
    assert side.userError == 1
