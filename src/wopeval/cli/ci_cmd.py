"""``wopeval ci SUITE``: run a suite, compare it with a baseline, write one Markdown report.

The run is ``wopeval run``'s (the same engine, store and gate); the comparison is ``wopeval
compare``'s (the same paired verdict and its reach); the report is
:mod:`wopeval.cli.ci_report`. Exit codes, worst first: 2 bad input or set-up (before any
trial), 3 an outage (the run did not pass and trials failed for infrastructure), 1 the gate
failed or the verdict is ``regressed``, 4 the comparison cannot decide (unless
``--accept-undecidable``), 0 otherwise.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path
from typing import Annotated

import anyio
import typer

from wopeval.cli.agent_opts import (
    AgentCmdOpt,
    AgentFileOpt,
    AgentOptions,
    ApiKeyEnvOpt,
    BaseUrlOpt,
    ModelOpt,
)
from wopeval.cli.ci_report import CiOutcome, Scope, ci_markdown
from wopeval.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_RUN_ERROR,
    fail_input,
    opened_store,
)
from wopeval.cli.compare_cmd import EXIT_UNDECIDABLE, exit_code
from wopeval.cli.gate_opts import CiLevelOpt, RunGateOpt, bounds, chosen_gate
from wopeval.cli.outage import run_exit_code
from wopeval.cli.run_cmds import exit_stopped, load_suite_file, run_suite_cli
from wopeval.cli.run_opts import (
    DEFAULT_LIMITS,
    AgentOpt,
    ConcurrencyOpt,
    JudgeOpt,
    MaxCostOpt,
    OverrideTargetOpt,
    StoreOpt,
    ToolOpt,
    TrialTimeoutOpt,
)
from wopeval.cli.run_target import resolve_target
from wopeval.compare import compare_summaries, registered_methods
from wopeval.compare.report import CompareReport, RunSide
from wopeval.engine.run import RunSettings
from wopeval.events.records import RunRecord
from wopeval.events.urls import shown_url
from wopeval.grading.gate import DEFAULT_GATE, decide
from wopeval.grading.intervals import DEFAULT_LEVEL
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.summary import EvalSummary

# How far back --baseline-from looks for a completed run of the suite (newest first).
_BASELINE_SCAN = 1000


def _subset(
    suite: AgentEvalSuite, first: int | None, sample: int | None, seed: int
) -> tuple[AgentEvalSuite, Scope]:
    """The suite cut to its first ``first`` tasks or a ``sample`` drawn with ``seed`` (in the
    suite's order); the whole suite when neither is given or it has no more tasks."""
    total = len(suite.tasks)
    if first is not None and sample is not None:
        fail_input("--subset and --sample cannot be combined")
    size = first if first is not None else sample
    if size is None or size >= total:
        return suite, Scope(total, total)
    if first is not None:
        chosen = list(range(first))
    else:
        chosen = sorted(random.Random(seed).sample(range(total), size))
    tasks = [suite.tasks[i] for i in chosen]
    scope = Scope(total, size, None if sample is None else seed)
    return suite.model_copy(update={"tasks": tasks}), scope


async def _newest_of(url: str | None, suite_id: str) -> RunRecord | None:
    async with opened_store(url, must_exist=True) as store:
        for record in await store.list_runs(limit=_BASELINE_SCAN):
            completed = record.status == "completed" and record.summary is not None
            if completed and record.suite_id == suite_id:
                return record
    return None


async def _record(url: str | None, run_id: str) -> RunRecord | None:
    async with opened_store(url, must_exist=True) as store:
        return await store.get_run(run_id)


def _baseline(
    suite_id: str, run_id: str | None, from_store: str | None, store: str | None
) -> RunRecord | None:
    """The baseline's record, checked before any trial runs: it exists, it has a summary, and
    it is a run of ``suite_id``; else exit 2 naming what is wrong."""
    if run_id is not None and from_store is not None:
        fail_input("--baseline and --baseline-from cannot be combined")
    if run_id is not None:
        record = anyio.run(_record, store, run_id)
        where = shown_url(store) or "the default store"
        if record is None:
            fail_input(f"--baseline: run {run_id!r} is not in {where}")
    elif from_store is not None:
        record = anyio.run(_newest_of, from_store, suite_id)
        if record is None:
            fail_input(
                f"--baseline-from: {shown_url(from_store)} holds no completed run of suite "
                f"{suite_id!r} (among its newest {_BASELINE_SCAN})"
            )
    else:
        return None
    if record.summary is None:
        fail_input(f"--baseline: run {record.run_id!r} has no summary (status {record.status})")
    if record.suite_id != suite_id:
        fail_input(
            f"--baseline: run {record.run_id!r} is a run of suite {record.suite_id!r}, not of "
            f"{suite_id!r} (the suite given); a baseline must be a run of the same suite"
        )
    return record


def _compare(
    base: RunRecord, candidate: RunRecord, method: str | None, alpha: float
) -> CompareReport:
    base_digests = base.run_request.digests
    cand_digests = candidate.run_request.digests
    comparison = compare_summaries(
        EvalSummary.model_validate(base.summary),
        EvalSummary.model_validate(candidate.summary),
        base.run_id,
        method=method,
        alpha=alpha,
        baseline_digests=dict(base_digests.tasks) if base_digests is not None else None,
        candidate_digests=dict(cand_digests.tasks) if cand_digests is not None else None,
    )
    return CompareReport(
        RunSide(base.run_id, base.agent_id),
        RunSide(candidate.run_id, candidate.agent_id),
        comparison,
    )


def verdict_code(run_code: int, report: CompareReport | None, accept_undecidable: bool) -> int:
    """The exit code from the run's (0, 1 or 3) and the comparison's (0, 1 or 4), worst first:
    an outage, then a failure or regression, then a verdict that could not have been reached."""
    compared = (
        EXIT_OK if report is None else exit_code(report, accept_undecidable=accept_undecidable)
    )
    if run_code == EXIT_RUN_ERROR:
        return EXIT_RUN_ERROR
    if EXIT_FAILED in (run_code, compared):
        return EXIT_FAILED
    return compared


def _destination(report: Path | None) -> tuple[Path | None, str]:
    """Where the report goes: ``report``, else ``$GITHUB_STEP_SUMMARY`` (appended, as GitHub
    asks: one step's summary after another's), else stdout (None); checked before any trial, so
    a report that cannot be written costs no run."""
    step = os.environ.get("GITHUB_STEP_SUMMARY")
    target, option = (report, "--report") if report is not None else (None, "")
    if target is None and step:
        target, option = Path(step), "$GITHUB_STEP_SUMMARY"
    if target is not None and not target.parent.is_dir():
        fail_input(f"{option}: {target}: its directory {target.parent} does not exist")
    if target is not None and target.is_dir():
        fail_input(f"{option}: {target} is a directory")
    return target, option


def _write(text: str, target: Path | None, option: str) -> str:
    """Write the report where :func:`_destination` chose; returns where it went."""
    if target is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return "stdout"
    try:
        with target.open("a" if option != "--report" else "w", encoding="utf-8") as out:
            out.write(text)
    except OSError as exc:  # the run is stored; only its report is lost
        fail_input(f"{option}: cannot write {target}: {exc.strerror or exc}")
    return str(target)


_HELP_EPILOG = (
    "Exit codes: 0 passed, no regression; 1 the gate failed or the verdict is 'regressed'; "
    "2 bad input or set-up (a baseline of another suite, a missing run); 3 an outage (trials "
    "failed for infrastructure, the run could not be judged); 4 the comparison cannot decide "
    "(too few paired tasks for alpha) unless --accept-undecidable."
)


def ci(
    suite_path: Annotated[Path, typer.Argument(metavar="SUITE", help="Suite file (.json/.yaml).")],
    baseline: Annotated[
        str | None, typer.Option(metavar="RUN", help="Baseline run id in --store.")
    ] = None,
    baseline_from: Annotated[
        str | None,
        typer.Option(
            metavar="STORE",
            help="Take the newest completed run of the same suite in STORE as the baseline.",
        ),
    ] = None,
    report: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="Write the Markdown report here (default: append to $GITHUB_STEP_SUMMARY "
            "when set, else stdout).",
        ),
    ] = None,
    subset: Annotated[
        int | None, typer.Option(metavar="N", min=1, help="Quick subset: the first N tasks.")
    ] = None,
    sample: Annotated[
        int | None,
        typer.Option(metavar="N", min=1, help="Quick subset: N tasks drawn with --seed."),
    ] = None,
    seed: Annotated[int, typer.Option(metavar="S", help="The seed of --sample.")] = 0,
    agent: AgentOpt = None,
    override_target: OverrideTargetOpt = False,
    tool: ToolOpt = None,
    judge: JudgeOpt = None,
    agent_file: AgentFileOpt = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    api_key_env: ApiKeyEnvOpt = "OPENAI_API_KEY",
    agent_cmd: AgentCmdOpt = None,
    concurrency: ConcurrencyOpt = 8,
    trial_timeout: TrialTimeoutOpt = 300.0,
    max_cost: MaxCostOpt = None,
    gate: RunGateOpt = DEFAULT_GATE,
    ci_level: CiLevelOpt = DEFAULT_LEVEL,
    method: Annotated[
        str | None,
        typer.Option(help="Regression method (default: chosen from the data, as compare does)."),
    ] = None,
    alpha: Annotated[float, typer.Option(min=0.0, max=1.0, help="Regression alpha.")] = 0.05,
    accept_undecidable: Annotated[
        bool,
        typer.Option(
            "--accept-undecidable",
            help=f"Exit 0, not {EXIT_UNDECIDABLE}, when the comparison cannot decide.",
        ),
    ] = False,
    store: StoreOpt = None,
) -> None:
    """Run a suite, compare it with a baseline, write a Markdown report; exit by the verdict."""
    if method is not None and method not in registered_methods():
        fail_input(f"--method: {method!r} is not one of {', '.join(registered_methods())}")
    target_file, option = _destination(report)
    full = load_suite_file(suite_path)
    suite, scope = _subset(full, subset, sample, seed)
    base = _baseline(suite.suiteId, baseline, baseline_from, store)
    options = AgentOptions(agent_file, model, base_url, api_key_env, agent_cmd)
    target = resolve_target(
        suite, options, agent, override_target, tool, None, trial_timeout, max_cost,
        judge, None, None, False, (None, None),
    )  # fmt: skip
    settings = RunSettings(
        gate=chosen_gate(gate),
        concurrency=concurrency,
        trial_timeout_s=trial_timeout,
        host_max_cost_usd=max_cost,
        metadata=target.metadata,
        limits=DEFAULT_LIMITS,
        ci_level=ci_level,
    )
    total = len(suite.tasks) * suite.trial_plan.effective_count
    run_id, summary, detail, interrupted = run_suite_cli(
        store, False, "local", None, suite, target, settings, total, None
    )
    if summary is None:
        exit_stopped(run_id, interrupted, store, False)
    verdict = decide(summary, settings.gate, bounds(suite, ci_level))
    run_code = run_exit_code(run_id, verdict.passed, detail)
    compared = None
    if base is not None:
        candidate = anyio.run(_record, store, run_id)
        if candidate is None or candidate.summary is None:  # pragma: no cover - just recorded
            raise AssertionError(f"run {run_id} was recorded without a summary")
        compared = _compare(base, candidate, method, alpha)
    code = verdict_code(run_code, compared, accept_undecidable)
    outcome = CiOutcome(
        run_id, target.agent_id, summary, detail, verdict, compared,
        EvalSummary.model_validate(base.summary) if base is not None else None,
        scope, ci_level, code,
    )  # fmt: skip
    where = _write(ci_markdown(outcome), target_file, option)
    verdict_word = compared.comparison.regression.verdict if compared is not None else "-"
    typer.echo(
        f"wopeval ci: run {run_id} gate {'passed' if verdict.passed else 'failed'}, "
        f"vs baseline {verdict_word}; exit {code}; report: {where}",
        err=True,
    )
    raise typer.Exit(code)


ci.__doc__ = f"{ci.__doc__}\n\n{_HELP_EPILOG}"


def register(app: typer.Typer) -> None:
    app.command()(ci)


__all__ = ["register", "verdict_code"]
