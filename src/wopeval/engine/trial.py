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
import traceback
from typing import Any

import anyio

from wopeval.agents.cassette import note_latency, replayed_latency, trial_tape
from wopeval.engine.agent import ConversationEnded, TrialMemory
from wopeval.engine.fork_prefix import PrefixGateway
from wopeval.engine.gateway import GatewayOptions, ToolGateway
from wopeval.engine.limits import clip_reason, over_limit, sized_json
from wopeval.engine.outage import (
    INFRASTRUCTURE_LABEL,
    Waits,
    cause_of,
    infrastructure_cause,
    timed_out_waiting,
)
from wopeval.engine.sink import EventSink, MeteredSink
from wopeval.engine.trial_context import TrialContext
from wopeval.engine.trial_state import SETTLING_LIMIT, TrialEnv, TrialState, new_id, settle
from wopeval.engine.user_llm import simulated_user
from wopeval.engine.world import WorldState
from wopeval.errors import ModelMiss, describe, message_of, storable
from wopeval.grading.reasons import Verdict, explain
from wopeval.grading.trial import EvaluatorType, TrialGrade, grade_trial
from wopeval.grading.views import TrialView, collect_trials
from wopeval.suite.models import Task
from wopeval.wire.events import (
    Decided,
    EvalScored,
    Failure,
    InvocationCompleted,
    InvocationStarted,
    WorldStateRecorded,
)
from wopeval.wire.vocab import MODEL_MISS_LABEL

__all__ = [
    "SETTLING_LIMIT",
    "EventSink",
    "MeteredSink",
    "TrialEnv",
    "record_skipped",
    "run_trial",
    "settle",
]

_TRACEBACK_LIMIT = 8000
# How a conversation that ended on either side fails the trial: that label.
_USER_ENDS = {"miss": "user-miss", "max-turns": "max-turns", "error": "user-error"}


async def run_trial(env: TrialEnv, task: Task, trial_index: int) -> TrialGrade:
    """Run, record and grade one trial; returns its grade (also recorded as ``eval.scored``,
    committed by the next :func:`settle`). An attempt that failed for infrastructure is run
    again, after a backoff, while the run's retry policy allows (wopeval.engine.retry)."""
    while True:
        # Its model calls' identity in a cassette: a forked trial's is the original trial's.
        recorded_index = env.fork.trial_index if env.fork is not None else trial_index
        with trial_tape(task.taskId, recorded_index):
            grade = await _attempt(env, task, trial_index)
        if grade is not None:
            return grade
        assert env.retries is not None  # an attempt is superseded only under a policy
        await anyio.sleep(env.retries.delay_s(env.run_id, (task.taskId, trial_index)))


async def _attempt(env: TrialEnv, task: Task, trial_index: int) -> TrialGrade | None:
    """One attempt of a trial: its grade, or None when it was marked superseded by a retry."""
    await settle(env, wait=False)
    fixtures = task.fixtures
    seeded = fixtures.memorySeed if fixtures else None
    seed = copy.deepcopy(list(seeded)) if seeded else []
    gateway = _gateway(env, task)
    trial = TrialState(env=env, task=task, trial_index=trial_index, gateway=gateway,
                   memory=TrialMemory(seed))  # fmt: skip
    gateway.before_live = trial.before_live  # a resume must see the call before the tool does
    trial.user = simulated_user(env, task, trial_index)  # its own cursor or history (§B)
    ids = {"invocationId": new_id("inv"), "agentId": env.agent_id}
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
        await _record_world(env, trial)
        if isinstance(gateway, PrefixGateway) and gateway.divergence is not None:
            trial.went_over(gateway.divergence)  # it left the forked trial's recorded path
        if trial.over_limit is not None:  # the more decisive cause, whatever happened next
            label, failure = "agent-error", trial.over_limit
    finally:
        gateway.before_live = None  # trial → gateway → trial: no cycle left for the GC
    retry = None
    # Decided on the label alone; past a cost ceiling no attempt starts, a retry neither.
    if env.retries is not None and label is not None and not env.meter.exceeded:
        key = (task.taskId, trial_index)
        retry = env.retries.take(key, label, failure, trial.went_live)
    await trial.record(
        InvocationCompleted.build(
            **ids,
            outcome="completed" if label is None else "failed",
            error_label=label,
            failure=failure,
            retry=retry,
            # a replayed trial that missed was not the one recorded: its own latency counts
            replayed_latency_ms=replayed_latency() if label != MODEL_MISS_LABEL else None,
        )
    )
    if retry is not None:  # never graded: the next attempt's bracket supersedes this one
        trial.log.info("%s: retrying after an infrastructure failure (%s)", trial.ids, retry.cause)
        env.settling.append(trial)
        return None
    # Graded on what it recorded, committed or not: its score is chained after those events.
    view = collect_trials(trial.known_events())[(task.taskId, trial_index)]
    note_latency(view.latency_ms)  # kept with the trial when its model calls are recorded
    grade, grader_error = await _grade(env, task, view, trial)
    await _record_score(env, trial, view, grade)
    await _record_reason(env, trial, view, grade, grader_error)
    env.settling.append(trial)
    return grade


def _gateway(env: TrialEnv, task: Task) -> ToolGateway:
    """The trial's own gateway (with its own copy of the task's world): a forked run's serves
    its prefix from the log first."""
    tools = env.registry.tools()
    fixtures = task.fixtures
    options: GatewayOptions = {"ignore_fixtures": env.ignore_fixtures, "copies": env.copies,
                               "max_calls": env.limits.maxToolCalls,
                               "world": _world_of(env, task)}  # fmt: skip
    if env.fork is not None:
        return PrefixGateway(env.fork, fixtures, tools, **options)
    return ToolGateway(fixtures, tools, **options)


async def _invoke(
    env: TrialEnv, trial: TrialState, ids: dict[str, str]
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
    except ConversationEnded as exc:
        if exc.how in _USER_ENDS:  # the log's user turn says so too: graded from it
            trial.log.info("%s: the conversation ended (%s)", trial.ids, exc.how)
            return _USER_ENDS[exc.how], _failure_of(exc)
        trial.log.warning("%s: the agent raised %s", trial.ids, type(exc).__name__)
        return "agent-error", _failure_of(exc)
    except Exception as exc:
        # The exception's type only: its message is the tenant's content (invariant 3), kept
        # in the run's log (the trial's reason), never in the process's log (a host's is the
        # operator's).
        if (miss := cause_of(exc, ModelMiss)) is not None:  # failed closed, never retried
            trial.log.info("%s: a model request has no recording in the cassette", trial.ids)
            return MODEL_MISS_LABEL, _failure_of(miss)
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


def _world_of(env: TrialEnv, task: Task) -> WorldState | None:
    """The trial's own copy of its task's world (§B: no trial sees another's writes)."""
    if task.world is None:
        return None
    return WorldState(task.world, env.copies.copy(task.world.initial_state))


async def _record_world(env: TrialEnv, trial: TrialState) -> None:
    """The world's final state, for the final-state expectation; over ``maxOutputBytes`` it
    is not recorded and the trial fails (grading then finds no state: no match either)."""
    world = trial.gateway.world
    if world is None:
        return
    state, size = sized_json(world.state, env.limits.maxOutputBytes)
    if size > env.limits.maxOutputBytes:
        message = over_limit("the final world state", size, "maxOutputBytes",
                             env.limits.maxOutputBytes)  # fmt: skip
        trial.went_over(Failure(exceptionType="WorldStateCap", message=message))
        return
    await trial.record(WorldStateRecorded.build(state=state))


def _failure_of(exc: BaseException) -> Failure:
    text = "".join(traceback.format_exception(exc))
    return Failure(
        exceptionType=type(exc).__qualname__,
        message=message_of(exc)[:2000],
        traceback=storable(text[-_TRACEBACK_LIMIT:]),
    )


async def _grade(
    env: TrialEnv, task: Task, view: TrialView, trial: TrialState
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


async def _record_score(
    env: TrialEnv, trial: TrialState, view: TrialView, grade: TrialGrade
) -> None:
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
    env: TrialEnv, trial: TrialState, view: TrialView, grade: TrialGrade, grader_error: str | None
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
