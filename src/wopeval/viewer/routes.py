"""The viewer's pages as a FastAPI router: runs, a run, a trial, a comparison, live updates.

:func:`viewer_router` takes how to reach the store and whose runs the caller may see:
``wopeval view`` sees every run of its local store; ``wopeval serve`` mounts the same router
under ``/view`` with the caller's tenant from its API key, so another tenant's run is answered
exactly like a missing one (404). Run ids hold a ``/``, so pages take them as query parameters.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response, StreamingResponse
from sqlalchemy import Select, select

from wopeval.events.store import EventStore, RunRecord
from wopeval.events.tables import runs
from wopeval.grading.efficiency import figure, per_success_text
from wopeval.grading.intervals import DEFAULT_LEVEL
from wopeval.service.efficiency import mixed_suites, pareto_rows
from wopeval.service.plan import PlanInputError
from wopeval.viewer.compare import compare_page
from wopeval.viewer.model import cell_of, run_page, trial_page
from wopeval.viewer.pareto import pareto_plot
from wopeval.viewer.plan import plan_view
from wopeval.viewer.queries import Outcome, RunFilter, outcomes, runs_page
from wopeval.viewer.render import render
from wopeval.wire import sse

StoreOf = Callable[[Request], EventStore]
TenantOf = Callable[[Request], Awaitable[str | None]]
# The tenant of the browser's sign-in session, when a session (not an API key) authenticated the
# request: its pages then show the tenant and a sign-out button.
SignedInOf = Callable[[Request], str | None]
LIVE_POLL_S = 10.0


def owned_run_query(run_id: str, tenant: str) -> Select[tuple[str]]:
    """The id of the run ``run_id`` if ``tenant`` owns it: one indexed row, no document."""
    return select(runs.c.run_id).where(runs.c.run_id == run_id, runs.c.tenant == tenant)


def _int(value: str | None, default: int, low: int = 0) -> int:
    try:
        return max(low, int(value)) if value is not None else default
    except ValueError:
        return default


@dataclass(frozen=True)
class _Pages:
    """The page handlers, bound to how to reach the store and whose runs the caller sees."""

    store_of: StoreOf
    tenant_of: TenantOf
    base: str
    signed_in_of: SignedInOf | None = None

    async def visible(self, request: Request, run_id: str) -> RunRecord | None:
        """The run if the caller may see it; another tenant's run is None, as a missing one.

        Both are answered by the same tenant-scoped look-up of the id alone
        (:func:`owned_run_query`), before anything of the run is read: a foreign run's suite
        document is never loaded, so it takes as long to refuse as a missing one."""
        tenant = await self.tenant_of(request)
        if not run_id:
            return None
        store = self.store_of(request)
        if tenant is not None and not await store.read(owned_run_query(run_id, tenant)):
            return None
        return await store.get_run(run_id)

    def page(self, request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        signed_in = self.signed_in_of(request) if self.signed_in_of is not None else None
        text = render(name, base=self.base, signed_in=signed_in, **context)
        return HTMLResponse(text, status_code=status)

    def missing(self, request: Request, what: str) -> HTMLResponse:
        return self.page(request, "missing.html.j2", status=404, what=what)

    async def runs(self, request: Request) -> HTMLResponse:
        q = request.query_params
        chosen = RunFilter(q=q.get("q", "").strip(), suite=q.get("suite", ""),
                           agent=q.get("agent", ""), status=q.get("status", ""),
                           page=_int(q.get("page"), 1, 1))  # fmt: skip
        found = await runs_page(self.store_of(request), await self.tenant_of(request), chosen)
        return self.page(request, "runs.html.j2", runs=found)

    async def run(self, request: Request) -> HTMLResponse:
        record = await self.visible(request, request.query_params.get("id", ""))
        if record is None or record.kind != "eval":
            return self.missing(request, "run")
        tasks = _int(request.query_params.get("tasks"), 1, 1)
        return self.page(
            request, "run.html.j2", run=await run_page(self.store_of(request), record, tasks)
        )

    async def trial(self, request: Request) -> HTMLResponse:
        q = request.query_params
        record = await self.visible(request, q.get("run", ""))
        found = None
        if record is not None and record.kind == "eval":
            index = _int(q.get("i"), -1, -1)
            found = await trial_page(self.store_of(request), record, q.get("task", ""), index)
        return (
            self.page(request, "trial.html.j2", trial=found)
            if found
            else self.missing(request, "trial")
        )

    async def compare(self, request: Request) -> HTMLResponse:
        q = request.query_params
        ticked = q.getlist("run")
        if ticked and not (q.get("base") or q.get("cand")):
            if len(ticked) != 2:
                error = f"tick two runs to compare them ({len(ticked)} ticked)"
                return self.page(
                    request, "missing.html.j2", status=400, what="comparison", error=error
                )
            picked = [await self.visible(request, run_id) for run_id in ticked]
            baseline, candidate = _older_first(picked[0], picked[1])
        else:
            baseline = await self.visible(request, q.get("base", ""))
            candidate = await self.visible(request, q.get("cand", ""))
        if baseline is None or candidate is None:
            return self.missing(request, "run")
        method = q.get("method", "paired-bootstrap")
        try:
            alpha = float(q.get("alpha", "0.05"))
            found = compare_page(baseline, candidate, method=method, alpha=alpha)
        except ValueError as exc:
            return self.page(
                request, "missing.html.j2", status=400, what="comparison", error=str(exc)
            )
        return self.page(request, "compare.html.j2", cmp=found)

    async def pareto(self, request: Request) -> HTMLResponse:
        """``?runs=A,B`` (or ticked ``run`` boxes): the runs of one suite, cost against success."""
        q = request.query_params
        ids = [i for i in q.get("runs", "").split(",") if i] + q.getlist("run")
        ids = list(dict.fromkeys(ids))
        if not ids:
            error = "name the runs: ?runs=RUN_ID,RUN_ID (or tick them on the runs page)"
            return self.page(request, "missing.html.j2", status=400, what="runs", error=error)
        records = [await self.visible(request, run_id) for run_id in ids]
        shown = [r for r in records if r is not None and r.kind == "eval"]
        if len(shown) != len(ids):
            return self.missing(request, "run")
        refusal = _pareto_refusal(shown)
        if refusal:
            return self.page(request, "missing.html.j2", status=400, what="runs", error=refusal)
        rows = await pareto_rows(self.store_of(request), shown, DEFAULT_LEVEL)
        unplotted = [i for i, r in enumerate(rows, 1) if r.efficiency.cost_per_success is None]
        return self.page(request, "pareto.html.j2", rows=rows, plot=pareto_plot(rows),
                         unplotted=unplotted,
                         suites=sorted({row.suite for row in rows}), figure=figure,
                         per_success=per_success_text)  # fmt: skip

    async def plan(self, request: Request) -> HTMLResponse:
        """``?run=RUN&mde=&alpha=&power=``: ``wopeval plan`` from a completed run's rates."""
        q = request.query_params
        record = await self.visible(request, q.get("run", ""))
        if record is None or record.kind != "eval":
            return self.missing(request, "run")
        try:
            view = await plan_view(self.store_of(request), record, q)
        except PlanInputError as exc:
            return self.page(request, "missing.html.j2", status=400, what="plan", error=str(exc))
        return self.page(request, "plan.html.j2", view=view)

    async def live(self, request: Request) -> Response:
        q = request.query_params
        record = await self.visible(request, q.get("run", ""))
        if record is None:
            return self.missing(request, "run")
        stream = _live(self.store_of(request), record.run_id, _int(q.get("after"), -1, -1))
        return StreamingResponse(stream, media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store"})  # fmt: skip


def _pareto_refusal(records: list[RunRecord]) -> str | None:
    """Why these runs cannot be set side by side, or None."""
    unfinished = [r.run_id for r in records if r.summary is None]
    if unfinished:
        return f"no summary yet: {', '.join(unfinished)}"
    suites = mixed_suites(records)
    if suites:
        return f"runs of different suites ({', '.join(suites)}) do not compare"
    return None


def _older_first(
    one: RunRecord | None, other: RunRecord | None
) -> tuple[RunRecord | None, RunRecord | None]:
    """Two ticked runs as (baseline, candidate): the one created first is the baseline."""
    if one is None or other is None:
        return one, other
    return (
        (one, other)
        if (one.created_at, one.run_id) <= (other.created_at, other.run_id)
        else (
            other,
            one,
        )
    )


async def _script() -> Response:
    text = resources.files("wopeval.viewer").joinpath("static/viewer.js").read_text()
    return Response(text, media_type="text/javascript")


def viewer_router(
    store_of: StoreOf, tenant_of: TenantOf, base: str = "", signed_in_of: SignedInOf | None = None
) -> APIRouter:
    """The pages; ``base`` is the prefix the router is mounted under (for links and the sign-out
    form, ``{base}/logout``); ``signed_in_of`` the request's sign-in session, if any."""
    pages = _Pages(store_of, tenant_of, base, signed_in_of)
    router = APIRouter()
    for path, handler in (("/", pages.runs), ("/run", pages.run), ("/trial", pages.trial),
                          ("/compare", pages.compare), ("/pareto", pages.pareto),
                          ("/plan", pages.plan)):  # fmt: skip
        router.add_api_route(
            path, handler, methods=["GET"], response_class=HTMLResponse, include_in_schema=False
        )
    router.add_api_route("/live", pages.live, methods=["GET"], include_in_schema=False)
    router.add_api_route("/static/viewer.js", _script, methods=["GET"], include_in_schema=False)
    return router


def _sse(kind: str, data: dict[str, Any]) -> bytes:
    return sse.frame(json.dumps(data), event=kind).encode()


async def _live(store: EventStore, run_id: str, after: int) -> AsyncIterator[bytes]:
    """Each trial outcome recorded after ``after`` as a ``cell`` event; ``done`` at the end."""
    seen: dict[tuple[str, int], Outcome] = {}
    yield sse.comment("live").encode()
    while True:
        head = await store.last_sequence(run_id)
        if head > after:
            found, last = await outcomes(store, run_id, after)
            for key, new in found.items():
                old = seen.get(key, Outcome())
                merged = Outcome(new.scored or old.scored, new.reason or old.reason, new.sequence)
                seen[key] = merged
                cell = cell_of(key[1], merged, terminal=False)
                if cell is not None and cell.status != "pending":
                    data = {"task": key[0], "trial": key[1], "status": cell.status,
                            "mark": cell.mark, "message": cell.message or ""}  # fmt: skip
                    yield _sse("cell", data)
            after = max(head, last)
            continue
        record = await store.get_run(run_id)
        if record is None or record.terminal:
            if await store.last_sequence(run_id) <= after:  # nothing came after the end
                yield _sse("done", {"status": record.status if record else "missing"})
                return
            continue
        if not await store.wait_for_events(run_id, after, LIVE_POLL_S, limit=1):
            yield sse.comment("keep-alive").encode()
