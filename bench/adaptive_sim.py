"""Adaptive trials (``x-wopeval-adaptive``): wrong decisions and trials used, by simulation.

Prints one JSON object. The rule is the real one (:func:`wopeval.grading.adaptive.first_stop`),
with issue 34's setting: threshold 0.8, indifference 0.1 (so p0 = 0.7, p1 = 0.9), α = β = 0.05,
minTrials 1, at most 20 trials (the fixed count it is compared with). For each true per-trial
pass rate in {0.5, 0.7, 0.8, 0.9, 0.95}, ``--tasks`` (10,000) seeded tasks each draw their
trials' outcomes and the rule reads them:

- ``decisions``: the share decided ``above``, ``below`` and ``undecided`` (at the maximum);
- ``wrong``: deciding ``above`` when the rate is below the threshold, ``below`` when it is above
  (at the threshold itself neither is wrong: ``wrong`` is null). The guarantee (Ville's
  inequality, see the module) is ``wrong ≤ α`` at rates ≤ p0 and ``≤ β`` at rates ≥ p1; rates
  strictly inside (p0, p1) are reported as ``insideZone`` with no bound. ``bound`` is α (or β)
  plus 3 Monte-Carlo standard errors, ``ok`` whether ``wrong`` is within it, and ``exact`` the
  same probability computed exactly over every outcome sequence (no sampling);
- ``meanTrials`` against ``fixedTrials``: ``saved`` is 1 − their ratio.

``engine`` runs ``--engine-tasks`` (200 per rate; 40 with ``--quick``) of the same pre-drawn tasks
through the real engine (scripted agent, SQLite store, concurrency 8) and counts the tasks whose
scored trials and recorded stop differ from the rule's reading of the same outcomes (must be 0).

Run: ``python3 bench/adaptive_sim.py`` (a minute or two) or ``--quick``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import tempfile
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import anyio

from wopeval.engine.registry import SCRIPTED_AGENT_ID, Registry
from wopeval.engine.run import RunHandle, RunSettings
from wopeval.events.store import EventStore
from wopeval.grading.adaptive import first_stop, operating_characteristic
from wopeval.service.runs import RunService
from wopeval.suite import parse_suite
from wopeval.suite.adaptive import AdaptivePlan, AdaptiveTrials, resolve
from wopeval.wire.events import EvalScored
from wopeval.wire.vocab import ADAPTIVE_STOPPED

RATES = ("0.5", "0.7", "0.8", "0.9", "0.95")
THRESHOLD, INDIFFERENCE, ALPHA, MAX_TRIALS = 0.8, 0.1, 0.05, 20
SETTING = {"rule": "sprt", "alpha": ALPHA, "indifference": INDIFFERENCE, "minTrials": 1}
SEED = 20261205
OK = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}


def the_plan() -> AdaptivePlan:
    settings = AdaptiveTrials.model_validate(SETTING)
    return resolve(settings, pass_score=THRESHOLD, count=MAX_TRIALS, k=1)


def draw(rng: random.Random, rate: float) -> list[bool]:
    return [rng.random() < rate for _ in range(MAX_TRIALS)]


def simulate(plan: AdaptivePlan, rate: str, tasks: int) -> dict[str, Any]:
    rng = random.Random(f"{SEED}-{rate}")
    counts = {"above": 0, "below": 0, "undecided": 0}
    used = 0
    for _ in range(tasks):
        stop = first_stop(plan, draw(rng, float(rate)))
        counts[stop.decision or "undecided"] += 1
        used += stop.trials
    p = Fraction(rate)
    oc = operating_characteristic(plan, p)
    exact = {"above": float(oc.above), "below": float(oc.below)}
    wrong_side = "above" if p < plan.threshold else "below" if p > plan.threshold else None
    row: dict[str, Any] = {
        "rate": float(p),
        "tasks": tasks,
        "decisions": {k: v / tasks for k, v in counts.items()},
        "meanTrials": used / tasks,
        "fixedTrials": plan.max_trials,
        "saved": 1 - used / (tasks * plan.max_trials),
        "exactMeanTrials": float(oc.mean_trials),
        "insideZone": plan.p0 < p < plan.p1,
    }
    if wrong_side is None:
        row["wrong"] = None
        return row
    bound_rate = plan.alpha if wrong_side == "above" else plan.beta
    wrong = counts[wrong_side] / tasks
    standard_error = math.sqrt(float(bound_rate) * (1 - float(bound_rate)) / tasks)
    guaranteed = p <= plan.p0 or p >= plan.p1
    row.update(
        wrong=wrong,
        wrongDecision=wrong_side,
        exact=exact[wrong_side],
        guaranteed=guaranteed,
        bound=float(bound_rate) + 3 * standard_error if guaranteed else None,
        ok=wrong <= float(bound_rate) + 3 * standard_error if guaranteed else None,
    )
    return row


def _suite(outcomes: list[list[bool]]) -> Any:
    tasks = []
    for i, trial_outcomes in enumerate(outcomes):
        failing = {str(t): {"output": "no"} for t, ok in enumerate(trial_outcomes) if not ok}
        tasks.append({"taskId": f"t{i}", "input": {"output": "ok", "trials": failing},
                      "expected": OK})  # fmt: skip
    return parse_suite({
        "suiteId": "core.bench.evals.adaptive", "version": "1.0.0", "modes": ["golden"],
        "tasks": tasks, "trials": {"count": MAX_TRIALS, "k": 1},
        "thresholds": {"passScore": THRESHOLD}, "x-wopeval-adaptive": SETTING,
    })  # fmt: skip


async def through_engine(plan: AdaptivePlan, per_rate: int) -> dict[str, Any]:
    rng = random.Random(f"{SEED}-engine")
    outcomes = [draw(rng, float(rate)) for rate in RATES for _ in range(per_rate)]
    suite = _suite(outcomes)
    with tempfile.TemporaryDirectory() as tmp:
        async with await EventStore.open(str(Path(tmp) / "sim.db")) as store:
            service = RunService(store, Registry())
            run_plan = await service.plan(suite, SCRIPTED_AGENT_ID, RunSettings(concurrency=8))
            record = await service.create(run_plan)
            started = time.perf_counter()
            await service.execute(run_plan, RunHandle(record.run_id))
            seconds = time.perf_counter() - started
            events = await store.events(record.run_id)
    ran: dict[str, int] = {}
    recorded: dict[str, tuple[str, int]] = {}
    for event in events:
        if isinstance(scored := event.typed, EvalScored):
            ran[scored.taskId] = ran.get(scored.taskId, 0) + 1
        elif event.type == ADAPTIVE_STOPPED and isinstance(event.payload, dict):
            recorded[event.payload["taskId"]] = (event.payload["decision"], event.payload["trials"])
    disagree = 0
    for i, trial_outcomes in enumerate(outcomes):
        stop = first_stop(plan, trial_outcomes)
        expected = (stop.decision or "undecided", stop.trials)
        if ran.get(f"t{i}") != stop.trials or recorded.get(f"t{i}") != expected:
            disagree += 1
    total = sum(ran.values())
    return {
        "tasks": len(outcomes),
        "trialsRun": total,
        "trialsFixed": len(outcomes) * MAX_TRIALS,
        "disagreeWithRule": disagree,
        "seconds": round(seconds, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 tasks per rate, 40 engine")
    parser.add_argument("--tasks", type=int, default=None, help="simulated tasks per rate")
    parser.add_argument("--engine-tasks", type=int, default=None, help="engine tasks per rate")
    args = parser.parse_args()
    tasks = args.tasks or (1000 if args.quick else 10_000)
    per_rate = args.engine_tasks or (40 if args.quick else 200)
    load_before = os.getloadavg()
    plan = the_plan()
    started = time.perf_counter()
    rows = [simulate(plan, rate, tasks) for rate in RATES]
    engine = anyio.run(through_engine, plan, per_rate)
    print(json.dumps({
        "rule": "sprt (Wald 1945; boundaries 1/alpha and beta, Ville's inequality)",
        "setting": {"threshold": THRESHOLD, "p0": float(plan.p0), "p1": float(plan.p1),
                    "alpha": float(plan.alpha), "beta": float(plan.beta),
                    "minTrials": plan.min_trials, "maxTrials": plan.max_trials},
        "seed": SEED,
        "rates": rows,
        "allOk": all(row.get("ok") is not False for row in rows),
        "engine": engine,
        "seconds": round(time.perf_counter() - started, 2),
        "loadBefore": [round(x, 2) for x in load_before],
        "loadAfter": [round(x, 2) for x in os.getloadavg()],
    }, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
