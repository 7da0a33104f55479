"""Whether the host can serve: liveness, readiness, and ``503`` while the store is away.

``GET /healthz`` (liveness) answers ``200`` while the process serves requests at all, whatever
the store does: a Kubernetes liveness probe must not restart a host that only waits for its
database. ``GET /readyz`` (readiness) answers ``200`` when the store answers a query, ``503`` with
``Retry-After`` while it does not (or while the host shuts down), so a load balancer sends no
traffic that would only fail. Neither needs a key, and neither says more than its status.

A request that fails on the store is answered ``503 service_unavailable`` with ``Retry-After``
when it failed for want of the database (:func:`~wopeval.events.reach.store_unreachable`) or a
probe finds the store unreachable now, and ``500`` as before otherwise (a fault that retrying
will not mend). The store's connections reconnect on
their own once the database is back (:meth:`wopeval.events.writes.BatchWrites._mend_writer`;
pooled readers are replaced when SQLAlchemy sees a dropped connection).
"""

from __future__ import annotations

import logging

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy import literal, select

from wopeval.errors import WopevalError
from wopeval.events.reach import store_unreachable
from wopeval.events.store import EventStore
from wopeval.host.errors import HostError, error_response

log = logging.getLogger("wopeval.host")

# A probe that takes longer than this finds the store unreachable (a partitioned network).
PROBE_TIMEOUT_S = 5.0
# Two tries: the first query after a database restart may meet a pooled connection the
# database dropped (SQLAlchemy discards the pool then, and the second try connects afresh).
PROBE_ATTEMPTS = 2
RETRY_AFTER_S = 5


async def store_answers(store: EventStore) -> bool:
    """Whether the store answers a trivial query now (bounded by :data:`PROBE_TIMEOUT_S`)."""
    with anyio.move_on_after(PROBE_TIMEOUT_S):
        for _ in range(PROBE_ATTEMPTS):
            try:
                await store.read(select(literal(1)))
            except Exception:
                continue
            return True
    return False


def store_unavailable() -> HostError:
    return HostError(
        "service_unavailable",
        "the event store is unreachable; retry later",
        headers={"Retry-After": str(RETRY_AFTER_S)},
    )


async def failure_answer(request: Request, exc: BaseException) -> HostError:
    """The refusal for a request that failed with ``exc``: ``503`` while the store is away,
    else ``500 internal_error`` (the failure is logged)."""
    state = getattr(request.app.state, "wopeval", None)
    store = getattr(state, "store", None)
    if isinstance(store, EventStore) and (store_unreachable(exc) or not await store_answers(store)):
        log.warning("%s %s: the event store is unreachable", request.method, request.url.path)
        return store_unavailable()
    log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    if isinstance(exc, WopevalError):  # as wopeval_error_handler words it
        return HostError("internal_error", f"{type(exc).__name__}: {exc}"[:500])
    return HostError("internal_error", "internal error")  # a driver's text may hold content


async def store_error_handler(request: Request, exc: Exception) -> JSONResponse:
    return error_response(await failure_answer(request, exc))


router = APIRouter()


@router.get("/healthz", include_in_schema=False)
async def healthz() -> JSONResponse:
    return JSONResponse({"status": "live"}, headers={"Cache-Control": "no-store"})


@router.get("/readyz", include_in_schema=False)
async def readyz(request: Request) -> JSONResponse:
    state = request.app.state.wopeval
    if state.closing.is_set():
        refusal = HostError("service_unavailable", "the host is shutting down")
    elif not await store_answers(state.store):
        refusal = store_unavailable()
    else:
        return JSONResponse({"status": "ready"}, headers={"Cache-Control": "no-store"})
    answer = error_response(refusal)
    answer.headers["Cache-Control"] = "no-store"
    return answer
