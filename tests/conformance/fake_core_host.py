"""A small fake OpenWOP v2 host serving the workflow fixtures, for the core legs of the kit.

It is written from the fixture contract (``conformance/fixtures.md``) and the v2 prose, not
from wopeval's host: runs are plain dicts whose events appear when a request looks at them
(a delay run completes on the first read after ``delayMs``), so no task runs in the background.
``defects`` switch on one deliberate bug each (``DEFECTS``); each is caught by the core leg
that owns the broken rule.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

API_KEY = "core-test-key"
TENANT = "acme"
FIXTURES = (
    "conformance-noop",
    "conformance-identity",
    "conformance-delay",
    "conformance-failure",
    "conformance-cancellable",
    "conformance-idempotent",
)
KEY_GRAMMAR = re.compile(r"^[A-Za-z0-9._~-]{22,128}$")
MODES = ("updates", "debug")

DEFECTS = frozenset(
    {
        "identity-drops-payload",  # conformance-identity completes with outputs {}
        "delay-reports-pending",  # a conformance-delay run reads "pending" until it completes
        "failure-without-error",  # a failed run's snapshot carries no error
        "double-cancelled",  # a cancel appends run.cancelled twice
        "cancel-terminal-200",  # cancelling a completed run answers 200, not 409 run_terminal
        "replay-new-run",  # an idempotent replay creates a second run
        "poll-cursor-inclusive",  # afterSequence=N also returns event N
        "stream-mode-ignored",  # an unknown streamMode is streamed as updates
        "last-event-id-ignored",  # the stream always starts at sequence 0
        "etag-stale",  # the snapshot ETag never changes
    }
)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _error(status: int, code: str, message: str, **details: Any) -> JSONResponse:
    body: dict[str, Any] = {"error": code, "message": message}
    if details:
        body["details"] = details
    return JSONResponse(body, status_code=status)


@dataclass
class _Run:
    run_id: str
    workflow_id: str
    inputs: dict[str, Any]
    status: str = "running"
    events: list[dict[str, Any]] = field(default_factory=list)
    ends_at: float | None = None  # a delay in flight: when it completes

    def emit(self, type_: str, payload: dict[str, Any]) -> None:
        self.events.append({
            "eventId": f"evt-{self.run_id[-8:]}-{len(self.events):08d}",
            "runId": self.run_id,
            "type": type_,
            "payload": payload,
            "timestamp": _now(),
            "sequence": len(self.events),
            "schemaVersion": 1,
        })  # fmt: skip


@dataclass
class FakeCoreHost:
    """Configure, then serve :meth:`app` through ``httpx.ASGITransport``."""

    fixtures: tuple[str, ...] = FIXTURES
    defects: frozenset[str] = frozenset()
    runs: dict[str, _Run] = field(default_factory=dict)
    keys: dict[str, tuple[str, str]] = field(default_factory=dict)  # key → (body, runId)

    def __post_init__(self) -> None:
        assert not self.defects - DEFECTS, f"unknown defects {self.defects - DEFECTS}"

    # --- the runs ---------------------------------------------------------------------

    def _start(self, workflow_id: str, inputs: dict[str, Any]) -> _Run:
        run = _Run(f"{TENANT}/run{len(self.runs):020d}", workflow_id, inputs)
        self.runs[run.run_id] = run
        run.emit("run.started", {"workflowId": workflow_id})
        node = {"conformance-failure": "fail", "conformance-identity": "identity"}.get(
            workflow_id, "n1"
        )
        run.emit("node.started", {"nodeId": node, "typeId": "core.noop"})
        if workflow_id == "conformance-failure":
            error = {"code": "conformance_test_failure", "message": "Intentional failure"}
            run.emit("node.failed", {"nodeId": node, "error": error})
            run.emit("run.failed", {"error": error})
            run.status = "failed"
        elif workflow_id in ("conformance-delay", "conformance-cancellable"):
            delay = inputs.get("delayMs")
            run.ends_at = None if delay is None else time.monotonic() + delay / 1000
        else:
            outputs = {}
            if (
                workflow_id == "conformance-identity"
                and "identity-drops-payload" not in self.defects
            ):
                outputs = {"payload": inputs.get("payload")}
            self._complete(run, outputs)
        return run

    def _complete(self, run: _Run, outputs: dict[str, Any]) -> None:
        run.emit("node.completed", {"nodeId": "n1"})
        run.emit("run.completed", {"outputs": outputs})
        run.status = "completed"

    def _run(self, request: Request) -> _Run | None:
        projected = request.path_params["rid"]
        run_id = re.sub(r"~([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), projected)
        run = self.runs.get(run_id)
        due = run is not None and run.ends_at is not None and time.monotonic() >= run.ends_at
        if run is not None and run.status == "running" and due:
            self._complete(run, {})
        return run

    def _snapshot(self, run: _Run) -> dict[str, Any]:
        status = run.status
        in_flight = status == "running" and run.workflow_id == "conformance-delay"
        if in_flight and "delay-reports-pending" in self.defects:
            status = "pending"
        doc: dict[str, Any] = {"runId": run.run_id, "workflowId": run.workflow_id}
        doc.update(status=status, eventLogSchemaVersion=3)
        doc["owner"] = {"tenant": TENANT, "subject": {"subjectId": "tester"}}
        if run.inputs:
            doc["variables"] = dict(run.inputs)
        if run.status == "failed" and "failure-without-error" not in self.defects:
            doc["error"] = dict(run.events[-1]["payload"]["error"])
        return doc

    def _etag(self, run: _Run) -> str:
        seed = run.run_id if "etag-stale" in self.defects else f"{run.run_id}|{run.status}"
        seed += "" if "etag-stale" in self.defects else f"|{len(run.events)}"
        return '"' + hashlib.sha256(seed.encode()).hexdigest()[:16] + '"'

    # --- HTTP ---------------------------------------------------------------------------

    async def discovery(self, request: Request) -> JSONResponse:
        doc: dict[str, Any] = {"protocolVersions": ["2.0"], "preferredVersion": "2.0"}
        doc["implementation"] = {"name": "fake-core-host", "version": "0.0.1"}
        doc["fixtures"] = list(self.fixtures)
        return JSONResponse(doc)

    def _authorized(self, request: Request) -> bool:
        return request.headers.get("authorization") == f"Bearer {API_KEY}"

    async def create(self, request: Request) -> Response:
        if not self._authorized(request):
            return _error(401, "unauthenticated", "bad key")
        raw = await request.body()
        body = json.loads(raw)
        workflow_id = body.get("workflowId")
        if workflow_id not in self.fixtures:
            return _error(404, "not_found", "no such workflow", field="workflowId")
        key = request.headers.get("idempotency-key")
        canonical = json.dumps(body, sort_keys=True)
        headers: dict[str, str] = {}
        if key is not None:
            if not KEY_GRAMMAR.fullmatch(key):
                return _error(400, "idempotency_key_invalid", "bad key", field="Idempotency-Key")
            seen = self.keys.get(key)
            if seen is not None and seen[0] != canonical:
                return _error(409, "idempotency_key_mismatch", "other body")
            if seen is not None and "replay-new-run" not in self.defects:
                created = {"runId": seen[1], "status": "pending", "eventsUrl": "/x"}
                return JSONResponse(created, 201, {"OpenWOP-Idempotent-Replay": "true"})
            if seen is not None:
                headers["OpenWOP-Idempotent-Replay"] = "true"
        run = self._start(workflow_id, dict(body.get("inputs") or {}))
        if key is not None and key not in self.keys:
            self.keys[key] = (canonical, run.run_id)
        events_url = f"/runs/{run.run_id.replace('/', '~2F')}/events"
        return JSONResponse(
            {"runId": run.run_id, "status": "pending", "eventsUrl": events_url}, 201, headers
        )

    async def snapshot(self, request: Request) -> Response:
        run = self._run(request)
        if run is None or not self._authorized(request):
            return _error(404, "not_found", "no run with this id")
        etag = self._etag(run)
        if request.headers.get("if-none-match") == etag:
            return Response(status_code=304, headers={"ETag": etag})
        return JSONResponse(self._snapshot(run), headers={"ETag": etag})

    async def poll(self, request: Request) -> JSONResponse:
        run = self._run(request)
        if run is None or not self._authorized(request):
            return _error(404, "not_found", "no run with this id")
        after = int(request.query_params.get("afterSequence", -1))
        if "poll-cursor-inclusive" in self.defects and after >= 0:
            after -= 1
        page = [e for e in run.events if e["sequence"] > after]
        body = {"runId": run.run_id, "events": page, "lastSequence": len(run.events) - 1}
        terminal = run.status in ("completed", "failed", "cancelled")
        return JSONResponse({**body, "status": run.status, "isTerminal": terminal})

    async def events(self, request: Request) -> Response:
        run = self._run(request)
        if run is None or not self._authorized(request):
            return _error(404, "not_found", "no run with this id")
        mode = request.query_params.get("streamMode", "updates")
        if mode not in MODES and "stream-mode-ignored" not in self.defects:
            return _error(400, "unsupported_stream_mode", mode, supported=list(MODES))
        raw = request.headers.get("last-event-id")
        if raw is not None and not raw.isdigit():
            return _error(400, "validation_error", "Last-Event-ID", field="Last-Event-ID")
        cursor = -1 if raw is None or "last-event-id-ignored" in self.defects else int(raw)
        frames = "".join(
            f"id: {e['sequence']}\nevent: {e['type']}\ndata: {json.dumps(e)}\n\n"
            for e in run.events
            if e["sequence"] > cursor
        )
        return Response("retry: 1000\n\n" + frames, media_type="text/event-stream")

    async def cancel(self, request: Request) -> JSONResponse:
        run = self._run(request)
        if run is None or not self._authorized(request):
            return _error(404, "not_found", "no run with this id")
        if run.status in ("completed", "failed"):
            if "cancel-terminal-200" in self.defects:
                return JSONResponse({"runId": run.run_id, "status": run.status})
            return _error(409, "run_terminal", "already ended", runStatus=run.status)
        if run.status == "running":
            run.emit("run.cancelled", {})
            if "double-cancelled" in self.defects:
                run.emit("run.cancelled", {})
            run.status = "cancelled"
        return JSONResponse({"runId": run.run_id, "status": "cancelled"})

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/.well-known/openwop", self.discovery),
                Route("/runs", self.create, methods=["POST"]),
                Route("/runs/{rid}/events/poll", self.poll),
                Route("/runs/{rid}/events", self.events),
                Route("/runs/{rid}/cancel", self.cancel, methods=["POST"]),
                Route("/runs/{rid}", self.snapshot),
            ]
        )
