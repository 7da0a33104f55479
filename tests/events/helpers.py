"""Helpers shared by the event-store tests."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from wopeval.events.ids import new_run_id, utc_now
from wopeval.events.store import RunRecord

MakeRun = Callable[..., Awaitable[RunRecord]]


def run_record(tenant: str = "acme", **overrides: Any) -> RunRecord:
    """A pending eval run record; ``overrides`` replace any field."""
    now = utc_now()
    fields: dict[str, Any] = {
        "run_id": new_run_id(tenant),
        "tenant": tenant,
        "kind": "eval",
        "status": "pending",
        "suite_id": "core.x.evals.support",
        "suite_version": "1.0.0",
        "agent_id": "support-bot",
        "suite_document": {"suiteId": "core.x.evals.support", "tasks": [{"taskId": "t1"}]},
        "request": {"evalModes": ["golden"], "concurrency": 4},
        "summary": None,
        "error": None,
        "created_at": now,
        "updated_at": now,
        "idempotency_key": None,
    }
    fields.update(overrides)
    return RunRecord(**fields)
