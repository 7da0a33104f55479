"""Calibration and power of the RFC 0244 §F regression methods on simulated agents.

Prints one JSON object. Each simulated comparison builds two ``EvalSummary`` objects with RFC 0244
§B trials blocks (30 tasks, 5 trials each, 0/1 trial scores, ``passRule: all``) and runs
:func:`wopeval.compare.compare_summaries` for each of the four registered methods.

- **calibration**: both runs come from the same agent (each task's latent success probability is
  drawn from a Beta prior and shared). The rate of ``improved`` + ``regressed`` verdicts must stay
  at or below alpha within sampling error; the Clopper–Pearson 95% interval is printed. The named
  peer ``bootstrap-percentile-inversion`` is the p-value read off the percentile interval
  (2·min(P*(mean* ≤ 0), P*(mean* ≥ 0))) on the same resamples, for comparison.
- **power**: the candidate's latent probability is min(p + delta, 1); the rate of ``improved``.
- **equivalence**: the rate of ``unchanged`` for the two methods with an equivalence check, for a
  true difference of zero and for a true difference equal to the margin (must stay ≤ alpha).

Run: ``python3 bench/regression.py``.
"""

from __future__ import annotations

import json
import math
import time
from collections import Counter
from typing import Any

import numpy as np
from scipy import integrate, stats

from wopeval.compare import compare_summaries, pair_tasks, registered_methods
from wopeval.compare.methods import MethodResult, bootstrap_resamples, differences
from wopeval.compare.verdict import decide, identical_on_pairs
from wopeval.wire.summary import EvalSummary, TaskSummary, TrialsBlock

TASKS = 30
TRIALS = 5
SIMULATIONS = 1000
ALPHA = 0.05
RESAMPLES = 2000  # production default is 10,000; 2,000 keeps the whole bench near one minute
PRIORS = {"u-shaped-beta-0.5-0.5": (0.5, 0.5), "centred-beta-2-2": (2.0, 2.0)}
POWER_PRIOR = "u-shaped-beta-0.5-0.5"
DELTAS = (0.05, 0.10, 0.20)
EQUIVALENCE_DELTA = 0.10
RUN_ID = "bench/0123456789abcdef0123"
PEER = "bootstrap-percentile-inversion"


def _task(task_id: str, passed_count: int) -> TaskSummary:
    """A §B task entry for 0/1 trial scores with k = n = TRIALS."""
    n, c = TRIALS, passed_count
    trials = TrialsBlock(
        n=n,
        passedCount=c,
        meanScore=c / n,
        passAtK=1.0 - math.comb(n - c, n) / math.comb(n, n),
        passHatK=math.comb(c, n) / math.comb(n, n),
    )
    return TaskSummary(taskId=task_id, score=c / n, passed=c == n, trials=trials)


def _run(rng: np.random.Generator, latent: np.ndarray[Any, np.dtype[np.float64]]) -> EvalSummary:
    """One simulated eval run: TRIALS Bernoulli trials per task at its latent probability."""
    passed = rng.binomial(TRIALS, latent)
    tasks = [_task(f"t{i}", int(c)) for i, c in enumerate(passed)]
    aggregate = float(np.mean(passed)) / TRIALS
    return EvalSummary(
        suiteId="bench.sim.evals.regression",
        suiteVersion="1.0.0",
        aggregateScore=aggregate,
        passed=aggregate >= 0.5,
        taskCount=TASKS,
        passedCount=sum(1 for t in tasks if t.passed),
        tasks=tasks,
    )


def _peer_verdict(baseline: EvalSummary, candidate: EvalSummary, seed: int) -> str:
    """The percentile-inversion bootstrap p on the same resamples, through the same rules."""
    pairs = pair_tasks(baseline, candidate)
    diffs = differences(pairs)
    means, _ = bootstrap_resamples(diffs, seed=seed, resamples=RESAMPLES)
    p = min(1.0, 2.0 * min(float(np.mean(means <= 0)), float(np.mean(means >= 0))))
    result = MethodResult("mean-task-score-difference", float(diffs.mean()), p, None, None, TASKS)
    return decide(result, alpha=ALPHA, equivalent=None, identical=identical_on_pairs(pairs))


def _simulate(
    prior: tuple[float, float], delta: float, seed: int, *, margin: float | None, peer: bool
) -> dict[str, Counter[str]]:
    """Verdict counts per method over SIMULATIONS comparisons."""
    rng = np.random.default_rng(seed)
    counts: dict[str, Counter[str]] = {name: Counter() for name in registered_methods()}
    if peer:
        counts[PEER] = Counter()
    for sim in range(SIMULATIONS):
        latent = rng.beta(*prior, TASKS)
        baseline = _run(rng, latent)
        candidate = _run(rng, np.minimum(latent + delta, 1.0))
        for name in registered_methods():
            if margin is not None and name not in ("paired-t", "paired-bootstrap"):
                continue
            comparison = compare_summaries(
                baseline,
                candidate,
                RUN_ID,
                method=name,
                alpha=ALPHA,
                seed=sim,
                equivalence_margin=margin,
                resamples=RESAMPLES,
            )
            counts[name][str(comparison.regression.verdict)] += 1
        if peer:
            counts[PEER][_peer_verdict(baseline, candidate, sim)] += 1
    return {name: c for name, c in counts.items() if c}


def _rate(count: int) -> dict[str, float]:
    """Rate with its exact Clopper–Pearson 95% interval."""
    interval = stats.binomtest(count, SIMULATIONS).proportion_ci(0.95, method="exact")
    return {
        "rate": count / SIMULATIONS,
        "lower95": round(float(interval.low), 4),
        "upper95": round(float(interval.high), 4),
    }


def _calibration() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for index, (label, prior) in enumerate(PRIORS.items()):
        table: dict[str, Any] = {}
        for name, verdicts in _simulate(prior, 0.0, 100 + index, margin=None, peer=True).items():
            wrong = verdicts["improved"] + verdicts["regressed"]
            row = _rate(wrong)
            row["ratioToAlpha"] = round(row["rate"] / ALPHA, 3)
            table[name] = {**row, "consistentWithAlpha": row["lower95"] <= ALPHA}
        out[label] = table
    return out


def _true_difference(prior: tuple[float, float], delta: float) -> float:
    """Population mean per-task difference E[min(p + delta, 1) − p] for p ~ Beta(prior)."""
    value, _ = integrate.quad(
        lambda p: (min(p + delta, 1.0) - p) * stats.beta.pdf(p, *prior), 0.0, 1.0, limit=200
    )
    return float(value)


def _power() -> dict[str, Any]:
    prior = PRIORS[POWER_PRIOR]
    out: dict[str, Any] = {}
    for index, delta in enumerate(DELTAS):
        counts = _simulate(prior, delta, 200 + index, margin=None, peer=False)
        reference = counts["paired-t"]["improved"] / SIMULATIONS
        rows: dict[str, Any] = {"trueMeanDifference": round(_true_difference(prior, delta), 4)}
        for name, verdicts in counts.items():
            power = verdicts["improved"] / SIMULATIONS
            rows[name] = {
                "improved": power,
                "regressed": verdicts["regressed"] / SIMULATIONS,
                "ratioToPairedT": round(power / reference, 3) if reference else None,
            }
        out[f"+{delta:.2f}"] = rows
    return out


def _equivalence() -> dict[str, Any]:
    prior = PRIORS[POWER_PRIOR]
    margin = _true_difference(prior, EQUIVALENCE_DELTA)
    out: dict[str, Any] = {"margin": round(margin, 4)}
    cases = {"sameAgent": 0.0, "trueDifferenceAtMargin": EQUIVALENCE_DELTA}
    for index, (label, delta) in enumerate(cases.items()):
        counts = _simulate(prior, delta, 300 + index, margin=margin, peer=False)
        rows = {name: _rate(v["unchanged"]) for name, v in counts.items()}
        if delta > 0.0:  # a false "unchanged": must stay at or below alpha
            rows = {k: {**r, "consistentWithAlpha": r["lower95"] <= ALPHA} for k, r in rows.items()}
        out[label] = rows
    return out


def main() -> None:
    started = time.perf_counter()
    report: dict[str, Any] = {
        "benchmark": "regression-verdict-calibration-and-power",
        "config": {
            "tasks": TASKS,
            "trialsPerTask": TRIALS,
            "trialScores": "0/1",
            "passRule": "all",
            "simulations": SIMULATIONS,
            "alpha": ALPHA,
            "bootstrapResamples": RESAMPLES,
            "bootstrapResamplesNote": "production default is 10,000; reduced here for runtime",
            "powerPrior": POWER_PRIOR,
            "candidateLatent": "min(p + delta, 1)",
        },
        "calibration": _calibration(),
        "power": _power(),
        "equivalence": _equivalence(),
    }
    report["runtimeSeconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
