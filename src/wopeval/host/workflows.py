"""The workflow fixtures of the OpenWOP fixture contract, seeded with ``conformanceSeed: true``.

The official conformance suite creates the runs of its core scenarios from a small set of
workflows every host seeds under agreed ids (the OpenWOP repository's ``conformance/fixtures.md``,
"Per-fixture contracts"). wopeval has no workflow engine; it serves exactly these fixtures, each
a short fixed chain of the contract's core node types:

* ``conformance-noop``: one ``core.noop`` node; no inputs; ``completed`` with ``outputs: {}``.
* ``conformance-identity``: one ``core.identity`` node; ``payload`` (object, required);
  ``completed`` with ``outputs.payload`` and snapshot ``variables.payload`` equal to the input.
* ``conformance-delay``: one ``core.delay`` node; ``delayMs`` (0–30000, required); ``running``
  for ``delayMs``, then ``completed``.
* ``conformance-failure``: one ``core.fail`` node; no inputs; ``failed`` with
  ``{code: "conformance_test_failure", message: "Intentional conformance failure"}``.
* ``conformance-cancellable``: ``core.delay`` then ``core.noop``; ``delayMs`` (1–60000,
  optional): ``cancelled`` once cancelled; without ``delayMs`` it holds until cancelled.
* ``conformance-idempotent``: one ``core.noop`` node; ``nonce`` (string, required, no effect).
* ``conformance-multi-node``: ``core.noop`` nodes ``a`` → ``b`` → ``c``; node events in order.

A fixture run is a run like an eval run: the same store, event log, snapshot, SSE and poll
routes, cancel path (:class:`~wopeval.engine.run.RunHandle`), idempotency and tenancy; it is
executed in the host's run manager task group (:meth:`RunManager.start_execution`). Its log is::

    run.started{workflowId, inputs?, transport, owner} → per node: node.started{nodeId, typeId}
      → node.completed{nodeId, outputs?, durationMs} | node.failed{nodeId, error}
    → run.completed{outputs, durationMs} | run.failed{error, failedNodeId} | run.cancelled{}

Inputs are closed: a member the fixture does not declare, or a declared one of the wrong type or
range, is ``400 validation_error`` naming ``inputs.<name>``. Fixture runs hold no eval slot: they
have their own limiter (:data:`FIXTURE_CONCURRENCY` at once; more wait, ``pending``).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

from wopeval.engine.run import RunHandle
from wopeval.errors import RunError, describe
from wopeval.events.ids import new_run_id, utc_now
from wopeval.events.store import EventStore, RunRecord
from wopeval.host.auth import Principal
from wopeval.host.errors import invalid
from wopeval.host.manager import HOST_REQUEST_KEY, RunManager
from wopeval.wire.events import RUN_CANCELLED, RUN_COMPLETED, RUN_FAILED, RUN_STARTED
from wopeval.wire.request import HostRequest

NODE_STARTED = "node.started"
NODE_COMPLETED = "node.completed"
NODE_FAILED = "node.failed"
WORKFLOW_KIND = "workflow"
FIXTURE_VERSION = "1.0.0"
FIXTURE_CONCURRENCY = 64
# ``core.fail``: the contract's error (fixtures.md "NodeModule registration").
FAILURE_ERROR = {"code": "conformance_test_failure", "message": "Intentional conformance failure"}

NodeType = Literal["core.noop", "core.identity", "core.delay", "core.fail"]
InputKind = Literal["object", "string", "integer"]


@dataclass(frozen=True)
class InputSpec:
    """One declared workflow variable: its JSON type, and a range for integers."""

    kind: InputKind
    required: bool = False
    low: int | None = None
    high: int | None = None

    def check(self, name: str, value: Any) -> None:
        field_name = f"inputs.{name}"
        if self.kind == "object" and not isinstance(value, dict):
            raise invalid(field_name, "must be an object")
        if self.kind == "string" and not isinstance(value, str):
            raise invalid(field_name, "must be a string")
        if self.kind == "integer":
            if type(value) is not int:  # bool is an int in Python; 1.0 is not an integer here
                raise invalid(field_name, "must be an integer")
            if (self.low is not None and value < self.low) or (
                self.high is not None and value > self.high
            ):
                raise invalid(field_name, f"{value} is outside {self.low}..{self.high}")


@dataclass(frozen=True)
class Node:
    node_id: str
    type_id: NodeType


@dataclass(frozen=True)
class WorkflowFixture:
    """A seeded workflow: its id, its chain of nodes and its declared inputs."""

    workflow_id: str
    nodes: tuple[Node, ...]
    inputs: Mapping[str, InputSpec] = field(default_factory=dict)

    def check_inputs(self, inputs: dict[str, Any]) -> None:
        """Closed inputs: every member declared, of its type; every required one present."""
        for name, value in inputs.items():
            spec = self.inputs.get(name)
            if spec is None:
                declared = ", ".join(self.inputs) or "none"
                raise invalid(
                    f"inputs.{name}",
                    f"{self.workflow_id} declares no such input (declared: {declared})",
                )
            spec.check(name, value)
        for name, spec in self.inputs.items():
            if spec.required and name not in inputs:
                raise invalid(f"inputs.{name}", f"required by {self.workflow_id}")


_DELAY = InputSpec("integer", required=True, low=0, high=30_000)
_CANCELLABLE_DELAY = InputSpec("integer", low=1, high=60_000)

FIXTURES: tuple[WorkflowFixture, ...] = (
    WorkflowFixture("conformance-noop", (Node("noop", "core.noop"),)),
    WorkflowFixture(
        "conformance-identity",
        (Node("identity", "core.identity"),),
        {"payload": InputSpec("object", required=True)},
    ),
    WorkflowFixture("conformance-delay", (Node("delay", "core.delay"),), {"delayMs": _DELAY}),
    WorkflowFixture("conformance-failure", (Node("fail", "core.fail"),)),
    WorkflowFixture(
        "conformance-cancellable",
        (Node("wait", "core.delay"), Node("done", "core.noop")),
        {"delayMs": _CANCELLABLE_DELAY},
    ),
    WorkflowFixture(
        "conformance-idempotent",
        (Node("noop", "core.noop"),),
        {"nonce": InputSpec("string", required=True)},
    ),
    WorkflowFixture(
        "conformance-multi-node",
        (Node("a", "core.noop"), Node("b", "core.noop"), Node("c", "core.noop")),
    ),
)


class NodeFailure(RunError):
    """A node ended ``failed``; ``error`` is its ``_errorObject``."""

    def __init__(self, error: dict[str, str]) -> None:
        super().__init__(error["message"])
        self.error = error


async def _run_node(node: Node, inputs: dict[str, Any]) -> dict[str, Any]:
    """One node's work; returns its outputs (merged into the run's ``outputs``)."""
    if node.type_id == "core.identity":
        return {"payload": inputs["payload"]}
    if node.type_id == "core.delay":
        delay_ms = inputs.get("delayMs")
        if delay_ms is None:
            await anyio.sleep_forever()  # conformance-cancellable: holds until cancelled
        else:
            await anyio.sleep(delay_ms / 1000)
        return {}
    if node.type_id == "core.fail":
        raise NodeFailure(dict(FAILURE_ERROR))
    return {}


def _elapsed_ms(started: float) -> int:
    return max(0, round((time.monotonic() - started) * 1000))


@dataclass(frozen=True)
class FixtureRun:
    """What a created fixture run executes with."""

    fixture: WorkflowFixture
    inputs: dict[str, Any]
    owner: dict[str, Any]
    tags: list[str]
    metadata: dict[str, Any]

    def started_payload(self) -> dict[str, Any]:
        payload: dict[str, Any] = {"workflowId": self.fixture.workflow_id, "transport": "rest"}
        if self.inputs:
            payload["inputs"] = self.inputs
        payload["owner"] = self.owner
        if self.tags:
            payload["tags"] = self.tags
        if self.metadata:
            payload["metadata"] = self.metadata
        return payload


async def _end(store: EventStore, run_id: str, status: str, type_: str, payload: Any) -> None:
    """The terminal event, then the terminal status (shielded: one terminal event, always)."""
    with anyio.CancelScope(shield=True):
        error = payload.get("error") if status == "failed" else None
        await store.end_run(run_id, type_, payload, error=error)


async def execute_fixture(store: EventStore, handle: RunHandle, run: FixtureRun) -> None:
    """Execute a created (``pending``) fixture run to a terminal state.

    Mirrors :func:`wopeval.engine.run.execute_run`: cancelled through ``handle`` (``run.cancelled``
    last), failed on an error (``run.failed``), left for the owner to mark when it interrupts.
    """
    run_id = handle.run_id
    started = time.monotonic()
    await store.set_status(run_id, "running")
    finished = False
    try:
        with handle.scope:
            await store.append(run_id, RUN_STARTED, run.started_payload())
            outputs: dict[str, Any] = {}
            for node in run.fixture.nodes:
                at = time.monotonic()
                begun = {"nodeId": node.node_id, "typeId": node.type_id}
                await store.append(run_id, NODE_STARTED, begun, node_id=node.node_id)
                try:
                    produced = await _run_node(node, run.inputs)
                except NodeFailure as failure:
                    with anyio.CancelScope(shield=True):
                        failed = {"nodeId": node.node_id, "error": failure.error, "attempts": 1}
                        await store.append(run_id, NODE_FAILED, failed, node_id=node.node_id)
                        ended = {
                            "error": failure.error,
                            "failedNodeId": node.node_id,
                            "durationMs": _elapsed_ms(started),
                        }
                        await _end(store, run_id, "failed", RUN_FAILED, ended)
                    finished = True
                    return
                done: dict[str, Any] = {"nodeId": node.node_id, "durationMs": _elapsed_ms(at)}
                if produced:
                    done["outputs"] = produced
                await store.append(run_id, NODE_COMPLETED, done, node_id=node.node_id)
                outputs.update(produced)
            completed = {"outputs": outputs, "durationMs": _elapsed_ms(started)}
            await _end(store, run_id, "completed", RUN_COMPLETED, completed)
            finished = True
    except Exception as exc:
        error = {"code": "internal_error", "message": describe(exc)}
        await _end(store, run_id, "failed", RUN_FAILED, {"error": error})
        finished = True
        raise
    finally:
        if not finished and not handle.interrupted:
            cancelled = {"durationMs": _elapsed_ms(started)}
            await _end(store, run_id, "cancelled", RUN_CANCELLED, cancelled)


class WorkflowCatalog:
    """The seeded fixtures (none unless ``conformanceSeed`` is on) and their shared limiter."""

    def __init__(self, fixtures: tuple[WorkflowFixture, ...] = ()) -> None:
        self._fixtures = {fixture.workflow_id: fixture for fixture in fixtures}
        self.limiter = anyio.CapacityLimiter(FIXTURE_CONCURRENCY)

    @classmethod
    def seeded(cls, seed: bool) -> WorkflowCatalog:
        return cls(FIXTURES if seed else ())

    def ids(self) -> list[str]:
        """The seeded workflow ids (discovery ``fixtures``), sorted."""
        return sorted(self._fixtures)

    def __contains__(self, workflow_id: object) -> bool:
        return workflow_id in self._fixtures

    def get(self, workflow_id: str) -> WorkflowFixture:
        return self._fixtures[workflow_id]


def fixture_run(fixture: WorkflowFixture, body: dict[str, Any], principal: Principal) -> FixtureRun:
    """The run a checked create body asks for; refuses inputs the fixture does not take."""
    inputs = dict(body.get("inputs") or {})
    fixture.check_inputs(inputs)
    return FixtureRun(
        fixture=fixture,
        inputs=inputs,
        owner=principal.owner(),
        tags=list(body.get("tags") or []),
        metadata=dict(body.get("metadata") or {}),
    )


async def create_fixture_record(
    store: EventStore,
    run: FixtureRun,
    tenant: str,
    host_request: HostRequest,
    idempotency_key: str | None,
) -> RunRecord:
    """Record the ``pending`` run of a fixture (``kind: "workflow"``); returns its record.

    ``suite_id`` holds the workflowId (what the snapshot reports), ``agent_id`` is empty, and the
    request keeps the inputs (the snapshot's ``inputs``/``variables``), the owner and the host's
    request data under :data:`HOST_REQUEST_KEY` (idempotent replay, dedup, interruption).
    Raises :class:`~wopeval.events.store.DuplicateRunError` on a reused idempotency key.
    """
    request: dict[str, Any] = {"workflowId": run.fixture.workflow_id, "owner": run.owner}
    if run.inputs:
        request["inputs"] = run.inputs
    if run.tags:
        request["tags"] = run.tags
    if run.metadata:
        request["metadata"] = run.metadata
    request[HOST_REQUEST_KEY] = host_request.model_dump(exclude_none=True)
    now = utc_now()
    record = RunRecord(
        run_id=new_run_id(tenant),
        tenant=tenant,
        kind=WORKFLOW_KIND,
        status="pending",
        suite_id=run.fixture.workflow_id,
        suite_version=FIXTURE_VERSION,
        agent_id="",
        suite_document={"workflowId": run.fixture.workflow_id, "version": FIXTURE_VERSION},
        request=request,
        summary=None,
        error=None,
        created_at=now,
        updated_at=now,
        idempotency_key=idempotency_key,
        scope_id=host_request.scopeId,
    )
    await store.create_run(record)
    return record


def start_fixture(
    manager: RunManager, catalog: WorkflowCatalog, run_id: str, run: FixtureRun
) -> None:
    """Schedule a created fixture run in the run manager, under the fixtures' own limiter."""
    execute = functools.partial(execute_fixture, manager.store, run=run)
    manager.start_execution(run_id, execute, catalog.limiter)


def snapshot_members(record: RunRecord) -> dict[str, Any]:
    """A fixture run's extra RunSnapshot members: the inputs it was created with, and the
    workflow variables (seeded from the inputs; no fixture node writes a variable)."""
    if record.kind != WORKFLOW_KIND:
        return {}
    inputs = record.request.get("inputs")
    if not isinstance(inputs, dict) or not inputs:
        return {}
    return {"inputs": inputs, "variables": dict(inputs)}
