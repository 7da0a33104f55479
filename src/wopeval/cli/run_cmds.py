"""``wopeval run``: execute a suite (``grade``, ``runs`` and ``show`` are in stored_cmds)."""

from __future__ import annotations

import json
import signal
import sys
from contextlib import AsyncExitStack, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import anyio
import typer

from wopeval.cli.agent_opts import (
    AgentCmdOpt,
    AgentFileOpt,
    AgentOptions,
    ApiKeyEnvOpt,
    BaseUrlOpt,
    JudgeBaseUrlOpt,
    JudgeModelOpt,
    JudgePriceInOpt,
    JudgePriceOutOpt,
    JudgeTrajectoryOpt,
    ModelOpt,
    cli_judge,
    install_cli_agent,
)
from wopeval.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_OK,
    check_finite,
    fail_input,
    opened_store,
    store_option,
)
from wopeval.cli.output import failures_json, user_output_to_stderr
from wopeval.cli.progress import ProgressView, progress_bar
from wopeval.compare import registered_methods
from wopeval.engine.judge import Judge, JudgeRequired, JudgeSpend
from wopeval.engine.registry import AgentNotFound, Registry, import_object
from wopeval.engine.run import RunHandle, RunSettings, check_runnable
from wopeval.errors import UserError
from wopeval.service.leases import ClaimWatch, holding_runs
from wopeval.service.runs import RunService
from wopeval.suite import SuiteError, load_suite
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.request import TrialLimits
from wopeval.wire.summary import EvalSummary

if TYPE_CHECKING:  # imported where used: ``wopeval run`` reaches its first trial without them
    from wopeval.cli.merge_cmd import ShardOption
    from wopeval.grading.detail import RunDetail

StoreOpt = Annotated[str | None, store_option()]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON only.")]


def _load(path: Path) -> AgentEvalSuite:
    try:
        return load_suite(path)
    except SuiteError as exc:
        fail_input("\n".join(str(e) for e in exc.errors), title=f"invalid suite {path}")


def _choose_agent(
    suite: AgentEvalSuite, agent: str | None, override: bool, registry: Registry
) -> str:
    chosen = agent or suite.targetAgentId
    if chosen is None:
        fail_input("--agent is required: the suite declares no targetAgentId")
    registry.resolve(chosen)  # an unknown agent is reported as such, before any target advice
    if suite.targetAgentId and chosen != suite.targetAgentId and not override:
        fail_input(
            f"targetAgentId: the suite is authored for {suite.targetAgentId!r}, not {chosen!r} "
            "(pass --override-target to run it anyway)"
        )
    return chosen


def run(
    ctx: typer.Context,
    suite_path: Annotated[
        Path | None, typer.Argument(metavar="SUITE", help="Suite file (.json/.yaml).")
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option(
            help="Agent id or import path 'package.module:attr' (default: targetAgentId)."
        ),
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Trials running at once.")] = 8,
    trial_timeout: Annotated[float, typer.Option(min=0.001, help="Seconds per trial.")] = 300.0,
    max_tool_calls: Annotated[
        int, typer.Option(min=1, help="Tool calls per trial (past it: refused, the trial fails).")
    ] = TrialLimits().maxToolCalls,
    max_cost: Annotated[
        float | None, typer.Option(min=0, help="Run-wide cost ceiling in USD (counts every trial).")
    ] = None,
    judge: Annotated[
        str | None, typer.Option(help="Judge for rubric tasks: 'package.module:attr'.")
    ] = None,
    tool: Annotated[
        list[str] | None,
        typer.Option(help="Live tool NAME=package.module:attr (repeatable)."),
    ] = None,
    mcp: Annotated[
        list[str] | None,
        typer.Option(
            help="Live tools from an MCP server over stdio: '[PREFIX=]COMMAND [ARG ...]', e.g. "
            "'crm:=python3 -m crm_server' (repeatable)."
        ),
    ] = None,
    override_target: Annotated[bool, typer.Option(help="Run against another agent.")] = False,
    baseline: Annotated[
        str | None,
        typer.Option(help="Regression mode: compare against this completed run of the same suite."),
    ] = None,
    method: Annotated[
        str, typer.Option(help="Regression method (with --baseline).")
    ] = "paired-bootstrap",
    alpha: Annotated[float, typer.Option(min=0.0, max=1.0, help="Regression alpha.")] = 0.05,
    executor: Annotated[
        str,
        typer.Option(help="Where trials run: 'local' (this process) or 'ray' (Ray workers)."),
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(help="With --executor ray: the Ray cluster to join (default: a local one)."),
    ] = None,
    agent_file: AgentFileOpt = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    api_key_env: ApiKeyEnvOpt = "OPENAI_API_KEY",
    agent_cmd: AgentCmdOpt = None,
    judge_model: JudgeModelOpt = None,
    judge_base_url: JudgeBaseUrlOpt = None,
    judge_trajectory: JudgeTrajectoryOpt = False,
    judge_price_in: JudgePriceInOpt = None,
    judge_price_out: JudgePriceOutOpt = None,
    resume: Annotated[
        str | None,
        typer.Option(
            metavar="RUN",
            help="Finish this interrupted run with its stored suite, agent and settings; give "
            "its live tools (--tool) and judge (--judge) again.",
        ),
    ] = None,
    shard: Annotated[
        str | None,
        typer.Option(
            metavar="i/N",
            help="Run only shard i of N (0-based: 0 ≤ i < N) of the trials; grade the shards "
            "together with `wopeval merge` (docs/distributed.md).",
        ),
    ] = None,
    group: Annotated[
        str | None,
        typer.Option(help="With --shard: the run group (default: from the suite and settings)."),
    ] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run a suite against an agent: every task × every trial. Exit 0 if it passes, 1 if not."""
    if resume is not None:
        if shard is not None or group is not None:
            fail_input("--shard/--group cannot be combined with --resume (a shard resumes as one)")
        _refuse_with_resume(ctx)
        _resume(resume, tool, judge, store, as_json)
    if suite_path is None:
        fail_input("SUITE is required (or --resume RUN)")
    sharded = None
    if shard is not None or group is not None:
        from wopeval.cli.merge_cmd import shard_option

        sharded = shard_option(shard, group)
    _check_executor(executor, ray_address, mcp)
    check_finite("--trial-timeout", trial_timeout)
    check_finite("--max-cost", max_cost)
    suite = _load(suite_path)
    registry = Registry()
    options = AgentOptions(agent_file, model, base_url, api_key_env, agent_cmd)
    chosen = install_cli_agent(
        registry, suite, options, agent=agent, timeout_s=trial_timeout, max_cost_usd=max_cost
    )
    if chosen is not None:
        agent, override_target, mcp = chosen.agent_id, True, [*chosen.mcp, *(mcp or ())]
    if judge and judge_model:
        fail_input("--judge and --judge-model cannot be combined")
    try:
        agent_id = _choose_agent(suite, agent, override_target, registry)
        for spec in tool or ():
            name, _, ref = spec.partition("=")
            if not name or not ref:
                fail_input(f"--tool: {spec!r} is not NAME=package.module:attr")
            registry.register_tool(name, import_object(ref))
        judge_price = (judge_price_in, judge_price_out)
        llm_judge = cli_judge(judge_model, judge_base_url, options, judge_trajectory, judge_price)
        judge_obj: Judge | None = import_object(judge) if judge else llm_judge
        check_runnable(suite, judge_obj)
        mcp_specs = _mcp_specs(mcp)
    except (AgentNotFound, JudgeRequired, ValueError) as exc:
        fail_input(str(exc))
    if method not in registered_methods():
        fail_input(f"--method: {method!r} is not one of {', '.join(registered_methods())}")
    settings = RunSettings(
        concurrency=concurrency,
        trial_timeout_s=trial_timeout,
        host_max_cost_usd=max_cost,
        baseline_run_id=baseline,
        regression_method=method,
        alpha=alpha,
        executor="ray" if executor == "ray" else "local",
        metadata=dict(chosen.metadata) if chosen is not None else {},
        limits=TrialLimits(maxToolCalls=max_tool_calls),
    )
    total = len(suite.tasks) * suite.trial_plan.effective_count
    if sharded is not None:
        from wopeval.cli.merge_cmd import shard_total

        total = shard_total(suite, sharded)
        if total == 0:
            planned = len(suite.tasks) * suite.trial_plan.effective_count
            typer.echo(
                f"warning: --shard {shard} holds no trial (the suite plans {planned}, fewer "
                "than the shards): it records an empty run",
                err=True,
            )
    show_progress = not as_json and sys.stderr.isatty()
    started_ray = executor == "ray" and _start_ray(ray_address)
    try:
        with user_output_to_stderr():  # an agent's print() never corrupts --json
            run_id, summary, detail, interrupted = anyio.run(
                _execute,
                store,
                suite,
                agent_id,
                registry,
                settings,
                judge_obj,
                total,
                show_progress,
                mcp_specs,
                sharded,
            )
    finally:
        if started_ray:
            from wopeval.engine.distributed import shutdown_ray

            shutdown_ray()
    if summary is None:
        _stopped(run_id, interrupted, store, as_json)
    if sharded is not None:
        from wopeval.cli.merge_cmd import report_shard, shard_of

        report_shard(run_id, shard_of(store, run_id) or _never(), summary, suite, as_json, store)
    spent = None
    if judge_obj is not None:
        from wopeval.cli.judge_out import judge_spend_of

        spent = judge_spend_of(store, run_id)
    _report(run_id, summary, as_json, suite, detail, spent)


# What --resume takes: the run keeps its stored suite, agent and settings; the live tools and
# the judge are this process's own, so they are given again.
_RESUME_TAKES = frozenset({"resume", "tool", "judge", "store", "as_json"})


def _refuse_with_resume(ctx: typer.Context) -> None:
    """Options --resume would ignore are refused, naming them (the run's are kept)."""
    given = []
    for param in ctx.command.params:
        name = param.name
        if name is None or name in _RESUME_TAKES:
            continue
        source = ctx.get_parameter_source(name)
        if source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT"):
            given.append("SUITE" if name == "suite_path" else param.opts[-1])
    if given:
        fail_input(
            f"{', '.join(given)}: cannot be combined with --resume, which keeps the run's own "
            "suite, agent and settings (give only --tool, --judge, --store, --json)"
        )


def _resume(
    run_id: str, tool: list[str] | None, judge: str | None, store: str | None, as_json: bool
) -> None:
    from wopeval.cli.resume_cmd import resume_run

    registry = Registry()
    for spec in tool or ():
        name, _, ref = spec.partition("=")
        registry.register_tool(name, import_object(ref))
    judge_obj: Judge | None = import_object(judge) if judge else None
    with user_output_to_stderr():
        show_progress = not as_json and sys.stderr.isatty()
        _, suite, summary, detail, interrupted = anyio.run(
            resume_run, store, run_id, registry, judge_obj, _cancel_on_signal, show_progress
        )
    if summary is None:
        _stopped(run_id, interrupted, store, as_json)
    from wopeval.cli.merge_cmd import report_shard, shard_of

    if (shard := shard_of(store, run_id)) is not None:  # a shard reports as a shard
        report_shard(run_id, shard, summary, suite, as_json, store)
    _report(run_id, summary, as_json, suite, detail)


def _never() -> NoReturn:
    raise AssertionError("a shard run's record names its shard")


def _mcp_specs(mcp: list[str] | None) -> list[tuple[str, list[str]]]:
    if not mcp:
        return []
    from wopeval.engine.mcp_tools import parse_mcp_spec

    return [parse_mcp_spec(spec) for spec in mcp]


def _check_executor(executor: str, ray_address: str | None, mcp: list[str] | None) -> None:
    if executor not in ("local", "ray"):
        fail_input(f"--executor: {executor!r} is not one of local, ray")
    if executor != "ray" and ray_address is not None:
        fail_input("--ray-address needs --executor ray")
    if executor == "ray" and mcp:
        fail_input("--mcp cannot be used with --executor ray: MCP sessions live in this process")


def _start_ray(address: str | None) -> bool:
    """Start or join Ray for this command; True when this command must shut it down."""
    from wopeval.engine.distributed import RayUnavailable, init_ray

    try:
        return init_ray(address)
    except RayUnavailable as exc:
        fail_input(str(exc))
    except ConnectionError as exc:
        fail_input(f"--ray-address: cannot connect to Ray at {address!r}: {exc}")


async def _execute(
    store_url: str | None,
    suite: AgentEvalSuite,
    agent_id: str,
    registry: Registry,
    settings: RunSettings,
    judge: Judge | None,
    total: int,
    show_progress: bool,
    mcp_specs: list[tuple[str, list[str]]],
    sharded: ShardOption | None = None,
) -> tuple[str, EvalSummary | None, RunDetail | None, bool]:
    async with AsyncExitStack() as stack:
        if mcp_specs:
            from wopeval.engine.mcp_tools import mcp_live_tools
        for prefix, command in mcp_specs:
            try:
                tools = await stack.enter_async_context(mcp_live_tools(command, prefix=prefix))
            except OSError as exc:
                fail_input(f"--mcp: the MCP server {command[0]!r} could not be started: {exc}")
            for name, fn in tools.items():
                if name in registry.live_tools:
                    fail_input(f"--mcp: tool {name!r} is already registered")
                registry.register_tool(name, fn)
        store = await stack.enter_async_context(opened_store(store_url))
        claims = ClaimWatch()  # a run another process took over is stopped, and said so
        await stack.enter_async_context(holding_runs(store, on_lost=claims))
        on_signal = claims.watching(_cancel_on_signal)
        service = RunService(store, registry, judge)
        try:
            plan = await service.plan(suite, agent_id, settings)
        except UserError as exc:
            fail_input(str(exc).replace("baselineRunId:", "--baseline:", 1))
        progress = progress_bar(show_progress)
        view = ProgressView(progress, total)
        if sharded is not None:
            from wopeval.cli.merge_cmd import shard_plan
            from wopeval.cli.resume_cmd import continue_shard

            plan = shard_plan(plan, sharded)
            continued = await continue_shard(service, plan, progress, view, on_signal)
            if continued is not None:  # the group's unfinished run of this shard, finished
                claims.check(continued[0])
                return continued
        record = await service.create(plan)
        if progress is not None:  # on a terminal: the id to resume it by, should it be stopped
            typer.echo(f"run {record.run_id}: {total} trial(s)", err=True)
        handle = RunHandle(record.run_id)
        with progress if progress is not None else nullcontext():
            async with anyio.create_task_group() as group:
                group.start_soon(on_signal, handle)
                summary, detail = await service.execute_detailed(plan, handle, progress=view)
                group.cancel_scope.cancel()  # stop listening for signals
        claims.check(record.run_id)
        return record.run_id, summary, detail, handle.interrupted


async def _cancel_on_signal(handle: RunHandle) -> None:
    """Ctrl-C cancels the run cleanly: brackets closed, ``run.cancelled`` recorded. SIGTERM
    (what Kubernetes, systemd, Slurm and CI time-outs send) interrupts it: brackets closed but
    no terminal event, and its claim released, so ``wopeval run --resume`` (or the same
    ``--shard`` command again) finishes it, each trial scored once."""
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for received in signals:
            if received == signal.SIGTERM:
                handle.interrupt()
            handle.cancel()
            return


def _stopped(run_id: str, interrupted: bool, store: str | None, as_json: bool) -> NoReturn:
    """A run stopped by a signal: cancelled (Ctrl-C), or interrupted (SIGTERM) and resumable."""
    if not interrupted:
        if as_json:
            typer.echo(json.dumps({"runId": run_id, "status": "cancelled"}))
        typer.echo(f"run {run_id} was cancelled; what it recorded is kept", err=True)
        raise typer.Exit(EXIT_FAILED)
    from wopeval.events.urls import shown_url

    where = f" --store {shown_url(store)}" if store else ""
    resume = f"wopeval run --resume {run_id}{where}"
    if as_json:
        typer.echo(json.dumps({"runId": run_id, "status": "interrupted", "resume": resume}))
    typer.echo(
        f"run {run_id} was interrupted (SIGTERM); what it recorded is kept. Finish it with:\n"
        f"  {resume}",
        err=True,
    )
    raise typer.Exit(EXIT_FAILED)


def _report(
    run_id: str,
    summary: EvalSummary | None,
    as_json: bool,
    suite: AgentEvalSuite,
    detail: RunDetail | None = None,
    judge: JudgeSpend | None = None,
) -> None:
    if summary is None:
        typer.echo(f"run {run_id} was cancelled; what it recorded is kept", err=True)
        raise typer.Exit(EXIT_FAILED)
    if as_json:
        doc: dict[str, Any] = {"runId": run_id, "summary": summary.to_wire()}
        if detail is not None:  # the tenant's own output: why each failing trial failed
            doc["failures"] = failures_json(detail)
        if judge is not None:  # the judge's usage, apart from the agent's efficiency
            from wopeval.cli.judge_out import judge_json

            doc["judge"] = judge_json(judge)
        typer.echo(json.dumps(doc))
    else:
        from rich.console import Console

        from wopeval.cli.render import print_summary

        print_summary(Console(), summary, run_id, suite, detail=detail)
        if judge is not None:
            from wopeval.cli.judge_out import judge_lines

            for line in judge_lines(judge):
                typer.echo(line)
    raise typer.Exit(EXIT_OK if summary.passed else EXIT_FAILED)


def register(app: typer.Typer) -> None:
    app.command()(run)


__all__ = ["EXIT_BAD_INPUT", "register"]
