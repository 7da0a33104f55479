"""Wake the readers of a run's log when it grows: one notifier per run, not one query per reader.

An SSE subscriber or long-poll that has read everything waits on :meth:`LogNotifier.wait`. An
append in this process wakes it at once (:meth:`LogNotifier.notify`). Appends by other
processes sharing the store are seen by one *watcher* per run with waiters, however many they
are: on PostgreSQL the store's trigger sends ``NOTIFY wopeval_events, '<runId>'`` on every
append and one listening connection per store relays it (:meth:`LogNotifier.listen`); the
watcher then only re-checks the run's last sequence every :data:`PG_FALLBACK_SECONDS` in case
the listening connection was lost. On SQLite, which has no notifications, the watcher re-checks
every :data:`SQLITE_POLL_SECONDS`. So 200 idle subscribers of one run cost one cheap query per
period instead of 200, and none at all on PostgreSQL while the listener is up.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any, Final

log = logging.getLogger("wopeval.events")

CHANNEL: Final = "wopeval_events"
SQLITE_POLL_SECONDS: Final = 0.5
PG_FALLBACK_SECONDS: Final = 5.0


@dataclass
class _Watch:
    event: asyncio.Event = field(default_factory=asyncio.Event)
    waiters: int = 0
    seen: int | None = None
    task: asyncio.Task[None] | None = None

    def fire(self) -> None:
        self.event.set()
        self.event = asyncio.Event()


class LogNotifier:
    """Per-run wake-ups for a store; ``last_sequence(run_id)`` reads the run's highest sequence."""

    def __init__(self, last_sequence: Callable[[str], Awaitable[int]], interval: float) -> None:
        self._last_sequence = last_sequence
        self.interval = interval
        self._watches: dict[str, _Watch] = {}
        self._listener: Any = None  # the PostgreSQL connection LISTENing on CHANNEL
        self.listening = False

    @property
    def watched(self) -> int:
        """Runs with a watcher now (one per run, whatever the number of waiters)."""
        return len(self._watches)

    def notify(self, run_id: str) -> None:
        """The run's log grew (an append here, or a NOTIFY from another process)."""
        watch = self._watches.get(run_id)
        if watch is not None:
            watch.fire()

    async def wait(self, run_id: str, after_sequence: int, timeout: float) -> None:  # noqa: ASYNC109
        """Return when the run's log may have grown past ``after_sequence`` (the caller read
        up to it and found nothing more), or after ``timeout`` seconds."""
        async with self.watching(run_id, after_sequence) as until_grown:
            await until_grown(timeout)

    @asynccontextmanager
    async def watching(
        self, run_id: str, after_sequence: int
    ) -> AsyncIterator[Callable[[float], Awaitable[None]]]:
        """Watch the run from now on; the block reads the log, then awaits what it is given
        (with a timeout) when it found nothing past ``after_sequence``. An append while it
        reads is not missed: the wait then returns at once (the caller reads again)."""
        watch = self._watches.get(run_id)
        if watch is None:
            watch = self._watches[run_id] = _Watch()
        watch.seen = after_sequence if watch.seen is None else min(watch.seen, after_sequence)
        watch.waiters += 1
        if watch.task is None:
            watch.task = asyncio.ensure_future(self._watch(run_id, watch))
        event = watch.event

        async def until_grown(timeout: float) -> None:  # noqa: ASYNC109
            with suppress(TimeoutError):
                async with asyncio.timeout(max(timeout, 0.0)):
                    await event.wait()

        try:
            yield until_grown
        finally:
            watch.waiters -= 1
            if watch.waiters == 0 and self._watches.get(run_id) is watch:
                del self._watches[run_id]
                if watch.task is not None:
                    watch.task.cancel()

    async def _watch(self, run_id: str, watch: _Watch) -> None:
        """The run's one watcher: fires its waiters when another process grew the log."""
        while True:
            await asyncio.sleep(self.interval)
            try:
                last = await self._last_sequence(run_id)
            except Exception:  # the store closing, a lost connection: the waiters time out
                log.debug("watching run %s failed", run_id, exc_info=True)
                continue
            if watch.seen is not None and last > watch.seen:
                watch.seen = last
                watch.fire()

    async def listen(self, connection: Any) -> None:
        """Relay PostgreSQL notifications on :data:`CHANNEL` (an asyncpg connection)."""

        def relay(_conn: Any, _pid: int, _channel: str, payload: str) -> None:
            self.notify(payload)

        await connection.add_listener(CHANNEL, relay)
        self._listener = connection
        self.listening = True
        self.interval = PG_FALLBACK_SECONDS

    def close(self) -> None:
        for watch in self._watches.values():
            if watch.task is not None:
                watch.task.cancel()
            watch.fire()
        self._watches.clear()
