"""``wopeval plan SUITE``: how many trials per task and how many tasks decide the suite's gates
and detect a regression of a given size with each paired method, from a stored run's per-task
pass rates (``--baseline``, re-graded from its log) or assumed ones (``--assume-rate``,
``--rates FILE``). Exit 0 with a plan (even one that says no size is enough), 2 on bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import anyio
import typer
from rich import box
from rich.console import Console
from rich.table import Table

from wopeval.cli.common import EXIT_OK, fail_input, opened_store, store_option
from wopeval.cli.run_cmds import load_suite_file
from wopeval.compare.power import DEFAULT_SIMULATIONS
from wopeval.exports.textsafe import terminal_text
from wopeval.service.plan import (
    METHODS,
    PlanInputError,
    PlanSettings,
    SuitePlan,
    TaskRate,
    assumed_rates,
    baseline_rates,
    plan_suite,
    rates_from_mapping,
)
from wopeval.suite.models import AgentEvalSuite

StoreOpt = Annotated[str | None, store_option()]
NONE = "none"


def _odds(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _count(value: int | None) -> str:
    return NONE if value is None else str(value)


def _table(*columns: str) -> Table:
    """A table with these columns: the first left-aligned, ``<name`` left-aligned, the others
    right-aligned numbers; none wraps."""
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1, 0, 0), show_edge=False)
    for i, name in enumerate(columns):
        left = i == 0 or name.startswith("<")
        table.add_column(name.removeprefix("<"), justify="left" if left else "right", no_wrap=True)
    return table


def task_table(plan: SuitePlan) -> Table:
    """Per task: its rate and the trials deciding its passRule and its lower-bound gate."""
    table = _table("task", "rate", "<source", "passRule", "+ lower bound")
    task = table.columns[0]
    task.no_wrap, task.overflow, task.min_width, task.max_width = False, "fold", 8, 30
    for gates in plan.tasks:
        source = terminal_text(gates.task.source)
        table.add_row(terminal_text(gates.task.task_id), f"{gates.task.rate:.3f}", source[:12],
                      _count(gates.rule.trials), _count(gates.bound.trials))  # fmt: skip
    return table


def suite_table(plan: SuitePlan) -> Table:
    """The suite gates: trials per task, P(pass) at the rates and at the rates − mde."""
    table = _table("gate", "trials/task", "P(pass)", "P(pass) at −mde")
    for gate in plan.suite:
        table.add_row(gate.gate, _count(gate.trials), _odds(gate.pass_at_rate),
                      _odds(gate.pass_at_lowered))  # fmt: skip
    return table


def method_table(plan: SuitePlan) -> Table:
    """Each paired method: the tasks it needs, its power and false-regression rate there."""
    table = _table("method", "tasks", "power", "false regr.", "<how")
    for method in plan.methods:
        how = method.how if method.simulations is None else f"simulated ×{method.simulations}"
        table.add_row(method.method, _count(method.tasks), _odds(method.power),
                      _odds(method.false_regression), how)  # fmt: skip
    return table


def titles(plan: SuitePlan) -> tuple[str, str, str]:
    """A heading for each table."""
    return (
        f"Task gates: trials per task to decide passRule {plan.pass_rule!r} (and with the "
        "task's lower bound)",
        f"Suite gates (passScore {plan.pass_score:g}): trials per task",
        f"Regression of {plan.settings.mde:g} in pass rate: paired tasks needed at "
        f"{plan.regression_trials} trial(s) per task",
    )


def notes(plan: SuitePlan) -> list[str]:
    """What the tables cannot say: the error rates, the reasons for each 'none', the model."""
    s = plan.settings
    lines = [
        f"plan for {plan.suite_id}@{plan.version}: mde {s.mde:g}, alpha {s.alpha:g}, power "
        f"{s.power:g}, lower bounds at {s.level * 100:g}%; the suite runs "
        f"{plan.trials_now} trial(s) per task.",
        "A gate decides when a task (suite) at its rate passes with probability ≥ power and "
        "one at rate − mde with probability ≤ alpha (exact binomial).",
    ]
    grouped: dict[tuple[str, str], list[str]] = {}
    for gates in plan.tasks:
        for gate in (gates.rule, gates.bound):
            if gate.reason is not None:
                grouped.setdefault((gate.gate, gate.reason), []).append(gates.task.task_id)
    for (gate_name, reason), ids in grouped.items():
        named = ", ".join(terminal_text(task_id) for task_id in ids[:3])
        more = f" and {len(ids) - 3} more" if len(ids) > 3 else ""
        lines.append(f"{named}{more}, {gate_name}: {reason}")
    lines += [f"{gate.gate}: {gate.reason}" for gate in plan.suite if gate.reason is not None]
    lines += [f"{m.method}: {m.reason}" for m in plan.methods if m.reason is not None]
    simulated = next((m for m in plan.methods if m.simulations is not None), None)
    if simulated is not None:
        lines.append(
            f"simulated: seeded (seed {simulated.seed}) draws run through compare's own method "
            "and verdict; the bootstrap with 1,000 resamples."
        )
    return lines


def _rates_file(path: Path, suite: AgentEvalSuite) -> tuple[TaskRate, ...]:
    try:
        given = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        fail_input(f"--rates: cannot read {path}: {exc}")
    return rates_from_mapping(suite, given)


async def _baseline(url: str | None, suite: AgentEvalSuite, run_id: str) -> tuple[TaskRate, ...]:
    async with opened_store(url, must_exist=True) as store:
        return await baseline_rates(store, suite, run_id)


def plan(
    suite_path: Annotated[Path, typer.Argument(metavar="SUITE", show_default=False)],
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            metavar="RUN",
            help="Read each task's pass rate from this "
            "completed run of the suite (re-graded from its log).",
        ),
    ] = None,
    assume_rate: Annotated[
        float | None,
        typer.Option(
            "--assume-rate", metavar="RATE", help="Assume this per-trial pass rate for every task."
        ),
    ] = None,
    rates: Annotated[
        Path | None,
        typer.Option(
            "--rates",
            metavar="FILE",
            help="A JSON object {taskId: rate} giving every task's per-trial pass rate.",
        ),
    ] = None,
    mde: Annotated[
        float, typer.Option("--mde", help="The drop in per-trial pass rate to detect, in (0, 1).")
    ] = 0.10,
    alpha: Annotated[
        float, typer.Option("--alpha", help="Error rate: pass at rate − mde; false regression.")
    ] = 0.05,
    power: Annotated[
        float, typer.Option("--power", help="Chance to pass at the rate; to detect the mde.")
    ] = 0.80,
    ci_level: Annotated[
        float, typer.Option("--ci-level", help="Level of the lower-bound gates' intervals.")
    ] = 0.95,
    trials: Annotated[
        int | None,
        typer.Option(
            "--trials", help="Trials per task for the regression plan (default: the suite's count)."
        ),
    ] = None,
    method: Annotated[
        list[str] | None,
        typer.Option("--method", help=f"Plan only these methods ({', '.join(METHODS)})."),
    ] = None,
    simulations: Annotated[
        int, typer.Option("--simulations", help="Draws per simulated power.")
    ] = DEFAULT_SIMULATIONS,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the simulations.")] = 0,
    store: StoreOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON only.")] = False,
) -> None:
    """Plan trials per task and tasks: to decide the gates and detect a regression."""
    sources = [name for name, value in (("--baseline", baseline), ("--assume-rate", assume_rate),
               ("--rates", rates)) if value is not None]  # fmt: skip
    if len(sources) != 1:
        fail_input("give exactly one of --baseline RUN, --assume-rate RATE or --rates FILE"
                   + (f" (got {', '.join(sources)})" if sources else ""))  # fmt: skip
    settings = PlanSettings(mde, alpha, power, ci_level, trials,
                            tuple(method) if method else METHODS, simulations, seed)  # fmt: skip
    try:
        settings.check()
    except PlanInputError as exc:
        fail_input(str(exc))
    suite = load_suite_file(suite_path)
    try:
        if baseline is not None:
            found = anyio.run(_baseline, store, suite, baseline)
        elif assume_rate is not None:
            found = assumed_rates(suite, assume_rate)
        else:
            assert rates is not None
            found = _rates_file(rates, suite)
        result = plan_suite(suite, found, settings)
    except PlanInputError as exc:
        fail_input(str(exc))
    if as_json:
        typer.echo(json.dumps(result.to_json()))
        raise typer.Exit(EXIT_OK)
    console = Console()
    tables = (task_table(result), suite_table(result), method_table(result))
    for title, table in zip(titles(result), tables, strict=True):
        console.print(title, markup=False, highlight=False, style="bold")
        console.print(table)
        console.print()
    for line in notes(result):
        console.print(line, markup=False, highlight=False)
    raise typer.Exit(EXIT_OK)


def register(app: typer.Typer) -> None:
    app.command()(plan)


__all__ = ["method_table", "notes", "register", "suite_table", "task_table", "titles"]
