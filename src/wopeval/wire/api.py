"""The host's HTTP bodies as models: what ``POST /runs`` accepts and what each route answers.

They mirror the v2 wire (``shared/spec/openwop-wire.md`` §3–§4: runs.md §Create, the closed
RunSnapshot, the poll page, the error envelope). The host builds its answers through them and
the served OpenAPI document (``/openapi.json``) is generated from them, so the document describes
the API as it really is.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from wopeval.wire.vocab import (
    AGENT_ID_PATTERN,
    SCOPE_ID_PATTERN,
    WORKFLOW_ID_PATTERN,
    EvalMode,
    RunStatus,
)


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def to_wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


class CreateRunBody(_Closed):
    """``POST /runs`` (runs.md §Create), closed. This host answers ``mode: "eval"`` runs and,
    with conformance seeding on, the seeded ``conformance-*`` workflow fixtures."""

    workflowId: Annotated[str, Field(pattern=WORKFLOW_ID_PATTERN)] | None = None
    inputs: dict[str, Any] | None = None
    residency: dict[str, Any] | None = Field(None, description="refused: not offered")
    tenantId: str | None = Field(None, description="must be the API key's tenant")
    scopeId: Annotated[str, Field(pattern=SCOPE_ID_PATTERN)] | None = None
    callbackUrl: str | None = Field(None, description="refused: not offered")
    mode: Literal["eval"] | None = None
    evalSuiteRef: str | None = Field(None, description="required with mode eval")
    agentId: Annotated[str, Field(pattern=AGENT_ID_PATTERN)] | None = None
    configurable: dict[str, Any] | None = None
    tags: Annotated[list[Annotated[str, Field(max_length=256)]], Field(max_length=100)] | None = (
        None
    )
    metadata: dict[str, Any] | None = None
    evalModes: list[EvalMode] | None = None
    baselineRunId: str | None = None
    fixtureRuns: dict[str, str] | None = Field(None, description="recorded fixtures (RFC 0252)")


class CreatedRun(_Closed):
    """``201 Created``: where to read the run and its events."""

    runId: str
    status: RunStatus
    eventsUrl: str
    statusUrl: str


class SnapshotError(_Closed):
    code: str
    message: str


class RunSnapshot(_Closed):
    """The closed v2 RunSnapshot (run-snapshot.schema.json), the members this host fills."""

    runId: str
    workflowId: str
    status: RunStatus
    owner: dict[str, Any]
    eventLogSchemaVersion: Annotated[int, Field(ge=2)]
    engineVersion: int | None = None
    startedAt: str | None = None
    completedAt: str | None = None
    error: SnapshotError | None = None
    configurable: dict[str, Any] | None = None
    tags: list[str] | None = None
    metadata: dict[str, Any] | None = None
    inputs: dict[str, Any] | None = None
    variables: dict[str, Any] | None = None


class PollPage(_Closed):
    """``GET /runs/{runId}/events/poll``: ``lastSequence`` is -1 for an empty log."""

    runId: str
    events: list[dict[str, Any]]
    lastSequence: Annotated[int, Field(ge=-1)]
    status: RunStatus
    isTerminal: bool


class CancelAnswer(_Closed):
    runId: str
    status: RunStatus


class ErrorEnvelope(_Closed):
    """The closed v2 error envelope ``{error, message, details?}``."""

    error: str
    message: str
    details: dict[str, Any] | None = None
