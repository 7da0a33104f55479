"""The store's tables and its recorded migrations.

Tables: ``runs`` (one row per run, mutable status), ``events`` (the append-only log, primary
key ``(run_id, sequence)``), ``schema_migrations(version, applied_at)``.

Migrations are frozen SQL, applied in order at start-up and recorded in ``schema_migrations``
(sqlite-utils / Datasette style). Never edit a shipped migration: append a new one and update
the live ``Table`` objects below; ``tests/events`` checks that a migrated database matches them.
Concurrent start-ups cannot double-apply: the whole pass runs in one transaction that holds a
PostgreSQL advisory lock or, on SQLite, the database write lock (``BEGIN IMMEDIATE``).

Also the rows' codec: the stored JSON text (:func:`dumps_json`), a row read back as its event
(:func:`row_event`) and the one multi-row ``INSERT`` a batch of events is written with
(:func:`insert_events_sql`). How connections are set up is :mod:`wopeval.events.connections`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic_core import from_json
from sqlalchemy import (
    BigInteger,
    Column,
    ForeignKey,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Row,
    Table,
    Text,
    bindparam,
    insert,
    literal_column,
    select,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncConnection

from wopeval.errors import StoreError
from wopeval.events.connections import transaction
from wopeval.events.ids import utc_now
from wopeval.wire.events import RunEvent

# pg_advisory_xact_lock key for the migration pass: b"wopeval" read as a big-endian integer.
PG_MIGRATION_LOCK_KEY = int.from_bytes(b"wopeval", "big")


class SchemaVersionError(StoreError):
    """The database was migrated by a newer wopeval than this one."""


@dataclass(frozen=True)
class Migration:
    """One recorded schema change: SQL for every dialect, plus dialect-specific extras."""

    version: int
    name: str
    statements: tuple[str, ...]
    sqlite: tuple[str, ...] = ()
    postgresql: tuple[str, ...] = ()

    def for_dialect(self, dialect: str) -> tuple[str, ...]:
        extra = self.sqlite if dialect == "sqlite" else self.postgresql
        return self.statements + extra


_APPEND_ONLY = "wopeval events are append-only"
# Nothing is appended after a run's terminal event: the store marks ended_sequence in the
# terminal event's transaction and checks it first; against another process, each INSERT
# checks it too (SQLite: insert_events_sql's guard; PostgreSQL: migration 3's BEFORE INSERT
# trigger, which also marks the end).
ENDED_MESSAGE = _ENDED = "wopeval run has ended: no event after its terminal event"
_TERMINAL_SQL = "('run.completed', 'run.failed', 'run.cancelled')"

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        version=1,
        name="runs and the append-only event log",
        statements=(
            """CREATE TABLE runs (
                run_id TEXT NOT NULL PRIMARY KEY,
                tenant TEXT NOT NULL,
                kind TEXT NOT NULL,
                status TEXT NOT NULL,
                suite_id TEXT NOT NULL,
                suite_version TEXT NOT NULL,
                agent_id TEXT NOT NULL,
                suite_document TEXT NOT NULL,
                request TEXT NOT NULL,
                summary TEXT,
                error TEXT,
                created_at TEXT NOT NULL,
                updated_at TEXT NOT NULL,
                idempotency_key TEXT
            )""",
            "CREATE UNIQUE INDEX runs_tenant_idempotency_key ON runs (tenant, idempotency_key)",
            "CREATE INDEX runs_tenant_created_at ON runs (tenant, created_at)",
            "CREATE INDEX runs_created_at ON runs (created_at)",
            "CREATE INDEX runs_status ON runs (status)",
            """CREATE TABLE events (
                run_id TEXT NOT NULL REFERENCES runs (run_id),
                sequence BIGINT NOT NULL CHECK (sequence >= 0),
                event_id TEXT NOT NULL,
                type TEXT NOT NULL,
                payload TEXT NOT NULL,
                timestamp TEXT NOT NULL,
                schema_version INTEGER NOT NULL,
                node_id TEXT,
                engine_version INTEGER,
                causation_id TEXT,
                PRIMARY KEY (run_id, sequence)
            )""",
        ),
        sqlite=(
            "CREATE TRIGGER events_no_update BEFORE UPDATE ON events "
            f"BEGIN SELECT RAISE(ABORT, '{_APPEND_ONLY}'); END",
            "CREATE TRIGGER events_no_delete BEFORE DELETE ON events "
            f"BEGIN SELECT RAISE(ABORT, '{_APPEND_ONLY}'); END",
        ),
        postgresql=(
            "CREATE FUNCTION wopeval_events_append_only() RETURNS trigger LANGUAGE plpgsql "
            f"AS $$ BEGIN RAISE EXCEPTION '{_APPEND_ONLY}'; END $$",
            "CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events "
            "FOR EACH ROW EXECUTE FUNCTION wopeval_events_append_only()",
            "CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events "
            "FOR EACH STATEMENT EXECUTE FUNCTION wopeval_events_append_only()",
        ),
    ),
    Migration(
        version=2,
        name="runs.scope_id: indexed OpenWOP-Dedup look-ups",
        statements=(
            "ALTER TABLE runs ADD COLUMN scope_id TEXT",
            "CREATE INDEX runs_tenant_scope_status ON runs (tenant, scope_id, status)",
        ),
        sqlite=(
            "UPDATE runs SET scope_id = json_extract(request, '$.host.scopeId') "
            "WHERE json_valid(request)",
        ),
        postgresql=("UPDATE runs SET scope_id = (request::jsonb -> 'host' ->> 'scopeId')",),
    ),
    Migration(
        version=3,
        name="runs end at their terminal event (PostgreSQL: NOTIFY on append); runs.owner",
        statements=(
            "ALTER TABLE runs ADD COLUMN owner TEXT",
            "ALTER TABLE runs ADD COLUMN lease_expires TEXT",
            "ALTER TABLE runs ADD COLUMN ended_sequence BIGINT",
            "UPDATE runs SET ended_sequence = (SELECT MIN(e.sequence) FROM events e "
            f"WHERE e.run_id = runs.run_id AND e.type IN {_TERMINAL_SQL})",
            "CREATE INDEX runs_owner_status ON runs (owner, status)",
        ),
        sqlite=(
            "CREATE TRIGGER events_after_end BEFORE INSERT ON events WHEN "
            "(SELECT ended_sequence FROM runs WHERE run_id = NEW.run_id) IS NOT NULL "
            f"BEGIN SELECT RAISE(ABORT, '{_ENDED}'); END",
            "CREATE TRIGGER events_end AFTER INSERT ON events "
            f"WHEN NEW.type IN {_TERMINAL_SQL} BEGIN "
            "UPDATE runs SET ended_sequence = NEW.sequence WHERE run_id = NEW.run_id; END",
        ),
        postgresql=(
            "CREATE FUNCTION wopeval_events_end() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "IF (SELECT ended_sequence FROM runs WHERE run_id = NEW.run_id) IS NOT NULL THEN "
            f"RAISE EXCEPTION '{_ENDED}' USING ERRCODE = 'integrity_constraint_violation'; "
            "END IF; PERFORM pg_notify('wopeval_events', NEW.run_id); "
            f"IF NEW.type IN {_TERMINAL_SQL} THEN "
            "UPDATE runs SET ended_sequence = NEW.sequence WHERE run_id = NEW.run_id; "
            "END IF; RETURN NEW; END $$",
            "CREATE TRIGGER events_end BEFORE INSERT ON events "
            "FOR EACH ROW EXECUTE FUNCTION wopeval_events_end()",
        ),
    ),
    Migration(
        version=4,
        name="SQLite: the store marks a run's end (no per-row AFTER INSERT trigger)",
        statements=(),
        # The AFTER INSERT trigger ran as a sub-program for every row (about 5 us of the 16 a
        # row cost here) to catch the rare terminal event. The store now sets ended_sequence in
        # the transaction that writes a terminal event (BatchWrites); events_after_end stays,
        # the backstop against any other writer appending after the end.
        sqlite=("DROP TRIGGER events_end",),
    ),
    Migration(
        version=5,
        name="SQLite: the store's INSERT refuses an ended run (one check, not a per-row trigger)",
        statements=(),
        # events_after_end ran as a sub-program for every row (about 1 us of the 3 a row costs
        # here, 5 % of a trial's CPU). Every INSERT the store makes now carries the same check
        # once (insert_events_sql's guard): nothing is written to a run that has ended, by
        # this process or another. A writer that bypasses the store is no longer refused on
        # SQLite (PostgreSQL's trigger stays: it also notifies listeners of each append).
        sqlite=("DROP TRIGGER events_after_end",),
    ),
)

_CREATE_MIGRATIONS_TABLE = """CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER NOT NULL PRIMARY KEY,
    applied_at TEXT NOT NULL
)"""

# The live shape the store queries (must equal the result of all MIGRATIONS).
metadata = MetaData()
runs = Table(
    "runs",
    metadata,
    Column("run_id", Text, primary_key=True),
    Column("tenant", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("suite_id", Text, nullable=False),
    Column("suite_version", Text, nullable=False),
    Column("agent_id", Text, nullable=False),
    Column("suite_document", Text, nullable=False),
    Column("request", Text, nullable=False),
    Column("summary", Text),
    Column("error", Text),
    Column("created_at", Text, nullable=False),
    Column("updated_at", Text, nullable=False),
    Column("idempotency_key", Text),
    Column("scope_id", Text),
    Column("owner", Text),  # the host process executing the run (see EventStore.owner)
    Column("lease_expires", Text),  # until when the owner's claim holds (utc_now form)
    Column("ended_sequence", BigInteger),  # the terminal event's sequence (ENDED_MESSAGE above)
)
events = Table(
    "events",
    metadata,
    Column("run_id", Text, ForeignKey("runs.run_id"), nullable=False),
    Column("sequence", BigInteger, nullable=False),
    Column("event_id", Text, nullable=False),
    Column("type", Text, nullable=False),
    Column("payload", Text, nullable=False),
    Column("timestamp", Text, nullable=False),
    Column("schema_version", Integer, nullable=False),
    Column("node_id", Text),
    Column("engine_version", Integer),
    Column("causation_id", Text),
    PrimaryKeyConstraint("run_id", "sequence"),
)
schema_migrations = Table(
    "schema_migrations",
    metadata,
    Column("version", Integer, primary_key=True),
    Column("applied_at", Text, nullable=False),
)


async def apply_migrations(
    conn: AsyncConnection, migrations: Sequence[Migration] = MIGRATIONS
) -> list[int]:
    """Apply every migration not yet recorded, in order, in one transaction; return them.

    Idempotent. Raises :class:`SchemaVersionError` when the database records a version newer
    than this code knows (a stored log must stay readable, so a downgrade is refused loudly).
    ``migrations`` is for tests that build an older schema (a prefix of :data:`MIGRATIONS`).
    """
    dialect = conn.dialect.name
    applied: list[int] = []
    async with transaction(conn):
        if dialect == "postgresql":
            await conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({PG_MIGRATION_LOCK_KEY})")
        await conn.exec_driver_sql(_CREATE_MIGRATIONS_TABLE)
        done = set((await conn.execute(select(schema_migrations.c.version))).scalars())
        known = max(m.version for m in migrations)
        if done and max(done) > known:
            raise SchemaVersionError(
                f"the store is at schema version {max(done)}; this wopeval knows up to {known}"
            )
        for migration in migrations:
            if migration.version in done:
                continue
            for statement in migration.for_dialect(dialect):
                await conn.exec_driver_sql(statement)
            await conn.execute(
                insert(schema_migrations).values(version=migration.version, applied_at=utc_now())
            )
            applied.append(migration.version)
    return applied


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
# For trees built fresh (a payload's wire dict from its serializer, which refuses cycles itself).
_TREE_ENCODER = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False
)


def dumps_json(value: Any) -> str:
    """Compact JSON text as stored; NaN and infinities are refused (``ValueError``).

    The same text as ``json.dumps(value, ensure_ascii=False, separators=(",", ":"),
    allow_nan=False)``, from one encoder kept for the process (``json.dumps`` with arguments
    builds a ``JSONEncoder`` per call).
    """
    return _ENCODER.encode(value)


def dumps_tree(value: Any) -> str:
    """:func:`dumps_json` of a value known to hold no cycle (a payload's wire dict): the same
    text, without the circular-reference bookkeeping."""
    return _TREE_ENCODER.encode(value)


def loads_json(text: str | bytes) -> Any:
    """Stored JSON text as Python values, the very values ``json.loads`` gives.

    Parsed by pydantic-core's parser, a third of ``json.loads``'s time (grading reads every
    payload of a run); text it refuses (a lone surrogate's escape, which ``json.loads``
    accepts) goes to ``json.loads``, which also raises for text that is no JSON at all."""
    try:
        return from_json(text)
    except ValueError:
        return json.loads(text)


def row_event(row: Row[Any]) -> RunEvent:
    """A stored ``events`` row (all its columns, in table order: ``select(events)``) as its
    ``RunEvent`` (written by the store: no re-validation)."""
    values: tuple[Any, ...] = tuple(row)
    run_id, sequence, event_id, type_, payload, timestamp, schema, node, engine, causation = values
    return RunEvent.recorded(
        event_id,
        run_id,
        type_,
        loads_json(payload),
        timestamp,
        int(sequence),
        schema,
        node,
        engine,
        causation,
    )


_PLACEHOLDERS: dict[str, Callable[[int], str]] = {
    "qmark": lambda _: "?",
    "numeric_dollar": lambda k: f"${k}",
    "format": lambda _: "%s",
}


# Columns an INSERT of staged rows never binds: the writer records no engine version. NULL
# is written as a literal, not bound: the sqlite3 module adapts every ``None`` parameter,
# which costs more than the rest of the row's binding (an AttributeError made and cleared).
UNBOUND_COLUMNS = ("engine_version",)
# ... and ``node_id``, in a batch whose events carry none (all but workflow nodes' events).
NODE_COLUMN = "node_id"


@lru_cache(maxsize=512)
def insert_events_sql(dialect: Dialect, size: int, nodes: bool = True, guarded: int = 0) -> str:
    """The ``INSERT … VALUES (…), …`` of ``size`` event rows for ``dialect``.

    Its positional parameters are the staged rows, flattened: each row the ``events`` columns
    in table order but :data:`UNBOUND_COLUMNS` (and, with ``nodes`` false, ``node_id``),
    which the statement writes as NULL. SQLAlchemy's statement cache does not cover multi-row
    VALUES, and compiling one costs more than the write itself, so for the positional
    paramstyles of our drivers (aiosqlite: ``qmark``, asyncpg: ``numeric_dollar``) the text is
    built directly; others fall back to compiling.

    ``guarded`` (SQLite): the rows belong to that many runs, whose ids follow the rows'
    parameters, and the statement writes none of its rows when one of those runs has ended:
    the caller sees no row written (``BatchWrites._insert``). One check a statement, not a
    trigger's a row (migration 5).
    """
    names = [column.name for column in events.c]
    null = set(UNBOUND_COLUMNS) if nodes else {*UNBOUND_COLUMNS, NODE_COLUMN}
    bound = [name for name in names if name not in null]
    placeholder = _PLACEHOLDERS.get(dialect.paramstyle)
    if placeholder is not None:
        preparer = dialect.identifier_preparer
        columns = ", ".join(preparer.quote(name) for name in names)
        width = len(bound)

        def group(i: int) -> str:
            at = iter(range(i * width + 1, (i + 1) * width + 1))
            values = ("NULL" if name in null else placeholder(next(at)) for name in names)
            return "(" + ", ".join(values) + ")"

        groups = ", ".join(group(i) for i in range(size))
        into = f"INSERT INTO {preparer.quote(events.name)} ({columns})"
        if not guarded:
            return f"{into} VALUES {groups}"
        if dialect.name != "sqlite":
            raise ValueError("the ended-run guard is SQLite's (PostgreSQL's trigger checks)")
        ids = ", ".join("?" * guarded)
        return (
            f"{into} SELECT * FROM (VALUES {groups}) WHERE NOT EXISTS (SELECT 1 FROM runs "
            f"WHERE run_id IN ({ids}) AND ended_sequence IS NOT NULL)"
        )
    if guarded:
        raise ValueError(f"no ended-run guard for the {dialect.paramstyle} paramstyle")
    stmt = insert(events).values([
        {name: literal_column("NULL") if name in null else bindparam(f"{name}_{i}")
         for name in names}
        for i in range(size)
    ])  # fmt: skip
    compiled = stmt.compile(dialect=dialect)
    if list(compiled.positiontup or ()) != [f"{n}_{i}" for i in range(size) for n in bound]:
        raise RuntimeError("unexpected parameter order in the compiled event INSERT")
    return str(compiled)
