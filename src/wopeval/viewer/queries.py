"""The viewer's reads from the store: paged and filtered, so memory stays bounded.

The runs page reads one page of run rows and a count; of the suite documents only those of the
page's runs a lower-bound gate decides (it reads their ``passScore``). The run page
reads only the trial outcomes (``eval.scored`` and ``wopeval.trial-failed``), not every event.
A trial page reads the trial's own events: its root bracket and everything caused by it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, or_, select

from wopeval.events.store import EventStore
from wopeval.events.tables import events, row_event, runs
from wopeval.grading.gate import GATES, GateVerdict, stored_verdict
from wopeval.grading.reasons import reason_line
from wopeval.wire.events import RunEvent, TrialFailed
from wopeval.wire.vocab import EVAL_SCORED, INVOCATION_STARTED, TRIAL_FAILED, X_TASK_ID

PAGE_SIZE = 50
_FACET_LIMIT = 200


@dataclass(frozen=True)
class RunFilter:
    """What the runs page was asked for (every field optional)."""

    q: str = ""
    suite: str = ""
    agent: str = ""
    status: str = ""
    page: int = 1

    def query(self, **changes: Any) -> str:
        """This filter as a query string, with ``changes`` applied (for links)."""
        from urllib.parse import urlencode

        values = {"q": self.q, "suite": self.suite, "agent": self.agent, "status": self.status,
                  "page": self.page, **changes}  # fmt: skip
        return urlencode({k: v for k, v in values.items() if v not in ("", None, 1)})


@dataclass(frozen=True)
class RowNumbers:
    """The numbers the runs list shows of a stored summary, read from its parsed JSON (the
    verdict beside them is the gate's, from the same parse). ``trialStats`` and the cost are
    optional in a summary (a suite without ``trials``): absent, they are None."""

    passed_count: int
    task_count: int
    pass_at_k: float | None
    pass_hat_k: float | None
    total_cost_usd: float | None

    @classmethod
    def of(cls, doc: dict[str, Any] | None) -> RowNumbers | None:
        if doc is None:
            return None
        stats = doc.get("trialStats") or {}
        return cls(
            passed_count=int(doc.get("passedCount") or 0),
            task_count=int(doc.get("taskCount") or 0),
            pass_at_k=stats.get("passAtK"),
            pass_hat_k=stats.get("passHatK"),
            total_cost_usd=doc.get("totalCostUsd"),
        )


@dataclass(frozen=True)
class RunRow:
    run_id: str
    kind: str
    status: str
    suite_id: str
    suite_version: str
    agent_id: str
    summary: RowNumbers | None
    created_at: str
    updated_at: str
    request: dict[str, Any] | None = None
    verdict: GateVerdict | None = None  # by the run's own gate, from its stored summary


@dataclass(frozen=True)
class RunsPage:
    rows: list[RunRow]
    total: int
    filter: RunFilter
    suites: list[str]
    agents: list[str]
    statuses: list[str]

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // PAGE_SIZE))


def _like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _conditions(tenant: str | None, chosen: RunFilter) -> list[Any]:
    where: list[Any] = []
    if tenant is not None:
        where.append(runs.c.tenant == tenant)
    if chosen.suite:
        where.append(runs.c.suite_id == chosen.suite)
    if chosen.agent:
        where.append(runs.c.agent_id == chosen.agent)
    if chosen.status:
        where.append(runs.c.status == chosen.status)
    if chosen.q:
        pattern = _like(chosen.q)
        where.append(
            or_(
                *(
                    c.like(pattern, escape="\\")
                    for c in (runs.c.run_id, runs.c.suite_id, runs.c.agent_id)
                )
            )
        )
    return where


async def _facet(store: EventStore, column: Any, tenant: str | None) -> list[str]:
    stmt = select(column).distinct().order_by(column).limit(_FACET_LIMIT)
    if tenant is not None:
        stmt = stmt.where(runs.c.tenant == tenant)
    return [str(row[0]) for row in await store.read(stmt)]


async def _bound_suites(store: EventStore, page: list[Any]) -> dict[str, dict[str, Any]]:
    """The suite documents of the page's runs whose gate reads a bound (for its passScore)."""
    wanted = [m["run_id"] for m in page if m["summary"] is not None
              and (gate := json.loads(m["request"]).get("gate")) in GATES
              and GATES[gate].bound is not None]  # fmt: skip
    if not wanted:
        return {}
    stmt = select(runs.c.run_id, runs.c.suite_document).where(runs.c.run_id.in_(wanted))
    found = (row._mapping for row in await store.read(stmt))
    return {m["run_id"]: json.loads(m["suite_document"]) for m in found}


async def runs_page(store: EventStore, tenant: str | None, chosen: RunFilter) -> RunsPage:
    """One page of runs, newest first, matching ``chosen``; ``tenant=None`` reads every run."""
    where = _conditions(tenant, chosen)
    columns = (runs.c.run_id, runs.c.kind, runs.c.status, runs.c.suite_id, runs.c.suite_version,
               runs.c.agent_id, runs.c.summary, runs.c.created_at, runs.c.updated_at,
               runs.c.request)  # fmt: skip
    offset = (max(chosen.page, 1) - 1) * PAGE_SIZE
    stmt = (
        select(*columns)
        .where(*where)
        .order_by(runs.c.created_at.desc(), runs.c.run_id.desc())
        .limit(PAGE_SIZE)
        .offset(offset)
    )
    page = [row._mapping for row in await store.read(stmt)]
    bounded = await _bound_suites(store, page)
    rows = [
        RunRow(
            run_id=m["run_id"],
            kind=m["kind"],
            status=m["status"],
            suite_id=m["suite_id"],
            suite_version=m["suite_version"],
            agent_id=m["agent_id"],
            summary=RowNumbers.of(summary),
            created_at=m["created_at"],
            updated_at=m["updated_at"],
            request=(request := json.loads(m["request"])),
            verdict=stored_verdict(summary, request, bounded.get(m["run_id"])),
        )
        for m in page
        for summary in [None if m["summary"] is None else json.loads(m["summary"])]
    ]
    total = (await store.read(select(func.count()).select_from(runs).where(*where)))[0][0]
    return RunsPage(
        rows=rows,
        total=int(total),
        filter=chosen,
        suites=await _facet(store, runs.c.suite_id, tenant),
        agents=await _facet(store, runs.c.agent_id, tenant),
        statuses=await _facet(store, runs.c.status, tenant),
    )


@dataclass(frozen=True)
class Scored:
    """The grid's part of an ``eval.scored`` payload."""

    score: float
    passed: bool


@dataclass(frozen=True)
class Reason:
    """The grid's part of a ``wopeval.trial-failed`` payload: its kind and every reason's text
    on one line (:func:`~wopeval.grading.reasons.reason_line`)."""

    kind: str
    message: str


@dataclass(frozen=True)
class Outcome:
    """One trial's recorded outcome, as the grid needs it."""

    scored: Scored | None = None
    reason: Reason | None = None
    sequence: int = -1


async def outcomes(
    store: EventStore, run_id: str, after_sequence: int = -1
) -> tuple[dict[tuple[str, int], Outcome], int]:
    """Every trial outcome recorded after ``after_sequence``, and the last sequence read.

    Scores are read as plain JSON (the fields the grid shows), not through the typed models:
    for a run of 10,000 trials that is most of the page's time otherwise. A failing trial's
    reason goes through its model, for the one wording of every output.
    """
    stmt = (
        select(events.c.sequence, events.c.type, events.c.payload)
        .where(
            events.c.run_id == run_id,
            events.c.sequence > after_sequence,
            events.c.type.in_((EVAL_SCORED, TRIAL_FAILED)),
        )
        .order_by(events.c.sequence)
    )
    found: dict[tuple[str, int], Outcome] = {}
    last = after_sequence
    for row in await store.read(stmt):
        sequence, kind, text = tuple(row)
        last = max(last, int(sequence))
        payload = json.loads(text)
        key = (str(payload["taskId"]), int(payload.get("trialIndex") or 0))
        old = found.get(key, Outcome())
        if kind == EVAL_SCORED:
            scored = Scored(float(payload["score"]), bool(payload["passed"]))
            found[key] = Outcome(scored, old.reason, int(sequence))
        else:
            failed = TrialFailed.model_validate(payload)
            reason = Reason(failed.kind, reason_line(failed))
            found[key] = Outcome(old.scored, reason, max(old.sequence, int(sequence)))
    return found, last


async def trial_events(
    store: EventStore, run_id: str, task_id: str, trial_index: int
) -> list[RunEvent] | None:
    """The trial's own events in log order (its root and all it caused).

    ``None`` when the log carries no wopeval trial markers (an imported log): the caller then
    reads the whole log and attributes by position, as grading does.
    """
    roots = await store.read(
        select(events.c.event_id, events.c.payload).where(
            events.c.run_id == run_id,
            events.c.type == INVOCATION_STARTED,
            events.c.payload.like(f"%{X_TASK_ID}%"),
        )
    )
    if not roots:
        return None
    root = next(
        (
            event_id
            for event_id, payload in (tuple(row) for row in roots)
            if _is_trial(json.loads(payload), task_id, trial_index)
        ),
        None,
    )
    if root is None:
        return []
    stmt = (
        select(events)
        .where(events.c.run_id == run_id)
        .where(or_(events.c.event_id == root, events.c.causation_id == root))
        .order_by(events.c.sequence)
    )
    return [row_event(row) for row in await store.read(stmt)]


def _is_trial(payload: dict[str, Any], task_id: str, trial_index: int) -> bool:
    return bool(
        payload.get(X_TASK_ID) == task_id and payload.get("x-wopeval-trialIndex", 0) == trial_index
    )


async def all_events(store: EventStore, run_id: str) -> list[RunEvent]:
    return await store.events(run_id)
