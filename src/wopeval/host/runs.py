"""Run routes: create, read (RunSnapshot), cancel, and the eval summary.

Tenancy: every run id is ``<tenant>/<opaque>``. A run of another tenant is answered exactly like
a missing one (``404 not_found``, one fixed body, no ETag): no existence oracle.
"""

from __future__ import annotations

import hashlib
import re
from contextlib import suppress
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from wopeval.events.store import DuplicateRunError, RunRecord, RunTerminalError
from wopeval.host.auth import Principal
from wopeval.host.create import body_digest, check_body, host_request, parse_body, plan_create
from wopeval.host.discovery import etag_matches, not_modified
from wopeval.host.errors import HostError, invalid, run_not_found
from wopeval.host.ids import project_id, run_id_from_path, tenant_of
from wopeval.host.jsonbody import check_media_type
from wopeval.host.limits import admit_run
from wopeval.host.state import HostState, state_of
from wopeval.host.workflows import (
    create_fixture_record,
    fixture_run,
    snapshot_members,
    start_fixture,
)
from wopeval.wire.api import CancelAnswer, CreatedRun, CreateRunBody, ErrorEnvelope, RunSnapshot
from wopeval.wire.events import EVENT_LOG_SCHEMA_VERSION
from wopeval.wire.summary import EvalSummary
from wopeval.wire.vocab import IDEMPOTENCY_KEY_PATTERN

router = APIRouter()

ACTIVE_STATUSES = frozenset({"pending", "running", "cancelling"})
REPLAY_HEADER = "OpenWOP-Idempotent-Replay"
_IDEMPOTENCY_KEY_RE = re.compile(IDEMPOTENCY_KEY_PATTERN)
CANCEL_WAIT_S = 5.0
# The owner of a run created by the CLI (no API key): a local workload.
LEGACY_SUBJECT = {
    "issuer": "urn:wopeval:cli",
    "subjectId": "wopeval-cli",
    "lane": "workload",
    "kind": "workload",
}


async def load_run(state: HostState, principal: Principal, segment: str) -> RunRecord:
    """The caller's run named by a path segment; ``400`` naming ``runId`` for a malformed
    segment (:mod:`wopeval.host.ids`), else the one ``404 not_found``."""
    run_id = run_id_from_path(segment)
    if run_id is None:
        raise invalid("runId", "not the path projection of a run id (<tenant>~2F<id>)")
    if tenant_of(run_id) != principal.tenant:
        raise run_not_found()
    record = await state.store.get_run(run_id)
    if record is None or record.tenant != principal.tenant:
        raise run_not_found()
    return record


def base_url(state: HostState, request: Request) -> str:
    return (state.config.publicBaseUrl or str(request.base_url)).rstrip("/")


def snapshot(record: RunRecord) -> dict[str, Any]:
    """The closed v2 RunSnapshot (run-snapshot.schema.json) of a stored run."""
    request = record.run_request
    owner = request.owner
    if owner is None:  # a run created by the CLI
        owner = {"tenant": record.tenant, "subject": {**LEGACY_SUBJECT, "tenant": record.tenant}}
    doc: dict[str, Any] = {
        "runId": record.run_id,
        "workflowId": record.suite_id,
        "status": record.status,
        "owner": owner,
        "eventLogSchemaVersion": EVENT_LOG_SCHEMA_VERSION,
        "engineVersion": 1,
    }
    if record.status != "pending":
        doc["startedAt"] = record.created_at
    if record.terminal:
        doc["completedAt"] = record.updated_at
    if record.status == "failed" and record.error:
        doc["error"] = {
            "code": str(record.error.get("code") or "internal_error"),
            "message": str(record.error.get("message") or "the run failed"),
        }
    for key, value in (
        ("configurable", request.host.configurable if request.host is not None else None),
        ("tags", request.tags),
        ("metadata", request.metadata),
    ):
        if value:
            doc[key] = value
    return RunSnapshot.model_validate(doc | snapshot_members(record)).to_wire()


def created_body(state: HostState, request: Request, run_id: str) -> dict[str, Any]:
    url = f"{base_url(state, request)}/runs/{project_id(run_id)}"
    created = CreatedRun(runId=run_id, status="pending", eventsUrl=f"{url}/events", statusUrl=url)
    return created.to_wire()


def _idempotency_key(request: Request) -> str | None:
    key = request.headers.get("idempotency-key")
    if key is not None and not _IDEMPOTENCY_KEY_RE.fullmatch(key):
        raise HostError(
            "idempotency_key_invalid",
            "Idempotency-Key must be 22–128 characters of A-Z a-z 0-9 . _ ~ -",
            {"field": "Idempotency-Key"},
        )
    return key


def _dedup(request: Request) -> bool:
    value = request.headers.get("openwop-dedup")
    if value is None:
        return False
    if value.strip().lower() != "enforce":
        raise invalid("OpenWOP-Dedup", 'the only value is "enforce"')
    return True


async def read_bounded(request: Request, limit: int) -> bytes:
    """The request body, refused (``413 payload_too_large``) once it passes ``limit`` bytes:
    by its declared length before reading, else as it streams in."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HostError("payload_too_large", f"the body exceeds {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HostError("payload_too_large", f"the body exceeds {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def _read_body(request: Request, limit: int) -> bytes:
    raw = await read_bounded(request, limit)
    if raw:
        check_media_type(request.headers.get("content-type"))
    return raw


def _replay(state: HostState, request: Request, found: RunRecord, digest: str) -> Response:
    host = found.run_request.host
    if host is None or host.bodySha256 != digest:
        raise HostError(
            "idempotency_key_mismatch",
            "this Idempotency-Key was used with a different body",
            {"field": "Idempotency-Key"},
        )
    body = created_body(state, request, found.run_id)
    headers = {REPLAY_HEADER: "true", "Location": body["statusUrl"]}
    return JSONResponse(body, status_code=201, headers=headers)


async def _check_active_scope(state: HostState, principal: Principal, scope_id: Any) -> None:
    """``OpenWOP-Dedup: enforce``: one active run per ``(tenant, scopeId)`` (an indexed look-up)."""
    if not isinstance(scope_id, str):
        return  # dedup is keyed on (tenant, scopeId): without a scopeId nothing can collide
    record = await state.store.find_active_in_scope(principal.tenant, scope_id, ACTIVE_STATUSES)
    if record is not None:
        raise HostError(
            "run_already_active",
            "an active run already holds this scopeId",
            {"runId": record.run_id},
            headers={"Retry-After": "5"},
        )


async def _create(
    state: HostState,
    request: Request,
    principal: Principal,
    body: dict[str, Any],
    key: str | None,
    workflow_id: str | None,
) -> Response:
    if key is not None:
        found = await state.store.find_by_idempotency_key(principal.tenant, key)
        if found is not None:
            return _replay(state, request, found, body_digest(body))
    if workflow_id is not None:  # a seeded workflow fixture (host/workflows.py)
        fixture = fixture_run(state.workflows.get(workflow_id), body, principal)
    else:
        plan = await plan_create(state, principal, body)
    if _dedup(request):
        await _check_active_scope(state, principal, body.get("scopeId"))
    try:
        if workflow_id is not None:
            record = await create_fixture_record(
                state.store, fixture, principal.tenant, host_request(body), key
            )
        else:
            record = await state.service.create(plan, idempotency_key=key)
    except DuplicateRunError:  # another process took the key between lookup and insert
        found = await state.store.find_by_idempotency_key(principal.tenant, key or "")
        if key is None or found is None:
            raise
        return _replay(state, request, found, body_digest(body))
    if workflow_id is not None:
        start_fixture(state.manager, state.workflows, record.run_id, fixture)
    else:
        state.manager.start(record.run_id, plan)
    created = created_body(state, request, record.run_id)
    return JSONResponse(created, status_code=201, headers={"Location": created["statusUrl"]})


ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorEnvelope, "description": text}
    for code, text in (
        (400, "validation_error (details.field names the field)"),
        (401, "unauthenticated"),
        (404, "not_found (a run of another tenant answers exactly like a missing one)"),
        (409, "a state conflict"),
        (422, "capability_not_provided (mode: eval on a host without agents.evalSuite)"),
        (429, "rate_limited (Retry-After)"),
    )
}


@router.post(
    "/runs",
    status_code=201,
    responses={201: {"model": CreatedRun, "description": "the run was created"}, **ERRORS},
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": CreateRunBody.model_json_schema()}},
        }
    },
)
async def create_run(request: Request) -> Response:
    state = state_of(request)
    principal = state.keys.authenticate(request)
    admit_run(state, principal.tenant)
    key = _idempotency_key(request)
    _dedup(request)
    body = parse_body(await _read_body(request, state.config.maxBodyBytes))
    workflow_id = check_body(body, principal, state.config, state.workflows)
    if key is None and "OpenWOP-Dedup" not in request.headers:
        return await _create(state, request, principal, body, None, workflow_id)
    async with state.create_lock:
        return await _create(state, request, principal, body, key, workflow_id)


@router.get("/runs")
async def list_runs(request: Request) -> Response:
    """``runList`` is not advertised: answered as an unknown path (the SDK maps 404 to None)."""
    state_of(request).keys.authenticate(request)
    raise HostError("not_found", "run listing (runList) is not offered by this host")


def snapshot_etag(record: RunRecord, last_sequence: int) -> str:
    seed = f"{record.run_id}|{record.status}|{last_sequence}|{record.updated_at}"
    return '"' + hashlib.sha256(seed.encode()).hexdigest()[:32] + '"'


@router.get(
    "/runs/{run_path:path}/eval-summary",
    responses={200: {"model": EvalSummary, "description": "the eval summary"}, **ERRORS},
)
async def eval_summary(request: Request, run_path: str) -> Response:
    state = state_of(request)
    principal = state.keys.authenticate(request)
    record = await load_run(state, principal, run_path)
    if not state.config.evalSuite.enabled or record.kind != "eval":
        raise HostError("not_found", "no eval summary: agents.evalSuite is not advertised")
    if record.status == "completed" and record.summary is not None:
        return JSONResponse(record.summary)
    if record.terminal:
        message = f"the run ended {record.status} and has no summary"
    else:
        message = f"the run is {record.status}; its summary exists once it completes"
    raise HostError("run_state_conflict", message, {"runStatus": record.status})


async def _cancel(request: Request, run_path: str) -> Response:
    state = state_of(request)
    principal = state.keys.authenticate(request)
    record = await load_run(state, principal, run_path)
    body = parse_body(await _read_body(request, state.config.maxBodyBytes) or b"{}")
    for key, value in body.items():
        if key != "reason":
            raise invalid(key, "unknown member of the cancel body (allowed: reason)")
        if not isinstance(value, str):
            raise invalid("reason", "must be a string")
    if record.status == "cancelled":
        return JSONResponse(CancelAnswer(runId=record.run_id, status="cancelled").to_wire())
    if record.terminal:
        raise _terminal(record)
    if not state.manager.owns(record.run_id):
        raise HostError(
            "run_state_conflict",
            "the run is executing in another host process; cancel it there",
            {"runStatus": record.status},
        )
    with suppress(RunTerminalError):  # it ended meanwhile: reported below
        await state.store.set_status(record.run_id, "cancelling")
    state.manager.cancel(record.run_id)
    await state.manager.wait(record.run_id, CANCEL_WAIT_S)
    after = await state.store.get_run(record.run_id)
    assert after is not None
    if after.status == "cancelled" or not after.terminal:
        status = "cancelled" if after.status == "cancelled" else "cancelling"
        return JSONResponse(CancelAnswer(runId=after.run_id, status=status).to_wire())
    raise _terminal(after)


def _terminal(record: RunRecord) -> HostError:
    return HostError(
        "run_terminal", f"the run already ended {record.status}", {"runStatus": record.status}
    )


@router.post("/runs/{run_path:path}/cancel", responses={200: {"model": CancelAnswer}, **ERRORS})
async def cancel_run(request: Request, run_path: str) -> Response:
    return await _cancel(request, run_path)


@router.post("/runs/{run_path:path}:cancel")
async def cancel_run_colon(request: Request, run_path: str) -> Response:
    return await _cancel(request, run_path)


@router.get("/runs/{run_path:path}", responses={200: {"model": RunSnapshot}, **ERRORS})
async def get_run(request: Request, run_path: str) -> Response:
    state = state_of(request)
    principal = state.keys.authenticate(request)
    record = await load_run(state, principal, run_path)
    etag = snapshot_etag(record, await state.store.last_sequence(record.run_id))
    if etag_matches(request.headers.get("if-none-match"), etag):
        return not_modified(etag)
    return JSONResponse(snapshot(record), headers={"ETag": etag, "Cache-Control": "no-cache"})
