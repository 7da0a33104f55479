"""The typed run request: how a run was asked for, stored with it, read back by re-grades.

One model from the caller (CLI, library or host) to the store and back. Field names are the stored
JSON keys, so every run recorded before this model existed reads back unchanged.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from wopeval.wire.vocab import AGENT_ID_PATTERN, EvalMode

Executor = Literal["local", "ray"]
# A run group's name (``wopeval run --shard i/N --group NAME``): safe in URLs, file names, JSON.
GROUP_PATTERN = r"^[A-Za-z0-9._~:-]{1,128}$"
SHA256_HEX = r"^[0-9a-f]{64}$"


class ShardRequest(BaseModel):
    """This run is shard ``index`` (0-based) of ``count`` in run group ``group``
    (``wopeval run --shard index/count``; ``wopeval merge`` grades the group as one run)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    group: Annotated[str, Field(pattern=GROUP_PATTERN)]
    index: Annotated[int, Field(ge=0)]
    count: Annotated[int, Field(ge=1)]

    @model_validator(mode="after")
    def _index_in_range(self) -> ShardRequest:
        if self.index >= self.count:
            raise ValueError(f"shard index {self.index} is not below the count {self.count}")
        return self


class MergedShards(BaseModel):
    """This run merges the shards of ``group``: their run ids by shard index (``None`` for a
    shard missing from a ``--allow-partial`` merge)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    group: Annotated[str, Field(pattern=GROUP_PATTERN)]
    count: Annotated[int, Field(ge=1)]
    runs: list[str | None]
    partial: bool = False


class HostRequest(BaseModel):
    """What a host adds to a run it created: the body digest, ``scopeId``, ``configurable``.

    Present exactly on the runs a host created (a restarted host fails only those).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    bodySha256: str
    scopeId: str | None = None
    configurable: dict[str, Any] | None = None


class DefinitionDigests(BaseModel):
    """SHA-256 digests of the suite a run was given and of each task's definition (its input,
    expectation and fixtures) by ``taskId`` (wopeval.suite.digest): ``wopeval compare`` pairs a
    task only when its digest agrees. Hex strings only, no content."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    suite: Annotated[str, Field(pattern=SHA256_HEX)]
    tasks: dict[str, Annotated[str, Field(pattern=SHA256_HEX)]]


class TrialLimits(BaseModel):
    """What one trial may produce before it is failed (a hostile or broken agent cannot grow
    the store or the process without bound): tool calls, the agent's output and each tool
    result (bytes of their JSON text), and a failure reason's text (characters, clipped)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    maxToolCalls: Annotated[int, Field(ge=1)] = 10_000
    maxOutputBytes: Annotated[int, Field(ge=1)] = 1_000_000
    maxToolResultBytes: Annotated[int, Field(ge=1)] = 1_000_000
    maxReasonChars: Annotated[int, Field(ge=256)] = 16_384


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
    limits: TrialLimits = Field(default_factory=TrialLimits)
    host: HostRequest | None = None
    shard: ShardRequest | None = None
    merged: MergedShards | None = None
    digests: DefinitionDigests | None = None

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
