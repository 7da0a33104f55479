"""Execute one trial: a child agent invocation with its own gateway and memory (RFC 0244 §B).

Each trial is isolated: a fresh :class:`ToolGateway` (fixture cursor reset), a deep copy of the
task input and of the ``memorySeed`` snapshot, and its own bracket in the log. Every event of the
trial carries ``causationId`` = its root ``agent.invocation-started`` event id.
"""

from __future__ import annotations

import copy
import json
import secrets
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio

from wopeval.engine.agent import AgentFn, ToolResult, TrialMemory, Usage, usage_payload
from wopeval.engine.budget import CostMeter
from wopeval.engine.gateway import ToolGateway
from wopeval.engine.judge import Judge
from wopeval.engine.registry import Registry
from wopeval.grading.trial import EvaluatorType, TrialGrade, grade_trial
from wopeval.grading.views import X_ERROR, TrialView, collect_trials
from wopeval.suite.models import Task
from wopeval.wire.events import (
    DECIDED,
    EVAL_SCORED,
    INVOCATION_COMPLETED,
    INVOCATION_STARTED,
    PROVIDER_USAGE,
    TOOL_CALLED,
    TOOL_RETURNED,
    X_FIXTURE,
    X_TASK_ID,
    X_TRIAL_INDEX,
    EvalScored,
    RunEvent,
)


class EventSink(Protocol):
    """Where a run's events go: :class:`wopeval.events.EventStore` satisfies it."""

    async def append(
        self,
        run_id: str,
        type: str,
        payload: Any,
        *,
        causation_id: str | None = None,
        node_id: str | None = None,
    ) -> RunEvent: ...


@dataclass(frozen=True)
class MeteredSink:
    """A sink that also adds every ``provider.usage`` cost it records to the run's meter."""

    inner: EventSink
    meter: CostMeter

    async def append(
        self,
        run_id: str,
        type: str,
        payload: Any,
        *,
        causation_id: str | None = None,
        node_id: str | None = None,
    ) -> RunEvent:
        if type == PROVIDER_USAGE and isinstance(payload, dict):
            self.meter.add(float(payload.get("costEstimateUsd", 0.0)))
        return await self.inner.append(
            run_id, type, payload, causation_id=causation_id, node_id=node_id
        )


@dataclass
class TrialEnv:
    """What every trial of one run shares."""

    sink: EventSink
    run_id: str
    registry: Registry
    agent_id: str
    agent: AgentFn
    meter: CostMeter
    pass_score: float
    timeout_s: float = 300.0
    ignore_fixtures: bool = False
    include_trial_index: bool = False
    judge: Judge | None = None


def _new_id(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(8)}"


def _jsonable(value: Any) -> Any:
    """Round-trip through JSON; raises TypeError/ValueError for non-JSON values."""
    return json.loads(json.dumps(value, allow_nan=False))


@dataclass
class _Trial:
    env: TrialEnv
    task: Task
    trial_index: int
    gateway: ToolGateway
    memory: TrialMemory
    events: list[RunEvent] = field(default_factory=list)
    root_event_id: str | None = None

    async def emit(self, type: str, payload: dict[str, Any]) -> RunEvent:
        event = await self.env.sink.append(
            self.env.run_id, type, payload, causation_id=self.root_event_id
        )
        self.events.append(event)
        return event


class TrialContext:
    """The :class:`~wopeval.engine.agent.AgentContext` one invocation sees."""

    def __init__(self, trial: _Trial, agent_id: str) -> None:
        self._trial = trial
        self._agent_id = agent_id

    @property
    def task_id(self) -> str:
        return self._trial.task.taskId

    @property
    def trial_index(self) -> int:
        return self._trial.trial_index

    @property
    def agent_id(self) -> str:
        return self._agent_id

    @property
    def memory(self) -> TrialMemory:
        return self._trial.memory

    async def call_tool(self, tool: str, args: Any = None) -> ToolResult:
        call_id = _new_id("call")
        base = {"agentId": self._agent_id, "toolName": tool, "callId": call_id}
        await self._trial.emit(TOOL_CALLED, {**base, "inputs": _jsonable(args)})
        served = await self._trial.gateway.call(tool, args)
        returned: dict[str, Any] = {**base, X_FIXTURE: served.fixture}
        if served.result.ok:
            returned.update(status="ok", outcome=_jsonable(served.result.value))
        else:
            error = {"code": served.result.error_code, "message": served.result.error_message}
            returned.update(status="error", error=error)
        if served.duration_ms is not None:
            returned["durationMs"] = served.duration_ms
        await self._trial.emit(TOOL_RETURNED, returned)
        return served.result

    async def report_usage(self, usage: Usage) -> None:
        if usage.cost_usd is not None:
            self._trial.env.meter.add(usage.cost_usd)
        await self._trial.emit(PROVIDER_USAGE, usage_payload(usage))

    async def delegate(self, agent_id: str, task_input: Any) -> Any:
        agent = self._trial.env.registry.resolve(agent_id)
        invocation_id = _new_id("inv")
        ids = {"invocationId": invocation_id, "agentId": agent_id}
        await self._trial.emit(INVOCATION_STARTED, {**ids, "source": "run-api"})
        outcome = "failed"
        try:
            output = await agent(copy.deepcopy(task_input), TrialContext(self._trial, agent_id))
            await self._trial.emit(DECIDED, {"agentId": agent_id, "decision": _jsonable(output)})
            outcome = "completed"
            return output
        finally:
            with anyio.CancelScope(shield=True):
                await self._trial.emit(INVOCATION_COMPLETED, {**ids, "outcome": outcome})


async def run_trial(env: TrialEnv, task: Task, trial_index: int) -> TrialGrade:
    """Run, record and grade one trial; returns its grade (also recorded as ``eval.scored``)."""
    fixtures = task.fixtures
    seed = copy.deepcopy(list(fixtures.memorySeed or ())) if fixtures else []
    trial = _Trial(
        env=env,
        task=task,
        trial_index=trial_index,
        gateway=ToolGateway(fixtures, env.registry.tools(), ignore_fixtures=env.ignore_fixtures),
        memory=TrialMemory(seed),
    )
    invocation_id = _new_id("inv")
    ids = {"invocationId": invocation_id, "agentId": env.agent_id}
    root = await trial.emit(
        INVOCATION_STARTED,
        {
            **ids,
            "source": "run-api",
            "memoryBound": bool(seed),
            X_TASK_ID: task.taskId,
            X_TRIAL_INDEX: trial_index,
        },
    )
    trial.root_event_id = root.eventId
    error_label = await _invoke(env, trial, ids)
    completed: dict[str, Any] = {**ids, "outcome": "completed" if error_label is None else "failed"}
    if error_label is not None:
        completed[X_ERROR] = error_label
    await trial.emit(INVOCATION_COMPLETED, completed)
    view = collect_trials(trial.events)[(task.taskId, trial_index)]
    grade = await _grade(env, task, view)
    await _record_score(env, trial, view, grade)
    return grade


async def _invoke(env: TrialEnv, trial: _Trial, ids: dict[str, str]) -> str | None:
    """Run the agent under the per-trial timeout; returns an error label or None."""
    try:
        with anyio.fail_after(env.timeout_s):
            output = await env.agent(
                copy.deepcopy(trial.task.input), TrialContext(trial, env.agent_id)
            )
    except TimeoutError:
        return "timeout"
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):
            cancelled = {**ids, "outcome": "failed", X_ERROR: "cancelled"}
            await trial.emit(INVOCATION_COMPLETED, cancelled)
        raise
    except Exception:
        return "agent-error"
    try:
        decision = _jsonable(output)
    except (TypeError, ValueError):
        return "output-not-json"
    await trial.emit(DECIDED, {"agentId": env.agent_id, "decision": decision})
    return None


async def _grade(env: TrialEnv, task: Task, view: TrialView) -> TrialGrade:
    """Judge (rubric) then grade. A judge or grader that raises fails only this trial."""
    judge_score: float | None = None
    try:
        if task.expected.kind == "rubric" and view.has_output and not view.failed_closed:
            if env.judge is None:
                raise RuntimeError("rubric task without a judge")
            sink = MeteredSink(env.sink, env.meter)  # judge spend counts against the ceilings
            judge_score = await env.judge.score(task, view.output, sink, env.run_id)
        return grade_trial(
            task,
            view,
            target_agent_id=env.agent_id,
            pass_score=env.pass_score,
            judge_score=judge_score,
            rubric_evaluator=_evaluator(env, task),
        )
    except Exception:
        return TrialGrade(0.0, False, True, "grader-error", _evaluator(env, task), None)


def _evaluator(env: TrialEnv, task: Task) -> EvaluatorType:
    if task.expected.kind != "rubric":
        return "deterministic"
    return env.judge.evaluator_type if env.judge is not None else "llm_judge"


async def _record_score(env: TrialEnv, trial: _Trial, view: TrialView, grade: TrialGrade) -> None:
    scored = EvalScored(
        taskId=trial.task.taskId,
        score=grade.score,
        passed=grade.passed,
        costUsd=view.cost_usd,
        latencyMs=view.latency_ms,
        trialIndex=trial.trial_index if env.include_trial_index else None,
        scoreLabel=grade.label,
        evaluatorType=grade.evaluator_type,
    )
    await trial.emit(EVAL_SCORED, scored.to_wire())


async def record_skipped(env: TrialEnv, task: Task, trial_index: int) -> None:
    """A trial not started because a cost ceiling was exceeded (RFC 0244 §B Cost)."""
    scored = EvalScored(
        taskId=task.taskId,
        score=0.0,
        passed=False,
        trialIndex=trial_index if env.include_trial_index else None,
        scoreLabel="skipped-budget",
        evaluatorType="deterministic",
    )
    await env.sink.append(env.run_id, EVAL_SCORED, scored.to_wire())
