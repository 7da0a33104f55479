"""The durable, append-only event log and run registry (SQLite by default, PostgreSQL by URL)."""

from __future__ import annotations

from wopeval.events.ids import new_event_id, new_run_id, utc_now
from wopeval.events.store import (
    INTERRUPTED_ERROR_CODE,
    RUN_STATUSES,
    TERMINAL_STATUSES,
    DuplicateRunError,
    EventStore,
    RunRecord,
    RunTerminalError,
    StoreClosedError,
    StoreError,
    UnknownRunError,
)
from wopeval.events.tables import SchemaVersionError
from wopeval.events.urls import DEFAULT_STORE_URL, STORE_ENV_VAR, normalize_store_url

__all__ = [
    "DEFAULT_STORE_URL",
    "INTERRUPTED_ERROR_CODE",
    "RUN_STATUSES",
    "STORE_ENV_VAR",
    "TERMINAL_STATUSES",
    "DuplicateRunError",
    "EventStore",
    "RunRecord",
    "RunTerminalError",
    "SchemaVersionError",
    "StoreClosedError",
    "StoreError",
    "UnknownRunError",
    "new_event_id",
    "new_run_id",
    "normalize_store_url",
    "utc_now",
]
