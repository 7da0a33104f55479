"""The per-trial timeout (RFC 0244 §B) kept by one watcher per run, not a timer per trial.

``anyio.fail_after`` schedules an event-loop timer for every trial and cancels it when the
trial ends: at 200 concurrent trials that was ~25 µs a trial (timer-heap churn), a fifth of
what a short trial costs the engine. :class:`TrialDeadlines` gives each trial a plain cancel
scope and a deadline instead; one watcher task sleeps until the earliest deadline of the trials
in flight (at most the run's concurrency of them) and cancels those past it. Every trial of a
run has the same timeout, so a trial that starts later never has an earlier deadline than the
ones in flight: the watcher only ever needs waking when the first trial arrives.

Without a watcher running (a trial run outside :func:`wopeval.engine.run`'s pool, in a Ray
worker say) :meth:`TrialDeadlines.limit` is ``anyio.fail_after`` itself.

Deadlines are on :func:`time.monotonic` (the watcher only ever sleeps for a difference of two of
them): ``anyio.current_time`` looks the backend up on every call, and so does constructing
``anyio.CancelScope``, whose backend class the watcher keeps instead: making a trial's limit
took 3.8 us, now 1.4 (entering and leaving its scope, 4.6 us, are anyio's own).
"""

from __future__ import annotations

import time
from types import TracebackType

import anyio
import anyio.abc

__all__ = ["TrialDeadlines"]


class _Limit:
    """One trial's timeout: ``with`` it around the agent call; raises TimeoutError as
    ``anyio.fail_after`` does when the watcher cancelled it."""

    __slots__ = ("_deadlines", "_fallback", "deadline", "expired", "scope")

    def __init__(self, deadlines: TrialDeadlines) -> None:
        self._deadlines = deadlines
        self.deadline = time.monotonic() + deadlines.timeout_s
        self.expired = False
        scope_type = deadlines.scope_type
        if deadlines.watching and scope_type is not None:
            self._fallback = None
            self.scope = scope_type()
        else:
            self._fallback = anyio.fail_after(deadlines.timeout_s)
            self.scope = anyio.CancelScope()

    def __enter__(self) -> _Limit:
        if self._fallback is not None:
            self._fallback.__enter__()
            return self
        self._deadlines._add(self)
        self.scope.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        if self._fallback is not None:
            return self._fallback.__exit__(exc_type, exc, tb)
        self._deadlines._active.discard(self)
        swallowed = self.scope.__exit__(exc_type, exc, tb)
        if self.expired and self.scope.cancelled_caught:
            raise TimeoutError
        return swallowed

    @property
    def overdue(self) -> bool:
        """Past its deadline (an agent that blocked the loop returns after it, uncancelled)."""
        return time.monotonic() > self.deadline


class TrialDeadlines:
    """The trials in flight and their deadlines; :meth:`start` watches beside the workers."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.watching = False
        # The running backend's cancel scope class (``anyio.CancelScope()`` finds it per call)
        self.scope_type: type[anyio.CancelScope] | None = None
        self._active: set[_Limit] = set()
        self._arrived: anyio.Event | None = None

    def limit(self) -> _Limit:
        """The timeout of a trial starting now."""
        return _Limit(self)

    def _add(self, limit: _Limit) -> None:
        self._active.add(limit)
        if self._arrived is not None:
            self._arrived.set()

    def start(self, group: anyio.abc.TaskGroup) -> None:
        """Watch from now on in ``group`` (the run's pool: cancel it when the pool is done, then
        :meth:`stop`); trials that start meanwhile are timed by the watcher."""
        self.scope_type = type(anyio.CancelScope())
        self.watching = True
        group.start_soon(self._watch)

    def stop(self) -> None:
        """Trials that start from now on fall back to ``fail_after``."""
        self.watching = False

    async def _watch(self) -> None:
        """Cancel each trial at its deadline, until cancelled itself."""
        while True:
            if not self._active:
                self._arrived = anyio.Event()
                await self._arrived.wait()
                self._arrived = None
                continue
            now = time.monotonic()
            earliest = min(limit.deadline for limit in self._active)
            if earliest > now:
                await anyio.sleep(earliest - now)
                continue
            for limit in [limit for limit in self._active if limit.deadline <= now]:
                self._active.discard(limit)
                limit.expired = True
                limit.scope.cancel()
