"""The opt-in core host legs (``--core``): the run lifecycle on the workflow fixtures.

The official suite's v2 scenarios that reach a host's run lifecycle create their runs from the
workflow fixtures of its fixture contract (``conformance/fixtures.md``: ``conformance-noop``,
``-identity``, ``-delay``, ``-failure``, ``-cancellable``, ``-idempotent``). These legs check the
same rules from the wire, each on the fixtures it names, under wopeval's ids ``core.<name>``
(the official requirement ids each one follows are in ``OFFICIAL`` and docs/conformance.md).

Gating: a leg runs when discovery ``fixtures`` lists every fixture it needs. Otherwise it is
``skipped`` (``executed-fail`` with ``require_behavior``): every v2 host serves runs, so a host
that seeds no fixture is one whose run lifecycle the kit cannot witness. The legs run
concurrently, each creating its own runs; a leg whose requests fail is ``executed-fail`` with
the error.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection

import anyio
import httpx

from wopeval.conformance.client import WireError
from wopeval.conformance.core_wire import CoreWire
from wopeval.conformance.legs.common import Checker
from wopeval.conformance.legs.core_common import (
    CANCELLABLE,
    DELAY,
    FAILURE,
    IDEMPOTENT,
    IDENTITY,
    NOOP,
)
from wopeval.conformance.legs.core_control import check_idempotent_replay, check_run_cancel
from wopeval.conformance.legs.core_lifecycle import (
    check_failure_path,
    check_run_lifecycle,
    check_terminal_once,
)
from wopeval.conformance.legs.core_stream import (
    check_poll_cursor,
    check_snapshot_etag,
    check_sse_last_event_id,
    check_stream_mode_refused,
)
from wopeval.conformance.report import RequirementResult, Status

CORE_PREFIX = "core."
RUN_LIFECYCLE = CORE_PREFIX + "run-lifecycle"
FAILURE_PATH = CORE_PREFIX + "failure-path"
TERMINAL_ONCE = CORE_PREFIX + "terminal-event-once"
RUN_CANCEL = CORE_PREFIX + "run-cancel"
IDEMPOTENT_REPLAY = CORE_PREFIX + "idempotent-replay"
POLL_CURSOR = CORE_PREFIX + "poll-cursor"
STREAM_MODE_REFUSED = CORE_PREFIX + "stream-mode-refused"
SSE_LAST_EVENT_ID = CORE_PREFIX + "sse-last-event-id"
SNAPSHOT_ETAG = CORE_PREFIX + "snapshot-etag"

CoreCheck = Callable[[CoreWire], Awaitable[Checker]]

# requirement id → (the fixtures it needs, its check)
CORE_LEGS: dict[str, tuple[tuple[str, ...], CoreCheck]] = {
    RUN_LIFECYCLE: ((NOOP, IDENTITY, DELAY), check_run_lifecycle),
    FAILURE_PATH: ((FAILURE,), check_failure_path),
    TERMINAL_ONCE: ((NOOP, FAILURE, CANCELLABLE), check_terminal_once),
    RUN_CANCEL: ((CANCELLABLE, NOOP), check_run_cancel),
    IDEMPOTENT_REPLAY: ((IDEMPOTENT,), check_idempotent_replay),
    POLL_CURSOR: ((NOOP,), check_poll_cursor),
    STREAM_MODE_REFUSED: ((NOOP,), check_stream_mode_refused),
    SSE_LAST_EVENT_ID: ((NOOP,), check_sse_last_event_id),
    SNAPSHOT_ETAG: ((DELAY,), check_snapshot_etag),
}
CORE_REQUIREMENTS: tuple[str, ...] = tuple(CORE_LEGS)
CORE_FIXTURES: tuple[str, ...] = (NOOP, IDENTITY, DELAY, FAILURE, CANCELLABLE, IDEMPOTENT)

# The official requirement ids (or scenario, where it names none) each leg follows.
OFFICIAL: dict[str, tuple[str, ...]] = {
    RUN_LIFECYCLE: (
        "openwop.requirement.0172.created-run-readable",
        "openwop.requirement.0171.run-completed-outputs",
        "fixtures.md §conformance-noop, §conformance-identity, §conformance-delay",
    ),
    FAILURE_PATH: ("failure-path.test.ts", "fixtures.md §conformance-failure"),
    TERMINAL_ONCE: ("openwop.requirement.0194.terminal-once",),
    RUN_CANCEL: ("openwop.requirement.0170.run-cancel",),
    IDEMPOTENT_REPLAY: (
        "openwop.requirement.0170.idempotency-key-grammar.valid-accepted",
        "openwop.requirement.0170.idempotency-key-grammar.invalid-refused",
        "fixtures.md §conformance-idempotent",
    ),
    POLL_CURSOR: (
        "openwop.requirement.0171.poll-cursor-v2.shape",
        "openwop.requirement.0171.poll-cursor-v2.from-first",
        "openwop.requirement.0171.poll-cursor-v2.after-sequence",
        "openwop.requirement.0171.poll-cursor-v2.past-end",
    ),
    STREAM_MODE_REFUSED: ("events.md §SSE: unsupported streamMode → 400", "stream-modes*.test.ts"),
    SSE_LAST_EVENT_ID: (
        "openwop.requirement.0213.last-event-id-exclusive-cursor",
        "openwop.requirement.0213.last-event-id-malformed",
        "openwop.requirement.0213.last-event-id-after-authorization",
        "openwop.requirement.0171.stream-sse-projection",
    ),
    SNAPSHOT_ETAG: ("RFC 9110 §13.1.2 on GET /runs/{runId} (docs/host.md)",),
}


def _gate(requirement: str, listed: Collection[str], require: bool) -> RequirementResult | None:
    """The result of a leg its fixtures keep from running, or None when it runs."""
    needed = CORE_LEGS[requirement][0]
    missing = [fixture for fixture in needed if fixture not in listed]
    if not missing:
        return None
    why = "discovery does not list " + ", ".join(missing) + " (the fixture contract's workflows)"
    status = Status.FAIL if require else Status.SKIPPED
    return RequirementResult(requirement, status, why, 0, (why,) if require else (), needed)


async def core_results(
    base_url: str,
    api_key: str,
    listed: Collection[str],
    *,
    require_behavior: bool = False,
    transport: httpx.AsyncBaseTransport | None = None,
) -> list[RequirementResult]:
    """One result per core leg, in :data:`CORE_REQUIREMENTS` order."""
    results: dict[str, RequirementResult] = {}

    async def one(wire: CoreWire, requirement: str) -> None:
        fixtures, check = CORE_LEGS[requirement]
        try:
            ck = await check(wire)
        except WireError as exc:
            message = str(exc)
            results[requirement] = RequirementResult(
                requirement, Status.FAIL, message, 1, (message,), fixtures
            )
            return
        status = Status.PASS if ck.passed else Status.FAIL
        reason = f"{ck.checks} checks" if ck.passed else f"{len(ck.failures)} of {ck.checks} failed"
        results[requirement] = RequirementResult(
            requirement, status, reason, ck.checks, tuple(ck.failures), fixtures
        )

    wire = CoreWire(base_url, api_key, transport=transport)
    async with wire, anyio.create_task_group() as group:
        for requirement in CORE_REQUIREMENTS:
            gated = _gate(requirement, listed, require_behavior)
            if gated is not None:
                results[requirement] = gated
            else:
                group.start_soon(one, wire, requirement)
    return [results[requirement] for requirement in CORE_REQUIREMENTS]
