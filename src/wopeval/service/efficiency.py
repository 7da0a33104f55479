"""Efficiency and the cost/accuracy frontier of stored runs: each run's log folded once
(:func:`wopeval.service.runs.fold_log`) into its detail, then the pure
:mod:`wopeval.grading.efficiency` and :mod:`wopeval.grading.frontier`. Shared by
``wopeval pareto``, ``show --efficiency`` and the viewer's pareto page; nothing is stored."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from wopeval.events.store import EventStore, RunRecord
from wopeval.grading.detail import run_detail
from wopeval.grading.efficiency import Efficiency, RunEfficiency, run_efficiency
from wopeval.grading.frontier import Point, on_frontier
from wopeval.service.runs import fold_log, grading_options
from wopeval.suite import parse_suite

__all__ = ["ParetoRow", "mixed_suites", "pareto_rows", "stored_efficiency"]


async def stored_efficiency(store: EventStore, record: RunRecord, level: float) -> RunEfficiency:
    """A stored run's efficiency, from its suite and log (one paged pass)."""
    suite = parse_suite(record.suite_document, source=f"run {record.run_id}")
    options = grading_options(record.run_request)
    detail = await fold_log(store, record.run_id, lambda log: run_detail(suite, log, options))
    return run_efficiency(detail, level)


@dataclass(frozen=True)
class ParetoRow:
    """One run of the frontier: its pooled efficiency and whether it is on the frontier."""

    run_id: str
    agent_id: str
    suite: str
    efficiency: Efficiency
    frontier: bool

    def to_json(self) -> dict[str, object]:
        eff = self.efficiency.to_json()
        keep = ("trials", "successes", "successRate", "successRateInterval", "totalCostUsd",
                "costPerSuccessUsd", "costPerSuccessInterval")  # fmt: skip
        return {"runId": self.run_id, "agentId": self.agent_id, "suite": self.suite,
                **{key: eff[key] for key in keep}, "onFrontier": self.frontier}  # fmt: skip


def mixed_suites(records: Sequence[RunRecord]) -> list[str]:
    """The suite ids of ``records`` when there is more than one (their rates do not compare)."""
    suites = sorted({record.suite_id for record in records})
    return suites if len(suites) > 1 else []


async def pareto_rows(
    store: EventStore, records: Sequence[RunRecord], level: float
) -> list[ParetoRow]:
    """A row per run (each a completed eval run), the frontier marked."""
    found = [(r, (await stored_efficiency(store, r, level)).suite) for r in records]
    points = [Point(eff.success_rate or Fraction(0), eff.cost_per_success) for _, eff in found]
    marks = on_frontier(points)
    return [
        ParetoRow(r.run_id, r.agent_id, f"{r.suite_id}@{r.suite_version}", eff, mark)
        for (r, eff), mark in zip(found, marks, strict=True)
    ]
