"""Human output of a run's efficiency (:mod:`wopeval.grading.efficiency`): one table at 80
columns, a row per task and the suite's row. Informational: RFC 0244 §C gates nothing on it."""

from __future__ import annotations

from rich import box
from rich.table import Table

from wopeval.grading.efficiency import P50, P95, Efficiency, RunEfficiency, per_success_text


def latency_text(eff: Efficiency) -> tuple[str, str]:
    p50, p95 = eff.latency(P50), eff.latency(P95)
    return ("-" if p50 is None else str(p50.value), "-" if p95 is None else str(p95.value))


def efficiency_table(run: RunEfficiency) -> Table:
    """Per task and for the suite: successes of trials, cost per success with its interval,
    tokens per success, latency p50 and p95 (ms); every interval is in ``--json``."""
    level = f"{run.level * 100:g}%"
    table = Table(
        title=f"efficiency, informational ({level} intervals; cost in USD; latency in ms)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1, 0, 0),
        show_edge=False,
    )
    table.add_column("task", overflow="fold", min_width=8)
    table.add_column("ok/n", justify="right", no_wrap=True)
    table.add_column("cost/success", justify="right", overflow="fold", min_width=12)
    table.add_column("tokens/success", justify="right", no_wrap=True)
    table.add_column("p50", justify="right", no_wrap=True)
    table.add_column("p95", justify="right", no_wrap=True)
    rows = [*run.tasks, ("suite (all trials)", run.suite)]
    for i, (name, eff) in enumerate(rows):
        if i == len(rows) - 1:
            table.add_section()
        table.add_row(
            name,
            f"{eff.successes}/{eff.trials}",
            per_success_text(eff.cost_per_success, eff.cost_interval),
            per_success_text(eff.tokens_per_success, None),  # its interval: in --json
            *latency_text(eff),
        )
    return table


__all__ = ["efficiency_table", "latency_text"]
