"""``wopeval run --resume`` of an interrupted adaptive run: its progress view is built with the
stored run's suite and the outcomes its log already holds, so the bar ends full and its "N
saved" is the run's (the engine's recorded stops), not zero."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from tests.engine.helpers import scripted_task
from tests.engine.test_adaptive_trials import OK, Blocking, adaptive_suite, scored, stops
from wopeval.cli import resume_cmd
from wopeval.cli.progress import ProgressView
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunHandle, RunSettings
from wopeval.events.store import EventStore
from wopeval.service.runs import RunService

pytestmark = pytest.mark.slow  # a real run interrupted, then resumed through the CLI's path


async def _interrupted(store: EventStore, registry: Registry, agent: Blocking) -> str:
    """A run of "pass" (always passes) and "fail" (never does), stopped once "fail" stopped
    and "pass" scored trials 0-4 (trial 5 on never answers)."""
    suite = adaptive_suite(
        scripted_task("pass", {"output": "ok"}, OK), scripted_task("fail", {"output": "no"}, OK)
    )
    service = RunService(store, registry)
    plan = await service.plan(suite, "test.blocking", RunSettings(concurrency=4))
    record = await service.create(plan)
    handle = RunHandle(record.run_id)

    async def interrupt_when_stuck() -> None:
        while True:
            await anyio.sleep(0.02)
            done = scored(await store.events(record.run_id))
            if len(done) >= 5 + 3 and ("pass", 5) in agent.calls:
                handle.interrupt()
                handle.cancel()
                return

    async with anyio.create_task_group() as group:
        group.start_soon(interrupt_when_stuck)
        await service.execute(plan, handle)
    return record.run_id


async def test_a_resumed_adaptive_runs_bar_ends_full_and_says_what_the_stops_saved(
    store: EventStore, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = Blocking(block_from=5)
    registry = Registry()
    registry.register_agent("test.blocking", agent)
    run_id = await _interrupted(store, registry, agent)
    before = await store.events(run_id)
    assert set(stops(before)) == {"fail"}  # stopped "below" at 3 before the interruption
    kept = scored(before)
    views: list[ProgressView] = []

    class Seen(ProgressView):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            views.append(self)

    monkeypatch.setattr(resume_cmd, "ProgressView", Seen)

    async def on_signal(handle: RunHandle) -> None:
        await anyio.sleep_forever()

    agent.blocked = False
    _, _, summary, _, interrupted = await resume_cmd.resume_run(
        store_url, run_id, registry, None, on_signal, show_progress=True
    )
    assert summary is not None
    assert not interrupted
    (view,) = views
    # "pass" goes on from its 5 stored passes to its stop at 12: the resume ran trials 5-11
    assert sorted(kept) == [("fail", i) for i in range(3)] + [("pass", i) for i in range(5)]
    ran = scored(await store.events(run_id)) - kept
    assert sorted(ran) == [("pass", i) for i in range(5, 12)]
    assert view.done == len(ran)
    assert view.total == view.done  # the bar ends full
    assert view.saved == (20 - 12) + (20 - 3)  # both stops, as the summary reports them
    assert view.text.endswith(f"{view.saved} saved")
