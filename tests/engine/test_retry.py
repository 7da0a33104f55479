"""Infrastructure retries: only a trial whose attempt is labelled ``infrastructure`` runs again,
never one with a wrong answer, a low score, an agent error or a fixture miss; a retried attempt
stays in the log, superseded; each ``(taskId, trialIndex)`` is scored once, by its last attempt,
and ``wopeval grade`` reproduces the summary. Through the real engine on both stores."""

from __future__ import annotations

from collections import Counter
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.engine.helpers import make_suite
from wopeval.agents.openai_compat import ModelUnavailable
from wopeval.engine.agent import AgentContext, Usage
from wopeval.engine.cmd_agent import CommandDied
from wopeval.engine.registry import Registry
from wopeval.engine.retry import RetriesNeedLocal, RetryBudget, retry_cause, should_retry
from wopeval.engine.run import RunHandle, RunSettings
from wopeval.events.store import EventStore
from wopeval.grading.detail import RunDetail
from wopeval.service.runs import RunService
from wopeval.wire.events import EvalScored, Failure, InvocationCompleted, InvocationStarted
from wopeval.wire.request import RetryPolicy
from wopeval.wire.summary import EvalSummary
from wopeval.wire.vocab import ERROR_LABELS, INFRASTRUCTURE_LABEL

AGENT = "core.test.agents.retry"
OK = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}
NO_WAIT = RetryPolicy(maxRetries=1, backoffS=0.0)


def _task(task_id: str, **extra: Any) -> dict[str, Any]:
    return {"taskId": task_id, "input": task_id, "expected": OK, **extra}


class Attempts:
    """Counts each (task, trial)'s attempts; ``fail(key, attempt)`` says whether to raise."""

    def __init__(self) -> None:
        self.seen: Counter[tuple[str, int]] = Counter()

    def next(self, ctx: AgentContext) -> int:
        key = (ctx.task_id, ctx.trial_index)
        self.seen[key] += 1
        return self.seen[key]


async def _run(
    store: EventStore,
    agent: Any,
    tasks: list[dict[str, Any]],
    policy: RetryPolicy | None,
    *,
    trials: int | None = None,
    registry: Registry | None = None,
) -> tuple[str, EvalSummary, RunDetail, list[Any]]:
    registry = registry or Registry()
    registry.register_agent(AGENT, agent)
    suite = make_suite(tasks, **({"trials": {"count": trials}} if trials else {}))
    service = RunService(store, registry)
    plan = await service.plan(suite, AGENT, RunSettings(retry_infrastructure=policy))
    record = await service.create(plan)
    summary, detail = await service.execute_detailed(plan, RunHandle(record.run_id))
    assert summary is not None
    assert detail is not None
    regraded = await service.regrade(record.run_id)
    assert regraded.reproduces_stored  # wopeval grade: byte for byte, retries and all
    return record.run_id, summary, detail, await store.events(record.run_id)


def _completions(events: list[Any]) -> list[InvocationCompleted]:
    return [p for e in events if isinstance(p := e.typed, InvocationCompleted)]


def _scored(events: list[Any]) -> dict[tuple[str, int], EvalScored]:
    found: dict[tuple[str, int], EvalScored] = {}
    for event in events:
        if isinstance(p := event.typed, EvalScored):
            key = (p.taskId, p.trialIndex or 0)
            assert key not in found, f"{key} scored twice"
            found[key] = p
    return found


# --- the decision, pure ------------------------------------------------------------------------


@given(
    label=st.one_of(st.none(), st.sampled_from(ERROR_LABELS), st.text(max_size=20)),
    score=st.floats(min_value=0, max_value=1),
    retries=st.integers(min_value=0, max_value=50),
    max_retries=st.integers(min_value=1, max_value=50),
    budget_left=st.one_of(st.none(), st.integers(min_value=0, max_value=50)),
    went_live=st.booleans(),
)
def test_a_trial_not_labelled_infrastructure_is_never_retried_whatever_its_score(
    label: str | None,
    score: float,
    retries: int,
    max_retries: int,
    budget_left: int | None,
    went_live: bool,
) -> None:
    # The score is drawn to show it cannot matter: the decision has no way to read it.
    decided = should_retry(label, retries, max_retries, budget_left, went_live)
    if label != INFRASTRUCTURE_LABEL:
        assert decided is False
    else:
        bounded = retries < max_retries and (budget_left is None or budget_left > 0)
        assert decided is (bounded and not went_live)
    assert 0 <= score <= 1


def test_the_bounds_are_exact_at_their_edges() -> None:
    assert should_retry(INFRASTRUCTURE_LABEL, 0, 1, None, False)
    assert not should_retry(INFRASTRUCTURE_LABEL, 1, 1, None, False)  # max reached
    assert should_retry(INFRASTRUCTURE_LABEL, 0, 1, 1, False)
    assert not should_retry(INFRASTRUCTURE_LABEL, 0, 1, 0, False)  # budget spent
    assert not should_retry(INFRASTRUCTURE_LABEL, 0, 1, None, True)  # it went live
    assert not should_retry("timeout", 0, 5, None, False)
    assert not should_retry(None, 0, 5, None, False)


def test_the_budget_counts_every_trials_retries_and_the_cause_is_an_enum() -> None:
    budget = RetryBudget(RetryPolicy(maxRetries=3, budget=2))
    dead = Failure(exceptionType="CommandDied", message="killed by SIGKILL")
    assert budget.take(("a", 0), INFRASTRUCTURE_LABEL, dead, False) is not None
    mark = budget.take(("b", 0), INFRASTRUCTURE_LABEL, None, False)
    assert mark is not None
    assert (mark.attempt, mark.cause) == (1, "other")
    assert budget.take(("c", 0), INFRASTRUCTURE_LABEL, dead, False) is None  # spent
    assert (budget.used, budget.done) == (2, {("a", 0): 1, ("b", 0): 1})
    assert retry_cause(Failure(exceptionType="ModelUnavailable", message="")) == "model-server"
    assert retry_cause(Failure(exceptionType="TimeoutError", message="")) == "component-timeout"


def test_the_backoff_doubles_stays_bounded_and_is_seeded() -> None:
    budget = RetryBudget(RetryPolicy(maxRetries=60, backoffS=1.0, maxBackoffS=30.0))
    key = ("t", 0)
    delays = []
    for _ in range(60):
        budget.take(key, INFRASTRUCTURE_LABEL, None, False)
        delays.append(budget.delay_s("run", key))
    assert 0.5 <= delays[0] <= 1.0
    assert 1.0 <= delays[1] <= 2.0
    assert 2.0 <= delays[2] <= 4.0
    assert all(15.0 <= d <= 30.0 for d in delays[5:])  # capped, however many retries
    again = RetryBudget(RetryPolicy(maxRetries=60, backoffS=1.0), done={key: 1})
    assert again.delay_s("run", key) == delays[0]  # the same run, trial and retry: the same wait
    assert again.delay_s("run", ("u", 0)) != delays[0]  # another trial: another draw


# --- through the engine ------------------------------------------------------------------------


async def test_a_trial_that_failed_for_infrastructure_passes_on_its_retry(
    store: EventStore,
) -> None:
    attempts = Attempts()

    async def flaky(task_input: Any, ctx: AgentContext) -> Any:
        if attempts.next(ctx) == 1 and ctx.trial_index in (0, 2):
            raise ModelUnavailable("the model server at http://h/v1 answered HTTP 503")
        return "ok"

    _, summary, detail, events = await _run(store, flaky, [_task("t")], NO_WAIT, trials=3)
    assert (summary.passed, summary.passedCount) == (True, 1)
    scored = _scored(events)
    assert set(scored) == {("t", 0), ("t", 1), ("t", 2)}
    assert all(s.passed for s in scored.values())
    marks = [(c.retry.attempt, c.retry.cause) for c in _completions(events) if c.retry]
    assert marks == [(1, "model-server"), (1, "model-server")]
    starts = Counter(p.trial_index for e in events if isinstance(p := e.typed, InvocationStarted))
    assert starts == {0: 2, 1: 1, 2: 2}  # the superseded attempts stay in the log
    assert detail.retried() == {"trials": 2, "attempts": 2, "model-server": 2}
    assert detail.infrastructure_failures() == 0


async def test_the_plainest_run_with_no_failure_retries_nothing(store: EventStore) -> None:
    async def fine(task_input: Any, ctx: AgentContext) -> Any:
        return "ok"

    _, summary, detail, events = await _run(store, fine, [_task("t")], NO_WAIT)
    assert summary.passed is True
    assert [c.retry for c in _completions(events)] == [None]
    assert detail.retried() == {}


async def test_a_wrong_answer_an_agent_error_or_a_fixture_miss_is_never_retried(
    store: EventStore,
) -> None:
    attempts = Attempts()

    async def bad(task_input: Any, ctx: AgentContext) -> Any:
        attempts.next(ctx)
        if task_input == "wrong":
            return "not ok"
        if task_input == "raises":
            raise RuntimeError("a bug in the agent")
        await ctx.call_tool("crm:lookup", {"id": 2})  # no fixture answers it: fails closed
        return "ok"

    fixture = {"tool": "crm:lookup", "args": {"id": 1}, "argsMatch": "exact", "response": {}}
    fixtures = {"toolResponses": [fixture]}
    tasks = [_task("wrong"), _task("raises"), _task("miss", fixtures=fixtures)]
    policy = RetryPolicy(maxRetries=5, backoffS=0.0)
    _, summary, detail, events = await _run(store, bad, tasks, policy, trials=2)
    assert set(attempts.seen.values()) == {1}  # every trial ran exactly once
    assert [c.retry for c in _completions(events)] == [None] * 6
    scored = _scored(events)
    assert not any(s.passed for s in scored.values())
    assert INFRASTRUCTURE_LABEL not in {s.scoreLabel for s in scored.values()}
    kinds = {reason.kind for task in detail.tasks for cell in task.cells
             if (reason := cell.reason) is not None}  # fmt: skip
    assert kinds == {"output-mismatch", "agent-error", "fixture-miss"}
    assert detail.retried() == {}
    assert summary.passedCount == 0


async def test_an_exhausted_budget_leaves_the_trial_infrastructure(store: EventStore) -> None:
    attempts = Attempts()

    async def down(task_input: Any, ctx: AgentContext) -> Any:
        attempts.next(ctx)
        raise CommandDied("the agent process was killed by SIGKILL mid-run")

    policy = RetryPolicy(maxRetries=2, budget=3, backoffS=0.0)
    tasks = [_task("a"), _task("b")]
    _, summary, detail, events = await _run(store, down, tasks, policy, trials=2)
    assert sum(attempts.seen.values()) == 4 + 3  # each trial once, and the run's 3 retries
    assert max(attempts.seen.values()) <= 3  # at most maxRetries more of one trial
    scored = _scored(events)
    assert len(scored) == 4
    assert {s.scoreLabel for s in scored.values()} == {INFRASTRUCTURE_LABEL}
    assert detail.infrastructure_failures() == 4
    retried = detail.retried()
    assert (retried["attempts"], retried["agent-process"]) == (3, 3)
    assert retried["trials"] == sum(count > 1 for count in attempts.seen.values())
    assert summary.passed is False


async def test_max_retries_bounds_one_trial(store: EventStore) -> None:
    attempts = Attempts()

    async def down(task_input: Any, ctx: AgentContext) -> Any:
        attempts.next(ctx)
        raise ModelUnavailable("the model server at http://h/v1 answered HTTP 429")

    policy = RetryPolicy(maxRetries=2, backoffS=0.0)
    _, _, detail, events = await _run(store, down, [_task("t")], policy)
    assert attempts.seen == {("t", 0): 3}
    marks = [c.retry.attempt for c in _completions(events) if c.retry]
    assert marks == [1, 2]
    assert detail.retried() == {"trials": 1, "attempts": 2, "model-server": 2}
    assert _scored(events)[("t", 0)].scoreLabel == INFRASTRUCTURE_LABEL


async def test_an_attempt_that_reached_a_live_tool_is_not_retried(store: EventStore) -> None:
    attempts = Attempts()
    effects: list[Any] = []

    async def send(args: Any) -> Any:
        effects.append(args)
        return {"sent": True}

    async def sends_then_fails(task_input: Any, ctx: AgentContext) -> Any:
        attempts.next(ctx)
        await ctx.call_tool("mail:send", {"to": "x"})
        raise ModelUnavailable("the model server at http://h/v1 answered HTTP 502")

    registry = Registry()
    registry.register_tool("mail:send", send)
    _, _, detail, events = await _run(
        store, sends_then_fails, [_task("t")], NO_WAIT, registry=registry
    )
    assert attempts.seen == {("t", 0): 1}
    assert len(effects) == 1  # its effect not repeated
    assert _scored(events)[("t", 0)].scoreLabel == INFRASTRUCTURE_LABEL
    assert detail.retried() == {}


async def test_no_retry_starts_past_a_cost_ceiling(store: EventStore) -> None:
    attempts = Attempts()

    async def spends_then_fails(task_input: Any, ctx: AgentContext) -> Any:
        attempts.next(ctx)
        await ctx.report_usage(Usage("p", "m", input_tokens=1, output_tokens=1, cost_usd=1.0))
        raise ModelUnavailable("the model server at http://h/v1 answered HTTP 503")

    registry = Registry()
    registry.register_agent(AGENT, spends_then_fails)
    service = RunService(store, registry)
    settings = RunSettings(retry_infrastructure=NO_WAIT, host_max_cost_usd=0.5)
    plan = await service.plan(make_suite([_task("t")]), AGENT, settings)
    record = await service.create(plan)
    await service.execute(plan, RunHandle(record.run_id))
    events = await store.events(record.run_id)
    assert attempts.seen == {("t", 0): 1}
    assert [c.retry for c in _completions(events)] == [None]
    assert _scored(events)[("t", 0)].scoreLabel == INFRASTRUCTURE_LABEL


async def test_without_a_policy_an_infrastructure_failure_stands(store: EventStore) -> None:
    async def down(task_input: Any, ctx: AgentContext) -> Any:
        raise ModelUnavailable("the model server at http://h/v1 answered HTTP 503")

    _, _, detail, events = await _run(store, down, [_task("t")], None)
    assert len(_completions(events)) == 1
    assert detail.infrastructure_failures() == 1


async def test_a_run_interrupted_mid_retry_resumes_scoring_each_trial_once(
    store: EventStore,
) -> None:
    """Killed while the retry of a trial ran: the resume re-runs it, scores it once, and the
    policy goes on from the retry the log records (maxRetries=1: no second retry)."""
    blocked = anyio.Event()

    async def first(task_input: Any, ctx: AgentContext) -> Any:
        if task_input == "t" and ctx.trial_index == 0:
            if blocked.is_set():
                await anyio.sleep_forever()  # its retry: the process dies here
            blocked.set()
            raise ModelUnavailable("the model server at http://h/v1 answered HTTP 503")
        return "ok"

    registry = Registry()
    registry.register_agent(AGENT, first)
    suite = make_suite([_task("t"), _task("u")], trials={"count": 2})
    settings = RunSettings(retry_infrastructure=NO_WAIT, concurrency=1)
    service = RunService(store, registry)
    plan = await service.plan(suite, AGENT, settings)
    record = await service.create(plan)
    handle = RunHandle(record.run_id)

    async def crash_when_retrying() -> None:
        await blocked.wait()
        for _ in range(50):  # until the retry's bracket is committed
            events = await store.events(record.run_id)
            if sum(isinstance(e.typed, InvocationStarted) for e in events) >= 2:
                break
            await anyio.sleep(0.02)
        handle.interrupt()  # as a host stopping: no terminal event, left to resume
        handle.cancel()

    async with anyio.create_task_group() as group:
        group.start_soon(crash_when_retrying)
        assert await service.execute(plan, handle) is None
    stored = await store.get_run(record.run_id)
    assert stored is not None
    assert not stored.terminal

    async def still_down(task_input: Any, ctx: AgentContext) -> Any:
        if task_input == "t" and ctx.trial_index == 0:
            raise ModelUnavailable("the model server at http://h/v1 answered HTTP 503")
        return "ok"

    resumed_registry = Registry()
    resumed_registry.register_agent(AGENT, still_down)
    resumer = RunService(store, resumed_registry)
    _, summary = await resumer.resume(record.run_id)
    assert summary is not None
    events = await store.events(record.run_id)
    scored = _scored(events)  # raises on a second score of one trial
    assert set(scored) == {("t", 0), ("t", 1), ("u", 0), ("u", 1)}
    assert scored[("t", 0)].scoreLabel == INFRASTRUCTURE_LABEL  # its one retry was spent
    assert [c.retry.attempt for c in _completions(events) if c.retry] == [1]
    regraded = await resumer.regrade(record.run_id)
    assert regraded.reproduces_stored


async def test_retries_are_refused_with_another_executor_before_anything_is_recorded(
    store: EventStore,
) -> None:
    async def fine(task_input: Any, ctx: AgentContext) -> Any:
        return "ok"

    registry = Registry()
    registry.register_agent(AGENT, fine)
    settings = RunSettings(retry_infrastructure=NO_WAIT, executor="ray")
    with pytest.raises(RetriesNeedLocal, match=r"retryInfrastructure: .* not 'ray'"):
        await RunService(store, registry).plan(make_suite([_task("t")]), AGENT, settings)
