"""The run service: plan, create, execute and regrade a run — one path for library, CLI and host.

::

    plan     check everything a run needs before anything is recorded: the agent resolves, rubric
             tasks have a judge, the baseline is usable (one rule for every caller) and the modes
    create   record the pending run with the exact suite document and the typed request
    execute  run it to a terminal state (engine), then summarize it from the log (grading) with
             the regression block when it has a baseline (compare)
    regrade  recompute a stored run's summary from its suite document and log (invariant 1)

``wopeval.evaluate()``, ``wopeval run`` and ``POST /runs`` all go through :class:`RunService`;
only what a caller adds around it differs (a progress bar, signal handling, HTTP refusals).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Coroutine, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeAlias, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread

from wopeval.engine.adaptive import check_adaptive
from wopeval.engine.fork_prefix import ForkPrefix
from wopeval.engine.judge import Judge
from wopeval.engine.registry import Registry
from wopeval.engine.resume import ResumeState, scan
from wopeval.engine.retry import check_retries
from wopeval.engine.run import ProgressFn, RunHandle, RunSettings, check_runnable, execute_run
from wopeval.engine.toolspec import check_declared_tools
from wopeval.errors import RunNotFound, UserError
from wopeval.events.ids import new_run_id, utc_now
from wopeval.events.logged import LoggedEvent
from wopeval.events.store import EventStore, RunRecord
from wopeval.grading.detail import RunDetail, run_detail
from wopeval.grading.live import LiveFold
from wopeval.grading.summary import GradingOptions, build_summary
from wopeval.service.prepared import PreparedSuite
from wopeval.service.slices import shard_state
from wopeval.suite import parse_suite, suite_to_document
from wopeval.suite.digest import definition_digests
from wopeval.suite.models import AgentEvalSuite, EvalMode
from wopeval.wire.events import RunEvent
from wopeval.wire.request import (
    DefinitionDigests,
    ForkLink,
    HostRequest,
    RunRequest,
    ShardRequest,
)
from wopeval.wire.summary import EvalSummary, RegressionBlock

log = logging.getLogger("wopeval.service")

LOCAL_TENANT = "local"


class BaselineUnusable(UserError):
    """The baseline cannot be compared against; the same refusal whatever the reason."""

    field = "baselineRunId"


@dataclass(frozen=True)
class RunPlan:
    """A run that has passed every check and may be created."""

    suite: AgentEvalSuite
    agent_id: str
    settings: RunSettings
    tenant: str = LOCAL_TENANT
    host: HostRequest | None = None
    shard: ShardRequest | None = None  # runs only its slice (service/slices.py)
    # A forked run (service/fork.py): the prefix its trial serves from the log, and the link
    fork: ForkPrefix | None = None
    forked_from: ForkLink | None = None
    # The suite's document and digests made beforehand; used only if made of ``suite`` itself.
    prepared: PreparedSuite | None = None

    def _prepared(self) -> PreparedSuite | None:
        prepared = self.prepared
        return prepared if prepared is not None and prepared.suite is self.suite else None

    @functools.cached_property
    def document(self) -> dict[str, Any]:
        """The suite document stored with the run (made once: a run's create, its request's
        digests and its execution share it; do not change it)."""
        prepared = self._prepared()
        return prepared.document if prepared is not None else suite_to_document(self.suite)

    @property
    def document_json(self) -> str | None:
        """The document's stored text when made beforehand, else None (made when stored)."""
        prepared = self._prepared()
        return prepared.document_json if prepared is not None else None

    @functools.cached_property
    def digests(self) -> DefinitionDigests:
        prepared = self._prepared()
        if prepared is not None:
            return prepared.digests
        return definition_digests(self.suite, self.document)

    def request(self) -> RunRequest:
        update = {"host": self.host, "shard": self.shard, "digests": self.digests,
                  "forked_from": self.forked_from}  # fmt: skip
        return self.settings.to_request(self.agent_id).model_copy(update=update)


@dataclass(frozen=True)
class Regraded:
    record: RunRecord
    summary: EvalSummary

    @property
    def reproduces_stored(self) -> bool:
        """True when the re-grade serializes to exactly the stored summary's bytes."""
        if self.record.summary is None:
            return False
        stored = EvalSummary.model_validate(self.record.summary)
        return stored.to_json() == self.summary.to_json()


def grading_options(request: RunRequest) -> GradingOptions:
    """The grading options a stored run was executed with."""
    if request.agentId is None:
        raise UserError("this run is not an eval run (its request names no agentId)")
    return GradingOptions(
        target_agent_id=request.agentId, host_max_cost_usd=request.host_max_cost_usd
    )


async def usable_baseline(
    store: EventStore, tenant: str, baseline_run_id: str, suite: AgentEvalSuite
) -> RunRecord | None:
    """The baseline run if it can be compared against, else None (RFC 0251).

    Unusable, whatever the reason: missing, another tenant's, not an eval run, another suite,
    or not completed. Callers answer every reason identically (no existence oracle).
    """
    if not baseline_run_id.startswith(tenant + "/"):
        return None
    record = await store.get_run(baseline_run_id)
    if (
        record is None
        or record.tenant != tenant
        or record.kind != "eval"
        or record.suite_id != suite.suiteId
        or record.status != "completed"
        or record.summary is None
    ):
        return None
    return record


LOG_PAGE = 2000
_T = TypeVar("_T")
_E = TypeVar("_E", RunEvent, LoggedEvent)
Fold: TypeAlias = Callable[[Iterable[RunEvent]], _T]
LoggedFold: TypeAlias = Callable[[Iterable[LoggedEvent]], _T]


async def fold_log(store: EventStore, run_id: str, fold: Fold[_T]) -> _T:
    """``fold`` over the run's whole log, read in pages of :data:`LOG_PAGE` events (never all
    at once): the pure fold runs in a worker thread that fetches each page from this loop.
    The log it is given can be iterated again (each pass pages from the start), so grading
    can read an anomalous log a second time (:func:`wopeval.grading.summary.grade_run`)."""
    return await _fold_pages(store.events, run_id, fold)


async def fold_logged(store: EventStore, run_id: str, fold: LoggedFold[_T]) -> _T:
    """:func:`fold_log` over the log as grading reads it (:meth:`EventStore.logged_events`:
    the columns the fold needs, each payload decoded only when read)."""
    return await _fold_pages(store.logged_events, run_id, fold)


_Read: TypeAlias = Callable[[str, int, int], Coroutine[Any, Any, list[_E]]]


class _Paged(Generic[_E]):
    """A run's log, paged from the loop by a worker thread; each pass starts over."""

    def __init__(self, read: _Read[_E], run_id: str) -> None:
        self._read: _Read[_E] = read
        self._run_id = run_id

    def __iter__(self) -> Iterator[_E]:
        after = -1
        while page := anyio.from_thread.run(self._read, self._run_id, after, LOG_PAGE):
            yield from page
            after = page[-1].sequence


async def _fold_pages(read: _Read[_E], run_id: str, fold: Callable[[Iterable[_E]], _T]) -> _T:
    paged = _Paged(read, run_id)
    return await anyio.to_thread.run_sync(lambda: fold(paged))


async def summarize(
    store: EventStore,
    suite: AgentEvalSuite,
    run_id: str,
    request: RunRequest,
    live: LiveFold | None = None,
) -> EvalSummary:
    """The run's summary from its stored log, with the regression block when it has a baseline.

    The one code path for live runs and re-grades (invariant 1): ``live``, the fold a running
    run fed each event as it was committed, is that fold of the same log; when it did not see
    the whole log the log is read back. The baseline's own stored summary is a recorded fact;
    the verdict is a pure function of both summaries.
    """
    options = grading_options(request)
    summary = live.summary(await store.last_sequence(run_id)) if live is not None else None
    if summary is None:
        if live is not None:
            log.debug("run %s: summary read back from the log: %s", run_id, live.unusable)
        summary = await fold_logged(store, run_id, lambda log: build_summary(suite, log, options))
    baseline_id = request.baseline_run_id
    if baseline_id is None:
        return summary
    baseline = await store.get_run(baseline_id)
    if baseline is None or baseline.summary is None:
        raise BaselineUnusable(f"baselineRunId: run {baseline_id} has no summary")
    from wopeval.compare import compare_summaries  # only a run with a baseline compares

    comparison = compare_summaries(
        EvalSummary.model_validate(baseline.summary),
        summary,
        baseline_id,
        method=request.regression_method,
        alpha=request.alpha,
        baseline_digests=_task_digests(baseline.run_request),
        candidate_digests=_task_digests(request),
    )
    regression = comparison.regression
    if not request.regression_verdict:  # RFC 0081 delta only: no §F verdict fields
        regression = RegressionBlock(
            baselineRunId=regression.baselineRunId, scoreDelta=regression.scoreDelta
        )
    return summary.model_copy(update={"regression": regression})


def _task_digests(request: RunRequest) -> dict[str, str] | None:
    """A run's task definition digests, or ``None`` for a run stored without them."""
    return dict(request.digests.tasks) if request.digests is not None else None


class RunHeld(UserError):
    """The run to resume is being executed by another live process (it holds its lease)."""


class RunService:
    """Plans, creates, executes and regrades runs on one store with one agent registry."""

    def __init__(self, store: EventStore, registry: Registry, judge: Judge | None = None) -> None:
        self.store = store
        self.registry = registry
        self.judge = judge

    async def plan(
        self,
        suite: AgentEvalSuite,
        agent_id: str,
        settings: RunSettings,
        *,
        tenant: str = LOCAL_TENANT,
        host: HostRequest | None = None,
        prepared: PreparedSuite | None = None,
    ) -> RunPlan:
        """Check what a run needs before anything is recorded; raise a :class:`UserError`.
        ``prepared``: ``suite``'s document and digests, when already made."""
        self.registry.resolve(agent_id)
        check_declared_tools(suite, self.registry.agent_object(agent_id))
        check_runnable(suite, self.judge)
        check_retries(settings.retry_infrastructure, settings.executor)
        live_shadow = list(settings.modes or ()) == ["live-shadow"]
        check_adaptive(suite, live_tools=bool(self.registry.tools()), ignore_fixtures=live_shadow)
        baseline = settings.baseline_run_id
        if baseline is not None:
            if await usable_baseline(self.store, tenant, baseline, suite) is None:
                raise BaselineUnusable(
                    f"baselineRunId: {baseline!r} is not a usable baseline "
                    f"(a completed eval run of {suite.suiteId} you can read)"
                )
            settings = settings.model_copy(
                update={"modes": _with_regression(suite, settings.modes)}
            )
        return RunPlan(suite, agent_id, settings, tenant, host, prepared=prepared)

    async def create(self, plan: RunPlan, *, idempotency_key: str | None = None) -> RunRecord:
        """Record a pending eval run, with the exact suite document it will be graded against."""
        now = utc_now()
        record = RunRecord(
            run_id=new_run_id(plan.tenant),
            tenant=plan.tenant,
            kind="eval",
            status="pending",
            suite_id=plan.suite.suiteId,
            suite_version=plan.suite.version,
            agent_id=plan.agent_id,
            suite_document=plan.document,
            request=plan.request().to_stored(),
            summary=None,
            error=None,
            created_at=now,
            updated_at=now,
            idempotency_key=idempotency_key,
            scope_id=plan.host.scopeId if plan.host is not None else None,
        )
        await self.store.create_run(record, document_json=plan.document_json)
        return record

    async def execute(
        self, plan: RunPlan, handle: RunHandle, *, progress: ProgressFn | None = None
    ) -> EvalSummary | None:
        """Execute a created run to a terminal state; the summary, or None unless completed."""
        return (await self._execute(plan, handle, progress, None))[0]

    async def execute_detailed(
        self, plan: RunPlan, handle: RunHandle, *, progress: ProgressFn | None = None
    ) -> tuple[EvalSummary | None, RunDetail | None]:
        """:meth:`execute`, and the completed run's detail (``run_detail`` of its log, the
        tenant's own view: each trial's status and reason), folded as the run was recorded."""
        return await self._execute(plan, handle, progress, None, detail=True)

    async def _execute(
        self,
        plan: RunPlan,
        handle: RunHandle,
        progress: ProgressFn | None,
        resume: ResumeState | None,
        *,
        detail: bool = False,
    ) -> tuple[EvalSummary | None, RunDetail | None]:
        request = plan.request()
        if plan.shard is not None:  # the engine takes the shard's pairs from the state
            resume = shard_state(plan.shard, resume)

        options = grading_options(request)
        live = LiveFold(plan.suite, options, detail=detail)
        untap = self.store.tap(handle.run_id, live)

        async def summary() -> EvalSummary:
            return await summarize(self.store, plan.suite, handle.run_id, request, live)

        try:
            done = await execute_run(
                self.store,
                handle,
                plan.suite,
                plan.agent_id,
                self.registry,
                plan.settings,
                summarize=summary,
                judge=self.judge,
                progress=progress,
                resume=resume,
                fork=plan.fork,
            )
        finally:
            untap()
        if done is None or not detail:
            return done, None
        if live.detail is not None:
            return done, live.detail
        # The live fold was not used (a resume, another writer): read the log back.
        folded = await fold_log(
            self.store, handle.run_id, lambda log: run_detail(plan.suite, log, options)
        )
        return done, folded

    async def run(
        self, plan: RunPlan, *, progress: ProgressFn | None = None
    ) -> tuple[RunRecord, EvalSummary | None]:
        """Create and execute in one call."""
        record = await self.create(plan)
        return record, await self.execute(plan, RunHandle(record.run_id), progress=progress)

    async def prepare_resume(self, run_id: str) -> tuple[RunRecord, RunPlan, ResumeState]:
        """Check that ``run_id`` can be resumed and read what its log holds (in pages)."""
        record = await self.store.get_run(run_id)
        if record is None:
            raise RunNotFound(f"run {run_id!r} is not in the store")
        if record.terminal or record.kind != "eval":
            raise UserError(
                f"run {run_id} is {record.status} and cannot be resumed "
                "(only an unfinished eval run can)"
            )
        if record.run_request.forked_from is not None:  # its prefix is not in its own log
            raise UserError(
                f"run {run_id} is a forked run and cannot be resumed: fork the original again"
            )
        plan = RunPlan(
            suite=parse_suite(record.suite_document, source=f"run {run_id}"),
            agent_id=grading_options(record.run_request).target_agent_id,
            settings=settings_of(record.run_request),
            tenant=record.tenant,
            host=record.run_request.host,
            shard=record.run_request.shard,
        )
        self.registry.resolve(plan.agent_id)  # an unknown agent is refused before any claim
        refused = await self.store.take_over(run_id)
        if refused is not None:
            raise RunHeld(refused)
        live_shadow = list(plan.settings.modes or ()) == ["live-shadow"]
        state = await scan(self.store, run_id, plan.suite, ignore_fixtures=live_shadow)
        if state.terminal:
            raise UserError(f"run {run_id} already has a terminal event and cannot be resumed")
        return record, plan, state

    async def resume(
        self,
        run_id: str,
        *,
        handle: RunHandle | None = None,
        progress: ProgressFn | None = None,
        prepared: tuple[RunRecord, RunPlan, ResumeState] | None = None,
    ) -> tuple[RunRecord, EvalSummary | None]:
        """Finish an interrupted run: every ``(taskId, trialIndex)`` is scored exactly once.

        Trials already scored are kept; a trial in flight at the interruption is re-run only
        when it provably touched no live tool, else recorded as interrupted; the rest run as
        in a fresh run (:mod:`wopeval.engine.resume`). The summary is built from the whole log.
        """
        record, plan, state = prepared or await self.prepare_resume(run_id)
        summary, _ = await self._execute(plan, handle or RunHandle(run_id), progress, state)
        return record, summary

    async def regrade(self, run_id: str) -> Regraded:
        """Recompute a stored run's summary from its suite document and event log."""
        record = await self.store.get_run(run_id)
        if record is None:
            raise RunNotFound(f"run {run_id!r} is not in the store")
        suite = parse_suite(record.suite_document, source=f"run {run_id}")
        summary = await summarize(self.store, suite, run_id, record.run_request)
        return Regraded(record=record, summary=summary)


def settings_of(request: RunRequest) -> RunSettings:
    """The settings a stored run was created with (the inverse of ``RunSettings.to_request``)."""
    return RunSettings.of(request)


def _with_regression(
    suite: AgentEvalSuite, modes: Sequence[EvalMode] | None
) -> Sequence[EvalMode] | None:
    """A run against a baseline is in ``regression`` mode (added to the suite's modes)."""
    current = list(modes) if modes is not None else list(suite.modes)
    return current if "regression" in current else [*current, "regression"]


async def regrade(store: EventStore, run_id: str) -> Regraded:
    """:meth:`RunService.regrade` without a registry (re-grading runs no agent)."""
    return await RunService(store, Registry()).regrade(run_id)


async def create_run_record(
    store: EventStore,
    suite: AgentEvalSuite,
    agent_id: str,
    settings: RunSettings,
    *,
    tenant: str = LOCAL_TENANT,
    idempotency_key: str | None = None,
    host: HostRequest | None = None,
) -> RunRecord:
    """Record a pending run as planned, skipping :meth:`RunService.plan`'s checks (tests)."""
    plan = RunPlan(suite, agent_id, settings, tenant, host)
    return await RunService(store, Registry()).create(plan, idempotency_key=idempotency_key)


async def execute(
    store: EventStore,
    handle: RunHandle,
    suite: AgentEvalSuite,
    agent_id: str,
    registry: Registry,
    settings: RunSettings,
    *,
    judge: Judge | None = None,
    progress: ProgressFn | None = None,
) -> EvalSummary | None:
    """:meth:`RunService.execute` of an already created run, by its parts."""
    plan = RunPlan(suite, agent_id, settings)
    return await RunService(store, registry, judge).execute(plan, handle, progress=progress)
