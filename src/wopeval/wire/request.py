"""The typed run request: how a run was asked for, stored with it, read back by re-grades.

One model from the caller (CLI, library or host) to the store and back. Field names are the stored
JSON keys, so every run recorded before this model existed reads back unchanged.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from wopeval.wire.vocab import AGENT_ID_PATTERN, EvalMode

Executor = Literal["local", "ray"]


class HostRequest(BaseModel):
    """What a host adds to a run it created: the body digest, ``scopeId``, ``configurable``.

    Present exactly on the runs a host created (a restarted host fails only those).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    bodySha256: str
    scopeId: str | None = None
    configurable: dict[str, Any] | None = None


class RunRequest(BaseModel):
    """A run's request as stored (``runs.request``): an eval run's agent and settings, or a
    seeded workflow fixture's ``workflowId`` and ``inputs`` (host/workflows.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    agentId: Annotated[str, Field(pattern=AGENT_ID_PATTERN)] | None = None
    workflowId: str | None = None
    inputs: dict[str, Any] | None = None
    concurrency: Annotated[int, Field(ge=1)] = 8
    trialTimeoutS: Annotated[float, Field(gt=0)] = 300.0
    hostMaxCostUsd: Annotated[float, Field(ge=0)] | None = None
    evalModes: list[EvalMode] | None = None
    baselineRunId: str | None = None
    fixtureRuns: dict[str, str] | None = None  # RFC 0252: taskId → the run its fixtures came from
    regressionMethod: str = "paired-bootstrap"
    alpha: Annotated[float, Field(ge=0, le=1)] = 0.05
    regressionVerdict: bool = True
    owner: dict[str, Any] | None = None
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    executor: Executor = "local"
    host: HostRequest | None = None

    @model_validator(mode="after")
    def _agent_or_workflow(self) -> RunRequest:
        if self.agentId is None and self.workflowId is None:
            raise ValueError("a run request names its agentId (eval) or its workflowId")
        return self

    def to_stored(self) -> dict[str, Any]:
        """The stored JSON: defaults left out (as runs have always been stored)."""
        doc = self.model_dump(mode="json", exclude_defaults=True)
        if self.agentId is not None:  # an eval run's settings are stored in full
            doc.setdefault("concurrency", self.concurrency)
            doc.setdefault("trialTimeoutS", self.trialTimeoutS)
        if self.baselineRunId is not None:
            doc.setdefault("regressionMethod", self.regressionMethod)
            doc.setdefault("alpha", self.alpha)
        return doc
