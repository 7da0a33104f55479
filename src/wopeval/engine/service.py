"""Run lifecycle shared by the CLI and the host: create a run record, re-grade a stored run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from wopeval.engine.run import RunSettings, summarize
from wopeval.errors import RunNotFound

__all__ = ["RunNotFound"]
from wopeval.events.ids import new_run_id
from wopeval.events.store import EventStore, RunRecord
from wopeval.suite import parse_suite, suite_to_document
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.summary import EvalSummary

LOCAL_TENANT = "local"


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


async def create_run_record(
    store: EventStore,
    suite: AgentEvalSuite,
    agent_id: str,
    settings: RunSettings,
    *,
    tenant: str = LOCAL_TENANT,
    idempotency_key: str | None = None,
    extra_request: dict[str, Any] | None = None,
) -> RunRecord:
    """Record a pending eval run, with the exact suite document it will be graded against."""
    now = utc_now()
    request = settings.to_request(agent_id) | (extra_request or {})
    record = RunRecord(
        run_id=new_run_id(tenant),
        tenant=tenant,
        kind="eval",
        status="pending",
        suite_id=suite.suiteId,
        suite_version=suite.version,
        agent_id=agent_id,
        suite_document=suite_to_document(suite),
        request=request,
        summary=None,
        error=None,
        created_at=now,
        updated_at=now,
        idempotency_key=idempotency_key,
    )
    await store.create_run(record)
    return record


@dataclass(frozen=True)
class Regraded:
    record: RunRecord
    summary: EvalSummary

    @property
    def reproduces_stored(self) -> bool:
        """True when the re-grade serializes to exactly the stored summary's bytes."""
        if self.record.summary is None:
            return False
        stored = EvalSummary.model_validate(self.record.summary)
        return stored.to_json() == self.summary.to_json()


async def regrade(store: EventStore, run_id: str) -> Regraded:
    """Recompute a stored run's summary from its suite document and event log (invariant 1)."""
    record = await store.get_run(run_id)
    if record is None:
        raise RunNotFound(run_id)
    suite = parse_suite(record.suite_document, source=f"run {run_id}")
    summary = await summarize(store, suite, run_id, record.request)
    return Regraded(record=record, summary=summary)


async def usable_baseline(
    store: EventStore, tenant: str, baseline_run_id: str, suite: AgentEvalSuite
) -> RunRecord | None:
    """The baseline run if it can be compared against, else None (RFC 0251).

    Unusable, whatever the reason: missing, another tenant's, not an eval run, another suite,
    or not completed. Callers answer every reason identically (no existence oracle).
    """
    record = await store.get_run(baseline_run_id)
    if (
        record is None
        or record.tenant != tenant
        or record.kind != "eval"
        or record.suite_id != suite.suiteId
        or record.status != "completed"
        or record.summary is None
    ):
        return None
    return record
