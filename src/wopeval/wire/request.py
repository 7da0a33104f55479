"""The typed run request: how a run was asked for, stored with it, read back by re-grades.

One model from the caller (CLI, library or host) to the store and back. Field names are the stored
JSON keys, so every run recorded before this model existed reads back unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from wopeval.wire.vocab import AGENT_ID_PATTERN, EvalMode

Executor = Literal["local", "ray"]
# A run group's name (``wopeval run --shard i/N --group NAME``): safe in URLs, file names, JSON.
GROUP_PATTERN = r"^[A-Za-z0-9._~:-]{1,128}$"
SHA256_HEX = r"^[0-9a-f]{64}$"
# The gate that decides a run's pass/fail in every output (wopeval.grading.gate names them).
DEFAULT_GATE = "suite"
GATE_PATTERN = r"^[a-z][a-z0-9-]{0,63}$"


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


class ForkLink(BaseModel):
    """This run forks trial ``trialIndex`` of task ``taskId`` of run ``runId`` at call ``at``
    (``wopeval fork``): its first ``at`` tool calls were served from that run's log.
    ``agentTrialIndex``, present when it differs from ``trialIndex`` (a fork of a fork), is the
    trial index the agent was told: the first run's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    runId: Annotated[str, Field(min_length=1)]
    taskId: Annotated[str, Field(min_length=1)]
    trialIndex: Annotated[int, Field(ge=0)]
    at: Annotated[int, Field(ge=0)]
    agentTrialIndex: Annotated[int | None, Field(ge=0)] = None

    @property
    def agent_trial_index(self) -> int:
        """The trial index the forked run's agent was told."""
        return self.trialIndex if self.agentTrialIndex is None else self.agentTrialIndex


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


class RetryPolicy(BaseModel):
    """Retry a trial that failed for ``infrastructure`` (and for nothing else): at most
    ``maxRetries`` more attempts of one trial, ``budget`` retries in the whole run (None: no
    run-wide bound), the n-th retry after ``backoffS * 2**(n-1)`` seconds (at most
    ``maxBackoffS``), half of it jittered (wopeval.engine.retry)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    maxRetries: Annotated[int, Field(ge=1)] = 1
    budget: Annotated[int, Field(ge=0)] | None = None
    backoffS: Annotated[float, Field(ge=0, le=3600)] = 1.0
    maxBackoffS: Annotated[float, Field(ge=0, le=3600)] = 30.0


def _as_list(value: Sequence[Any] | None) -> list[Any] | None:
    return None if value is None else list(value)


def _dict_or_none(value: Mapping[str, str] | None) -> dict[str, str] | None:
    return dict(value) if value else None  # no fixture runs is stored as none


# A caller may pass any sequence (a tuple) or mapping; the model holds a list or dict.
_Modes = Annotated[Sequence[EvalMode] | None, AfterValidator(_as_list)]
_Tags = Annotated[Sequence[str], AfterValidator(_as_list)]
_FixtureRuns = Annotated[Mapping[str, str] | None, AfterValidator(_dict_or_none)]


class RunSettingsBase(BaseModel):
    """How to run, beyond the suite: the one declaration of each run setting.

    A setting is a field here: its Python name, its stored JSON key (``alias=`` where the two
    differ), its default and its bounds. :class:`RunRequest` stores it (defaults left out), and
    ``wopeval.engine.run.RunSettings`` (this model, with the engine's checks) is what callers
    build; both read and write it by this declaration, so a new setting is added here alone.
    """

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
    )

    concurrency: Annotated[int, Field(ge=1)] = 8
    trial_timeout_s: Annotated[float, Field(gt=0, alias="trialTimeoutS")] = 300.0
    host_max_cost_usd: Annotated[float | None, Field(ge=0, alias="hostMaxCostUsd")] = None
    modes: Annotated[_Modes, Field(alias="evalModes")] = None
    baseline_run_id: Annotated[str | None, Field(alias="baselineRunId")] = None
    # RFC 0252: taskId → the run its fixtures came from (echoed on eval.started).
    fixture_runs: Annotated[_FixtureRuns, Field(alias="fixtureRuns")] = None
    regression_method: Annotated[str, Field(alias="regressionMethod")] = "paired-bootstrap"
    alpha: Annotated[float, Field(ge=0, le=1)] = 0.05
    regression_verdict: Annotated[bool, Field(alias="regressionVerdict")] = True
    owner: dict[str, Any] | None = None
    tags: _Tags = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    executor: Executor = "local"  # "ray": trials run in Ray workers (engine.distributed)
    gate: Annotated[str, Field(pattern=GATE_PATTERN)] = DEFAULT_GATE  # wopeval.grading.gate
    limits: TrialLimits = Field(default_factory=TrialLimits)  # per trial: calls, sizes
    # The confidence level of the intervals a lower-bound gate reads (wopeval.grading.intervals)
    ci_level: Annotated[float, Field(ge=0.5, le=0.999, alias="ciLevel")] = 0.95
    # None: a trial that failed for infrastructure stays failed (wopeval.engine.retry)
    retry_infrastructure: Annotated[RetryPolicy | None, Field(alias="retryInfrastructure")] = None

    def settings(self) -> dict[str, Any]:
        """Every setting by its Python name (what a settings model is built from)."""
        return {name: getattr(self, name) for name in RunSettingsBase.model_fields}

    def to_request(self, agent_id: str) -> RunRequest:
        """The typed request stored with the run (re-grades read it back)."""
        return RunRequest(agentId=agent_id, **self.settings())


class _Subject(BaseModel):
    """What a run runs: an eval run's agent, or a seeded workflow fixture."""

    agentId: Annotated[str, Field(pattern=AGENT_ID_PATTERN)] | None = None
    workflowId: str | None = None
    inputs: dict[str, Any] | None = None


class RunRequest(RunSettingsBase, _Subject):
    """A run's request as stored (``runs.request``): an eval run's agent and settings, or a
    seeded workflow fixture's ``workflowId`` and ``inputs`` (host/workflows.py). The JSON keys
    are in the order runs have always been stored in: the subject, the settings, the rest."""

    host: HostRequest | None = None
    shard: ShardRequest | None = None
    merged: MergedShards | None = None
    digests: DefinitionDigests | None = None
    forked_from: Annotated[ForkLink | None, Field(alias="x-wopeval-forkedFrom")] = None

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
            doc.setdefault("trialTimeoutS", self.trial_timeout_s)
        if self.baseline_run_id is not None:
            doc.setdefault("regressionMethod", self.regression_method)
            doc.setdefault("alpha", self.alpha)
        return doc
