"""Builders for compare tests: ``EvalSummary`` objects with and without trials blocks."""

from __future__ import annotations

from collections.abc import Sequence
from math import comb

from wopeval.compare.pairing import PairedTask
from wopeval.wire.summary import EvalSummary, TaskSummary, TrialsBlock

RUN_ID = "tenant-a/0123456789abcdef0123"
SUITE_ID = "core.acme.evals.support"


def task(task_id: str, score: float, passed: bool | None = None) -> TaskSummary:
    """A single-trial task entry; ``passed`` defaults to ``score >= 0.5``."""
    return TaskSummary(
        taskId=task_id, score=score, passed=score >= 0.5 if passed is None else passed
    )


def trial_task(task_id: str, n: int, passed_count: int) -> TaskSummary:
    """A task run ``n`` times with 0/1 trial scores, ``k = n`` and ``passRule: all`` (§B)."""
    mean = passed_count / n
    trials = TrialsBlock(
        n=n,
        passedCount=passed_count,
        meanScore=mean,
        passAtK=1.0 - comb(n - passed_count, n) / comb(n, n),
        passHatK=comb(passed_count, n) / comb(n, n),
    )
    return TaskSummary(taskId=task_id, score=mean, passed=passed_count == n, trials=trials)


def summary(tasks: Sequence[TaskSummary], aggregate: float | None = None) -> EvalSummary:
    """A summary over ``tasks``; ``aggregateScore`` defaults to the mean task score."""
    score = aggregate if aggregate is not None else sum(t.score for t in tasks) / max(len(tasks), 1)
    return EvalSummary(
        suiteId=SUITE_ID,
        suiteVersion="1.0.0",
        aggregateScore=score,
        passed=score >= 0.5,
        taskCount=len(tasks),
        passedCount=sum(1 for t in tasks if t.passed),
        tasks=list(tasks),
    )


def pairs(
    baseline: Sequence[float],
    candidate: Sequence[float],
    baseline_passed: Sequence[bool] | None = None,
    candidate_passed: Sequence[bool] | None = None,
) -> list[PairedTask]:
    """A paired table from parallel lists; pass decisions default to ``mean >= 0.5``."""
    base_ok = baseline_passed or [m >= 0.5 for m in baseline]
    cand_ok = candidate_passed or [m >= 0.5 for m in candidate]
    return [
        PairedTask(
            task_id=f"t{i}",
            baseline_mean=b,
            candidate_mean=c,
            baseline_passed=bp,
            candidate_passed=cp,
            baseline_pass_rate=1.0 if bp else 0.0,
            candidate_pass_rate=1.0 if cp else 0.0,
        )
        for i, (b, c, bp, cp) in enumerate(zip(baseline, candidate, base_ok, cand_ok, strict=True))
    ]
