"""What each §F regression method can decide, by the number of paired tasks: a seeded simulation.

Prints one JSON object. For 3, 5, 10, 30 and 100 paired tasks, and for two shapes of run (one
pass/fail trial per task; five 0/1 trials per task, ``passRule: all``), each simulated comparison
draws a baseline and a candidate run of the same tasks and calls
:func:`wopeval.compare.compare_summaries` with each registered method and with the method chosen
from the data (``auto``):

- each task's baseline pass probability is drawn from Uniform(0.5, 1); the candidate's is that
  minus the drop (0, 0.2 or 0.5: no clipping is needed, so the drop is exact);
- ``falseRegression`` is the rate of ``regressed`` with no change (must stay ≤ alpha; its exact
  95% upper bound is printed), ``falseEither`` the rate of ``regressed`` or ``improved``;
- ``power20`` / ``power50`` the rate of ``regressed`` against a 20-point / 50-point drop;
- ``decidable`` whether the method can reach alpha with that many tasks at all
  (:func:`wopeval.compare.verdict.reach`): when it cannot, every verdict is ``inconclusive`` and
  ``wopeval compare`` exits 4.

Run: ``python3 bench/compare_sim.py`` (about a minute of CPU) or ``--quick`` (a few seconds).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats

from wopeval.compare import compare_summaries, registered_methods
from wopeval.compare.verdict import choose_method, reach
from wopeval.wire.summary import EvalSummary, TaskSummary, TrialsBlock

ALPHA = 0.05
TASK_COUNTS = (3, 5, 10, 30, 100)
DROPS = {"noChange": 0.0, "drop20": 0.2, "drop50": 0.5}
SHAPES = {"oneTrial": 1, "fiveTrials": 5}
RUN_ID = "bench/0123456789abcdef0123"
AUTO = "auto"


def _task(task_id: str, n: int, passed: int) -> TaskSummary:
    """A task entry: one 0/1 trial, or an RFC 0244 §B trials block with k = n, passRule all."""
    if n == 1:
        return TaskSummary(taskId=task_id, score=float(passed), passed=passed == 1)
    trials = TrialsBlock(
        n=n,
        passedCount=passed,
        meanScore=passed / n,
        passAtK=1.0 - math.comb(n - passed, n),
        passHatK=float(math.comb(passed, n)),
    )
    return TaskSummary(taskId=task_id, score=passed / n, passed=passed == n, trials=trials)


def _run(rng: np.random.Generator, latent: Any, trials: int) -> EvalSummary:
    passed = rng.binomial(trials, latent)
    tasks = [_task(f"t{i}", trials, int(c)) for i, c in enumerate(passed)]
    aggregate = float(np.mean(passed)) / trials
    return EvalSummary(
        suiteId="bench.sim.evals.compare",
        suiteVersion="1.0.0",
        aggregateScore=aggregate,
        passed=aggregate >= 0.5,
        taskCount=len(tasks),
        passedCount=sum(1 for t in tasks if t.passed),
        tasks=tasks,
    )


def _verdicts(
    tasks: int, trials: int, drop: float, reps: int, resamples: int, seed: int
) -> dict[str, dict[str, int]]:
    """Verdict counts per method (and ``auto``) over ``reps`` seeded comparisons."""
    rng = np.random.default_rng(seed)
    names = (*registered_methods(), AUTO)
    counts: dict[str, dict[str, int]] = {name: {} for name in names}
    for rep in range(reps):
        latent = rng.uniform(0.5, 1.0, tasks)
        baseline = _run(rng, latent, trials)
        candidate = _run(rng, latent - drop, trials)
        for name in names:
            comparison = compare_summaries(
                baseline,
                candidate,
                RUN_ID,
                method=None if name == AUTO else name,
                alpha=ALPHA,
                seed=rep,
                resamples=resamples,
            )
            verdict = str(comparison.regression.verdict)
            counts[name][verdict] = counts[name].get(verdict, 0) + 1
    return counts


def _upper(count: int, reps: int) -> float:
    """The exact (Clopper–Pearson) 95% upper bound of a rate."""
    return float(stats.binomtest(count, reps).proportion_ci(0.95, method="exact").high)


def _row(
    name: str, tasks: int, trials: int, cells: dict[str, dict[str, dict[str, int]]], reps: int
) -> dict[str, Any]:
    same = cells["noChange"][name]
    false_regressed = same.get("regressed", 0)
    method = name
    if name == AUTO:
        one = _run(np.random.default_rng(0), np.full(tasks, 0.5), trials)
        method = choose_method(one, one)[0]
    return {
        "method": method,
        "decidable": reach(method, tasks, alpha=ALPHA).decidable,
        "falseRegression": false_regressed / reps,
        "falseRegressionUpper95": round(_upper(false_regressed, reps), 4),
        "falseEither": (false_regressed + same.get("improved", 0)) / reps,
        "power20": cells["drop20"][name].get("regressed", 0) / reps,
        "power50": cells["drop50"][name].get("regressed", 0) / reps,
    }


def simulate(
    reps: int, resamples: int, task_counts: Sequence[int] = TASK_COUNTS, seed: int = 0
) -> dict[str, Any]:
    """The whole table: shape → method → task count → rates."""
    started = time.process_time()
    table: dict[str, Any] = {}
    for shape, trials in SHAPES.items():
        rows: dict[str, dict[str, Any]] = {name: {} for name in (*registered_methods(), AUTO)}
        for tasks in task_counts:
            cells = {
                scenario: _verdicts(tasks, trials, drop, reps, resamples, seed + tasks)
                for scenario, drop in DROPS.items()
            }
            for name, by_count in rows.items():
                by_count[str(tasks)] = _row(name, tasks, trials, cells, reps)
        table[shape] = rows
    holds = all(
        row["falseRegression"] <= ALPHA
        for rows in table.values()
        for by_count in rows.values()
        for row in by_count.values()
    )
    return {
        "alpha": ALPHA,
        "comparisonsPerCell": reps,
        "resamples": resamples,
        "seed": seed,
        "baselinePassProbability": "Uniform(0.5, 1) per task",
        "falseRegressionAtMostAlpha": holds,
        "cpuSeconds": round(time.process_time() - started, 1),
        "shapes": table,
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="60 comparisons a cell, B = 500")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    reps, resamples = (60, 500) if args.quick else (400, 1000)
    print(json.dumps(simulate(reps, resamples, seed=args.seed), indent=1))


if __name__ == "__main__":
    main()
