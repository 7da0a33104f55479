"""``POST /v1/traces``: OTLP/HTTP trace export into a stored, graded eval run.

An OpenTelemetry exporter pointed at the host (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) sends
``ExportTraceServiceRequest`` bodies, as JSON (``application/json``) or protobuf
(``application/x-protobuf``, with ``opentelemetry-proto``). The request must carry an API key
(``Authorization: Bearer …``, set with ``OTEL_EXPORTER_OTLP_HEADERS``) and name the suite to
grade against: the ``X-Wopeval-Suite`` header (an ``evalSuiteRef``) or the resource attribute
``openwop.eval.suite_ref``; the agent is ``X-Wopeval-Agent`` or the suite's ``targetAgentId``.

The spans are converted and scored by :func:`wopeval.service.otlp_trials.import_spans` (the
``wopeval import-otlp`` path) and stored as a completed eval run of the key's tenant, with its
summary; the answer is the OTLP ``ExportTraceServiceResponse`` (``{}``, or ``partialSuccess``
counting the spans of traces that name no task of the suite), with the run in
``OpenWOP-Run-Id``. A body none of whose traces is a trial of the suite is refused (``400``
naming ``openwop.eval.task_id``, with what was rejected), and no run is stored. Config
``otlpTraces``: ``loopback`` (the default: only loopback clients,
others get ``404``), ``any``, or ``off`` (``404``).
"""

from __future__ import annotations

from ipaddress import ip_address
from typing import Any

import anyio.to_thread
from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from wopeval.events.ids import new_event_id, new_run_id, utc_now
from wopeval.events.store import RunRecord
from wopeval.host.create import load_suite_ref
from wopeval.host.errors import HostError, invalid
from wopeval.host.runs import read_bounded
from wopeval.host.state import HostState, state_of
from wopeval.service.otlp_plan import TASK_ATTR
from wopeval.service.otlp_read import OtlpError, OtlpSpan, read_otlp
from wopeval.service.otlp_trials import Imported, import_spans
from wopeval.service.runs import summarize
from wopeval.suite import suite_to_document
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.events import Payload, RunEvent
from wopeval.wire.request import RunRequest

router = APIRouter()
SUITE_HEADER, AGENT_HEADER, SUITE_ATTR = (
    "x-wopeval-suite",
    "x-wopeval-agent",
    "openwop.eval.suite_ref",
)
PROTOBUF, JSON = "application/x-protobuf", "application/json"

__all__ = ["router"]


def _check_client(state: HostState, request: Request) -> None:
    mode = state.config.otlpTraces
    client = request.client.host if request.client is not None else ""
    try:
        loopback = ip_address(client).is_loopback
    except ValueError:
        loopback = client in ("localhost", "testclient")
    if mode == "off" or (mode == "loopback" and not loopback):
        raise HostError("not_found", "POST /v1/traces is not served to this client")


def _spans(request_body: bytes, content_type: str) -> list[OtlpSpan]:
    media = content_type.split(";")[0].strip().lower()
    if media not in (PROTOBUF, JSON):
        raise HostError("unsupported_media_type", f"Content-Type must be {JSON} or {PROTOBUF}")
    try:
        return read_otlp(request_body, protobuf=media == PROTOBUF)
    except (OtlpError, UnicodeDecodeError) as exc:
        raise invalid("$", str(exc)) from exc


def _suite(state: HostState, request: Request, spans: list[OtlpSpan]) -> AgentEvalSuite:
    ref = request.headers.get(SUITE_HEADER)
    if ref is None:
        ref = next((str(s.resource[SUITE_ATTR]) for s in spans if SUITE_ATTR in s.resource), None)
    if ref is None:
        raise invalid(SUITE_HEADER, f"name the suite: the header or resource {SUITE_ATTR}")
    return load_suite_ref(state, ref)


async def _store(
    state: HostState, tenant: str, suite: AgentEvalSuite, agent: str, events: list[RunEvent]
) -> str:
    now = utc_now()
    request = RunRequest(agentId=agent, tags=["otlp-import"])
    record = RunRecord(
        run_id=new_run_id(tenant), tenant=tenant, kind="eval", status="running",
        suite_id=suite.suiteId, suite_version=suite.version, agent_id=agent,
        suite_document=suite_to_document(suite), request=request.to_stored(), summary=None,
        error=None, created_at=now, updated_at=now, idempotency_key=None, scope_id=None,
    )  # fmt: skip
    store = state.store
    await store.create_run(record)
    # Each event gets its stored id now, so all are queued at once (in order, in the writer's
    # batched commits: one commit an event took 0.9 s for 512 spans on PostgreSQL).
    ids = {event.eventId: new_event_id() for event in events}
    queued = [
        store.emit_later(
            record.run_id,
            _typed(event),
            event_id=ids[event.eventId],
            causation_id=ids.get(event.causationId or ""),
            timestamp=event.timestamp,
        )
        for event in events
    ]
    for item in queued:  # settled in order: raises what the first failed write raised
        await item.committed()
    summary = await summarize(store, suite, record.run_id, request)  # the log, in pages
    await store.set_status(record.run_id, "completed", summary=summary.to_wire())
    return record.run_id


def _typed(event: RunEvent) -> Payload:
    typed = event.typed  # every converted event is one of the v2 payload models
    if typed is None:  # pragma: no cover - otlp_trials writes only typed payloads
        raise RuntimeError(f"converted event {event.eventId} has no payload model")
    return typed


def _convert(
    suite: AgentEvalSuite, spans: list[OtlpSpan], agent: str
) -> tuple[Imported, list[RunEvent]]:
    try:
        imported = import_spans(suite, spans, target_agent_id=agent)
        return imported, list(imported.events)
    except OtlpError as exc:
        raise invalid("$", str(exc)) from exc


def _nothing_graded(suite: AgentEvalSuite, imported: Imported) -> HostError:
    """``400`` naming what was rejected, when no trace is a trial of the suite: no run."""
    named = f"; they name {', '.join(repr(t) for t in imported.unknown_tasks[:5])}" * bool(
        imported.unknown_tasks
    )
    return invalid(
        TASK_ATTR,
        f"no trace is a trial of a task of {suite.suiteId} ({imported.spans} span(s) rejected, "
        f"{imported.unattributed} trace(s) naming no task{named}); nothing was stored",
        rejectedSpans=imported.spans,
    )


@router.post("/v1/traces")
async def post_traces(request: Request) -> Response:
    state = state_of(request)
    principal = state.keys.authenticate(request)
    _check_client(state, request)
    raw = await read_bounded(request, state.config.otlpMaxBodyBytes)
    media = request.headers.get("content-type", "")
    spans = await anyio.to_thread.run_sync(_spans, raw, media)
    suite = _suite(state, request, spans)
    agent = request.headers.get(AGENT_HEADER) or suite.targetAgentId or "imported.agent"
    # The pure conversion and grading, off the event loop: a large body would stall it.
    imported, events = await anyio.to_thread.run_sync(_convert, suite, spans, agent)
    if not imported.trials:
        raise _nothing_graded(suite, imported)
    run_id = await _store(state, principal.tenant, suite, agent, events)
    body: dict[str, Any] = {}
    if imported.rejected_spans:
        body["partialSuccess"] = {
            "rejectedSpans": str(imported.rejected_spans),
            "errorMessage": "spans of traces that name no task of the suite were not graded",
        }
    return JSONResponse(body, headers={"OpenWOP-Run-Id": run_id})
