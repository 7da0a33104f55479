"""The read legs: the poll cursor, the events channel and the snapshot, on fixture runs.

* ``core.poll-cursor`` (noop): events.md §Poll (``v2-poll-cursor-v2``). The poll answer is the
  closed ``{runId, events, lastSequence, status, isTerminal}``; without a cursor it starts at
  sequence 0; ``afterSequence=N`` returns exactly the events after N; a cursor past the end is
  ``200`` with no events.
* ``core.stream-mode-refused`` (noop): events.md §SSE / stream-modes. An unknown ``streamMode``
  (``does-not-exist``, ``updates,bogus``) and ``values`` mixed with another mode are refused
  ``400 unsupported_stream_mode`` with ``details.supported`` a non-empty list of known modes,
  and every mode listed there is served (``200``, closed by the host on a terminal run).
* ``core.sse-last-event-id`` (noop): events.md §SSE frames, RFC 0213 §A
  (``v2-sse-last-event-id-cursor``). Frames carry increasing integer ``id``s equal to their
  sequence and the run's bound ``runId``; ``Last-Event-ID: N`` streams exactly the events after
  N; a cursor past the log gives ``200`` and no frame, closed by the host; a malformed one, if
  refused, is ``400 validation_error``; on a run the caller cannot read the header changes
  nothing.
* ``core.snapshot-etag`` (delay): RFC 9110 §13.1.2 on ``GET /runs/{runId}``. The snapshot has an
  ``ETag``; ``If-None-Match`` with it is ``304`` carrying the same tag and no body; once the run
  moves on the tag changes, the old tag gets a ``200`` with the new status, the new one a
  ``304``.
"""

from __future__ import annotations

import secrets
from typing import Any

from wopeval.conformance.core_wire import CoreWire
from wopeval.conformance.legs.common import Checker
from wopeval.conformance.legs.core_common import (
    DELAY,
    NOOP,
    create_run,
    described,
    finished_run,
    run_to_end,
)

POLL_SHAPE = ["events", "isTerminal", "lastSequence", "runId", "status"]
STREAM_MODES = frozenset({"values", "updates", "messages", "debug"})
ETAG_DELAY_MS = 3000
ETAG_ATTEMPTS = 5
FOREIGN_RUN_ID = "openwop-conformance-foreign-tenant/foreignopaque0123456789abcdef"


def _sequences(body: Any) -> list[int]:
    events = body.get("events") if isinstance(body, dict) else None
    found = [e.get("sequence") for e in events or [] if isinstance(e, dict)]
    return [s if isinstance(s, int) else -1 for s in found]


async def check_poll_cursor(wire: CoreWire) -> Checker:
    ck = Checker()
    run_id = await finished_run(wire, ck, {"workflowId": NOOP})
    if run_id is None:
        return ck
    whole = await wire.poll(run_id)
    body = whole.body if isinstance(whole.body, dict) else {}
    if not ck.check(whole.status == 200, f"poll answered {described(whole)}"):
        return ck
    ck.check(sorted(body) == POLL_SHAPE, f"poll members {sorted(body)}, want {POLL_SHAPE}")
    ck.check(body.get("runId") == run_id, f"poll runId {body.get('runId')!r}")
    ck.check(body.get("isTerminal") is True, f"isTerminal {body.get('isTerminal')!r} when done")
    seqs = _sequences(body)
    last = body.get("lastSequence")
    if not ck.check(bool(seqs), "the poll of a completed run returned no events"):
        return ck
    ck.check(seqs[0] == 0, f"without a cursor the poll starts at {seqs[0]}, want 0")
    ck.check(last == max(seqs), f"lastSequence {last!r}, the highest event is {max(seqs)}")
    first = seqs[0]
    after = await wire.poll(run_id, afterSequence=first)
    ck.check(after.status == 200, f"afterSequence={first} answered {described(after)}")
    rest = _sequences(after.body)
    ck.check(
        rest == [s for s in seqs if s > first],
        f"afterSequence={first} returned {rest}, want {[s for s in seqs if s > first]}",
    )
    beyond = max(seqs) + 1000
    past = await wire.poll(run_id, afterSequence=beyond)
    events = past.body.get("events") if isinstance(past.body, dict) else None
    ck.check(
        past.status == 200 and events == [],
        f"afterSequence={beyond} answered {past.status} with {events!r}, want 200 and []",
    )
    return ck


async def check_stream_mode_refused(wire: CoreWire) -> Checker:
    ck = Checker()
    run_id = await finished_run(wire, ck, {"workflowId": NOOP})
    if run_id is None:
        return ck
    supported: list[str] = []
    for mode in ("does-not-exist", "updates,bogus", "values,updates"):
        got = await wire.stream(run_id, stream_mode=mode)
        ck.check(
            (got.status, got.error) == (400, "unsupported_stream_mode"),
            f"streamMode={mode} answered {got.status} {got.error!r}, "
            "want 400 unsupported_stream_mode",
        )
        details = got.body.get("details") if isinstance(got.body, dict) else None
        listed = details.get("supported") if isinstance(details, dict) else None
        fine = isinstance(listed, list) and bool(listed) and set(listed) <= STREAM_MODES
        ck.check(fine, f"streamMode={mode}: details.supported is {listed!r}")
        if fine and not supported:
            assert isinstance(listed, list)
            supported = [str(m) for m in listed]
    for mode in supported:
        served = await wire.stream(run_id, stream_mode=mode)
        ck.check(
            served.status == 200 and served.closed_by_server,
            f"streamMode={mode} is listed as supported but answered {served.status} "
            f"(closed by the host: {served.closed_by_server})",
        )
    return ck


async def _cursor_ignores_unreadable(wire: CoreWire, ck: Checker, run_id: str) -> None:
    """The header is read after authorization: a run the caller cannot read answers the same."""
    unknown = f"{run_id.partition('/')[0]}/conformanceunknown{secrets.token_hex(8)}"
    for label, other in (
        ("an unknown run of the caller's tenant", unknown),
        ("a run of a foreign tenant", FOREIGN_RUN_ID),
    ):
        bare = await wire.stream(other)
        cursor = await wire.stream(other, last_event_id="0")
        ck.check(bare.status != 200, f"{label} was streamed ({bare.status})")
        ck.check(
            (cursor.status, cursor.error) == (bare.status, bare.error),
            f"{label}: Last-Event-ID changed the answer from {bare.status} {bare.error!r} "
            f"to {cursor.status} {cursor.error!r}",
        )


async def check_sse_last_event_id(wire: CoreWire) -> Checker:
    ck = Checker()
    run_id = await finished_run(wire, ck, {"workflowId": NOOP})
    if run_id is None:
        return ck
    full = await wire.stream(run_id)
    if not ck.check(full.status == 200, f"the debug stream answered {full.status} {full.error!r}"):
        return ck
    seqs = full.sequences()
    ck.check(full.closed_by_server, "the host did not close the stream of a completed run")
    ck.check(
        len(seqs) == len(full.frames) and seqs == sorted(set(seqs)) and bool(seqs),
        f"frame ids {[f.id for f in full.frames]} are not increasing integers",
    )
    for frame in full.frames:
        data = frame.data if isinstance(frame.data, dict) else {}
        ck.check(data.get("runId") == run_id, f"frame {frame.id} names run {data.get('runId')!r}")
        ck.check(
            str(data.get("sequence")) == frame.id,
            f"frame id {frame.id} but data.sequence {data.get('sequence')!r}",
        )
    if not seqs:
        return ck
    first = seqs[0]
    resumed = await wire.stream(run_id, last_event_id=str(first))
    want = [s for s in seqs if s > first]
    ck.check(
        resumed.status == 200 and resumed.sequences() == want,
        f"Last-Event-ID: {first} streamed {resumed.sequences()} ({resumed.status}), want {want}",
    )
    future = str(max(seqs) + 1000)
    beyond = await wire.stream(run_id, last_event_id=future)
    ck.check(beyond.status == 200, f"Last-Event-ID: {future} answered {beyond.status}")
    ck.check(not beyond.frames, f"Last-Event-ID: {future} streamed {beyond.sequences()}")
    ck.check(beyond.closed_by_server, f"Last-Event-ID: {future}: the host did not close")
    malformed = await wire.stream(run_id, last_event_id="abc")
    ck.check(
        malformed.status == 200 or (malformed.status, malformed.error) == (400, "validation_error"),
        f"Last-Event-ID: abc was refused {malformed.status} {malformed.error!r}, "
        "want 400 validation_error",
    )
    await _cursor_ignores_unreadable(wire, ck, run_id)
    return ck


async def _matching_tag(wire: CoreWire, ck: Checker, run_id: str) -> str | None:
    """While the run is in flight: its ETag, checked to answer ``If-None-Match`` with ``304``.

    A read that finds the run moved on (another status or tag) is retried, so a run going from
    ``pending`` to ``running`` between the two reads is not taken for a host ignoring the tag.
    """
    for _ in range(ETAG_ATTEMPTS):
        early = await wire.snapshot(run_id)
        tag = str(early.headers.get("etag", ""))
        status = early.body.get("status") if isinstance(early.body, dict) else None
        readable = early.status == 200 and bool(tag)
        if not ck.check(readable, f"snapshot answered {early.status} with ETag {tag!r}"):
            return None
        if status not in ("pending", "running"):
            ck.fail(f"the delay run read {status!r} while its delay was in flight")
            return None
        same = await wire.snapshot(run_id, {"If-None-Match": tag})
        if same.status == 304:
            ck.check(same.headers.get("etag") == tag, "the 304 does not carry the same ETag")
            ck.check(not same.body, f"the 304 has a body {same.body!r}")
            return tag
        now = same.body.get("status") if isinstance(same.body, dict) else None
        if (now, same.headers.get("etag")) == (status, tag):
            ck.fail(f"If-None-Match with the current tag answered {same.status}, nothing changed")
            return None
    ck.fail(f"the snapshot changed on each of {ETAG_ATTEMPTS} pairs of reads")
    return None


async def check_snapshot_etag(wire: CoreWire) -> Checker:
    ck = Checker()
    body = {"workflowId": DELAY, "inputs": {"delayMs": ETAG_DELAY_MS}}
    run_id = await create_run(wire, ck, body)
    if run_id is None:
        return ck
    tag = await _matching_tag(wire, ck, run_id)
    if tag is None:
        return ck
    if not await run_to_end(wire, ck, run_id, "completed", ETAG_DELAY_MS / 1000 + 10):
        return ck
    late = await wire.snapshot(run_id, {"If-None-Match": tag})
    new_tag = late.headers.get("etag")
    late_status = late.body.get("status") if isinstance(late.body, dict) else None
    ck.check(
        late.status == 200 and late_status == "completed",
        f"the old ETag after completion answered {late.status} ({late_status!r}), want 200",
    )
    ck.check(bool(new_tag) and new_tag != tag, f"the ETag did not change ({new_tag!r})")
    if new_tag:
        fresh = await wire.snapshot(run_id, {"If-None-Match": new_tag})
        ck.check(fresh.status == 304, f"If-None-Match with the new tag answered {fresh.status}")
    return ck
