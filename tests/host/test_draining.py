"""Leaving the host's lifespan waits for the drain, bounded: when the scope around it fails
before any SIGTERM (a sibling task crashing, say), it still leaves at once instead of waiting
for ever on a drain that never began (it used to hang the shutdown until SIGKILL)."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace
from typing import Any

import anyio

from wopeval.host.lifecycle import draining


class _Manager:
    def __init__(self) -> None:
        self.drained = False

    async def drain(self, grace: float) -> list[str]:
        self.drained = True
        return []


def test_a_failing_scope_leaves_the_drain_at_once() -> None:
    """Run in a thread with its own event loop, joined with a timeout: a shielded wait that
    never ends (the old code) makes this fail after 20 s instead of hanging the suite."""
    manager = _Manager()
    state: Any = SimpleNamespace(
        closing=anyio.Event(), manager=manager, config=SimpleNamespace(shutdownGraceSeconds=30)
    )
    raised: list[BaseException] = []

    async def crash() -> None:
        await anyio.sleep(0.1)
        raise RuntimeError("a sibling task failed")

    async def host() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(crash)
            async with draining(state):
                await anyio.sleep(60)

    def in_thread() -> None:
        try:
            anyio.run(host)
        except BaseException as exc:  # handed to the test's thread
            raised.append(exc)

    started = time.monotonic()
    thread = threading.Thread(target=in_thread, daemon=True)
    thread.start()
    thread.join(20)
    assert not thread.is_alive(), "leaving the lifespan hung on a drain that never began"
    assert time.monotonic() - started < 10  # not the grace period, not for ever
    assert len(raised) == 1
    assert isinstance(raised[0], BaseExceptionGroup)


async def test_leaving_runs_the_drain_to_its_end() -> None:
    manager = _Manager()
    state: Any = SimpleNamespace(
        closing=anyio.Event(), manager=manager, config=SimpleNamespace(shutdownGraceSeconds=5)
    )
    async with draining(state):
        await anyio.sleep(0.05)
    assert manager.drained
