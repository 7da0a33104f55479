"""Chained appends (``emit_later(…, chain=…)``): a trial's events stand or fall in order, so its
score is never written without them; and a queued event is known, but for its sequence, before
its commit (a trial is graded on what it recorded)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.events.helpers import run_record
from wopeval.errors import StoreError
from wopeval.events.appends import Chain
from wopeval.events.store import EventStore
from wopeval.events.writes import Staged
from wopeval.wire.events import ToolCalled


class RefusesMarked(EventStore):
    """The database refuses any INSERT holding an event whose inputs say ``refuse``."""

    async def _insert(self, staged: Staged, **kw: Any) -> None:
        if any('"refuse":true' in row[4] for row in staged.rows):
            raise RuntimeError("disk on fire")
        await super()._insert(staged, **kw)


def _call(i: int, refuse: bool = False) -> ToolCalled:
    inputs: dict[str, Any] = {"i": i, "refuse": True} if refuse else {"i": i}
    return ToolCalled(agentId="a", toolName="kb:t", callId=f"c{i}", inputs=inputs)


async def test_once_a_chained_event_is_not_written_none_after_it_is(store_url: str) -> None:
    store = await RefusesMarked.open(store_url)
    try:
        record = run_record()
        await store.create_run(record)
        chain, other = Chain(), Chain()
        first = store.emit_later(record.run_id, _call(0), chain=chain)
        await first.committed()
        refused = store.emit_later(record.run_id, _call(1, refuse=True), chain=chain)
        with pytest.raises(StoreError, match="disk on fire"):
            await refused.committed()
        later = store.emit_later(record.run_id, _call(2), chain=chain)  # a later batch
        unchained = store.emit_later(record.run_id, _call(3))
        elsewhere = store.emit_later(record.run_id, _call(4), chain=other)
        with pytest.raises(StoreError, match="in its chain was not"):
            await later.committed()
        assert (await unchained.committed()).sequence == 1
        assert (await elsewhere.committed()).sequence == 2
        stored = [e.payload["callId"] for e in await store.events(record.run_id)]
    finally:
        await store.close()
    assert stored == ["c0", "c3", "c4"]
    assert chain.broken is not None
    assert other.broken is None


async def test_a_queued_event_is_known_before_its_commit(store: EventStore) -> None:
    record = run_record()
    await store.create_run(record)
    call = _call(7)
    queued = store.emit_later(record.run_id, call, causation_id="root-1")
    known = queued.known()
    assert known.sequence == -1  # not yet assigned
    assert known.eventId == queued.event_id
    assert known.typed is call
    assert known.payload == call.to_wire()
    assert known.causationId == "root-1"
    committed = await queued.committed()
    assert queued.known() is committed
    assert committed.sequence == 0
    assert (known.type, known.timestamp, known.payload) == (
        committed.type,
        committed.timestamp,
        committed.payload,
    )
