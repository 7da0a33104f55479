"""The one vocabulary of the wire: id patterns, enums, event type names and ``x-wopeval-*`` keys.

The ground floor of wopeval: this module (like all of :mod:`wopeval.wire`) imports no other
wopeval package. Suites, events, the store, grading and the host all take their patterns and
names from here, so a pattern is written once.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

# --- identifiers (v2 ids.schema.json, identity.md §5) ------------------------------------------
TENANT_PATTERN = r"^[A-Za-z0-9._~-]{1,128}$"
# A run id as this store mints it: ``<tenant>/<opaque>``.
RUN_ID_PATTERN = r"^[A-Za-z0-9._~-]{1,128}/[A-Za-z0-9._~-]{16,128}$"
# A run id as the wire admits it (a tenant may carry ``:``), e.g. a summary's baselineRunId.
WIRE_RUN_ID_PATTERN = r"^[A-Za-z0-9._~:-]{1,128}/[A-Za-z0-9._~-]{16,128}$"
EVENT_ID_PATTERN = r"^[A-Za-z0-9._~-]{16,128}$"
SUITE_ID_PATTERN = r"^[a-z0-9.-]+\.evals\.[a-z0-9-]+$"
SEMVER_PATTERN = r"^[0-9]+\.[0-9]+\.[0-9]+$"
AGENT_ID_PATTERN = r"^[A-Za-z0-9._~:-]{1,128}$"
TASK_ID_PATTERN = r"^[a-z0-9][a-z0-9-]*$"
WORKFLOW_ID_PATTERN = r"^[A-Za-z0-9._~:-]{1,128}$"
SCOPE_ID_PATTERN = r"^[A-Za-z0-9._~:-]{1,128}$"
# idempotency.md §Layer 1 (v2): 22–128 characters of [A-Za-z0-9._~-], at least 128 bits.
IDEMPOTENCY_KEY_PATTERN = r"^[A-Za-z0-9._~-]{22,128}$"
SCORE_LABEL_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"
METHOD_PATTERN = r"^[a-z0-9][a-z0-9-]{0,63}$"
# Payload keys every v2 payload def (but providerUsage) passes through opaquely.
VENDOR_KEY_PATTERN = r"^(openwop-|x-|vendor\.)"
VENDOR_PREFIXES = ("openwop-", "x-", "vendor.")

SuiteId = Annotated[str, Field(pattern=SUITE_ID_PATTERN)]
SemVer = Annotated[str, Field(pattern=SEMVER_PATTERN)]
AgentId = Annotated[str, Field(pattern=AGENT_ID_PATTERN)]
TaskId = Annotated[str, Field(pattern=TASK_ID_PATTERN)]
UnitFloat = Annotated[float, Field(ge=0, le=1)]
NonNegInt = Annotated[int, Field(ge=0)]
NonNegFloat = Annotated[float, Field(ge=0)]

# --- enums -------------------------------------------------------------------------------------
EvalMode = Literal["golden", "rubric", "adversarial", "regression", "live-shadow"]
ModelClass = Literal["reasoning", "writing", "coding", "research", "classification", "general"]
TrajectoryMode = Literal["exact", "in-order", "any-order", "subset"]
EvaluatorType = Literal["deterministic", "llm_judge", "human"]
Verdict = Literal["improved", "regressed", "unchanged", "inconclusive"]
RunStatus = Literal["pending", "running", "completed", "failed", "cancelling", "cancelled"]
# How a tool call was served, on ``agent.tool-returned`` (``x-wopeval-fixture``).
FixtureOutcome = Literal["served", "miss-failed", "miss-live", "live"]

# --- event types (run-event.schema.json enum; kebab case in v2) --------------------------------
RUN_STARTED = "run.started"
RUN_COMPLETED = "run.completed"
RUN_FAILED = "run.failed"
RUN_CANCELLED = "run.cancelled"
EVAL_STARTED = "eval.started"
EVAL_SCORED = "eval.scored"
EVAL_COMPLETED = "eval.completed"
INVOCATION_STARTED = "agent.invocation-started"
INVOCATION_COMPLETED = "agent.invocation-completed"
TOOL_CALLED = "agent.tool-called"
TOOL_RETURNED = "agent.tool-returned"
DECIDED = "agent.decided"
PROVIDER_USAGE = "provider.usage"
# wopeval's own (vendor ``<org>.<name>``) event: why a trial did not pass. Content: tenant-only.
TRIAL_FAILED = "wopeval.trial-failed"
# … and where an adaptive task's sequential test stopped (``x-wopeval-adaptive``). Content-free.
ADAPTIVE_STOPPED = "wopeval.adaptive-stopped"
# … and a trial's final world state (a task's ``x-wopeval-world``). Content: tenant-only.
WORLD_STATE = "wopeval.world-state"
# wopeval's own: one message to a simulated user and its answer. Content: tenant-only.
USER_TURN = "wopeval.user-turn"
TERMINAL_TYPES = frozenset({RUN_COMPLETED, RUN_FAILED, RUN_CANCELLED})

# --- wopeval's vendor payload keys -------------------------------------------------------------
X_TASK_ID = "x-wopeval-taskId"
X_TRIAL_INDEX = "x-wopeval-trialIndex"
X_TRACE_INCOMPLETE = "x-wopeval-traceIncomplete"
X_FIXTURE = "x-wopeval-fixture"
X_JUDGE = "x-wopeval-judge"
X_ERROR = "x-wopeval-error"  # a failed invocation's short label (timeout, agent-error, …)
X_FAILURE = "x-wopeval-failure"  # … and what happened: exception type, message, traceback
# On an attempt superseded by a retry (``--retry-infrastructure``): its attempt and cause.
X_RETRY = "x-wopeval-retry"
# On a trial replayed from a model cassette: the latency (ms) it was recorded with, which its
# view reports instead of the replay's own bracket time (docs/cassettes.md).
X_REPLAYED_LATENCY = "x-wopeval-replayedLatencyMs"
# Which rule of a task's world served a call (its index among the tool's rules).
X_WORLD_RULE = "x-wopeval-worldRule"

# --- error codes -------------------------------------------------------------------------------
FIXTURE_MISS_ERROR_CODE = "wopeval.fixture_miss"
# The failure's exceptionType of a forked trial that left its recorded prefix (wopeval fork).
FORK_DIVERGED = "ForkDiverged"
INTERRUPTED_ERROR_CODE = "wopeval.interrupted"
INTERNAL_ERROR_CODE = "internal_error"


class Closed(BaseModel):
    """Base for every wire object: unknown keys are errors, field names are wire names."""

    model_config = ConfigDict(extra="forbid", frozen=True)


# The OTLP export's mark on a trial attempt that a resumed run superseded (it ran again):
# ``import-otlp`` reads no trial from it, as grading ignores that attempt in the log.
OTEL_SUPERSEDED = "openwop.eval.superseded"
# What the OTLP export adds up on a trial's agent span beside ``gen_ai.usage.*`` (which has no
# cost): the trial's model calls and their estimated cost; ``import-otlp`` reads them back.
OTEL_MODEL_CALLS = "openwop.usage.model_calls"
OTEL_COST_USD = "openwop.usage.cost_usd"
# How a tool call was served (a fixture outcome, the fixture's index) and a failed
# invocation's label (timeout, agent-error, …): content-free, on the tool and agent spans, so
# ``import-otlp`` grades fixture misses and failure kinds as the stored log does.
OTEL_TOOL_FIXTURE = "openwop.tool.fixture"
OTEL_TOOL_FIXTURE_INDEX = "openwop.tool.fixture_index"
OTEL_AGENT_ERROR = "openwop.agent.error_label"
# Which rule of the task's world served a tool call (``x-wopeval-worldRule``), on its span.
OTEL_TOOL_WORLD_RULE = "openwop.tool.world_rule"
# A message to a simulated user (``wopeval.user-turn``): a span event on the trial's agent span,
# content-free (its number, how it was answered, the reply entry's index, and how many of the
# trial's tool calls came before it, which places it among them exactly on import).
OTEL_USER_TURN_EVENT = "wopeval.user_turn"
OTEL_USER_TURN = "openwop.user.turn"
OTEL_USER_KIND = "openwop.user.kind"
OTEL_USER_REPLY_INDEX = "openwop.user.reply_index"
OTEL_USER_CALLS_BEFORE = "openwop.user.calls_before"
# Why a simulated user failed (an ``error`` turn): its cause, one of a closed set of labels
# (``model-error``, ``format``, ``max-turns``, ``model-miss``, ``resume-diverged``), never
# the detail.
OTEL_USER_CAUSE = "openwop.user.cause"
# Where a trial's final world state was recorded (``wopeval.world-state``): a span event that
# says a state was recorded, never what it is (the state is content).
OTEL_WORLD_STATE_EVENT = "wopeval.world_state"
# The labels a failed invocation carries (``x-wopeval-error``), the only ones read back.
# ``infrastructure``: a component the agent depends on failed (its model server unreachable or
# failing, an MCP server or agent process that died), so the trial says nothing of the agent.
INFRASTRUCTURE_LABEL = "infrastructure"
# Which component's failure an infrastructure retry was for (``x-wopeval-retry``'s ``cause``).
RetryCause = Literal["model-server", "mcp-server", "agent-process", "component-timeout", "other"]
# ``model-miss``: a replayed run's model request had no recording (a trial failed closed).
MODEL_MISS_LABEL = "model-miss"
ERROR_LABELS = (
    "agent-error",
    "timeout",
    "cancelled",
    "output-not-json",
    INFRASTRUCTURE_LABEL,
    MODEL_MISS_LABEL,
)
