"""One verdict object for every output of ``wopeval compare``: the text, ``--json`` and Markdown.

:class:`CompareReport` holds a :class:`~wopeval.compare.verdict.Comparison` and the two runs it
compared (run id and agent); each output is a rendering of it, so no output can say something the
others do not. ``decidable`` is wopeval's own fact beside the RFC 0244 §F wire ``verdict``: when
it is false the method could not have said ``regressed`` with these pairs, whatever happened.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wopeval.compare.verdict import Comparison


@dataclass(frozen=True)
class RunSide:
    """One of the compared runs: its id and the agent it evaluated (``None`` if not recorded)."""

    run_id: str
    agent_id: str | None


@dataclass(frozen=True)
class CompareReport:
    baseline: RunSide
    candidate: RunSide
    comparison: Comparison

    @property
    def decidable(self) -> bool:
        """True when the method could reach alpha on the pairs at hand."""
        reach = self.comparison.reach
        return reach is None or reach.decidable

    def notes(self) -> list[str]:
        """What a reader must know besides the verdict, most important first."""
        comparison = self.comparison
        notes: list[str] = []
        if comparison.reach is not None and comparison.reach.message is not None:
            notes.append(f"cannot decide: {comparison.reach.message}")
        if comparison.chosen is not None:
            notes.append(
                f"method {comparison.regression.method} chosen from the data "
                f"({comparison.chosen}); --method names another"
            )
        if comparison.changed:
            count = len(comparison.changed)
            notes.append(
                f"{count} task{'s' * (count != 1)} changed between the runs and left out: "
                + ", ".join(comparison.changed)
            )
        if not comparison.definitions_checked:
            notes.append(
                "task definitions could not be checked (a run stored no digests): "
                "tasks are paired by taskId only"
            )
        return notes

    def verdict_parts(self) -> list[str]:
        """The verdict line's parts, in order."""
        regression = self.comparison.regression
        p_value = self.comparison.result.p_value
        reach = self.comparison.reach
        parts = [
            f"verdict {regression.verdict}",
            f"method {regression.method}",
            f"alpha {regression.alpha}",
            f"paired {regression.pairedTaskCount}",
            f"scoreDelta {regression.scoreDelta:+.4f}",
            f"p {'-' if p_value is None else f'{p_value:.4g}'}",
        ]
        if reach is not None:
            parts.append(f"smallest reachable p {reach.min_p_value:.4g}")
        if self.comparison.changed:
            parts.append(f"changed {len(self.comparison.changed)}")
        return parts

    def agents_lines(self) -> list[str]:
        """One line per run: its role, id and agent."""
        return [
            f"{role} {side.run_id} (agent {side.agent_id or '-'})"
            for role, side in (("baseline", self.baseline), ("candidate", self.candidate))
        ]

    def to_json(self) -> dict[str, Any]:
        comparison = self.comparison
        result = comparison.result
        reach = comparison.reach
        return {
            "regression": comparison.regression.model_dump(mode="json", exclude_none=True),
            "baseline": {"runId": self.baseline.run_id, "agentId": self.baseline.agent_id},
            "candidate": {"runId": self.candidate.run_id, "agentId": self.candidate.agent_id},
            "decidable": self.decidable,
            "cannotDecide": reach.message if reach is not None else None,
            "minReachablePValue": reach.min_p_value if reach is not None else None,
            "needsPairedTasks": reach.needs if reach is not None else None,
            "methodsThatCanDecide": list(reach.deciders) if reach is not None else [],
            "methodChosenFrom": comparison.chosen,
            "definitionsChecked": comparison.definitions_checked,
            "changedTasks": list(comparison.changed),
            "notes": self.notes(),
            "statistic": result.statistic_name,
            "estimate": result.estimate,
            "pValue": result.p_value,
            "ciLow": result.ci_low,
            "ciHigh": result.ci_high,
            "pairs": [
                {
                    "taskId": p.task_id,
                    "baselineMean": p.baseline_mean,
                    "candidateMean": p.candidate_mean,
                    "baselinePassRate": p.baseline_pass_rate,
                    "candidatePassRate": p.candidate_pass_rate,
                    "baselinePassed": p.baseline_passed,
                    "candidatePassed": p.candidate_passed,
                }
                for p in comparison.pairs
            ],
        }

    def to_markdown(self) -> str:
        """A Markdown section for a CI job summary (ids and numbers only, pipes escaped)."""

        def cell(text: str) -> str:
            return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")

        lines = [
            f"### compare: {cell(str(self.comparison.regression.verdict))}",
            "",
            *(f"- {cell(line)}" for line in self.agents_lines()),
            "",
            " · ".join(cell(part) for part in self.verdict_parts()),
            "",
        ]
        lines += [f"- {cell(note)}" for note in self.notes()]
        lines += [
            "",
            "| task | baseline mean | candidate mean | Δ mean |",
            "| --- | --- | --- | --- |",
        ]
        lines += [
            f"| `{cell(p.task_id)}` | {p.baseline_mean:.3f} | {p.candidate_mean:.3f} "
            f"| {p.difference:+.3f} |"
            for p in self.comparison.pairs
        ]
        return "\n".join(lines) + "\n"


__all__ = ["CompareReport", "RunSide"]
