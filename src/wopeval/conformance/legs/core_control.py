"""The control legs: cancel and idempotent create.

* ``core.run-cancel`` (cancellable, noop): runs.md §Cancel (``v2-run-cancel``). Cancelling a
  running run answers ``200 {runId, status: cancelling | cancelled}``, the snapshot reads
  ``cancelled`` within 5 s and the log carries ``run.cancelled``; cancelling a run that already
  completed is ``409 run_terminal``.
* ``core.idempotent-replay`` (idempotent): idempotency.md §Layer 1 and the fixture contract
  (``conformance-idempotent``). A key inside ``^[A-Za-z0-9._~-]{22,128}$`` is accepted; the same
  key and body again answers ``201`` with the same ``runId`` and
  ``OpenWOP-Idempotent-Replay: true`` (the first create does not say ``true``); the same key
  with another body is ``409 idempotency_key_mismatch``; a key outside the grammar is
  ``400 idempotency_key_invalid``.
"""

from __future__ import annotations

import secrets

from wopeval.conformance.core_wire import CoreWire, types_of
from wopeval.conformance.legs.common import Checker
from wopeval.conformance.legs.core_common import (
    CANCELLABLE,
    IDEMPOTENT,
    NOOP,
    create_run,
    described,
    finished_run,
)

CANCEL_WITHIN_S = 5.0
RUNNING_WITHIN_S = 10.0
REPLAY_HEADER = "OpenWOP-Idempotent-Replay"


async def _cancel_running(wire: CoreWire, ck: Checker) -> None:
    run_id = await create_run(wire, ck, {"workflowId": CANCELLABLE, "inputs": {"delayMs": 15_000}})
    if run_id is None:
        return
    status = await wire.wait_status(run_id, lambda s: s != "pending", RUNNING_WITHIN_S)
    if not ck.check(status == "running", f"cancellable run is {status!r}, want running"):
        return
    answer = await wire.cancel(run_id, {"reason": "conformance"})
    body = answer.body if isinstance(answer.body, dict) else {}
    ck.check(answer.status == 200, f"cancel of a running run answered {described(answer)}")
    ck.check(body.get("runId") == run_id, f"cancel answered runId {body.get('runId')!r}")
    ck.check(
        body.get("status") in ("cancelling", "cancelled"),
        f"cancel answered status {body.get('status')!r}, want cancelling or cancelled",
    )
    final = await wire.wait_status(run_id, lambda s: s == "cancelled", CANCEL_WITHIN_S)
    ck.check(final == "cancelled", f"snapshot reads {final!r} {CANCEL_WITHIN_S:g} s after cancel")
    events = await wire.log(run_id) or []
    ck.check("run.cancelled" in types_of(events), f"no run.cancelled in {types_of(events)}")


async def _cancel_terminal(wire: CoreWire, ck: Checker) -> None:
    run_id = await finished_run(wire, ck, {"workflowId": NOOP})
    if run_id is None:
        return
    answer = await wire.cancel(run_id)
    ck.check(
        (answer.status, answer.error) == (409, "run_terminal"),
        f"cancel of a completed run answered {described(answer)}, want 409 run_terminal",
    )


async def check_run_cancel(wire: CoreWire) -> Checker:
    ck = Checker()
    await _cancel_running(wire, ck)
    await _cancel_terminal(wire, ck)
    return ck


def idempotency_key() -> str:
    """128 bits of entropy, base64url: 22 characters, inside the grammar."""
    return secrets.token_urlsafe(16)


async def check_idempotent_replay(wire: CoreWire) -> Checker:
    ck = Checker()
    key = {"Idempotency-Key": idempotency_key()}
    body = {"workflowId": IDEMPOTENT, "inputs": {"nonce": f"replay-{secrets.token_hex(4)}"}}
    first = await wire.create(body, key)
    run_id = first.body.get("runId") if isinstance(first.body, dict) else None
    if not ck.check(first.status == 201, f"keyed create answered {described(first)}, want 201"):
        return ck
    fresh = first.headers.get(REPLAY_HEADER, "").strip().lower()
    ck.check(fresh != "true", f"the first create already says {REPLAY_HEADER}: true")
    again = await wire.create(body, key)
    replayed = again.body.get("runId") if isinstance(again.body, dict) else None
    ck.check(again.status == 201, f"the replay answered {described(again)}, want 201")
    ck.check(replayed == run_id, f"the replay names run {replayed!r}, not {run_id!r}")
    said = again.headers.get(REPLAY_HEADER, "").strip().lower()
    ck.check(said == "true", f"the replay carries {REPLAY_HEADER}: {said!r}, want true")
    other = {"workflowId": IDEMPOTENT, "inputs": {"nonce": f"other-{secrets.token_hex(4)}"}}
    clash = await wire.create(other, key)
    ck.check(
        (clash.status, clash.error) == (409, "idempotency_key_mismatch"),
        f"the same key with another body answered {described(clash)}, "
        "want 409 idempotency_key_mismatch",
    )
    short = await wire.create(body, {"Idempotency-Key": "short"})
    ck.check(
        (short.status, short.error) == (400, "idempotency_key_invalid"),
        f"Idempotency-Key 'short' answered {described(short)}, want 400 idempotency_key_invalid",
    )
    return ck
