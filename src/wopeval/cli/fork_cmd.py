"""``wopeval fork RUN --task T --trial I --at N``: re-run a stored trial from call N (a new run).

The work is the run service's (:func:`wopeval.service.fork.plan_fork`, then create and execute
as any run); this module parses the options, registers the process's live tools and judge,
shows progress like ``wopeval run`` and reports the new run.
"""

from __future__ import annotations

import json
import signal
import sys
from contextlib import nullcontext
from typing import Annotated, Any

import anyio
import typer

from wopeval.cli.common import fail_input, opened_store, store_option
from wopeval.cli.gate_opts import bounds
from wopeval.cli.outage import run_exit_code, store_outage_exits
from wopeval.cli.output import failures_json, user_output_to_stderr
from wopeval.cli.progress import ProgressView, progress_bar
from wopeval.cli.run_opts import JudgeOpt, ToolOpt
from wopeval.engine.judge import Judge
from wopeval.engine.registry import Registry, import_object
from wopeval.engine.run import RunHandle
from wopeval.errors import RunNotFound, UserError
from wopeval.grading.detail import RunDetail
from wopeval.grading.gate import decide
from wopeval.service.fork import plan_fork
from wopeval.service.leases import ClaimWatch, holding_runs
from wopeval.service.runs import RunPlan, RunService
from wopeval.wire.summary import EvalSummary

_Forked = tuple[str, RunPlan, EvalSummary | None, RunDetail | None]


async def _cancel_on_signal(handle: RunHandle) -> None:
    """Ctrl-C or SIGTERM cancels the forked run cleanly (it cannot be resumed: fork again)."""
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            handle.cancel()
            return


async def _fork(
    store_url: str | None,
    source: tuple[str, str, int, int],
    registry: Registry,
    judge: Judge | None,
    show_progress: bool,
) -> _Forked:
    run_id, task_id, trial_index, at = source
    async with opened_store(store_url, must_exist=True) as store:
        service = RunService(store, registry, judge)
        try:
            plan = await plan_fork(service, run_id, task_id, trial_index, at)
        except RunNotFound:
            fail_input(f"RUN: run {run_id!r} is not in the store")
        except UserError as exc:
            fail_input(str(exc), title="cannot fork")
        claims = ClaimWatch()
        async with holding_runs(store, on_lost=claims):
            record = await service.create(plan)
            progress = progress_bar(show_progress)
            if progress is not None:
                typer.echo(
                    f"run {record.run_id}: trial {trial_index} of {task_id} from {run_id}, "
                    f"its first {at} tool call(s) served from the log",
                    err=True,
                )
            handle = RunHandle(record.run_id)
            view = ProgressView(progress, 1)
            with progress if progress is not None else nullcontext():
                async with anyio.create_task_group() as group:
                    group.start_soon(claims.watching(_cancel_on_signal), handle)
                    summary, detail = await service.execute_detailed(plan, handle, progress=view)
                    group.cancel_scope.cancel()
        claims.check(record.run_id)
        return record.run_id, plan, summary, detail


def fork(
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="The stored run to fork from.")],
    task: Annotated[str, typer.Option("--task", help="The task of the trial to fork.")],
    trial: Annotated[int, typer.Option("--trial", help="The trial index to fork (0-based).")],
    at: Annotated[
        int,
        typer.Option(
            "--at",
            help="Serve the trial's first N tool calls from the log; the rest run live.",
        ),
    ],
    tool: ToolOpt = None,
    judge: JudgeOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the new run as JSON.")] = False,
    store: Annotated[str | None, store_option()] = None,
) -> None:
    """Re-run a stored trial from call N as a new run linked to it (exit 0 passed, 1 failed).

    The agent and settings are the run's own; its first N tool calls are answered as
    recorded, in order, and the trial fails closed if the agent makes another call among
    them. Live tools (--tool) and the judge (--judge) belong to this process: give them again.
    """
    registry = Registry()
    for spec in tool or ():
        name, _, ref = spec.partition("=")
        registry.register_tool(name, import_object(ref))
    judge_obj: Judge | None = import_object(judge) if judge else None
    show = not as_json and sys.stderr.isatty()
    with store_outage_exits(store), user_output_to_stderr():
        new_id, plan, summary, detail = anyio.run(
            _fork, store, (run_id, task, trial, at), registry, judge_obj, show
        )
    link = plan.forked_from.model_dump(exclude_none=True) if plan.forked_from is not None else {}
    if summary is None:
        if as_json:
            typer.echo(json.dumps({"runId": new_id, "status": "cancelled", "forkedFrom": link}))
        typer.echo(f"run {new_id} was cancelled; what it recorded is kept", err=True)
        raise typer.Exit(1)
    verdict = decide(summary, plan.settings.gate, bounds(plan.suite, plan.settings.ci_level))
    if as_json:
        doc: dict[str, Any] = {
            "runId": new_id,
            "forkedFrom": link,
            "summary": summary.to_wire(),
            "gate": verdict.to_json(),
        }
        if detail is not None:
            doc["failures"] = failures_json(detail)
        typer.echo(json.dumps(doc))
    else:
        from rich.console import Console

        from wopeval.cli.render import print_summary

        typer.echo(f"forked from run {run_id}: task {task}, trial {trial}, at call {at}")
        print_summary(Console(), summary, new_id, plan.suite, detail=detail, verdict=verdict)
    raise typer.Exit(run_exit_code(new_id, verdict.passed, detail))


def register(app: typer.Typer) -> None:
    app.command()(fork)


__all__ = ["register"]
