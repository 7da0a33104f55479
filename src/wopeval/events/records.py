"""The run registry's records: a run's row as a value, the store's errors, and row codecs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from sqlalchemy import Row

from wopeval.errors import RunNotFound, StoreError
from wopeval.events.tables import dumps_json
from wopeval.wire.request import RunRequest

RUN_STATUSES: Final = ("pending", "running", "completed", "failed", "cancelling", "cancelled")
TERMINAL_STATUSES: Final = frozenset({"completed", "failed", "cancelled"})
# How long an owner's claim on its runs holds without renewal (EventStore.claim_runs).
LEASE_SECONDS: Final = 30.0

# No run with this id is recorded: the one ``RunNotFound`` of the error tree.
UnknownRunError = RunNotFound


class DuplicateRunError(StoreError):
    """The run id, or the tenant's idempotency key, is already recorded."""


class RunTerminalError(StoreError):
    """A terminal run's status cannot change any more."""


class RunEndedError(RunTerminalError):
    """The run has its terminal event: nothing may be appended after it."""


class StoreClosedError(StoreError):
    """The store was closed."""


class ClaimLostError(StoreError):
    """Another process took over a run this store had claimed: this store writes nothing more
    to it (:meth:`~wopeval.events.store.EventStore.check_claims`)."""


def claim_lost_message(run_id: str, owner: str | None) -> str:
    taker = f"by another process ({owner})" if owner else "by another process"
    return (
        f"run {run_id} was taken over {taker} while this process was executing it (its claim "
        "lapsed: no renewal within its lease); this process stopped and writes nothing more "
        "to it, the other one finishes it"
    )


@dataclass(frozen=True)
class RunRecord:
    """One run in the registry. ``created_at``/``updated_at`` come from :func:`utc_now`."""

    run_id: str
    tenant: str
    kind: str
    status: str
    suite_id: str
    suite_version: str
    agent_id: str
    suite_document: dict[str, Any]
    request: dict[str, Any]
    summary: dict[str, Any] | None
    error: dict[str, Any] | None
    created_at: str
    updated_at: str
    idempotency_key: str | None = None
    scope_id: str | None = None  # a host run's ``scopeId`` (``OpenWOP-Dedup``), indexed
    owner: str | None = None  # the process executing it (set by create_run, see claim_runs)

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES

    @property
    def run_request(self) -> RunRequest:
        """The stored request, typed."""
        return RunRequest.model_validate(self.request)


def _lease_until(seconds: float) -> str:
    """``utc_now()`` plus ``seconds``, in the same fixed-width (string-sortable) form."""
    moment = datetime.now(UTC) + timedelta(seconds=seconds)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _has_member(request_json: str, key: str) -> bool:
    request = json.loads(request_json)
    return isinstance(request, dict) and key in request


def _check_status(status: str) -> None:
    if status not in RUN_STATUSES:
        raise ValueError(f"status {status!r} is not one of {', '.join(RUN_STATUSES)}")


def _check_record(record: RunRecord) -> None:
    _check_status(record.status)
    if not record.run_id.startswith(f"{record.tenant}/"):
        raise ValueError(f"run_id {record.run_id!r} is not in tenant {record.tenant!r}")


def _record_row(record: RunRecord, document_json: str | None = None) -> dict[str, Any]:
    """The ``runs`` row of ``record``; ``document_json``: its suite document's stored text when
    already made (``dumps_json`` of that very document)."""
    if document_json is None:
        document_json = dumps_json(record.suite_document)
    return {
        "run_id": record.run_id,
        "tenant": record.tenant,
        "kind": record.kind,
        "status": record.status,
        "suite_id": record.suite_id,
        "suite_version": record.suite_version,
        "agent_id": record.agent_id,
        "suite_document": document_json,
        "request": dumps_json(record.request),
        "summary": None if record.summary is None else dumps_json(record.summary),
        "error": None if record.error is None else dumps_json(record.error),
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "idempotency_key": record.idempotency_key,
        "scope_id": record.scope_id,
        "owner": record.owner,
    }


def _row_record(row: Row[Any]) -> RunRecord:
    m = row._mapping
    return RunRecord(
        run_id=m["run_id"],
        tenant=m["tenant"],
        kind=m["kind"],
        status=m["status"],
        suite_id=m["suite_id"],
        suite_version=m["suite_version"],
        agent_id=m["agent_id"],
        suite_document=json.loads(m["suite_document"]),
        request=json.loads(m["request"]),
        summary=None if m["summary"] is None else json.loads(m["summary"]),
        error=None if m["error"] is None else json.loads(m["error"]),
        created_at=m["created_at"],
        updated_at=m["updated_at"],
        idempotency_key=m["idempotency_key"],
        scope_id=m["scope_id"],
        owner=m["owner"],
    )
