"""One model client per run and endpoint: made on the run's first model call, shared by all its
trials (and by the judge when it uses the same endpoint), its pool sized to the run's
concurrency, closed when the run ends however it ends. Counted on a real loopback server: the
connections it accepted, those still open, the requests it answered."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread
import pytest

from tests.agents.helpers import AGENT_ID, agent_registry, definition, one_task_suite
from tests.engine.helpers import make_suite, run_suite
from wopeval.agents.judge_llm import LLMJudge
from wopeval.agents.openai_compat import OpenAICompatAgent
from wopeval.agents.scripted_openai import HttpError, Reply, ScriptedOpenAI
from wopeval.engine.agent import AgentContext
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunHandle, RunSettings
from wopeval.engine.scope import current_scope, run_scope
from wopeval.events.store import EventStore
from wopeval.service.runs import create_run_record, execute
from wopeval.wire.vocab import RUN_CANCELLED, RUN_COMPLETED

VERDICT = Reply(content=json.dumps({"c1": 1}))


async def _until(condition: Callable[[], bool]) -> bool:
    """Whether ``condition`` came true (the server's threads see a close a moment after it)."""
    with anyio.move_on_after(20):
        while not condition():  # noqa: ASYNC110 (set by the server's threads, not a task)
            await anyio.sleep(0.01)
    return condition()


def _trials(count: int, expected: str = "refund") -> Any:
    suite = one_task_suite([], expected)
    return make_suite([suite.tasks[0].model_dump(exclude_none=True)], trials={"count": count})


def _slow(reply: Reply | Callable[[dict[str, Any]], Reply]) -> Callable[[dict[str, Any]], Reply]:
    """Answer after a short wait, so that the run's trials are in flight together."""

    def step(body: dict[str, Any]) -> Reply:
        threading.Event().wait(0.02)
        return reply(body) if callable(reply) else reply

    return step


async def test_a_run_of_50_trials_at_concurrency_5_opens_at_most_5_connections(
    store: EventStore,
) -> None:
    with ScriptedOpenAI([_slow(Reply(content="refund"))], repeat_last=True) as server:
        settings = RunSettings(concurrency=5)
        ran = await run_suite(
            store, _trials(50), agent_id=AGENT_ID, registry=agent_registry(server),
            settings=settings,
        )  # fmt: skip
        assert ran.done.passedCount == 1
        assert len(server.requests) == 50
        assert 1 <= server.connections <= 5  # a client per trial would open 50
        assert await _until(lambda: server.open_connections == 0)  # closed at the run's end


async def test_the_plainest_run_one_trial_one_connection_closed_at_the_end(
    store: EventStore,
) -> None:
    with ScriptedOpenAI([Reply(content="refund")]) as server:
        ran = await run_suite(store, _trials(1), agent_id=AGENT_ID, registry=agent_registry(server))
        assert ran.done.passed
        assert (len(server.requests), server.connections) == (1, 1)
        assert await _until(lambda: server.open_connections == 0)


async def test_sequential_trials_reuse_one_kept_alive_connection(store: EventStore) -> None:
    with ScriptedOpenAI([Reply(content="refund")], repeat_last=True) as server:
        await run_suite(store, _trials(10), agent_id=AGENT_ID, registry=agent_registry(server),
                        settings=RunSettings(concurrency=1))  # fmt: skip
        assert (len(server.requests), server.connections) == (10, 1)


async def test_the_client_is_made_once_per_run_and_closed_at_its_end(store: EventStore) -> None:
    with ScriptedOpenAI([Reply(content="refund")], repeat_last=True) as server:
        llm = OpenAICompatAgent(definition(server.base_url))
        seen: list[Any] = []

        async def agent(task_input: Any, ctx: AgentContext) -> Any:
            async with llm.client() as client:
                seen.append(client)
                assert not client.is_closed()
            return await llm(task_input, ctx)

        registry = Registry()
        registry.register_agent(AGENT_ID, agent)
        for _ in range(2):
            await run_suite(
                store, _trials(6), agent_id=AGENT_ID, registry=registry,
                settings=RunSettings(concurrency=3),
            )  # fmt: skip
    first, second = seen[:6], seen[6:]
    assert len({id(c) for c in first}) == len({id(c) for c in second}) == 1
    assert first[0] is not second[0]  # a client per run, not per agent object
    assert first[0].is_closed()
    assert second[0].is_closed()


async def test_outside_a_run_each_call_makes_and_closes_its_own_client() -> None:
    with ScriptedOpenAI([Reply(content="x")]) as server:
        llm = OpenAICompatAgent(definition(server.base_url))
        async with llm.client() as one:
            pass
        async with llm.client() as two:
            pass
    assert one is not two
    assert one.is_closed()
    assert two.is_closed()


async def test_a_failing_run_closes_its_client_too(store: EventStore) -> None:
    with ScriptedOpenAI([HttpError(500)], repeat_last=True) as server:
        registry = agent_registry(server, agent={"maxRetries": 0})
        ran = await run_suite(store, _trials(8), agent_id=AGENT_ID, registry=registry,
                              settings=RunSettings(concurrency=2))  # fmt: skip
        assert not ran.done.passed
        assert len(server.requests) == 8
        assert server.connections <= 2
        assert await _until(lambda: server.open_connections == 0)


def _judge_task(count: int) -> Any:
    task = {
        "taskId": "polite",
        "input": "Say hello",
        "expected": {"kind": "rubric", "rubric": [{"criterion": "polite", "weight": 1}]},
    }
    return make_suite([task], trials={"count": count})


async def test_the_judge_has_one_client_per_run_on_its_own_endpoint(store: EventStore) -> None:
    with (
        ScriptedOpenAI([_slow(Reply(content="hello"))], repeat_last=True) as agent_server,
        ScriptedOpenAI([_slow(VERDICT)], repeat_last=True) as judge_server,
    ):
        judge = LLMJudge(definition(judge_server.base_url))
        ran = await run_suite(
            store, _judge_task(20), agent_id=AGENT_ID, registry=agent_registry(agent_server),
            settings=RunSettings(concurrency=4), judge=judge,
        )  # fmt: skip
        assert ran.done.passed
        assert len(agent_server.requests) == len(judge_server.requests) == 20
        assert 1 <= agent_server.connections <= 4
        assert 1 <= judge_server.connections <= 4
        assert await _until(lambda: agent_server.open_connections == 0)
        assert await _until(lambda: judge_server.open_connections == 0)


async def test_agent_and_judge_on_one_endpoint_share_one_client(store: EventStore) -> None:
    def answer(body: dict[str, Any]) -> Reply:
        return VERDICT if "response_format" in body else Reply(content="hello")

    with ScriptedOpenAI([_slow(answer)], repeat_last=True) as server:
        judge = LLMJudge(definition(server.base_url))
        ran = await run_suite(
            store, _judge_task(20), agent_id=AGENT_ID, registry=agent_registry(server),
            settings=RunSettings(concurrency=3), judge=judge,
        )  # fmt: skip
        assert ran.done.passed
        assert len(server.requests) == 40
        assert 1 <= server.connections <= 3  # two clients could open 6
        assert await _until(lambda: server.open_connections == 0)


async def _stopped_midway(store: EventStore, *, interrupt: bool) -> tuple[ScriptedOpenAI, str]:
    """A run of fast trials and one whose model call hangs, stopped once the fast ones are done
    (their connection idle in the pool, the hanging one in flight)."""
    release = threading.Event()
    fast = 6

    def answer(body: dict[str, Any]) -> Reply:
        if body["messages"][-1]["content"] == "hang":
            release.wait(30)
        return Reply(content="ok")

    tasks = [{"taskId": "hang", "input": "hang", "expected": {"kind": "golden", "match":
             {"strategy": "exact", "value": "ok"}}}]  # fmt: skip
    tasks += [dict(tasks[0], taskId=f"fast{i}", input=f"fast{i}") for i in range(fast)]
    suite = make_suite(tasks)
    server = ScriptedOpenAI([answer], repeat_last=True).__enter__()
    registry = agent_registry(server)
    settings = RunSettings(concurrency=2)
    record = await create_run_record(store, suite, AGENT_ID, settings)
    handle = RunHandle(record.run_id)
    try:
        async with anyio.create_task_group() as group:

            async def go() -> None:
                assert await execute(store, handle, suite, AGENT_ID, registry, settings) is None

            group.start_soon(go)
            assert await _until(lambda: len(server.requests) == fast + 1)
            assert server.open_connections == 2  # one idle, one waiting on the hung answer
            if interrupt:
                handle.interrupt()
            handle.cancel()
    finally:
        release.set()
    return server, record.run_id


async def test_a_cancelled_run_closes_its_client(store: EventStore) -> None:
    server, run_id = await _stopped_midway(store, interrupt=False)
    try:
        assert await _until(lambda: server.open_connections == 0)  # the idle one too
        assert [e.type for e in await store.events(run_id)][-1] == RUN_CANCELLED
    finally:
        server.__exit__(None, None, None)


async def test_an_interrupted_run_closes_its_client(store: EventStore) -> None:
    server, run_id = await _stopped_midway(store, interrupt=True)
    try:
        assert await _until(lambda: server.open_connections == 0)
        types = [e.type for e in await store.events(run_id)]
        assert RUN_CANCELLED not in types
        assert RUN_COMPLETED not in types
    finally:
        server.__exit__(None, None, None)


async def test_a_scope_makes_each_resource_once_and_closes_them_last_made_first(
    caplog: Any,
) -> None:
    closed: list[str] = []

    async def close(name: str) -> None:
        closed.append(name)
        if name == "b":
            raise OSError("already gone")

    made: list[str] = []

    def make(name: str) -> Callable[[], str]:
        def build() -> str:
            made.append(name)
            return name

        return build

    async with run_scope(0) as scope:
        assert current_scope() is scope
        assert scope.concurrency == 1  # a pool is never sized 0
        for name in ("a", "b", "a", "c", "b"):
            assert scope.shared(name, make(name), close) == name
        assert made == ["a", "b", "c"]
    assert current_scope() is None
    assert closed == ["c", "b", "a"]  # one that fails to close does not stop the others
    assert "already gone" in caplog.text
    with pytest.raises(RuntimeError, match="closed"):
        scope.shared("d", make("d"), close)
    assert made == ["a", "b", "c"]


async def test_a_cancelled_scope_still_closes_what_it_holds() -> None:
    closed: list[str] = []

    async def close(name: str) -> None:
        await anyio.lowlevel.checkpoint()  # cancelled here unless shielded
        closed.append(name)

    with anyio.CancelScope() as cancel:
        async with run_scope(2) as scope:
            scope.shared("x", lambda: "x", close)
            cancel.cancel()
            await anyio.sleep(1)
    assert closed == ["x"]


async def test_code_on_another_threads_event_loop_does_not_share_the_runs_scope() -> None:
    """An agent run off the loop (its own loop in a worker thread) inherits the context but
    not the run's resources, which are bound to the run's loop."""
    async with run_scope(2) as scope:
        assert current_scope() is scope
        elsewhere = await anyio.to_thread.run_sync(current_scope)
    assert elsewhere is None
