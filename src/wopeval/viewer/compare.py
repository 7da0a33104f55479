"""The comparison page: two runs of a suite paired by ``taskId`` and definition digest (the
regression verdict); a task whose definition changed is shown, marked, and left out."""

from __future__ import annotations

from dataclasses import dataclass

from wopeval.compare.pairing import task_mean, task_pass_rate
from wopeval.compare.verdict import Comparison, compare_summaries
from wopeval.events.store import RunRecord
from wopeval.wire.summary import EvalSummary


@dataclass(frozen=True)
class TaskDelta:
    task_id: str
    baseline_rate: float
    candidate_rate: float
    baseline_mean: float
    candidate_mean: float
    changed: bool = False  # its definition differs between the runs: left out of the verdict

    @property
    def rate_delta(self) -> float:
        return self.candidate_rate - self.baseline_rate

    @property
    def mean_delta(self) -> float:
        return self.candidate_mean - self.baseline_mean


@dataclass(frozen=True)
class ComparePage:
    baseline: RunRecord
    candidate: RunRecord
    comparison: Comparison
    deltas: list[TaskDelta]
    only_baseline: list[str]
    only_candidate: list[str]


def compare_page(
    baseline: RunRecord, candidate: RunRecord, *, method: str, alpha: float
) -> ComparePage:
    """Raises ValueError when a run has no summary or the method or alpha is bad."""
    if baseline.summary is None or candidate.summary is None:
        raise ValueError("both runs need a summary (completed eval runs)")
    base = EvalSummary.model_validate(baseline.summary)
    cand = EvalSummary.model_validate(candidate.summary)
    digests = [r.run_request.digests for r in (baseline, candidate)]
    comparison = compare_summaries(
        base,
        cand,
        baseline.run_id,
        method=method,
        alpha=alpha,
        baseline_digests=digests[0].tasks if digests[0] is not None else None,
        candidate_digests=digests[1].tasks if digests[1] is not None else None,
    )
    base_tasks = {t.taskId: t for t in base.tasks}
    changed = set(comparison.changed)
    deltas = [
        TaskDelta(t.taskId, task_pass_rate(base_tasks[t.taskId]), task_pass_rate(t),
                  task_mean(base_tasks[t.taskId]), task_mean(t), t.taskId in changed)
        for t in cand.tasks
        if t.taskId in base_tasks
    ]  # fmt: skip
    cand_ids = {t.taskId for t in cand.tasks}
    return ComparePage(
        baseline=baseline,
        candidate=candidate,
        comparison=comparison,
        deltas=deltas,
        only_baseline=[t.taskId for t in base.tasks if t.taskId not in cand_ids],
        only_candidate=[t.taskId for t in cand.tasks if t.taskId not in base_tasks],
    )
