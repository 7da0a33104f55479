"""The run registry half of the store: creating, finding and listing runs, moving them to a
status, marking them interrupted, and the owner/lease claims several hosts share one store by.

A mixin of :class:`~wopeval.events.store.EventStore`, which provides the connections.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, overload

from sqlalchemy import Row, or_, select, update
from sqlalchemy.exc import IntegrityError

from wopeval.events.ids import utc_now
from wopeval.events.owners import held
from wopeval.events.records import (
    LEASE_SECONDS,
    TERMINAL_STATUSES,
    DuplicateRunError,
    RunRecord,
    RunTerminalError,
    UnknownRunError,
    _check_record,
    _check_status,
    _has_member,
    _lease_until,
    _record_row,
    _row_record,
)
from wopeval.events.tables import dumps_json, runs
from wopeval.wire.vocab import INTERRUPTED_ERROR_CODE

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

_T = TypeVar("_T")


class RunRegistry:
    """Run records: the queries; :class:`~wopeval.events.store.EventStore` runs them."""

    owner: str | None
    lease_seconds: float
    _next_sequence: dict[str, int]  # the store's per-run sequence cache (forgotten when marked)
    # The unfinished runs this store claimed (created or took over as ``owner``), and those
    # another process took over since, with their new owner: nothing more is written to them.
    _held: set[str]
    _lost: dict[str, str | None]

    def _check_open(self) -> None:
        raise NotImplementedError

    async def _read(self, stmt: Any) -> Sequence[Row[Any]]:
        raise NotImplementedError

    async def _query(self, stmt: Any) -> Sequence[Row[Any]]:
        raise NotImplementedError

    async def _locked_write(
        self, operation: Callable[[AsyncConnection], Coroutine[Any, Any, _T]]
    ) -> _T:
        raise NotImplementedError

    async def _insert_run_row(self, row: dict[str, Any]) -> None:
        raise NotImplementedError

    async def create_run(self, record: RunRecord, *, document_json: str | None = None) -> None:
        """Record a new run. Raises :class:`DuplicateRunError` on a reused id or key.
        ``document_json``: the record's suite document as stored (``dumps_json`` of it), when
        the caller made it once for many runs of one suite."""
        _check_record(record)
        row = _record_row(record, document_json)
        if self.owner is not None:
            row["owner"] = self.owner
            row["lease_expires"] = _lease_until(self.lease_seconds)
        try:
            await self._insert_run_row(row)
        except (IntegrityError, sqlite3.IntegrityError) as exc:
            raise DuplicateRunError(
                f"run {record.run_id!r} or its idempotency key is already recorded"
            ) from exc
        # A new run has no events: its first append needs no look-up of its last sequence.
        self._next_sequence[record.run_id] = 0
        if self.owner is not None:
            self._held.add(record.run_id)

    async def set_status(
        self,
        run_id: str,
        status: str,
        *,
        summary: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
    ) -> None:
        """Move a run to ``status``; ``summary``/``error`` are stored when given.

        A terminal run keeps its status: setting the same terminal status again may update the
        summary or error, any other change raises :class:`RunTerminalError`.
        """
        _check_status(status)
        values: dict[str, Any] = {"status": status, "updated_at": utc_now()}
        if summary is not None:
            values["summary"] = dumps_json(summary)
        if error is not None:
            values["error"] = dumps_json(error)
        stmt = (
            update(runs)
            .where(
                runs.c.run_id == run_id,
                or_(runs.c.status.not_in(TERMINAL_STATUSES), runs.c.status == status),
            )
            .values(values)
        )
        result = await self._locked_write(lambda w: w.execute(stmt))
        if result.rowcount == 0:
            current = await self.get_run(run_id)
            if current is None:
                raise UnknownRunError(f"no run {run_id!r}")
            raise RunTerminalError(f"run {run_id!r} is already {current.status}")
        if status in TERMINAL_STATUSES:
            self._next_sequence.pop(run_id, None)

    async def find_by_idempotency_key(self, tenant: str, key: str) -> RunRecord | None:
        stmt = select(runs).where(runs.c.tenant == tenant, runs.c.idempotency_key == key)
        rows = await self._read(stmt)
        return _row_record(rows[0]) if rows else None

    async def find_active_in_scope(
        self, tenant: str, scope_id: str, active: frozenset[str]
    ) -> RunRecord | None:
        """A run of ``tenant`` holding ``scope_id`` whose status is in ``active`` (indexed)."""
        stmt = (
            select(runs)
            .where(
                runs.c.tenant == tenant,
                runs.c.scope_id == scope_id,
                runs.c.status.in_(sorted(active)),
            )
            .limit(1)
        )
        rows = await self._query(stmt)
        return _row_record(rows[0]) if rows else None

    async def get_run(self, run_id: str) -> RunRecord | None:
        rows = await self._read(select(runs).where(runs.c.run_id == run_id))
        return _row_record(rows[0]) if rows else None

    async def list_runs(self, *, tenant: str | None = None, limit: int = 100) -> list[RunRecord]:
        """Runs newest first (by ``created_at``, then run id)."""
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        stmt = select(runs).order_by(runs.c.created_at.desc(), runs.c.run_id.desc()).limit(limit)
        if tenant is not None:
            stmt = stmt.where(runs.c.tenant == tenant)
        return [_row_record(row) for row in await self._read(stmt)]

    async def group_members(self, group: str) -> list[tuple[str, dict[str, Any]]]:
        """``(run id, stored request)`` of every eval run whose request names run group
        ``group`` (a shard's ``shard.group`` or a merge's ``merged.group``), by run id; the
        suite documents are left for :meth:`get_run`, one run at a time."""
        needle = "%" + dumps_json({"group": group})[1:-1] + "%"  # a pre-filter; checked below
        stmt = (
            select(runs.c.run_id, runs.c.request)
            .where(runs.c.kind == "eval", runs.c.request.like(needle))
            .order_by(runs.c.run_id)
        )
        found = []
        for run_id, request_json in map(tuple, await self._read(stmt)):
            request = json.loads(request_json)
            named = [request.get(key) for key in ("shard", "merged")]
            if any(isinstance(n, dict) and n.get("group") == group for n in named):
                found.append((str(run_id), request))
        return found

    async def unfinished_runs(self, *, request_key: str | None = None) -> list[str]:
        """The ids of every non-terminal eval run (with ``request_key``: whose stored ``request``
        has that member), sorted; read only (resume at host start-up)."""
        stmt = select(runs.c.run_id, runs.c.request).where(
            runs.c.status.not_in(TERMINAL_STATUSES), runs.c.kind == "eval"
        )
        rows = await self._read(stmt)
        pairs = [(str(run_id), str(request)) for run_id, request in map(tuple, rows)]
        return sorted(
            run_id for run_id, request in pairs
            if request_key is None or _has_member(request, request_key)
        )  # fmt: skip

    async def mark_interrupted(self, *, request_key: str | None = None) -> list[str]:
        """Fail every non-terminal run (``wopeval.interrupted``); return their ids, sorted.

        With ``request_key``, only the unfinished runs whose stored ``request`` object has that
        member: the host passes ``"host"`` so that it fails only runs a host created, never a
        ``wopeval run`` executing in another process. Call at host start-up, when no other
        process is running the runs concerned. The caller appends each run's terminal
        ``run.failed`` event so that streams of it can end.
        """
        error = dumps_json({
            "code": INTERRUPTED_ERROR_CODE,
            "message": "the host stopped before this run finished",
        })  # fmt: skip

        async def mark(writer: AsyncConnection) -> list[str]:
            unfinished = runs.c.status.not_in(TERMINAL_STATUSES)
            if request_key is None:
                targets = None
            else:
                rows = await writer.execute(select(runs.c.run_id, runs.c.request).where(unfinished))
                targets = [run_id for run_id, request in rows if _has_member(request, request_key)]
            marked: list[str] = []
            for chunk in _chunks(targets):
                stmt = update(runs).where(unfinished)
                if chunk is not None:
                    stmt = stmt.where(runs.c.run_id.in_(chunk))
                stmt = stmt.values(status="failed", error=error, updated_at=utc_now())
                result = await writer.execute(stmt.returning(runs.c.run_id))
                marked += result.scalars().all()
            return marked

        run_ids = sorted(await self._locked_write(mark))
        for run_id in run_ids:
            self._next_sequence.pop(run_id, None)
        return run_ids

    def claim_runs(self, owner: str, lease_seconds: float = LEASE_SECONDS) -> None:
        """Stamp every run this store creates from now on as ``owner``'s, leased for
        ``lease_seconds``; the owner keeps its claim with :meth:`renew_leases`. Several hosts
        share one store this way: each one interrupts only runs whose lease ran out."""
        self.owner = owner
        self.lease_seconds = lease_seconds

    async def renew_leases(self) -> int:
        """Extend the lease of this owner's unfinished runs; return how many."""
        if self.owner is None:
            return 0
        stmt = (
            update(runs)
            .where(runs.c.owner == self.owner, runs.c.status.not_in(TERMINAL_STATUSES))
            .values(lease_expires=_lease_until(self.lease_seconds))
        )
        result = await self._locked_write(lambda w: w.execute(stmt))
        return int(result.rowcount)

    async def adopt_runs(self, run_ids: list[str]) -> list[str]:
        """Take over abandoned runs for this owner (to resume them), each by
        :meth:`take_over`: only one no live owner holds, so two hosts never both adopt it."""
        if self.owner is None:
            return []
        return [run_id for run_id in run_ids if await self.take_over(run_id) is None]

    async def take_over(self, run_id: str) -> str | None:
        """Claim the unfinished run ``run_id`` for this store's owner, to resume it; None when
        it may be resumed, else why not: another owner holds it, its lease still running and
        its process alive or its lease still running (:func:`~wopeval.events.owners.held`).
        The claim is a compare-and-set on the owner and lease it judged, so of two resumers only
        one wins, and a holder that renewed meanwhile keeps its run. A store that claims no runs
        (a library caller) takes nothing, but is refused all the same."""
        found = await self._read(
            select(runs.c.owner, runs.c.lease_expires).where(runs.c.run_id == run_id)
        )
        if not found:
            return None  # the caller reports the missing run
        row: tuple[Any, ...] = tuple(found[0])
        holder, lease = row
        if holder != self.owner and held(holder, lease, utc_now()):
            return (
                f"run {run_id} is being executed by another process ({holder}, its claim "
                f"held until {lease}); resume it once that process has stopped"
            )
        if self.owner is None:
            return None
        same = runs.c.owner.is_(None) if holder is None else runs.c.owner == holder
        as_judged = (
            runs.c.lease_expires.is_(None) if lease is None else runs.c.lease_expires == lease
        )
        stmt = (
            update(runs)
            .where(
                runs.c.run_id == run_id, runs.c.status.not_in(TERMINAL_STATUSES), same, as_judged
            )
            .values(owner=self.owner, lease_expires=_lease_until(self.lease_seconds))
        )
        result = await self._locked_write(functools.partial(_execute, stmt))
        if int(result.rowcount) != 1:
            return f"run {run_id} was taken over by another process, or ended, meanwhile"
        self._held.add(run_id)
        self._lost.pop(run_id, None)
        return None

    async def check_claims(self) -> dict[str, str | None]:
        """The runs this store claimed that another process has taken over since (run id →
        its owner now, None if none): from now on this store writes nothing to them (the
        writer refuses with :class:`~wopeval.events.records.ClaimLostError`), so a process whose
        claim lapsed (its event loop blocked past its lease, on another machine) stops instead
        of scoring trials its resumer scores too. Runs that ended are forgotten."""
        if self.owner is None or not self._held:
            return {}
        lost: dict[str, str | None] = {}
        for chunk in _chunks(sorted(self._held)):
            stmt = select(runs.c.run_id, runs.c.owner, runs.c.status).where(
                runs.c.run_id.in_(chunk)
            )
            for run_id, owner, status in (tuple(row) for row in await self._read(stmt)):
                if status in TERMINAL_STATUSES:
                    self._held.discard(run_id)
                elif owner != self.owner:
                    lost[run_id] = owner
        for run_id, owner in lost.items():
            self._mark_lost(run_id, owner)
        return lost

    def _mark_lost(self, run_id: str, owner: str | None) -> None:
        """``owner`` (None: nobody) holds ``run_id`` now, not this store: fence it."""
        self._held.discard(run_id)
        self._lost[run_id] = owner

    async def claim_of(self, run_id: str) -> tuple[str | None, str | None]:
        """The run's owner and until when its claim holds (``(None, None)``: unclaimed)."""
        found = await self._read(
            select(runs.c.owner, runs.c.lease_expires).where(runs.c.run_id == run_id)
        )
        if not found:
            return None, None
        owner, lease = tuple(found[0])
        return owner, lease

    async def release_leases(self) -> int:
        """Clear this owner's claim on its unfinished runs (it stops executing them): any
        process may resume them at once. Returns how many."""
        if self.owner is None:
            return 0
        stmt = (
            update(runs)
            .where(runs.c.owner == self.owner, runs.c.status.not_in(TERMINAL_STATUSES))
            .values(owner=None, lease_expires=None)
        )
        result = await self._locked_write(functools.partial(_execute, stmt))
        self._held.clear()
        return int(result.rowcount)

    async def abandoned_runs(self, request_key: str) -> list[str]:
        """Unfinished runs whose stored request has ``request_key`` and whose owner's lease has
        run out (or that no owner ever claimed), never this store's own; sorted ids."""
        stmt = select(runs.c.run_id, runs.c.request, runs.c.owner, runs.c.lease_expires).where(
            runs.c.status.not_in(TERMINAL_STATUSES)
        )
        now = utc_now()
        found = []
        for row in await self._read(stmt):
            m = row._mapping
            run_id, request, owner, lease = (
                m["run_id"],
                m["request"],
                m["owner"],
                m["lease_expires"],
            )
            if owner is not None and (owner == self.owner or held(owner, lease, now)):
                continue
            if _has_member(request, request_key):
                found.append(run_id)
        return sorted(found)


@overload
def _chunks(run_ids: list[str], size: int = 500) -> list[list[str]]: ...
@overload
def _chunks(run_ids: None, size: int = 500) -> list[None]: ...
def _chunks(run_ids: list[str] | None, size: int = 500) -> list[list[str]] | list[None]:
    """``None`` (every run) as one unfiltered statement; ids in bounded ``IN`` lists."""
    if run_ids is None:
        return [None]
    return [run_ids[i : i + size] for i in range(0, len(run_ids), size)]


async def _execute(stmt: Any, writer: AsyncConnection) -> Any:
    return await writer.execute(stmt)
