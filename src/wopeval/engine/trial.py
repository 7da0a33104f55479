"""Execute one trial: a child agent invocation with its own gateway and memory (RFC 0244 §B).

Each trial is isolated: a fresh :class:`ToolGateway` (fixture cursor reset), a deep copy of the
task input and of the ``memorySeed`` snapshot, and its own bracket in the log. Every event of the
trial carries ``causationId`` = its root ``agent.invocation-started`` event id. Every event is a
typed payload (:mod:`wopeval.wire.events`).

A trial that does not pass gets its reason recorded (``wopeval.trial-failed``, after its
``eval.scored``): what the agent raised (type, message, traceback), the timeout, the fixture miss,
the trajectory diff, the output mismatch, the judge's failure (:mod:`wopeval.grading.reasons`).

Each trial is bounded by the run's :class:`~wopeval.wire.request.TrialLimits`: past
``maxToolCalls`` a call is refused (not recorded), a tool result over ``maxToolResultBytes`` is
replaced by a tool error, and an output over ``maxOutputBytes`` is not recorded; each fails the
trial as an ``agent-error`` whose reason names the limit. A reason is clipped to
``maxReasonChars``. So the store and the process stay bounded whatever an agent returns.
"""

from __future__ import annotations

import copy
import logging
import traceback
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import anyio

from wopeval.engine.agent import AgentFn, ToolResult, ToolSpec, TrialMemory, Usage, usage_payload
from wopeval.engine.budget import CostMeter
from wopeval.engine.copies import JsonCopies
from wopeval.engine.deadlines import TrialDeadlines
from wopeval.engine.gateway import TOOL_RESULT_CAP, ToolGateway
from wopeval.engine.judge import Judge
from wopeval.engine.limits import clip_reason, jsonable, over_limit, sized_json
from wopeval.engine.outage import (
    INFRASTRUCTURE_LABEL,
    Waits,
    infrastructure_cause,
    timed_out_waiting,
)
from wopeval.engine.registry import Registry
from wopeval.engine.sink import EventSink, MeteredSink
from wopeval.engine.toolspec import fixture_tool_names, merge_specs
from wopeval.errors import describe, message_of, storable
from wopeval.events.appends import Chain
from wopeval.events.ids import new_event_id
from wopeval.grading.reasons import Verdict, explain
from wopeval.grading.trial import EvaluatorType, TrialGrade, grade_trial
from wopeval.grading.views import TrialView, collect_trials
from wopeval.suite.models import Task
from wopeval.wire.events import (
    Decided,
    ErrorObject,
    EvalScored,
    Failure,
    InvocationCompleted,
    InvocationStarted,
    Payload,
    RunEvent,
    ToolCalled,
    ToolReturned,
)
from wopeval.wire.request import TrialLimits

__all__ = ["EventSink", "MeteredSink", "TrialEnv", "record_skipped", "run_trial", "settle"]

log = logging.getLogger("wopeval.engine")
_TRACEBACK_LIMIT = 8000
# Trials returned whose last events may still be queued; past this (or past twice the run's
# concurrency, when that is more: a whole wave of trials finishing together), a new trial waits.
SETTLING_LIMIT = 64


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
    limits: TrialLimits = field(default_factory=TrialLimits)
    # Each trial's copies of the task inputs and fixture responses (their JSON texts kept)
    copies: JsonCopies = field(default_factory=JsonCopies, repr=False, compare=False)
    # Trials returned with their score (and reason) queued, not yet known committed: see settle
    settling: deque[_Trial] = field(default_factory=deque, repr=False, compare=False)
    settling_limit: int = SETTLING_LIMIT
    # Each trial's timeout (a watcher beside the run's workers cancels those past it)
    deadlines: TrialDeadlines = field(init=False, repr=False, compare=False)
    # The sink's ``emit_later`` (the store's), looked up once: None for a sink without one
    emit_later: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.deadlines = TrialDeadlines(self.timeout_s)
        self.emit_later = getattr(self.sink, "emit_later", None)


async def settle(env: TrialEnv, *, wait: bool = True) -> None:
    """Wait until every trial that returned has its last events (score, reason) committed;
    raises what a write raised. A trial's score is queued, not awaited, so its worker goes on
    to the next trial while it commits (with that trial's first events: fewer, fuller commits).
    Each trial settles, without waiting, those committed already, and waits only when more than
    ``env.settling_limit`` are not (memory stays bounded); the run waits for the rest."""
    settling = env.settling
    while settling and (wait or settling[0].committed):  # they commit in the order they came
        await settling.popleft().settled()  # committed: no wait (raises what its write raised)
    while len(settling) > env.settling_limit:  # writes lag behind: wait, so memory stays bounded
        await settling.popleft().settled()


def _new_id(prefix: str) -> str:
    """A call or invocation id, unique in the process (a ULID: no system call per id)."""
    return f"{prefix}-{new_event_id()}"


@dataclass
class _Trial:
    env: TrialEnv
    task: Task
    trial_index: int
    gateway: ToolGateway
    memory: TrialMemory
    events: list[RunEvent] = field(default_factory=list)
    root_event_id: str | None = None
    _queued: list[Any] = field(default_factory=list)  # QueuedEvent, not yet in ``events``
    # Its queued events stand or fall in order: its score is never written without them.
    _chain: Chain = field(default_factory=Chain)
    # The first trial limit it went past (a call, a tool result): it fails the trial.
    over_limit: Failure | None = None

    def went_over(self, failure: Failure) -> None:
        if self.over_limit is None:
            self.over_limit = failure

    async def emit(self, payload: Payload) -> RunEvent:
        """Write ``payload`` through the sink's ``emit`` once everything recorded before it is
        committed; returns it committed."""
        await self.flush()
        event = await self.env.sink.emit(self.env.run_id, payload, causation_id=self.root_event_id)
        self.events.append(event)
        return event

    async def record(self, payload: Payload) -> str:
        """Record ``payload``; returns its event id. A sink with ``emit_later`` (the store)
        queues it, committed in order with the trial's others (a chain: none is written once
        one before it was not), waited for at the next :meth:`flush`; others write it now. A
        trial flushes before anything a resume must see durable first: a live tool call, a
        usage report; its score follows its events in the chain."""
        later = self.env.emit_later
        if later is None:
            sink = self.env.sink
            event = await sink.emit(self.env.run_id, payload, causation_id=self.root_event_id)
            self.events.append(event)
            return event.eventId
        queued = later(self.env.run_id, payload, causation_id=self.root_event_id, chain=self._chain)
        self._queued.append(queued)
        return str(queued.event_id)

    def known_events(self) -> list[RunEvent]:
        """What the trial recorded, committed or still queued (in order), to grade it by."""
        return self.events + [queued.known() for queued in self._queued]

    @property
    def committed(self) -> bool:
        """Every event it recorded is committed (or failed to be): :meth:`flush` won't wait.
        Appends settle in the order they were queued, so its last one tells."""
        return not self._queued or self._queued[-1].settled

    async def flush(self) -> None:
        """Wait until every recorded event is committed; they join ``events`` in order. The
        first that failed raises (it and those after it stay queued: a later flush raises
        again)."""
        queued = self._queued
        if not queued:
            return
        await queued[-1].wait()  # those before it are settled no later
        for index, item in enumerate(queued):
            try:
                event = item.result()
            except BaseException:
                del queued[:index]
                raise
            self.events.append(event)
        queued.clear()

    async def settled(self) -> None:
        """:meth:`flush` at the trial's end: its events are not kept (nothing reads them)."""
        queued = self._queued
        if not queued:
            return
        last = queued[-1]
        if not last.settled:
            await last.wait()  # those before it are settled no later
        for item in queued:
            if item.error is not None:
                raise item.error
        queued.clear()

    @property
    def ids(self) -> str:
        return f"run {self.env.run_id} task {self.task.taskId} trial {self.trial_index}"

    @property
    def log(self) -> logging.LoggerAdapter[logging.Logger]:
        """The engine's logger with the run, task and trial ids on every record."""
        extra = {
            "runId": self.env.run_id,
            "taskId": self.task.taskId,
            "trialIndex": self.trial_index,
        }
        return logging.LoggerAdapter(log, extra)


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

    @property
    def budget_exceeded(self) -> bool:
        return self._trial.env.meter.exceeded

    def tools(self) -> list[ToolSpec]:
        known = self._trial.env.registry.tool_specs.values()
        return merge_specs(known, fixture_tool_names([self._trial.task]))

    async def call_tool(self, tool: str, args: Any = None) -> ToolResult:
        trial = self._trial
        gateway = trial.gateway
        if not await gateway.admit():  # over the cap: refused, not recorded
            refusal = gateway.refusal()
            trial.went_over(Failure(exceptionType="ToolCallCap", message=refusal.error_message))
            return refusal
        call_id = _new_id("call")
        base = {"agentId": self._agent_id, "toolName": tool, "callId": call_id}
        await trial.record(ToolCalled.build(**base, inputs=jsonable(args)))
        served = await gateway.call(tool, args)  # flushes before a live call
        result = served.result
        outcome = None
        if result.ok:
            cap = trial.env.limits.maxToolResultBytes
            outcome, size = sized_json(result.value, cap)
            if size > cap:
                message = over_limit("the tool's result", size, "maxToolResultBytes", cap)
                trial.went_over(Failure(exceptionType="ToolResultCap", message=message))
                result = ToolResult(ok=False, error_code=TOOL_RESULT_CAP, error_message=message)
        error = None
        if not result.ok:
            error = ErrorObject(
                code=result.error_code or "error", message=result.error_message or ""
            )
        returned = ToolReturned.build(
            **base,
            status="ok" if result.ok else "error",
            outcome=outcome if result.ok else None,
            error=error,
            durationMs=served.duration_ms,
            fixture=served.fixture,
            fixture_index=served.index,
        )
        await trial.record(returned)
        return result

    async def refuse_call(self, tool: str, inputs: Any, code: str, message: str) -> ToolResult:
        call_id = _new_id("call")
        base = {"agentId": self._agent_id, "toolName": tool, "callId": call_id}
        await self._trial.record(ToolCalled.build(**base, inputs=jsonable(inputs)))
        error = ErrorObject(code=code, message=message)
        await self._trial.record(ToolReturned.build(**base, status="error", error=error))
        return ToolResult(ok=False, error_code=code, error_message=message)

    async def report_usage(self, usage: Usage) -> None:
        if usage.cost_usd is not None:
            self._trial.env.meter.add(usage.cost_usd)
        await self._trial.emit(usage_payload(usage))

    async def delegate(self, agent_id: str, task_input: Any) -> Any:
        agent = self._trial.env.registry.resolve(agent_id)
        ids = {"invocationId": _new_id("inv"), "agentId": agent_id}
        await self._trial.record(InvocationStarted.build(**ids, source="run-api"))
        completed = False
        try:
            output = await agent(copy.deepcopy(task_input), TrialContext(self._trial, agent_id))
            cap = self._trial.env.limits.maxOutputBytes
            decision, size = sized_json(output, cap)
            if size > cap:  # not recorded; the delegate's caller still gets it
                message = over_limit(f"{agent_id}'s output", size, "maxOutputBytes", cap)
                self._trial.went_over(Failure(exceptionType="OutputCap", message=message))
            await self._trial.record(Decided.build(agentId=agent_id, decision=decision))
            completed = True
            return output
        finally:
            with anyio.CancelScope(shield=True):
                outcome = "completed" if completed else "failed"
                await self._trial.record(InvocationCompleted.build(**ids, outcome=outcome))


async def run_trial(env: TrialEnv, task: Task, trial_index: int) -> TrialGrade:
    """Run, record and grade one trial; returns its grade (also recorded as ``eval.scored``,
    committed by the next :func:`settle`)."""
    await settle(env, wait=False)
    fixtures = task.fixtures
    seeded = fixtures.memorySeed if fixtures else None
    seed = copy.deepcopy(list(seeded)) if seeded else []
    gateway = ToolGateway(
        fixtures,
        env.registry.tools(),
        ignore_fixtures=env.ignore_fixtures,
        copies=env.copies,
        max_calls=env.limits.maxToolCalls,
    )
    trial = _Trial(env=env, task=task, trial_index=trial_index, gateway=gateway,
                   memory=TrialMemory(seed))  # fmt: skip
    gateway.before_live = trial.flush  # a resume must see the call before the live tool does
    ids = {"invocationId": _new_id("inv"), "agentId": env.agent_id}
    trial.root_event_id = await trial.record(
        InvocationStarted.build(
            **ids,
            source="run-api",
            memoryBound=bool(seed),
            task_id=task.taskId,
            trial_index=trial_index,
        )
    )
    try:
        label, failure = await _invoke(env, trial, ids)
        if trial.over_limit is not None:  # the more decisive cause, whatever happened next
            label, failure = "agent-error", trial.over_limit
    finally:
        gateway.before_live = None  # trial → gateway → trial.flush: no cycle left for the GC
    await trial.record(
        InvocationCompleted.build(
            **ids,
            outcome="completed" if label is None else "failed",
            error_label=label,
            failure=failure,
        )
    )
    # Graded on what it recorded, committed or not: its score is chained after those events.
    view = collect_trials(trial.known_events())[(task.taskId, trial_index)]
    grade, grader_error = await _grade(env, task, view, trial)
    await _record_score(env, trial, view, grade)
    await _record_reason(env, trial, view, grade, grader_error)
    env.settling.append(trial)
    return grade


async def _invoke(
    env: TrialEnv, trial: _Trial, ids: dict[str, str]
) -> tuple[str | None, Failure | None]:
    """Run the agent under the per-trial timeout; returns an error label and what happened."""
    try:
        with env.deadlines.limit() as limit, Waits() as waits:
            output = await env.agent(
                env.copies.copy(trial.task.input), TrialContext(trial, env.agent_id)
            )
        if limit.overdue:  # it blocked the loop past its deadline: never cancelled, timed out
            raise TimeoutError
    except TimeoutError:
        trial.log.info("%s: timed out after %ss", trial.ids, env.timeout_s)
        if (waited := timed_out_waiting(waits, env.timeout_s)) is not None:
            return INFRASTRUCTURE_LABEL, waited
        return "timeout", Failure(message=f"no answer within the trial timeout of {env.timeout_s}s")
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):
            cancelled = InvocationCompleted(
                **ids,
                outcome="failed",
                error_label="cancelled",
                failure=Failure(message="the run was cancelled while this trial was running"),
            )
            await trial.emit(cancelled)
        raise
    except Exception as exc:
        # The exception's type only: its message is the tenant's content (invariant 3), kept
        # in the run's log (the trial's reason), never in the process's log (a host's is the
        # operator's).
        if (infra := infrastructure_cause(exc)) is not None:  # the run says it once, at its end
            trial.log.info("%s: failed for infrastructure (%s)", trial.ids, type(infra).__name__)
            return INFRASTRUCTURE_LABEL, _failure_of(infra)
        trial.log.warning("%s: the agent raised %s", trial.ids, type(exc).__name__)
        return "agent-error", _failure_of(exc)
    cap = env.limits.maxOutputBytes
    try:
        decision, size = sized_json(output, cap)
    except (TypeError, ValueError) as exc:
        message = f"the agent returned a {type(output).__name__}, not JSON: {exc}"
        trial.log.info("%s: %s", trial.ids, message)
        return "output-not-json", Failure(exceptionType=type(exc).__name__, message=message)
    if size > cap:
        message = over_limit("the agent's output", size, "maxOutputBytes", cap)
        trial.log.info("%s: its output is over maxOutputBytes", trial.ids)
        return "agent-error", Failure(exceptionType="OutputCap", message=message)
    await trial.record(Decided.build(agentId=env.agent_id, decision=decision))
    return None, None


def _failure_of(exc: BaseException) -> Failure:
    text = "".join(traceback.format_exception(exc))
    return Failure(
        exceptionType=type(exc).__qualname__,
        message=message_of(exc)[:2000],
        traceback=storable(text[-_TRACEBACK_LIMIT:]),
    )


async def _grade(
    env: TrialEnv, task: Task, view: TrialView, trial: _Trial
) -> tuple[TrialGrade, str | None]:
    """Judge (rubric) then grade. A judge or grader that raises fails only this trial."""
    judge_score: float | None = None
    try:
        if task.expected.kind == "rubric" and view.has_output and not view.failed_closed:
            if env.judge is None:
                raise RuntimeError("rubric task without a judge")
            sink = MeteredSink(env.sink, env.meter)  # judge spend counts against the ceilings
            if getattr(env.judge, "wants_trajectory", False):  # a judge that reads the path too
                calls = [{"tool": c.tool, "args": c.inputs} for c in view.calls
                         if c.agent_id == env.agent_id]  # fmt: skip
                scorer: Any = env.judge
                judge_score = await scorer.score(
                    task, view.output, sink, env.run_id, trajectory=calls
                )
            else:
                judge_score = await env.judge.score(task, view.output, sink, env.run_id)
        grade = grade_trial(
            task,
            view,
            target_agent_id=env.agent_id,
            pass_score=env.pass_score,
            judge_score=judge_score,
            rubric_evaluator=_evaluator(env, task),
        )
        return grade, None
    except Exception as exc:
        if infrastructure_cause(exc) is not None:  # the judge's server: said once, at the end
            trial.log.info("%s: grading failed for infrastructure", trial.ids)
            label = INFRASTRUCTURE_LABEL
        else:
            trial.log.warning("%s: grading failed: %s", trial.ids, describe(exc), exc_info=exc)
            label = "grader-error"
        failed = TrialGrade(0.0, False, True, label, _evaluator(env, task), None)
        return failed, describe(exc)


def _evaluator(env: TrialEnv, task: Task) -> EvaluatorType:
    if task.expected.kind != "rubric":
        return "deterministic"
    return env.judge.evaluator_type if env.judge is not None else "llm_judge"


async def _record_score(env: TrialEnv, trial: _Trial, view: TrialView, grade: TrialGrade) -> None:
    scored = EvalScored.build(
        taskId=trial.task.taskId,
        score=grade.score,
        passed=grade.passed,
        costUsd=view.cost_usd,
        latencyMs=view.latency_ms,
        trialIndex=trial.trial_index if env.include_trial_index else None,
        scoreLabel=grade.label,
        evaluatorType=grade.evaluator_type,
    )
    await trial.record(scored)


async def _record_reason(
    env: TrialEnv, trial: _Trial, view: TrialView, grade: TrialGrade, grader_error: str | None
) -> None:
    """``wopeval.trial-failed`` for a trial that did not pass (tenant content, not ``eval.*``)."""
    if grade.passed:
        return  # explain() gives no reason for a trial that passed
    verdict = Verdict(
        passed=grade.passed,
        score=grade.score,
        label=grade.label,
        trajectory_matched=grade.trajectory.matched if grade.trajectory is not None else None,
        pass_score=env.pass_score,
    )
    reason = explain(
        trial.task, view, verdict, target_agent_id=env.agent_id, grader_error=grader_error
    )
    if reason is not None:
        trial.log.info("%s: failed (%s)", trial.ids, reason.kind)  # its message: content
        await trial.record(clip_reason(reason, env.limits.maxReasonChars))


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
    await env.sink.emit(env.run_id, scored)
    view = TrialView(task_id=task.taskId, trial_index=trial_index, scored=scored)
    verdict = Verdict(False, 0.0, "skipped-budget", None, env.pass_score)
    reason = explain(task, view, verdict, target_agent_id=env.agent_id)
    if reason is not None:
        await env.sink.emit(env.run_id, reason)
