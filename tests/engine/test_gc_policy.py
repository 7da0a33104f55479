"""The collector while runs execute (wopeval.engine.gcpolicy), and trials that leave no cyclic
garbage behind (reference counting frees a finished trial; the cyclic collector need not)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

from tests.engine.helpers import make_suite, run_suite, scripted_task
from wopeval.engine import gcpolicy
from wopeval.engine.registry import Registry
from wopeval.engine.trial import _Trial
from wopeval.events.store import EventStore

OK = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}
CALLS = [{"tool": "kb:a", "args": {"q": 1}}, {"tool": "kb:b", "args": {"q": [2]}}]
FIXTURES = {"onMiss": "fail", "toolResponses": [{"tool": "kb:a", "response": {"r": 1}},
                                                 {"tool": "kb:b", "response": [1]}]}  # fmt: skip


@pytest.fixture
def saved_gc() -> Iterator[None]:
    threshold = gc.get_threshold()
    yield
    gc.set_threshold(*threshold)
    gc.unfreeze()


def test_the_policy_applies_while_a_run_executes_and_is_undone_after(saved_gc: None) -> None:
    gc.set_threshold(700, 10, 10)
    with gcpolicy.run_gc_policy():
        assert gc.get_threshold() == (gcpolicy.YOUNG_THRESHOLD, 10, 10)
        assert gc.get_freeze_count() > 0
        with gcpolicy.run_gc_policy():  # a second run overlapping the first
            assert gc.get_threshold()[0] == gcpolicy.YOUNG_THRESHOLD
        assert gc.get_threshold()[0] == gcpolicy.YOUNG_THRESHOLD  # the first still runs
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() == 0


def test_the_policy_is_undone_when_the_run_raises(saved_gc: None) -> None:
    gc.set_threshold(900, 11, 12)
    with pytest.raises(RuntimeError), gcpolicy.run_gc_policy():
        raise RuntimeError("boom")
    assert gc.get_threshold() == (900, 11, 12)
    assert gc.get_freeze_count() == 0


def test_a_higher_threshold_of_the_users_is_kept(saved_gc: None) -> None:
    gc.set_threshold(50_000, 10, 10)
    with gcpolicy.run_gc_policy():
        assert gc.get_threshold()[0] == 50_000
    assert gc.get_threshold() == (50_000, 10, 10)


async def test_a_run_applies_the_policy_to_its_trials(store: EventStore, saved_gc: None) -> None:
    seen: list[tuple[Any, int]] = []

    async def agent(task_input: Any, ctx: Any) -> Any:
        seen.append((gc.get_threshold()[0], gc.get_freeze_count()))
        return "ok"

    registry = Registry()
    registry.register_agent("test.gc-agent", agent)
    suite = make_suite([scripted_task("t", {}, OK)])
    ran = await run_suite(store, suite, agent_id="test.gc-agent", registry=registry)
    assert ran.done.passed
    assert seen
    assert seen[0][0] >= gcpolicy.YOUNG_THRESHOLD
    assert seen[0][1] > 0
    assert gc.get_freeze_count() == 0  # undone once the run ended


async def test_finished_trials_leave_no_cyclic_garbage(store: EventStore) -> None:
    suite = make_suite([scripted_task("t", {"calls": CALLS, "output": "ok"}, OK, FIXTURES)],
                       trials={"count": 20})  # fmt: skip
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        ran = await run_suite(store, suite)
        gc.collect()
        trials = [o for o in gc.garbage if isinstance(o, _Trial)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert ran.done.passed
    assert trials == []  # each finished trial was freed by reference counting
