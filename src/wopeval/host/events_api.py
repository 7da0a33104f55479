"""The events channel of a run: SSE (``GET /runs/{runId}/events``) and the long-poll fallback
(``GET /runs/{runId}/events/poll``), OpenWOP v2 events.md.

SSE frames are ``id: <sequence>``, ``event: <type>`` (in a mixed ``streamMode``, the admitting
mode), ``data: <RunEventDoc JSON>``. ``streamMode`` is ``updates`` by default (``run.*``,
``node.*`` and ``eval.*``), or ``debug`` (every event, including ``agent.*`` and
``provider.usage``); the ``values`` and ``messages`` modes are not served
(``400 unsupported_stream_mode``). The stream resumes after ``Last-Event-ID``, sends a
keep-alive comment every 15 s, and closes after the terminal event, or at once when the run is
terminal and nothing is left to send (so a resumed RFC 0247 client ends). ``Last-Event-ID`` and
the poll's ``afterSequence`` are cursors in ``0..2**62``; anything else is
``400 validation_error`` naming them. ``resumable=true`` is accepted (every stream here is
resumable); ``bufferMs`` (0–5000) batches frames as ``event: batch`` with ``id`` the highest
sequence.

The poll answers one page: at most ``limit`` events (1–:data:`MAX_POLL_LIMIT`, default
:data:`POLL_LIMIT`), so a poll of a big log costs a bounded amount. ``lastSequence`` is the
highest sequence of the log (wire digest §4.3) unless the page was cut short: then it is the
page's last sequence, because clients (the official SDK says so) feed ``lastSequence`` back as
the next ``afterSequence`` — a cut page reporting the log's end would make them skip events.
Waiting readers (SSE and poll) are woken by the run's notifier when its log grows
(:mod:`wopeval.events.notify`).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator

import anyio
from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse

from wopeval.events.store import EventStore
from wopeval.host.errors import HostError, invalid
from wopeval.host.limits import hold_stream, stream_slot
from wopeval.host.runs import load_run
from wopeval.host.state import state_of
from wopeval.wire import sse
from wopeval.wire.api import ErrorEnvelope, PollPage
from wopeval.wire.events import TERMINAL_TYPES, RunEvent

router = APIRouter()

STREAM_MODE_RE = re.compile(r"^(values|(updates|messages|debug)(,(updates|messages|debug))*)$")
SUPPORTED_MODES: tuple[str, ...] = ("updates", "debug")
UPDATES_PREFIXES: tuple[str, ...] = ("run.", "node.", "eval.")
KEEPALIVE_S = 15.0
PAGE = 500
POLL_LIMIT = 500
MAX_POLL_LIMIT = 1000
MAX_BUFFER_MS = 5000
# The highest event cursor accepted (afterSequence, Last-Event-ID): well inside SQLite's and
# PostgreSQL's signed 64-bit integers, far beyond any log.
MAX_CURSOR = 2**62
_INTEGER_RE = re.compile(r"\s*(-?[0-9]+)\s*")
_MAX_DIGITS = 24


def parse_stream_mode(raw: str | None) -> tuple[str, ...]:
    """The requested modes (default ``updates``); refuses what this host does not serve."""
    if raw is None:
        return ("updates",)
    modes = tuple(dict.fromkeys(raw.split(",")))
    if not STREAM_MODE_RE.fullmatch(raw) or any(m not in SUPPORTED_MODES for m in modes):
        raise HostError(
            "unsupported_stream_mode",
            f"streamMode {raw!r} is not served; use one of: {', '.join(SUPPORTED_MODES)}",
            {"supported": list(SUPPORTED_MODES)},
        )
    return modes


def admitting_mode(modes: tuple[str, ...], event_type: str) -> str | None:
    """The first requested mode that carries ``event_type``, or None."""
    for mode in modes:
        if mode == "debug" or (mode == "updates" and event_type.startswith(UPDATES_PREFIXES)):
            return mode
    return None


def _int_param(value: str | None, name: str, low: int, high: int, default: int) -> int:
    """A decimal integer in ``low..high`` (a query parameter or header), else ``400`` naming it."""
    if value is None:
        return default
    match = _INTEGER_RE.fullmatch(value)
    if match is None:
        shown = value if len(value) <= 40 else value[:40] + "…"
        raise invalid(name, f"{shown!r} is not an integer")
    digits = match.group(1)
    if len(digits.lstrip("-").lstrip("0")) > _MAX_DIGITS or not low <= int(digits) <= high:
        shown = digits if len(digits) <= 40 else digits[:40] + "…"
        raise invalid(name, f"{shown} is outside {low}..{high}")
    return int(digits)


def _encode(event: RunEvent) -> str:
    return json.dumps(event.to_wire(), separators=(",", ":"), ensure_ascii=False)


def _frames(events: list[RunEvent], modes: tuple[str, ...], batch: bool) -> str:
    admitted = [(mode, e) for e in events if (mode := admitting_mode(modes, e.type)) is not None]
    if not admitted:
        return ""
    if batch:
        data = "[" + ",".join(_encode(e) for _, e in admitted) + "]"
        return sse.frame(data, event="batch", event_id=admitted[-1][1].sequence)
    mixed = len(modes) > 1
    return "".join(
        sse.frame(_encode(e), event=mode if mixed else e.type, event_id=e.sequence)
        for mode, e in admitted
    )


async def _next_events(store: EventStore, run_id: str, cursor: int) -> list[RunEvent] | None:
    """Events after ``cursor``, waiting up to the keep-alive period; None when the run is over."""
    found = await store.events(run_id, cursor, PAGE)
    if found:
        return found
    record = await store.get_run(run_id)
    if record is None or record.terminal:
        # The terminal event is appended before the terminal status: read once more.
        return await store.events(run_id, cursor, PAGE) or None
    return await store.wait_for_events(run_id, cursor, KEEPALIVE_S, limit=PAGE)


async def _buffered(
    store: EventStore, run_id: str, first: list[RunEvent], buffer_ms: int
) -> list[RunEvent]:
    """Collect more events for up to ``buffer_ms``; flush early on a terminal event."""
    events = list(first)
    with anyio.move_on_after(buffer_ms / 1000):
        while events[-1].type not in TERMINAL_TYPES:
            more = await store.wait_for_events(run_id, events[-1].sequence, buffer_ms / 1000)
            events += more
    return events


async def stream(
    store: EventStore, run_id: str, cursor: int, modes: tuple[str, ...], buffer_ms: int
) -> AsyncIterator[str]:
    yield sse.retry(1000)
    while True:
        events = await _next_events(store, run_id, cursor)
        if events is None:
            return
        if not events:
            yield sse.comment("keep-alive")
            continue
        if buffer_ms > 0:
            events = await _buffered(store, run_id, events, buffer_ms)
        cursor = events[-1].sequence
        text = _frames(events, modes, batch=buffer_ms > 0)
        if text:
            yield text
        if any(e.type in TERMINAL_TYPES for e in events):
            return


def _last_event_id(request: Request) -> int:
    """The resume cursor: validated exactly like the poll's ``afterSequence``."""
    raw = request.headers.get("last-event-id")
    if raw is None or not raw.strip():
        return -1
    return _int_param(raw, "Last-Event-ID", 0, MAX_CURSOR, -1)


@router.get(
    "/runs/{run_path:path}/events/poll",
    responses={
        200: {"model": PollPage},
        400: {"model": ErrorEnvelope},
        404: {"model": ErrorEnvelope},
    },
)
async def poll_events(request: Request, run_path: str) -> Response:
    """Events with ``sequence > afterSequence``; waits up to ``timeout`` s for the first one."""
    state = state_of(request)
    principal = state.keys.authenticate(request)
    params = request.query_params
    after_raw = params.get("afterSequence", params.get("since"))
    after = _int_param(after_raw, "afterSequence", 0, MAX_CURSOR, -1)
    timeout = _int_param(params.get("timeout"), "timeout", 1, 60, 30)
    limit = _int_param(params.get("limit"), "limit", 1, MAX_POLL_LIMIT, POLL_LIMIT)
    record = await load_run(state, principal, run_path)
    store = state.store
    events = await store.events(record.run_id, after, limit)
    if not events and not record.terminal:
        with stream_slot(state, principal.tenant):
            await store.wait_for_events(record.run_id, after, float(timeout), limit=1)
        # Status first, then events: a terminal status implies its event is in the log.
        record = await load_run(state, principal, run_path)
        events = await store.events(record.run_id, after, limit)
    last = await store.last_sequence(record.run_id)
    if events and (len(events) == limit or events[-1].sequence > last):
        last = events[-1].sequence  # a cut page (or one appended to since): resume from it
    page = PollPage(
        runId=record.run_id,
        events=[e.to_wire() for e in events],
        lastSequence=last,
        status=record.status,
        isTerminal=record.terminal,
    )
    return JSONResponse(page.to_wire())


@router.get("/runs/{run_path:path}/events")
async def stream_events(request: Request, run_path: str) -> Response:
    state = state_of(request)
    principal = state.keys.authenticate(request)
    params = request.query_params
    modes = parse_stream_mode(params.get("streamMode"))
    buffer_ms = _int_param(params.get("bufferMs"), "bufferMs", 0, MAX_BUFFER_MS, 0)
    resumable = params.get("resumable")
    if resumable is not None and resumable not in ("true", "false"):
        raise invalid("resumable", "must be true or false")
    cursor = _last_event_id(request)
    record = await load_run(state, principal, run_path)
    body = stream(state.store, record.run_id, cursor, modes, buffer_ms)
    hold_stream(state, principal.tenant, body)  # free again when the body ends or is dropped
    return StreamingResponse(
        body,
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
