"""The typed run request: how a run was asked for, stored with it, read back by re-grades.

One model from the caller (CLI, library or host) to the store and back. Field names are the stored
JSON keys, so every run recorded before this model existed reads back unchanged.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

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
    """A run's request as stored (``runs.request``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    agentId: Annotated[str, Field(pattern=AGENT_ID_PATTERN)]
    concurrency: Annotated[int, Field(ge=1)] = 8
    trialTimeoutS: Annotated[float, Field(gt=0)] = 300.0
    hostMaxCostUsd: Annotated[float, Field(ge=0)] | None = None
    evalModes: list[EvalMode] | None = None
    baselineRunId: str | None = None
    regressionMethod: str = "paired-bootstrap"
    alpha: Annotated[float, Field(ge=0, le=1)] = 0.05
    regressionVerdict: bool = True
    owner: dict[str, Any] | None = None
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    executor: Executor = "local"
    host: HostRequest | None = None

    def to_stored(self) -> dict[str, Any]:
        """The stored JSON: defaults left out (as runs have always been stored)."""
        doc = self.model_dump(mode="json", exclude_defaults=True)
        doc["agentId"] = self.agentId
        doc.setdefault("concurrency", self.concurrency)
        doc.setdefault("trialTimeoutS", self.trialTimeoutS)
        if self.baselineRunId is not None:
            doc.setdefault("regressionMethod", self.regressionMethod)
            doc.setdefault("alpha", self.alpha)
        return doc
