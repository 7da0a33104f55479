"""The per-trial timeout (RFC 0244 §B) kept by one watcher: cancels at the deadline, no more."""

from __future__ import annotations

import time

import anyio
import pytest

from wopeval.engine.deadlines import TrialDeadlines


async def _timed(deadlines: TrialDeadlines, seconds: float) -> tuple[str, float]:
    started = time.monotonic()
    try:
        with deadlines.limit():
            await anyio.sleep(seconds)
    except TimeoutError:
        return "timeout", time.monotonic() - started
    return "done", time.monotonic() - started


@pytest.mark.parametrize("watched", [True, False])
async def test_0244_B_a_trial_past_its_timeout_is_cancelled_at_the_deadline(watched: bool) -> None:
    deadlines = TrialDeadlines(0.2)
    results: list[tuple[str, float]] = []

    async def one(seconds: float) -> None:
        results.append(await _timed(deadlines, seconds))

    async with anyio.create_task_group() as watching:
        if watched:
            deadlines.start(watching)
        async with anyio.create_task_group() as group:
            group.start_soon(one, 10.0)  # past the timeout
            group.start_soon(one, 0.01)  # well within it
            await anyio.sleep(0.05)
            group.start_soon(one, 10.0)  # a later trial: a later deadline
        watching.cancel_scope.cancel()
    deadlines.stop()
    # In the order they ended: the short sleep, then each long one at its own deadline (never
    # the first one's, which would end the later trial 0.05 s early), before its sleep ended.
    assert [label for label, _ in results] == ["done", "timeout", "timeout"]
    assert all(elapsed >= 0.19 for label, elapsed in results if label == "timeout"), results
    assert not deadlines._active  # nothing kept of the trials that ended


async def test_trials_that_end_in_time_leave_nothing_behind_and_are_not_cancelled() -> None:
    deadlines = TrialDeadlines(30.0)
    async with anyio.create_task_group() as watching:
        deadlines.start(watching)
        for _ in range(200):
            assert (await _timed(deadlines, 0))[0] == "done"
        assert not deadlines._active
        watching.cancel_scope.cancel()
    deadlines.stop()
    assert not deadlines.watching


async def test_an_agent_that_blocks_the_loop_is_overdue_when_it_returns() -> None:
    deadlines = TrialDeadlines(0.05)
    async with anyio.create_task_group() as watching:
        deadlines.start(watching)
        with deadlines.limit() as limit:
            time.sleep(0.1)  # noqa: ASYNC251 - the point: nothing can cancel it meanwhile
        assert limit.overdue
        watching.cancel_scope.cancel()
    deadlines.stop()


async def test_a_cancellation_from_outside_is_not_a_timeout() -> None:
    deadlines = TrialDeadlines(30.0)
    async with anyio.create_task_group() as watching:
        deadlines.start(watching)
        with anyio.CancelScope() as outer:
            outer.cancel()
            with deadlines.limit():
                await anyio.sleep(1)
        assert outer.cancelled_caught
        watching.cancel_scope.cancel()
    deadlines.stop()
