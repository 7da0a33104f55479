"""Does ``wopeval plan`` keep its word? A seeded simulation over synthetic suites.

Prints one JSON object. For each of 20 seeded synthetic suites (task count, per-task rates,
trials per task, passRule, passScore and mde drawn at random), the plan is made as ``wopeval
plan`` makes it (:func:`wopeval.service.plan.plan_suite`), then runs of the planned size are
simulated afresh, with another seed, through the very same method and verdict functions
(:func:`wopeval.compare.power.simulated_regressed`):

- ``power``: for each paired method, the share of ``regressed`` verdicts when every task's rate
  is lowered by the mde, at the planned number of tasks; it must lie within ±3 points of the
  power the plan states;
- ``falseRegression``: the share of ``regressed`` verdicts with nothing changed, at the same size;
  it must stay at or below alpha + 1 point;
- the suite gate too, where the plan found a trial count: the share of simulated runs whose
  total passes meet the gate's threshold, at the rates (within ±3 points of the plan's
  ``P(pass)``) and at the rates lowered by the mde (at most alpha + 1 point).

Monte-Carlo error: the check draws ``--check`` runs (5,000: a standard error of 0.57 points at
power 0.8); a simulated method's plan also stands on its own draws (``--simulations``, by
default the planner's own 5,000), so its stated power carries that error as well: about 0.8
points for the two together, so ±3 points is some 3.7 standard errors.

Run: ``python3 bench/plan_sim.py`` (many CPU minutes) or ``--quick`` (4 suites, fewer draws).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from fractions import Fraction
from typing import Any

import numpy as np

from wopeval.compare.power import DEFAULT_SIMULATIONS, Design, simulated_regressed
from wopeval.grading.planning import lowered, suite_minimum
from wopeval.service.plan import METHODS, PLAN_RESAMPLES, PlanSettings, TaskRate, plan_suite
from wopeval.suite import parse_suite

ALPHA = 0.05
POWER = 0.8
TOLERANCE = 0.03  # ±3 points on power
FALSE_SLACK = 0.01  # alpha + 1 point


def synthetic_suite(seed: int) -> tuple[Any, list[TaskRate], float]:
    """A suite document, its tasks' rates and the mde, all drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    tasks = int(rng.integers(4, 25))
    trials = int(rng.choice([1, 3, 5]))
    rule = str(rng.choice(["all", "any", "mean"]))
    pass_score = float(rng.choice([0.5, 0.6, 0.7, 0.8]))
    mde = float(rng.choice([0.15, 0.2, 0.25, 0.3]))
    rates = [round(float(r), 2) for r in rng.uniform(0.55, 0.98, size=tasks)]
    doc = {
        "suiteId": f"core.bench.evals.plan{seed}",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [
            {
                "taskId": f"t{i}",
                "input": "x",
                "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}},
            }
            for i in range(tasks)
        ],
        "trials": {"count": trials, "passRule": rule},
        "thresholds": {"passScore": pass_score},
    }
    suite = parse_suite(doc, source=f"bench suite {seed}")
    return suite, [TaskRate(f"t{i}", r, "drawn") for i, r in enumerate(rates)], mde


def gate_check(
    rates: list[float], mde: float, trials: int, score: Fraction, level: float | None,
    draws: int, seed: int,
) -> tuple[float, float]:  # fmt: skip
    """Shares of simulated runs passing the suite gate at the rates and at rates − mde."""
    rng = np.random.default_rng(seed)
    minimum = suite_minimum(len(rates), trials, score, level)
    good = rng.binomial(trials, np.asarray(rates), size=(draws, len(rates))).sum(axis=1)
    low = np.asarray([lowered(r, mde) for r in rates])
    bad = rng.binomial(trials, low, size=(draws, len(rates))).sum(axis=1)
    return float(np.mean(good >= minimum)), float(np.mean(bad >= minimum))


def one_suite(seed: int, simulations: int, check: int) -> dict[str, Any]:
    suite, rates, mde = synthetic_suite(seed)
    settings = PlanSettings(mde=mde, alpha=ALPHA, power=POWER, simulations=simulations, seed=seed)
    started = time.perf_counter()
    plan = plan_suite(suite, rates, settings)
    planned_s = time.perf_counter() - started
    design_args = {
        "rates": tuple(r.rate for r in rates), "trials": plan.regression_trials,
        "pass_rule": plan.pass_rule, "pass_score": Fraction(repr(plan.pass_score)),
        "mde": mde, "alpha": ALPHA, "power": POWER, "resamples": PLAN_RESAMPLES,
    }  # fmt: skip
    methods = []
    for method in plan.methods:
        row: dict[str, Any] = {"method": method.method, "how": method.how,
                               "tasks": method.tasks, "statedPower": method.power}  # fmt: skip
        if method.tasks is not None and method.power is not None:
            design = Design(**design_args)  # type: ignore[arg-type]
            power = simulated_regressed(method.method, design, method.tasks,
                                        simulations=check, seed=10_000 + seed)  # fmt: skip
            false = simulated_regressed(method.method, design, method.tasks, shifted=False,
                                        simulations=check, seed=20_000 + seed)  # fmt: skip
            # the Monte-Carlo standard error of the gap: the check's draws, and the plan's own
            # when its power was simulated too
            variance = power * (1 - power) / check
            if method.simulations is not None:
                variance += method.power * (1 - method.power) / method.simulations
            gap_z = (power - method.power) / max(variance**0.5, 1e-12)
            row |= {"power": power, "falseRegression": false, "gapZ": round(gap_z, 2),
                    "powerWithin3Points": abs(power - method.power) <= TOLERANCE,
                    "falseAtMostAlphaPlus1": false <= ALPHA + FALSE_SLACK}  # fmt: skip
        methods.append(row)
    gates = []
    for gate, level in zip(plan.suite, (None, settings.level), strict=True):
        row = {"gate": gate.gate, "trials": gate.trials, "statedPass": gate.pass_at_rate,
               "statedPassLowered": gate.pass_at_lowered}  # fmt: skip
        if gate.trials is not None and gate.pass_at_rate is not None:
            good, bad = gate_check([r.rate for r in rates], mde, gate.trials,
                                   Fraction(repr(plan.pass_score)), level, check * 5,
                                   30_000 + seed)  # fmt: skip
            row |= {"pass": good, "passLowered": bad,
                    "passWithin3Points": abs(good - gate.pass_at_rate) <= TOLERANCE,
                    "loweredAtMostAlphaPlus1": bad <= ALPHA + FALSE_SLACK}  # fmt: skip
        gates.append(row)
    return {
        "seed": seed, "tasks": len(rates), "trialsPerTask": plan.trials_now,
        "passRule": plan.pass_rule, "passScore": plan.pass_score, "mde": mde,
        "planSeconds": round(planned_s, 2), "methods": methods, "suiteGates": gates,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 suites, 300 draws")
    parser.add_argument("--suites", type=int, default=20)
    parser.add_argument(
        "--simulations", type=int, default=DEFAULT_SIMULATIONS, help="draws in each plan"
    )
    parser.add_argument("--check", type=int, default=5000, help="draws in each check")
    args = parser.parse_args()
    suites, simulations, check = args.suites, args.simulations, args.check
    if args.quick:
        suites, simulations, check = 4, 300, 300
    started = time.perf_counter()
    rows = []
    for i in range(suites):
        rows.append(one_suite(1000 + i, simulations, check))
        print(f"suite {i + 1}/{suites} done", file=sys.stderr, flush=True)
    checked = [m for row in rows for m in row["methods"] if "power" in m]
    gate_rows = [g for row in rows for g in row["suiteGates"] if "pass" in g]
    worst = max((abs(m["power"] - m["statedPower"]) for m in checked), default=None)
    summary = {
        "suites": suites, "simulationsPerPlan": simulations, "drawsPerCheck": check,
        "alpha": ALPHA, "power": POWER, "methods": list(METHODS),
        "methodChecks": len(checked),
        "powerWithin3Points": sum(m["powerWithin3Points"] for m in checked),
        "largestPowerGap": worst,
        "gapWithin3MonteCarloErrors": sum(abs(m["gapZ"]) <= 3 for m in checked),
        "falseAtMostAlphaPlus1": sum(m["falseAtMostAlphaPlus1"] for m in checked),
        "largestFalseRegression": max((m["falseRegression"] for m in checked), default=None),
        "noPlan": sum(1 for row in rows for m in row["methods"] if m["tasks"] is None),
        "gateChecks": len(gate_rows),
        "gatePassWithin3Points": sum(g["passWithin3Points"] for g in gate_rows),
        "gateLoweredAtMostAlphaPlus1": sum(g["loweredAtMostAlphaPlus1"] for g in gate_rows),
        "seconds": round(time.perf_counter() - started, 1),
        "loadAverage": os.getloadavg()[0],
    }  # fmt: skip
    print(json.dumps({"summary": summary, "suites": rows}))


if __name__ == "__main__":
    main()
