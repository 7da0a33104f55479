"""How ``wopeval run`` ends: the report and the exit by the gate, a stop by a signal, and an
outage of the event store while it runs (``wopeval run --resume`` finishes what was left)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer

from wopeval.cli.common import EXIT_FAILED, EXIT_RUN_ERROR
from wopeval.cli.gate_opts import bounds
from wopeval.cli.outage import run_exit_code, trials_json
from wopeval.engine.judge import JudgeSpend
from wopeval.grading.adaptive_report import adaptive_report
from wopeval.grading.efficiency import run_efficiency
from wopeval.grading.gate import DEFAULT_GATE, decide
from wopeval.grading.intervals import DEFAULT_LEVEL
from wopeval.grading.summary_intervals import summary_intervals
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.summary import EvalSummary

if TYPE_CHECKING:
    from wopeval.grading.detail import RunDetail


_E = TypeVar("_E", bound=BaseException)


@contextmanager
def store_away(store: str | None, as_json: bool) -> Iterator[None]:
    """A run the store's outage stopped (a database restart): one line, exit 3; the run is
    left unfinished, and ``--resume`` finishes it once the database is back."""
    from wopeval.events.reach import StoreUnreachableError, outage_reason, store_unreachable

    try:
        yield
    except Exception as exc:
        if not store_unreachable(exc):
            raise
        stopped = _first(exc, StoreUnreachableError)
        reason = outage_reason(exc)
        if stopped is None:
            typer.echo(f"error: the event store is unreachable ({reason})", err=True)
            raise typer.Exit(EXIT_RUN_ERROR) from None
        from wopeval.events.urls import shown_url

        where = f" --store {shown_url(store)}" if store else ""
        resume = f"wopeval run --resume {stopped.run_id}{where}"
        if as_json:
            typer.echo(json.dumps({"runId": stopped.run_id, "status": "interrupted",
                                   "resume": resume}))  # fmt: skip
        typer.echo(f"run {stopped.run_id} was interrupted: {reason}; what it recorded is kept. "
                   f"Finish it with: {resume}", err=True)  # fmt: skip
        raise typer.Exit(EXIT_RUN_ERROR) from None


def _first(error: BaseException, kind: type[_E]) -> _E | None:
    """``error`` if it is a ``kind``, else the first ``kind`` inside its task groups."""
    if isinstance(error, kind):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            if (found := _first(inner, kind)) is not None:
                return found
    return None


def exit_stopped(run_id: str, interrupted: bool, store: str | None, as_json: bool) -> NoReturn:
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


def report_run(
    run_id: str,
    summary: EvalSummary | None,
    as_json: bool,
    suite: AgentEvalSuite,
    detail: RunDetail | None = None,
    judge: JudgeSpend | None = None,
    gate: str = DEFAULT_GATE,
    store: str | None = None,
    *,
    level: float = DEFAULT_LEVEL,
) -> None:
    if summary is None:
        typer.echo(f"run {run_id} was cancelled; what it recorded is kept", err=True)
        raise typer.Exit(EXIT_FAILED)
    verdict = decide(summary, gate, bounds(suite, level))
    baseline = None
    if summary.regression is not None:  # what compare would say beside the verdict
        from wopeval.cli.compare_cmd import baseline_report

        baseline = baseline_report(store, summary.regression, run_id)
    if as_json:
        doc: dict[str, Any] = {
            "runId": run_id,
            "summary": summary.to_wire(),
            "gate": verdict.to_json(),
            "intervals": summary_intervals(summary, level).to_json(),
        }
        adaptive = adaptive_report(suite, summary)
        if adaptive is not None:  # what adaptive trials did (x-wopeval-adaptive)
            doc["adaptive"] = adaptive.to_json()
        if detail is not None:  # the tenant's own output: why each failing trial failed
            doc.update(trials_json(detail))
            doc["efficiency"] = run_efficiency(detail, level).to_json()  # informational
        if judge is not None:  # the judge's usage, apart from the agent's efficiency
            from wopeval.cli.judge_out import judge_json

            doc["judge"] = judge_json(judge)
        if baseline is not None:
            doc["baseline"] = baseline.to_json()
        typer.echo(json.dumps(doc))
    else:
        from rich.console import Console

        from wopeval.cli.render import print_summary

        print_summary(
            Console(), summary, run_id, suite, detail=detail, verdict=verdict, level=level
        )
        if judge is not None:
            from wopeval.cli.judge_out import judge_lines

            for line in judge_lines(judge):
                typer.echo(line)
        for note in baseline.notes() if baseline is not None else ():
            typer.echo(f"vs baseline: {note}")
    raise typer.Exit(run_exit_code(run_id, verdict.passed, detail))


__all__ = ["exit_stopped", "report_run", "store_away"]
