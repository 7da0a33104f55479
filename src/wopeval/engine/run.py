"""Run a suite: tasks × trials under one bounded limiter, with cost ceilings and cancellation.

The event stream of a run (RFC 0081 §B, RFC 0244 §B)::

    run.started → eval.started{taskCount, trialCount?}
      → per trial: agent.invocation-started … agent.invocation-completed → eval.scored{trialIndex}
    → eval.completed → run.completed{outputs: EvalSummary}

The summary is computed by :func:`wopeval.grading.summary.build_summary` from the stored log,
the same call ``wopeval grade`` makes later.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from wopeval.engine.adaptive import TrialQueue, adaptive_plans, check_adaptive
from wopeval.engine.budget import CostMeter
from wopeval.engine.fork_prefix import ForkPrefix
from wopeval.engine.judge import Judge, JudgeRequired
from wopeval.engine.registry import Registry
from wopeval.engine.resume import ResumeState, interrupted_events
from wopeval.engine.retry import RetryBudget, check_retries
from wopeval.engine.scope import run_scope
from wopeval.engine.trial import SETTLING_LIMIT, TrialEnv, record_skipped, run_trial, settle
from wopeval.errors import StoreError, describe, unwrap
from wopeval.events.reach import StoreUnreachableError, outage_reason, store_unreachable
from wopeval.events.records import ClaimLostError
from wopeval.events.store import EventStore
from wopeval.grading.gate import check_gate
from wopeval.grading.summary import GradingOptions, pass_score_of
from wopeval.grading.trial import TrialGrade
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.events import (
    ErrorObject,
    EvalCompleted,
    EvalStarted,
    Owner,
    RunCancelled,
    RunCompleted,
    RunFailed,
    RunStarted,
)
from wopeval.wire.request import DEFAULT_GATE, Executor, RunSettingsBase
from wopeval.wire.summary import EvalSummary
from wopeval.wire.vocab import INTERNAL_ERROR_CODE

if TYPE_CHECKING:
    from wopeval.engine.distributed import TrialRunner

log = logging.getLogger("wopeval.engine")
ProgressFn = Callable[[str, int, TrialGrade | None], None]


class RunSettings(RunSettingsBase):
    """How to run, beyond the suite. Stored with the run (``request``) for re-grading.

    The settings are declared once, on :class:`~wopeval.wire.request.RunSettingsBase`; this adds
    the check of the gate's name (an unknown gate is refused before anything is recorded).
    """

    if not TYPE_CHECKING:  # mypy checks a call against the fields (pydantic's plugin)

        def __init__(self, **data: Any) -> None:
            # Before validation, so the error is an UnknownGate, not a ValidationError.
            check_gate(data.get("gate", DEFAULT_GATE))
            super().__init__(**data)

    @classmethod
    def of(cls, request: RunSettingsBase) -> RunSettings:
        """The settings a stored run was created with (the inverse of :meth:`to_request`)."""
        return cls(**request.settings())


def check_runnable(suite: AgentEvalSuite, judge: Judge | None) -> None:
    """Refuse, before anything is recorded, a suite this run cannot grade honestly."""
    if judge is None:
        rubric = [i for i, t in enumerate(suite.tasks) if t.expected.kind == "rubric"]
        if rubric:
            raise JudgeRequired(
                f"tasks[{rubric[0]}].expected.kind: rubric tasks need a judge; none is "
                "configured (an LLM judge: --judge-model MODEL [--judge-base-url URL]; your "
                "own: --judge package.module:attr)"
            )


@dataclass
class RunHandle:
    """A run being executed; ``cancel()`` stops it and leaves the log consistent."""

    run_id: str
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    interrupted: bool = False

    def cancel(self) -> None:
        self.scope.cancel()

    def interrupt(self) -> None:
        """The owner is stopping (e.g. a host shutting down): it records the end itself."""
        self.interrupted = True


async def execute_run(
    store: EventStore,
    handle: RunHandle,
    suite: AgentEvalSuite,
    agent_id: str,
    registry: Registry,
    settings: RunSettings,
    *,
    summarize: Callable[[], Awaitable[EvalSummary]],
    judge: Judge | None = None,
    progress: ProgressFn | None = None,
    resume: ResumeState | None = None,
    fork: ForkPrefix | None = None,
) -> EvalSummary | None:
    """Execute a created run to a terminal state. Returns the summary (None unless completed).

    ``summarize`` builds the summary from the stored log once every trial is recorded (the run
    service passes the one summary path, regression block included). With ``resume`` (from
    :func:`wopeval.engine.resume.scan`), only what the interrupted log lacks is done. With
    ``fork``, each trial serves that prefix from the original's log first (a forked run).
    """
    run_id = handle.run_id
    check_runnable(suite, judge)
    check_retries(settings.retry_infrastructure, settings.executor)
    check_adaptive(
        suite,
        live_tools=bool(registry.tools()),
        ignore_fixtures=list(settings.modes or ()) == ["live-shadow"],
    )
    options = GradingOptions(target_agent_id=agent_id, host_max_cost_usd=settings.host_max_cost_usd)
    env = TrialEnv(
        sink=store,
        run_id=run_id,
        registry=registry,
        agent_id=agent_id,
        agent=registry.resolve(agent_id),
        meter=CostMeter([settings.host_max_cost_usd, _suite_ceiling(suite)]),
        pass_score=pass_score_of(suite, options),
        timeout_s=settings.trial_timeout_s,
        limits=settings.limits,
        ignore_fixtures=list(settings.modes or ()) == ["live-shadow"],
        include_trial_index=suite.trials is not None,
        judge=judge,
        settling_limit=max(SETTLING_LIMIT, 2 * settings.concurrency),
        retries=_retry_budget(settings, resume),
        fork=fork,
        resumed_turns=dict(resume.user_turns) if resume is not None else {},
    )
    if resume is not None:
        env.meter.add(resume.spent_usd)
    await store.set_status(run_id, "running")
    finished = False
    try:
        with handle.scope:
            await _start_events(store, run_id, suite, settings, resume)
            pairs = None if resume is None else resume.pending(suite)
            async with run_scope(settings.concurrency):  # the trials' model clients, closed here
                await _run_trials(store, env, suite, settings, progress, pairs, resume)
            summary = await summarize()
            with anyio.CancelScope(shield=True):  # once finishing, finish: one terminal event
                await _finish_events(store, run_id, summary, resume)
            finished = True
            return summary
    except Exception as exc:
        lost = _claim_lost(exc)
        if lost is not None:  # another process took the run over: its end is theirs
            finished = True
            raise lost from None
        if store_unreachable(exc):  # nothing can be recorded: left unfinished, to be resumed
            finished = True
            message = f"the event store is unreachable ({outage_reason(exc)})"
            raise StoreUnreachableError(run_id, message) from exc
        with anyio.CancelScope(shield=True):
            # A store that failed (a full disk, a lost server) says why in its message: its
            # traceback would bury that line.
            trace = None if isinstance(unwrap(exc), StoreError) else exc
            log.error(
                "run %s failed: %s", run_id, _describe(exc), exc_info=trace,
                extra={"runId": run_id, "storeFailure": trace is None},
            )  # fmt: skip
            error = ErrorObject(code=INTERNAL_ERROR_CODE, message=_describe(exc))
            dumped = error.model_dump(exclude_none=True)
            await _record_end(store, run_id, RunFailed(error=error), error=dumped)
        raise
    finally:
        # Cancelled by the handle, from outside, or by a signal: recorded as cancelled, unless
        # the owner said it is stopping (it then records the interruption itself).
        if not finished and not handle.interrupted:
            with anyio.CancelScope(shield=True):
                await _record_end(store, run_id, RunCancelled())
    return None


async def _record_end(
    store: EventStore, run_id: str, payload: RunFailed | RunCancelled, **values: Any
) -> None:
    """Record the run's end if the store still can: when it cannot (the write that failed the
    run fails again), what the caller is raising already says why, and it is kept."""
    try:
        await store.emit_end(run_id, payload, **values)
    except Exception as exc:
        reason = (str(exc).strip().splitlines() or [""])[0][:300]  # a driver adds its SQL
        log.error("run %s: its end could not be recorded: %s: %s", run_id, type(exc).__name__,
                  reason, extra={"runId": run_id, "storeFailure": True})  # fmt: skip


def _claim_lost(exc: BaseException) -> ClaimLostError | None:
    """The :class:`ClaimLostError` ``exc`` is or holds (in a task group's error), if any."""
    if isinstance(exc, ClaimLostError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := _claim_lost(inner)) is not None:
                return found
    return None


def _describe(exc: BaseException) -> str:
    """The failure's own message, not the task group's wrapper around a single error."""
    exc = unwrap(exc)
    return describe(exc)


def _retry_budget(settings: RunSettings, resume: ResumeState | None) -> RetryBudget | None:
    """The run's retry policy, with the retries a resumed run's log already records."""
    policy = settings.retry_infrastructure
    if policy is None:
        return None
    done = dict(resume.retried) if resume is not None else {}
    return RetryBudget(policy, used=sum(done.values()), done=done)


def _suite_ceiling(suite: AgentEvalSuite) -> float | None:
    return suite.thresholds.maxCostUsd if suite.thresholds is not None else None


async def _start_events(
    store: EventStore,
    run_id: str,
    suite: AgentEvalSuite,
    settings: RunSettings,
    resume: ResumeState | None,
) -> None:
    """``run.started`` and ``eval.started`` (those the log lacks, on a resume), then, on a
    resume, the record of every trial interrupted where it may have touched a live tool."""
    run_started, eval_started = start_payloads(suite, settings)
    queued = []  # queued together: one commit, one wait
    if resume is None or not resume.run_started:
        queued.append(store.emit_later(run_id, run_started))
    if resume is None or not resume.eval_started:
        queued.append(store.emit_later(run_id, eval_started))
    for item in queued:
        await item.committed()
    if resume is not None:
        for key, why in sorted(resume.interrupted.items()):
            for payload in interrupted_events(key, why, suite.trials is not None):
                await store.emit(run_id, payload)


def start_payloads(suite: AgentEvalSuite, settings: RunSettings) -> tuple[RunStarted, EvalStarted]:
    """The ``run.started`` and ``eval.started`` a run of ``suite`` with ``settings`` begins with
    (a merged shard group's run begins with them too: service.shards)."""
    owner = Owner.model_validate(settings.owner) if settings.owner is not None else None
    tags = list(settings.tags) or None
    started = RunStarted(workflowId=suite.suiteId, transport="rest", owner=owner, tags=tags)
    return started, _eval_started(suite, settings)


def _eval_started(suite: AgentEvalSuite, settings: RunSettings) -> EvalStarted:
    count = suite.trial_plan.effective_count
    return EvalStarted(
        suiteId=suite.suiteId,
        suiteVersion=suite.version,
        taskCount=len(suite.tasks),
        modes=list(settings.modes or suite.modes),
        baselineRunId=settings.baseline_run_id,
        fixtureRuns=dict(settings.fixture_runs) if settings.fixture_runs else None,
        trialCount=count if count > 1 else None,
    )


async def _trial_runner(store: EventStore, env: TrialEnv, executor: Executor) -> TrialRunner:
    """Where trials execute: in this process, or in Ray workers (recorded when they return)."""
    if executor == "ray":
        from wopeval.engine.distributed import ray_trial_runner  # only a Ray run needs it

        return await ray_trial_runner(store, env)
    return functools.partial(run_trial, env)


def eval_completed(summary: EvalSummary) -> EvalCompleted:
    """The ``eval.completed`` payload of a summary (its scalars only: the wire is content-free)."""
    return EvalCompleted(
        aggregateScore=summary.aggregateScore,
        passed=summary.passed,
        taskCount=summary.taskCount,
        passedCount=summary.passedCount,
        regressionVsBaseline=summary.regression.scoreDelta if summary.regression else None,
    )


def all_pairs(suite: AgentEvalSuite) -> Iterator[tuple[int, int]]:
    """Every planned ``(task index, trial index)``, trial-major, generated lazily."""
    for trial_index in range(suite.trial_plan.effective_count):
        for task_index in range(len(suite.tasks)):
            yield task_index, trial_index


async def _run_trials(
    store: EventStore,
    env: TrialEnv,
    suite: AgentEvalSuite,
    settings: RunSettings,
    progress: ProgressFn | None,
    pairs: Iterable[tuple[int, int]] | None = None,
    resume: ResumeState | None = None,
) -> None:
    """A pool of ``concurrency`` workers pulling ``pairs`` (default: every planned trial)
    lazily, so memory and the time to the first trial do not grow with the suite; an adaptive
    task's trials come wave by wave from its sequential test (:mod:`wopeval.engine.adaptive`)."""
    execute = await _trial_runner(store, env, settings.executor)
    plans = adaptive_plans(suite)
    planned = all_pairs(suite) if pairs is None else pairs
    adaptive = TrialQueue(suite, planned, plans, resume) if plans else None
    queue = iter(planned)

    async def one(task_index: int, trial_index: int) -> TrialGrade | None:
        task = suite.tasks[task_index]
        if env.meter.exceeded:
            await record_skipped(env, task, trial_index)
            grade = None
        else:
            grade = await execute(task, trial_index)
        if progress is not None:
            progress(task.taskId, trial_index, grade)
        return grade

    async def worker() -> None:
        if adaptive is None:
            for task_index, trial_index in queue:  # one shared iterator: each pair runs once
                await one(task_index, trial_index)
            return
        while (pair := await adaptive.next()) is not None:
            grade = await one(*pair)
            stop = adaptive.scored(*pair, passed=grade is not None and grade.passed)
            if stop is not None:
                await store.emit(env.run_id, adaptive.stopped_payload(pair[0], stop))

    if adaptive is not None:
        for task_index, stop in adaptive.stops:  # stops a resumed log lacks the record of
            await store.emit(env.run_id, adaptive.stopped_payload(task_index, stop))

    try:
        async with anyio.create_task_group() as watching:
            env.deadlines.start(watching)  # each trial's timeout
            async with anyio.create_task_group() as group:
                for _ in range(max(1, settings.concurrency)):
                    group.start_soon(worker)
            watching.cancel_scope.cancel()
    finally:
        env.deadlines.stop()
    await settle(env)  # the last trials' scores, committed before the run is summarised


async def _finish_events(
    store: EventStore, run_id: str, summary: EvalSummary, resume: ResumeState | None
) -> None:
    wire = summary.to_wire()
    if resume is not None and resume.eval_completed:
        await store.emit_end(run_id, RunCompleted(outputs=wire), summary=wire)
        return
    await store.emit(run_id, eval_completed(summary))
    # The terminal event, the status and the summary commit together (one transaction).
    await store.emit_end(run_id, RunCompleted(outputs=wire), summary=wire)
