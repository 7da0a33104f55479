"""Per-tenant limits: work a tenant may hold at once on this host.

``limits.activeRunsPerTenant`` runs executing or queued, and ``limits.streamsPerTenant`` open
event streams and waiting long-polls, per tenant and host process. Beyond them a request is
answered ``429 rate_limited`` with ``Retry-After`` (the wire's retriable code), naming the
limit in ``details.limit``. A host that is shutting down answers ``POST /runs`` with
``503 service_unavailable`` and ``Retry-After``.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from contextlib import contextmanager

from wopeval.host.errors import HostError
from wopeval.host.state import HostState

RETRY_AFTER_S = 5


def _limited(what: str, limit: int, name: str) -> HostError:
    return HostError(
        "rate_limited",
        f"this tenant already has {limit} {what} on this host (limits.{name}); retry later",
        {"limit": f"limits.{name}", "max": limit},
        headers={"Retry-After": str(RETRY_AFTER_S)},
    )


def admit_run(state: HostState, tenant: str) -> None:
    """Refuse a new run up front: the host is closing, or the tenant is at its limit."""
    if state.closing.is_set() or state.manager.draining:
        raise HostError(
            "service_unavailable",
            "the host is shutting down",
            headers={"Retry-After": str(RETRY_AFTER_S)},
        )
    limit = state.config.limits.activeRunsPerTenant
    if state.manager.active_of(tenant) >= limit:
        raise _limited("active runs", limit, "activeRunsPerTenant")


@contextmanager
def stream_slot(state: HostState, tenant: str) -> Iterator[None]:
    """Hold one of the tenant's stream slots while inside (``429`` when none is free)."""
    token = _Token()
    hold_stream(state, tenant, token)
    try:
        yield
    finally:
        state.streams[tenant].discard(token)


class _Token:
    """A held slot (weakly referenced: a slot whose holder is gone is free again)."""


def hold_stream(state: HostState, tenant: str, holder: object) -> None:
    """Count ``holder`` (an SSE body generator) as one of the tenant's open streams until it
    is discarded from ``state.streams[tenant]`` or garbage-collected (a stream whose body was
    never started still frees its slot). ``429`` when the tenant has none free."""
    limit = state.config.limits.streamsPerTenant
    held = state.streams.setdefault(tenant, weakref.WeakSet())
    if len(held) >= limit:
        raise _limited("open event streams", limit, "streamsPerTenant")
    held.add(holder)
