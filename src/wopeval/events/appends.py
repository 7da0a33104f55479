"""Queued appends: what the store's writer task takes a batch of, and the SQLite appender.

:class:`Pending` is one queued append (its payload dumped once; a typed payload's dict and
model kept for the event); :meth:`EventStore.emit_later` hands it back as a
:class:`QueuedEvent` (the same object: a wrapper cost a tenth of queueing an event). The
appender is the SQLite connection event batches are committed on from the event loop's own
thread (see ``EventStore._insert``).
"""

from __future__ import annotations

import asyncio
import builtins
import json
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel

from wopeval.events.connections import SQLITE_PRAGMAS
from wopeval.events.ids import EVENT_ID_PATTERN, new_event_id
from wopeval.events.tables import dumps_json, dumps_tree
from wopeval.wire.events import PAYLOAD_MODELS, SCHEMA_VERSION, Payload, RunEvent

# The appender's page cache (SQLite's default is 2,000 KiB a connection). Its inserts touch
# the right edge of each open run's part of the log, a few pages a run, and a page it misses
# is re-read from the operating system's cache; a full default cache was 2 MB of a 1,000-trial
# run's ~100 MB peak.
APPENDER_CACHE_KIB: Final = 512
_EVENT_ID_RE: Final = re.compile(EVENT_ID_PATTERN)
# The one fixed-width form of utc_now(), so stored timestamps keep sorting as strings.
_TIMESTAMP_RE: Final = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


@dataclass(eq=False, slots=True)
class Chain:
    """Appends that stand or fall in order: once one of them is not written, none queued after
    it is (a trial's events: its score is never written without them)."""

    broken: BaseException | None = None


@dataclass(eq=False, slots=True)
class Pending:
    """One queued append; ``event`` or ``error`` is set once its batch is settled."""

    run_id: str
    type: str
    payload_json: str
    event_id: str
    causation_id: str | None
    node_id: str | None
    timestamp: str | None = None
    # The payload as the event carries it (None: parsed from ``payload_json``) and the model it
    # was dumped from (``emit``: it becomes the event's ``typed``).
    payload: Any = None
    typed: Payload | None = None
    # Created only when an appender waits (``emit_later``'s events mostly never are).
    waiter: asyncio.Future[None] | None = None
    settled: bool = False  # its batch is settled: ``event`` or ``error`` is final
    event: RunEvent | None = None
    error: BaseException | None = None
    chain: Chain | None = None
    # The event as built once, before its sequence is known (:meth:`known`); staging gives it
    # its sequence instead of building another.
    built: RunEvent | None = None
    # The store's writer, told that an appender waits (``emit_later``'s events: :meth:`wait`).
    hurry: Callable[[], None] | None = None

    def build(self, sequence: int, timestamp: str) -> RunEvent:
        """The item's event with ``sequence`` and ``timestamp`` (built once, then updated:
        an unsettled event is only ever seen by the trial that recorded it)."""
        event = self.built
        if event is None:
            payload = json.loads(self.payload_json) if self.payload is None else self.payload
            event = self.built = RunEvent.recorded(
                self.event_id,
                self.run_id,
                self.type,
                payload,
                timestamp,
                sequence,
                SCHEMA_VERSION,
                self.node_id,
                None,
                self.causation_id,
                typed=self.typed,
            )
        else:
            values = event.__dict__
            values["sequence"] = sequence
            values["timestamp"] = timestamp
        return event

    def fail(self, error: BaseException) -> None:
        """Not written: ``error`` is what its appender gets; its chain is broken from here."""
        self.event, self.error = None, error
        if self.chain is not None and self.chain.broken is None:
            self.chain.broken = error

    # What :meth:`EventStore.emit_later` hands back: its id now (``event_id``), whether its
    # batch is settled (``settled``: :meth:`committed` returns at once), the event once
    # committed.

    def known(self) -> RunEvent:
        """The event: committed, or as it will be once committed but for its ``sequence``
        (``-1`` until then), so a trial can be graded on what it has recorded."""
        if self.event is not None:
            return self.event
        return self.build(-1, self.timestamp or "")

    def result(self) -> RunEvent:
        """The committed event of a settled append (raises what its write raised)."""
        if self.error is not None:
            raise self.error
        if self.event is None or not self.settled:
            raise RuntimeError("the append is not settled yet")
        return self.event

    async def wait(self) -> None:
        """Return once the append is settled (committed or failed). A cancelled caller leaves
        the write to finish. Appends settle in the order they were queued."""
        if not self.settled:
            if self.waiter is None:
                self.waiter = asyncio.get_running_loop().create_future()
            if self.hurry is not None:
                self.hurry()
            await asyncio.shield(self.waiter)

    async def committed(self) -> RunEvent:
        """The event, once its batch is committed (raises what the write raised). A cancelled
        caller leaves the write to finish; awaiting again later still returns the event."""
        await self.wait()
        return self.result()


# An event :meth:`EventStore.emit_later` queued: its id now, the event once committed.
QueuedEvent = Pending


def open_appender(path: Path) -> sqlite3.Connection:
    """The SQLite connection event batches are committed on (AUTOCOMMIT, WAL already set)."""
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    try:
        for pragma in SQLITE_PRAGMAS:
            conn.execute(pragma)
        conn.execute("PRAGMA busy_timeout = 0")  # never wait on the event loop: see _insert
        conn.execute(f"PRAGMA cache_size = -{APPENDER_CACHE_KIB}")  # negative: KiB
    except BaseException:
        conn.close()
        raise
    return conn


def is_busy(exc: sqlite3.OperationalError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return bool(code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED))
    return "locked" in str(exc) or "busy" in str(exc)


def queued_item(
    run_id: str,
    type: str,
    payload: Any,
    causation_id: str | None,
    node_id: str | None,
    event_id: str | None,
    timestamp: str | None,
    chain: Chain | None = None,
) -> Pending:
    """A queued append. A typed payload is dumped once; its dict and model are kept."""
    if isinstance(payload, Payload):
        return queued_payload(run_id, type, payload, causation_id, node_id, event_id, timestamp,
                              chain)  # fmt: skip
    return Pending(
        run_id,
        type,
        dump_payload(payload),
        event_id if event_id is not None else new_event_id(),
        causation_id,
        node_id,
        timestamp,
        chain=chain,
    )


def queued_payload(
    run_id: str,
    type: str,
    payload: Payload,
    causation_id: str | None,
    node_id: str | None,
    event_id: str | None,
    timestamp: str | None,
    chain: Chain | None = None,
    hurry: Callable[[], None] | None = None,
) -> Pending:
    """:func:`queued_item` of a typed payload (``emit_later``'s, several a trial)."""
    wire, text = payload.wire_and_text()
    if text is None:
        text = dumps_tree(wire)  # its serializer's fresh tree: no cycle
    typed = None
    if type == payload.event_type and builtins.type(payload) is PAYLOAD_MODELS.get(type):
        typed = payload  # what the event's ``typed`` would validate back to
    return Pending(
        run_id,
        type,
        text,
        event_id if event_id is not None else new_event_id(),
        causation_id,
        node_id,
        timestamp,
        wire,
        typed,
        chain=chain,
        hurry=hurry,
    )


def wake(batch: list[Pending]) -> None:
    """Wake every appender of a settled batch (one loop iteration for all of them)."""
    for item in batch:
        item.settled = True
        waiter = item.waiter
        if waiter is not None and not waiter.done():  # done: that appender was cancelled
            waiter.set_result(None)


def dump_payload(payload: Any) -> str:
    if isinstance(payload, Payload):
        payload = payload.to_wire()
    elif isinstance(payload, BaseModel):
        payload = payload.model_dump(mode="json", exclude_none=True, by_alias=True)
    return dumps_json(payload)


def check_given(event_id: str | None, timestamp: str | None) -> None:
    """Refuse a caller-supplied event id or timestamp that the log's readers cannot rely on."""
    if event_id is not None and not _EVENT_ID_RE.fullmatch(event_id):
        raise ValueError(f"event_id {event_id!r} does not match {EVENT_ID_PATTERN}")
    if timestamp is not None and not _TIMESTAMP_RE.fullmatch(timestamp):
        raise ValueError(f"timestamp {timestamp!r} is not of the form 2026-01-31T12:00:00.000Z")
