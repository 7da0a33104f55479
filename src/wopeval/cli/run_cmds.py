"""``wopeval run``: execute a suite (``grade``, ``runs`` and ``show`` are in stored_cmds)."""

from __future__ import annotations

import signal
import sys
from contextlib import AsyncExitStack, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

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
    UserBaseUrlOpt,
    UserModelOpt,
)
from wopeval.cli.common import (
    EXIT_BAD_INPUT,
    fail_input,
    opened_store,
)
from wopeval.cli.gate_opts import CiLevelOpt, RunGateOpt, chosen_gate, stored_gate
from wopeval.cli.outage import store_outage_exits
from wopeval.cli.output import user_output_to_stderr
from wopeval.cli.progress import ProgressView, progress_bar
from wopeval.cli.run_end import exit_stopped, report_run, store_away
from wopeval.cli.run_opts import (
    DEFAULT_LIMITS,
    AgentOpt,
    AlphaOpt,
    BaselineOpt,
    ConcurrencyOpt,
    ExecutorOpt,
    GroupOpt,
    JsonOpt,
    JudgeOpt,
    MaxCostOpt,
    MaxOutputBytesOpt,
    MaxReasonCharsOpt,
    MaxToolCallsOpt,
    MaxToolResultBytesOpt,
    McpOpt,
    MethodOpt,
    OverrideTargetOpt,
    RayAddressOpt,
    RecordModelOpt,
    ReplayModelOpt,
    ResumeOpt,
    RetryBackoffOpt,
    RetryBudgetOpt,
    RetryInfraOpt,
    ShardOpt,
    StoreOpt,
    SuiteArg,
    ToolOpt,
    TrialTimeoutOpt,
    check_run_options,
    model_cassette,
    refuse_with_resume,
    retry_policy,
    trial_limits,
)
from wopeval.cli.run_target import RunTarget, resolve_target
from wopeval.compare import registered_methods
from wopeval.engine.judge import Judge
from wopeval.engine.registry import Registry, import_object
from wopeval.engine.run import RunHandle, RunSettings
from wopeval.errors import UserError
from wopeval.grading.gate import DEFAULT_GATE
from wopeval.grading.intervals import DEFAULT_LEVEL
from wopeval.service.leases import ClaimWatch, holding_runs
from wopeval.service.runs import RunService
from wopeval.suite import SuiteError, load_suite
from wopeval.suite.models import AgentEvalSuite
from wopeval.suite.user_override import with_user_model
from wopeval.wire.summary import EvalSummary

if TYPE_CHECKING:  # imported where used: ``wopeval run`` reaches its first trial without them
    from wopeval.cli.merge_cmd import ShardOption
    from wopeval.grading.detail import RunDetail


def load_suite_file(path: Path) -> AgentEvalSuite:
    try:
        return load_suite(path)
    except SuiteError as exc:
        fail_input("\n".join(str(e) for e in exc.errors), title=f"invalid suite {path}")


def run(
    ctx: typer.Context,
    suite_path: SuiteArg = None,
    agent: AgentOpt = None,
    concurrency: ConcurrencyOpt = 8,
    trial_timeout: TrialTimeoutOpt = 300.0,
    max_tool_calls: MaxToolCallsOpt = DEFAULT_LIMITS.maxToolCalls,
    max_output_bytes: MaxOutputBytesOpt = DEFAULT_LIMITS.maxOutputBytes,
    max_tool_result_bytes: MaxToolResultBytesOpt = DEFAULT_LIMITS.maxToolResultBytes,
    max_reason_chars: MaxReasonCharsOpt = DEFAULT_LIMITS.maxReasonChars,
    max_cost: MaxCostOpt = None,
    judge: JudgeOpt = None,
    tool: ToolOpt = None,
    mcp: McpOpt = None,
    override_target: OverrideTargetOpt = False,
    baseline: BaselineOpt = None,
    method: MethodOpt = "paired-bootstrap",
    alpha: AlphaOpt = 0.05,
    executor: ExecutorOpt = "local",
    ray_address: RayAddressOpt = None,
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
    user_model: UserModelOpt = None,
    user_base_url: UserBaseUrlOpt = None,
    resume: ResumeOpt = None,
    shard: ShardOpt = None,
    group: GroupOpt = None,
    gate: RunGateOpt = DEFAULT_GATE,
    ci_level: CiLevelOpt = DEFAULT_LEVEL,
    retry_infrastructure: RetryInfraOpt = 0,
    retry_budget: RetryBudgetOpt = None,
    retry_backoff: RetryBackoffOpt = 1.0,
    record_model: RecordModelOpt = None,
    replay_model: ReplayModelOpt = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run a suite against an agent: every task × every trial. Exit 0 passed, 1 failed, 3 outage.

    It passes by its gate (--gate): RFC 0244's suite gate unless told otherwise."""
    if resume is not None:
        refuse_with_resume(ctx, shard, group)
        _resume(resume, tool, judge, store, as_json)
    if suite_path is None:
        fail_input("SUITE is required (or --resume RUN)")
    sharded = check_run_options(executor, ray_address, mcp, trial_timeout, max_cost, shard, group)
    if user_base_url is not None and not user_base_url.startswith(("http://", "https://")):
        fail_input(f"--user-base-url: {user_base_url!r} is not an http(s) URL")
    suite = with_user_model(load_suite_file(suite_path), user_model, user_base_url)
    cassette = model_cassette(record_model, replay_model, executor, suite.suiteId)
    if cassette is not None:  # in force for the model check and every trial (their context)
        from wopeval.agents.cassette import using_cassette

        ctx.with_resource(using_cassette(cassette))
    options = AgentOptions(agent_file, model, base_url, api_key_env, agent_cmd)
    target = resolve_target(
        suite, options, agent, override_target, tool, mcp, trial_timeout, max_cost,
        judge, judge_model, judge_base_url, judge_trajectory, (judge_price_in, judge_price_out),
    )  # fmt: skip
    if method not in registered_methods():
        fail_input(f"--method: {method!r} is not one of {', '.join(registered_methods())}")
    settings = RunSettings(
        gate=chosen_gate(gate),
        concurrency=concurrency,
        trial_timeout_s=trial_timeout,
        host_max_cost_usd=max_cost,
        baseline_run_id=baseline,
        regression_method=method,
        alpha=alpha,
        executor="ray" if executor == "ray" else "local",
        metadata=target.metadata,
        limits=trial_limits(
            max_tool_calls, max_output_bytes, max_tool_result_bytes, max_reason_chars
        ),
        ci_level=ci_level,
        retry_infrastructure=retry_policy(
            retry_infrastructure, retry_budget, retry_backoff, executor
        ),
    )
    total = _trial_total(suite, sharded, shard)
    run_id, summary, detail, interrupted = run_suite_cli(
        store, as_json, executor, ray_address, suite, target, settings, total, sharded
    )
    _finish(
        run_id, summary, detail, interrupted, suite, target, settings, sharded, store, as_json,
        level=ci_level,
    )  # fmt: skip


def _trial_total(suite: AgentEvalSuite, sharded: ShardOption | None, shard: str | None) -> int:
    """The trials this command runs (its shard's, when sharded; an empty shard is warned of)."""
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
    return total


def run_suite_cli(
    store: str | None,
    as_json: bool,
    executor: str,
    ray_address: str | None,
    suite: AgentEvalSuite,
    target: RunTarget,
    settings: RunSettings,
    total: int,
    sharded: ShardOption | None,
) -> tuple[str, EvalSummary | None, RunDetail | None, bool]:
    """Run it (on Ray when asked, started or joined for this command and shut down after)."""
    show_progress = not as_json and sys.stderr.isatty()
    started_ray = executor == "ray" and _start_ray(ray_address)
    try:
        # an agent's print() never corrupts --json; the store's outages are one line each
        with store_outage_exits(store), store_away(store, as_json), user_output_to_stderr():
            return anyio.run(
                _execute,
                store,
                suite,
                target.agent_id,
                target.registry,
                settings,
                target.judge,
                total,
                show_progress,
                target.mcp_specs,
                sharded,
            )
    finally:
        if started_ray:
            from wopeval.engine.distributed import shutdown_ray

            shutdown_ray()


def _finish(
    run_id: str,
    summary: EvalSummary | None,
    detail: RunDetail | None,
    interrupted: bool,
    suite: AgentEvalSuite,
    target: RunTarget,
    settings: RunSettings,
    sharded: ShardOption | None,
    store: str | None,
    as_json: bool,
    *,
    level: float = DEFAULT_LEVEL,
) -> None:
    """Report the run (or its stop, or its shard) and exit by its gate."""
    if summary is None:
        exit_stopped(run_id, interrupted, store, as_json)
    if sharded is not None:
        from wopeval.cli.merge_cmd import report_shard, shard_of

        report_shard(run_id, shard_of(store, run_id) or _never(), summary, suite, as_json, store)
    spent = None
    if target.judge is not None:
        from wopeval.cli.judge_out import judge_spend_of

        spent = judge_spend_of(store, run_id)
    report_run(run_id, summary, as_json, suite, detail, spent, settings.gate, store, level=level)


def _resume(
    run_id: str, tool: list[str] | None, judge: str | None, store: str | None, as_json: bool
) -> None:
    from wopeval.cli.resume_cmd import resume_run

    registry = Registry()
    for spec in tool or ():
        name, _, ref = spec.partition("=")
        registry.register_tool(name, import_object(ref))
    judge_obj: Judge | None = import_object(judge) if judge else None
    with store_outage_exits(store), store_away(store, as_json), user_output_to_stderr():
        show_progress = not as_json and sys.stderr.isatty()
        _, suite, summary, detail, interrupted = anyio.run(
            resume_run, store, run_id, registry, judge_obj, _cancel_on_signal, show_progress
        )
    if summary is None:
        exit_stopped(run_id, interrupted, store, as_json)
    from wopeval.cli.merge_cmd import report_shard, shard_of

    if (shard := shard_of(store, run_id)) is not None:  # a shard reports as a shard
        report_shard(run_id, shard, summary, suite, as_json, store)
    gate = stored_gate(store, run_id)
    report_run(run_id, summary, as_json, suite, detail, gate=gate, store=store)


def _never() -> NoReturn:
    raise AssertionError("a shard run's record names its shard")


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
            except UserError as exc:  # not installed, or did not start: before any trial
                fail_input(f"--mcp: {exc}")
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
        view = ProgressView(progress, total, suite)
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


def register(app: typer.Typer) -> None:
    app.command()(run)


__all__ = ["EXIT_BAD_INPUT", "exit_stopped", "load_suite_file", "register", "run_suite_cli"]
