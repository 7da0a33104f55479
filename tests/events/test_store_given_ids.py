"""``EventStore.append`` with a given ``event_id``/``timestamp`` (remote trials); both stores.

An event recorded first in a Ray worker keeps its id and timestamp when the driver appends it, so
``causationId`` attribution and latency survive; the sequence is still assigned by the store.
"""

from __future__ import annotations

import asyncio

import pytest

from tests.events.helpers import MakeRun
from wopeval.events.ids import new_event_id
from wopeval.events.store import EventStore
from wopeval.wire.events import RUN_STARTED, TOOL_CALLED

EARLIER = "2001-02-03T04:05:06.789Z"


async def test_given_event_id_and_timestamp_are_stored_as_given(
    store: EventStore, make_run: MakeRun
) -> None:
    run = await make_run()
    first = await store.append(run.run_id, RUN_STARTED, {"workflowId": "w"})
    root_id = new_event_id()
    root = await store.append(
        run.run_id, "x-test.root", {"n": 1}, event_id=root_id, timestamp=EARLIER
    )
    child = await store.append(
        run.run_id, TOOL_CALLED, {"n": 2}, causation_id=root_id, event_id=new_event_id()
    )
    assert (root.eventId, root.timestamp, root.sequence) == (root_id, EARLIER, 1)
    assert child.causationId == root_id
    assert child.timestamp != EARLIER  # a timestamp not given is the commit time
    assert child.timestamp >= first.timestamp
    stored = await store.events(run.run_id)
    assert stored == [first, root, child]
    assert [e.sequence for e in stored] == [0, 1, 2]


async def test_given_timestamps_are_kept_inside_one_group_commit(
    store: EventStore, make_run: MakeRun
) -> None:
    run = await make_run()
    stamps = [f"2001-02-03T04:05:{second:02d}.000Z" for second in range(10)]
    appended = await asyncio.gather(
        *(
            store.append(run.run_id, "x-test.tick", {"i": i}, timestamp=t)
            for i, t in enumerate(stamps)
        ),
        store.append(run.run_id, "x-test.tick", {"i": "now"}),
    )
    stored = {e.payload["i"]: e for e in await store.events(run.run_id)}
    assert [stored[i].timestamp for i in range(10)] == stamps
    assert stored["now"].timestamp > stamps[-1]
    assert sorted(e.sequence for e in appended) == list(range(11))


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        ({"event_id": "short"}, "does not match"),
        ({"event_id": "has a space in it, sixteen+"}, "does not match"),
        ({"timestamp": "2001-02-03T04:05:06Z"}, "is not of the form"),
        ({"timestamp": "2001-02-03 04:05:06.789+00:00"}, "is not of the form"),
    ],
)
async def test_malformed_given_ids_are_refused_and_nothing_is_written(
    store: EventStore, make_run: MakeRun, given: dict[str, str], problem: str
) -> None:
    run = await make_run()
    with pytest.raises(ValueError, match=problem):
        await store.append(run.run_id, "x-test.tick", {}, **given)
    assert await store.events(run.run_id) == []
    after = await store.append(run.run_id, "x-test.tick", {})
    assert after.sequence == 0
