"""``wopeval run --resume RUN``: finish an interrupted run (:meth:`RunService.resume`)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

import anyio
import typer

from wopeval.cli.common import fail_input, opened_store
from wopeval.cli.progress import ProgressView, progress_bar
from wopeval.engine.judge import Judge
from wopeval.engine.registry import Registry
from wopeval.engine.resume import ResumeState
from wopeval.engine.run import ProgressFn, RunHandle
from wopeval.errors import RunNotFound, UserError
from wopeval.events.store import RunRecord
from wopeval.grading.detail import RunDetail, run_detail
from wopeval.service.leases import ClaimWatch, holding_runs
from wopeval.service.runs import RunPlan, RunService, fold_log, grading_options
from wopeval.service.slices import shard_state
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.summary import EvalSummary

if TYPE_CHECKING:
    from rich.progress import Progress


async def resume_run(
    store_url: str | None,
    run_id: str,
    registry: Registry,
    judge: Judge | None,
    on_signal: Callable[[RunHandle], Coroutine[Any, Any, None]],
    show_progress: bool = False,
) -> tuple[str, AgentEvalSuite, EvalSummary | None, RunDetail | None, bool]:
    """Resume ``run_id`` in the store; what ``wopeval run`` reports afterwards (and whether a
    SIGTERM interrupted it). ``on_signal`` is ``wopeval run``'s own Ctrl-C / SIGTERM handling;
    on a terminal, what the log kept is said and the trials left are shown as a bar."""

    claims = ClaimWatch()  # taken over by another process meanwhile: stopped, and said so
    on_signal = claims.watching(on_signal)
    async with (
        opened_store(store_url, must_exist=True) as store,
        holding_runs(store, on_lost=claims),
    ):
        service = RunService(store, registry, judge)
        handle = RunHandle(run_id)
        try:
            resuming = await service.prepare_resume(run_id)
        except RunNotFound:
            fail_input(f"--resume: run {run_id!r} is not in the store")
        except UserError as exc:
            fail_input(f"--resume: {exc}")
        progress = progress_bar(show_progress)
        left = _announce(run_id, resuming[1], resuming[2]) if progress is not None else 0
        suite = resuming[1].suite
        view = ProgressView(progress, left, suite, finished_outcomes(resuming[2]))
        summary, detail = await _finish(service, handle, resuming, progress, view, on_signal)
    claims.check(run_id)
    return run_id, suite, summary, detail, handle.interrupted


async def continue_shard(
    service: RunService,
    plan: RunPlan,
    progress: Progress | None,
    view: ProgressFn,
    on_signal: Callable[[RunHandle], Coroutine[Any, Any, None]],
) -> tuple[str, EvalSummary | None, RunDetail | None, bool] | None:
    """``wopeval run --shard i/N`` again after its run was interrupted (a retried pod): that
    run is finished, not a second one started; None when the group has no unfinished run of
    this shard. What ``wopeval run`` reports: its id, summary, detail, and whether a SIGTERM
    interrupted it again."""
    from wopeval.service.shards import ShardMismatch, unfinished_shard

    shard = plan.shard
    assert shard is not None
    try:
        run_id = await unfinished_shard(service.store, plan)
    except ShardMismatch as exc:
        fail_input(f"--shard: {exc}")
    if run_id is None:
        return None
    try:
        prepared = await service.prepare_resume(run_id)
    except UserError as exc:
        fail_input(f"--shard: {exc}")
    typer.echo(
        f"continuing run {run_id} (shard {shard.index}/{shard.count} of group {shard.group}), "
        "which was left unfinished",
        err=True,
    )
    handle = RunHandle(run_id)
    summary, detail = await _finish(service, handle, prepared, progress, view, on_signal)
    return run_id, summary, detail, handle.interrupted


async def _finish(
    service: RunService,
    handle: RunHandle,
    prepared: tuple[RunRecord, RunPlan, ResumeState],
    progress: Progress | None,
    view: ProgressFn,
    on_signal: Callable[[RunHandle], Coroutine[Any, Any, None]],
) -> tuple[EvalSummary | None, RunDetail | None]:
    """Resume the prepared run, Ctrl-C / SIGTERM handled by ``on_signal``; its summary and
    detail (None, None when a signal stopped it: ``handle.interrupted`` says how)."""
    run_id = handle.run_id
    with progress if progress is not None else nullcontext():
        async with anyio.create_task_group() as group:
            group.start_soon(on_signal, handle)
            record, summary = await service.resume(
                run_id, handle=handle, progress=view, prepared=prepared
            )
            group.cancel_scope.cancel()
    if summary is None:
        return None, None
    suite = prepared[1].suite
    options = grading_options(record.run_request)
    detail = await fold_log(service.store, run_id, lambda log: run_detail(suite, log, options))
    return summary, detail


def _announce(run_id: str, plan: RunPlan, state: ResumeState) -> int:
    """Say what the log kept and what is left to run (stderr); how many trials are left."""
    pending = state if plan.shard is None else shard_state(plan.shard, state)
    left = sum(1 for _ in pending.pending(plan.suite))
    interrupted = (
        f", {len(state.interrupted)} recorded as interrupted (they may have touched a live tool)"
        if state.interrupted
        else ""
    )
    typer.echo(
        f"resuming run {run_id}: {len(state.scored)} trial(s) scored already{interrupted}; "
        f"{left} to run",
        err=True,
    )
    return left


def finished_outcomes(state: ResumeState) -> dict[tuple[str, int], bool]:
    """Each trial the log already holds and its pass, as the engine's adaptive test reads it
    on resume: an interrupted trial (not run again) is a failure."""
    return {**state.passed, **dict.fromkeys(state.interrupted, False)}
