"""``wopeval run``, ``grade``, ``runs`` and ``show``: execute suites and read stored runs."""

from __future__ import annotations

import json
import signal
import sys
from contextlib import AsyncExitStack, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from wopeval.cli.agent_opts import (
    AgentCmdOpt,
    AgentFileOpt,
    AgentOptions,
    ApiKeyEnvOpt,
    BaseUrlOpt,
    JudgeBaseUrlOpt,
    JudgeModelOpt,
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
from wopeval.cli.output import user_output_to_stderr
from wopeval.cli.render import failures_json, print_summary, runs_lines
from wopeval.compare import registered_methods
from wopeval.engine.distributed import RayUnavailable, init_ray, shutdown_ray
from wopeval.engine.judge import Judge, JudgeRequired
from wopeval.engine.mcp_tools import mcp_live_tools, parse_mcp_spec
from wopeval.engine.registry import AgentNotFound, Registry, import_object
from wopeval.engine.run import RunHandle, RunSettings, check_runnable
from wopeval.errors import RunNotFound, UserError
from wopeval.grading.detail import RunDetail, run_detail
from wopeval.grading.trial import TrialGrade
from wopeval.service.runs import LOG_PAGE, RunService, fold_log, grading_options, regrade
from wopeval.suite import SuiteError, load_suite, parse_suite
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.summary import EvalSummary

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from wopeval.events.store import EventStore, RunRecord
    from wopeval.wire.events import RunEvent

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


class _ProgressView:
    """A progress bar: trials done / total and the pass rate so far."""

    def __init__(self, progress: Progress | None, total: int) -> None:
        self.progress = progress
        self.done = 0
        self.passed = 0
        self.task = progress.add_task("trials", total=total, rate="-") if progress else None

    def __call__(self, task_id: str, trial_index: int, grade: TrialGrade | None) -> None:
        self.done += 1
        self.passed += 1 if grade is not None and grade.passed else 0
        if self.progress is not None and self.task is not None:
            rate = f"{self.passed / self.done:.0%} passing"
            self.progress.update(self.task, advance=1, rate=rate)


def _progress(enabled: bool) -> Progress | None:
    if not enabled:
        return None
    return Progress(
        TextColumn("[bold]trials"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )


def run(
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
    resume: Annotated[
        str | None,
        typer.Option(
            metavar="RUN",
            help="Finish this interrupted run (its stored suite and agent; SUITE not needed).",
        ),
    ] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run a suite against an agent: every task × every trial. Exit 0 if it passes, 1 if not."""
    if resume is not None:
        _resume(resume, tool, judge, store, as_json)
    if suite_path is None:
        fail_input("SUITE is required (or --resume RUN)")
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
        judge_obj: Judge | None = import_object(judge) if judge else None
        judge_obj = judge_obj or cli_judge(judge_model, judge_base_url, options, judge_trajectory)
        check_runnable(suite, judge_obj)
        mcp_specs = [parse_mcp_spec(spec) for spec in mcp or ()]
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
    )
    total = len(suite.tasks) * suite.trial_plan.effective_count
    show_progress = not as_json and sys.stderr.isatty()
    started_ray = executor == "ray" and _start_ray(ray_address)
    try:
        with user_output_to_stderr():  # an agent's print() never corrupts --json
            run_id, summary, detail = anyio.run(
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
            )
    finally:
        if started_ray:
            shutdown_ray()
    _report(run_id, summary, as_json, suite, detail)


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
        _, suite, summary, detail = anyio.run(
            resume_run, store, run_id, registry, judge_obj, _cancel_on_signal
        )
    _report(run_id, summary, as_json, suite, detail)


def _check_executor(executor: str, ray_address: str | None, mcp: list[str] | None) -> None:
    if executor not in ("local", "ray"):
        fail_input(f"--executor: {executor!r} is not one of local, ray")
    if executor != "ray" and ray_address is not None:
        fail_input("--ray-address needs --executor ray")
    if executor == "ray" and mcp:
        fail_input("--mcp cannot be used with --executor ray: MCP sessions live in this process")


def _start_ray(address: str | None) -> bool:
    """Start or join Ray for this command; True when this command must shut it down."""
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
) -> tuple[str, EvalSummary | None, RunDetail | None]:
    async with AsyncExitStack() as stack:
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
        service = RunService(store, registry, judge)
        try:
            plan = await service.plan(suite, agent_id, settings)
        except UserError as exc:
            fail_input(str(exc).replace("baselineRunId:", "--baseline:", 1))
        record = await service.create(plan)
        progress = _progress(show_progress)
        view = _ProgressView(progress, total)
        handle = RunHandle(record.run_id)
        with progress if progress is not None else nullcontext():
            async with anyio.create_task_group() as group:
                group.start_soon(_cancel_on_signal, handle)
                summary = await service.execute(plan, handle, progress=view)
                group.cancel_scope.cancel()  # stop listening for signals
        if summary is None:
            return record.run_id, None, None
        options = grading_options(plan.request())
        detail = await fold_log(store, record.run_id, lambda log: run_detail(suite, log, options))
        return record.run_id, summary, detail


async def _cancel_on_signal(handle: RunHandle) -> None:
    """Ctrl-C / SIGTERM cancel the run cleanly: brackets closed, ``run.cancelled`` recorded."""
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            handle.cancel()
            return


def _report(
    run_id: str,
    summary: EvalSummary | None,
    as_json: bool,
    suite: AgentEvalSuite,
    detail: RunDetail | None = None,
) -> None:
    if summary is None:
        typer.echo(f"run {run_id} was cancelled; what it recorded is kept", err=True)
        raise typer.Exit(EXIT_FAILED)
    if as_json:
        doc: dict[str, Any] = {"runId": run_id, "summary": summary.to_wire()}
        if detail is not None:  # the tenant's own output: why each failing trial failed
            doc["failures"] = failures_json(detail)
        typer.echo(json.dumps(doc))
    else:
        print_summary(Console(), summary, run_id, suite, detail=detail)
    raise typer.Exit(EXIT_OK if summary.passed else EXIT_FAILED)


def grade(
    run_id: Annotated[str, typer.Argument(metavar="RUN_ID")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Re-grade a stored run from its suite and log; exit 1 if it differs from what is stored."""

    async def go() -> Any:
        async with opened_store(store, must_exist=True) as opened:
            record = await opened.get_run(run_id)
            if record is None:
                raise RunNotFound(run_id)
            if record.summary is None:
                fail_input(f"run {run_id!r} has no summary to reproduce (status {record.status})")
            return await regrade(opened, run_id)

    try:
        result = anyio.run(go)
    except RunNotFound:
        fail_input(f"run {run_id!r} is not in the store")
    if as_json:
        typer.echo(result.summary.to_json())
    else:
        suite = parse_suite(result.record.suite_document)
        print_summary(Console(), result.summary, run_id, suite)
        same = result.reproduces_stored
        typer.echo("reproduces the stored summary exactly" if same else "DIFFERS from stored")
    raise typer.Exit(EXIT_OK if result.reproduces_stored else EXIT_FAILED)


def runs(
    limit: Annotated[int, typer.Option(min=1, help="How many, newest first.")] = 20,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List stored runs, newest first."""

    async def go() -> Any:
        async with opened_store(store, must_exist=True) as opened:
            return await opened.list_runs(limit=limit)

    records = anyio.run(go)
    if as_json:
        rows = [
            {
                "runId": r.run_id,
                "suiteId": r.suite_id,
                "suiteVersion": r.suite_version,
                "agentId": r.agent_id,
                "status": r.status,
                "createdAt": r.created_at,
                "passed": (r.summary or {}).get("passed"),
            }
            for r in records
        ]
        typer.echo(json.dumps({"runs": rows}))
    else:
        for line in runs_lines(records):
            typer.echo(line)


def show(
    run_id: Annotated[str, typer.Argument(metavar="RUN_ID")],
    events: Annotated[bool, typer.Option("--events", help="Also print the event log.")] = False,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print one stored run: status, summary and (with --events) its event log.

    The log is read in pages: the detail is folded in one pass (``run_detail``), the events
    are printed page by page; no more than a page of events is held at once.
    """

    async def go() -> None:
        async with opened_store(store, must_exist=True) as opened:
            record = await opened.get_run(run_id)
            if record is None:
                fail_input(f"run {run_id!r} is not in the store")
            if as_json:
                await _show_json(opened, record, events)
            else:
                await _show_text(opened, record, events)

    anyio.run(go)


async def _pages(store: EventStore, run_id: str) -> AsyncIterator[list[RunEvent]]:
    after = -1
    while page := await store.events(run_id, after, LOG_PAGE):
        yield page
        after = page[-1].sequence


async def _show_json(store: EventStore, record: RunRecord, events: bool) -> None:
    doc: dict[str, Any] = {
        "runId": record.run_id,
        "status": record.status,
        "summary": record.summary,
        "error": record.error,
    }
    if not events:
        typer.echo(json.dumps(doc))
        return
    head = json.dumps({**doc, "events": []})
    out = sys.stdout  # the same document as json.dumps of it whole, written a page at a time
    out.write(head[: -len("[]}")] + "[")
    first = True
    async for page in _pages(store, record.run_id):
        for event in page:
            out.write(("" if first else ", ") + json.dumps(event.to_wire()))
            first = False
    out.write("]}\n")
    out.flush()


async def _show_text(store: EventStore, record: RunRecord, events: bool) -> None:
    console = Console()
    count = await store.last_sequence(record.run_id) + 1
    console.print(f"run {record.run_id}  status [bold]{record.status}[/]  events {count}")
    if record.summary is not None:
        suite = parse_suite(record.suite_document)
        options = grading_options(record.run_request)
        detail = await fold_log(store, record.run_id, lambda log: run_detail(suite, log, options))
        summary = EvalSummary.model_validate(record.summary)
        print_summary(console, summary, record.run_id, suite, detail=detail)
    if record.error is not None:
        console.print(f"error: {record.error.get('code')}: {record.error.get('message')}")
    if events:
        async for page in _pages(store, record.run_id):
            for event in page:
                console.print(f"{event.sequence:>6} {event.type}", highlight=False)


def register(app: typer.Typer) -> None:
    app.command()(run)
    app.command()(grade)
    app.command()(runs)
    app.command()(show)


__all__ = ["EXIT_BAD_INPUT", "register"]
