"""The library leaves the collector as its embedder set it, and trials leave no cyclic garbage
behind (reference counting frees a finished trial; the cyclic collector need not)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import wopeval
from tests.engine.helpers import make_suite, run_suite, scripted_task
from wopeval.engine.trial_state import TrialState as _Trial
from wopeval.events.store import EventStore
from wopeval.grading.trajectory import ObservedCall, max_matching_size
from wopeval.suite.models import ExpectedCall

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


async def test_evaluate_leaves_the_callers_collector_as_it_was(
    tmp_path: Path, saved_gc: None
) -> None:
    """A pre-fork server freezes what it loaded so its workers share those pages; a run inside
    it must neither unfreeze them nor retune the collector, before, during or after."""
    gc.set_threshold(700, 10, 10)
    gc.freeze()
    frozen = gc.get_freeze_count()
    assert frozen > 0
    seen: list[tuple[tuple[int, int, int], int, bool]] = []

    async def agent(task_input: Any, ctx: Any) -> Any:
        seen.append((gc.get_threshold(), gc.get_freeze_count(), gc.isenabled()))
        return "ok"

    result = await wopeval.evaluate(
        make_suite([scripted_task("t", {}, OK)]), agent, store=str(tmp_path / "s.db")
    )
    assert result.summary.passed
    # Frozen objects that die are freed and leave the count; none is thawed, none added.
    [(threshold, during, enabled)] = seen
    assert (threshold, enabled) == ((700, 10, 10), True)
    assert frozen * 0.9 < during <= frozen
    assert frozen * 0.9 < gc.get_freeze_count() <= frozen
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.isenabled()


def test_grading_leaves_the_collector_to_its_owner(saved_gc: None) -> None:
    """Compiling and matching a large trajectory neither pauses an enabled collector (it still
    collects when its owner's threshold says so) nor turns on a disabled one."""
    calls = [ExpectedCall(tool=f"kb:t{i % 7}", args={"q": [i]}, argsMatch="subset")
             for i in range(3000)]  # fmt: skip
    observed = [ObservedCall(call.tool, {"q": [i], "r": i}, "a") for i, call in enumerate(calls)]
    collections: list[str] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(phase)

    gc.callbacks.append(count)
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            gc.set_threshold(100, 10, 10)
            collections.clear()
            assert max_matching_size(calls, observed) == len(calls)
            assert gc.isenabled() is enabled
            assert bool(collections) is enabled
    finally:
        gc.callbacks.remove(count)
        gc.enable()


async def test_finished_trials_leave_no_cyclic_garbage(store: EventStore, own_heap: None) -> None:
    suite = make_suite([scripted_task("t", {"calls": CALLS, "output": "ok"}, OK, FIXTURES)],
                       trials={"count": 20})  # fmt: skip
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
