"""Leaving the host's lifespan waits for the drain, bounded: when the scope around it fails
before any SIGTERM (a sibling task crashing, say), it still leaves at once instead of waiting
for ever on a drain that never began (it used to hang the shutdown until SIGKILL)."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import anyio
import pytest

from wopeval.host.lifecycle import draining


class _Manager:
    def __init__(self) -> None:
        self.drained = False

    async def drain(self, grace: float) -> list[str]:
        self.drained = True
        return []


async def test_a_failing_scope_leaves_the_drain_at_once() -> None:
    manager = _Manager()
    state: Any = SimpleNamespace(
        closing=anyio.Event(), manager=manager, config=SimpleNamespace(shutdownGraceSeconds=30)
    )

    async def crash() -> None:
        await anyio.sleep(0.1)
        raise RuntimeError("a sibling task failed")

    async def host() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(crash)
            async with draining(state):
                await anyio.sleep(60)

    started = time.monotonic()
    with anyio.fail_after(20), pytest.raises(BaseExceptionGroup):  # fails, never hangs
        await host()
    assert time.monotonic() - started < 10  # not the grace period, not for ever


async def test_leaving_runs_the_drain_to_its_end() -> None:
    manager = _Manager()
    state: Any = SimpleNamespace(
        closing=anyio.Event(), manager=manager, config=SimpleNamespace(shutdownGraceSeconds=5)
    )
    async with draining(state):
        await anyio.sleep(0.05)
    assert manager.drained
