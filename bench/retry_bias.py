"""Do infrastructure retries bias pass@k and pass^k? A seeded simulation through the real engine.

Prints one JSON object. Each seed draws every task's true pass probability from Uniform(0.1, 0.9)
and runs the suite (``--tasks`` tasks × ``--trials`` trials, pass@k and pass^k at ``--k``) three
times through the real engine and store (in process, SQLite):

- ``errorFree``: the agent passes a trial with its task's probability;
- ``noRetry``: before answering, each attempt fails for infrastructure (``ModelUnavailable``)
  with probability ``--error-rate``, and the failure stands;
- ``retries``: the same errors, under ``--retry-infrastructure 10`` (no backoff).

Every attempt's draws are seeded by (seed, configuration, task, trial, attempt), so the three
runs are independent samples. For each of ``noRetry`` and ``retries`` the suite's pass@k and
pass^k (``trialStats``) are compared with ``errorFree`` seed by seed (same task probabilities):
``meanDiff`` is the mean difference, ``stderr`` its Monte-Carlo standard error over the seeds,
``z`` their ratio; ``withinMcError`` is |z| < 3. ``retries`` must be within it; ``noRetry`` is
the bias the errors put in, for scale.

``peerRetryIfBelow`` is, for contrast, what a policy re-rolling any failed trial (up to 10 times,
a peer's ``--retry-if-reward-below``) does to the same numbers, simulated without the engine
(wopeval cannot run it): the inflation that retrying on the outcome brings.

Run: ``python3 bench/retry_bias.py`` (about a minute) or ``--quick`` (a few seconds).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from wopeval.agents.openai_compat import ModelUnavailable
from wopeval.engine.agent import AgentContext
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunHandle, RunSettings
from wopeval.events.store import EventStore
from wopeval.service.runs import RunService
from wopeval.suite import parse_suite
from wopeval.wire.request import RetryPolicy

AGENT = "bench.retry.agent"
MAX_RETRIES = 10
CONFIGS = ("errorFree", "noRetry", "retries")
METRICS = ("passAtK", "passHatK")


def _suite(probabilities: list[float], trials: int, k: int) -> Any:
    tasks = [
        {"taskId": f"t{i}", "input": p, "expected": {"kind": "golden",
         "match": {"strategy": "exact", "value": "ok"}}}
        for i, p in enumerate(probabilities)
    ]  # fmt: skip
    return parse_suite({"suiteId": "bench.retry.evals.bias", "version": "1.0.0",
                        "modes": ["golden"], "tasks": tasks,
                        "trials": {"count": trials, "k": k}})  # fmt: skip


def _agent(seed: int, config: str, error_rate: float) -> Any:
    attempts: dict[tuple[str, int], int] = {}

    async def agent(p: Any, ctx: AgentContext) -> Any:
        key = (ctx.task_id, ctx.trial_index)
        attempts[key] = attempt = attempts.get(key, 0) + 1
        draw = random.Random(f"{seed}/{config}/{key[0]}/{key[1]}/{attempt}")
        if draw.random() < error_rate:
            raise ModelUnavailable("the model server answered HTTP 503 (injected)")
        return "ok" if draw.random() < float(p) else "no"

    return agent


async def _run_once(
    store: EventStore, seed: int, config: str, probabilities: list[float], args: Any
) -> dict[str, float]:
    error_rate = 0.0 if config == "errorFree" else args.error_rate
    registry = Registry()
    registry.register_agent(AGENT, _agent(seed, config, error_rate))
    policy = RetryPolicy(maxRetries=MAX_RETRIES, backoffS=0.0) if config == "retries" else None
    settings = RunSettings(retry_infrastructure=policy, concurrency=8)
    service = RunService(store, registry)
    plan = await service.plan(_suite(probabilities, args.trials, args.k), AGENT, settings)
    record = await service.create(plan)
    summary = await service.execute(plan, RunHandle(record.run_id))
    assert summary is not None
    assert summary.trialStats is not None
    return {"passAtK": summary.trialStats.passAtK, "passHatK": summary.trialStats.passHatK}


def _peer(seed: int, probabilities: list[float], args: Any) -> dict[str, float]:
    """Re-roll every failed trial (infrastructure or not) up to MAX_RETRIES times."""
    at_k, hat_k = [], []
    for i, p in enumerate(probabilities):
        passed = 0
        for trial in range(args.trials):
            draw = random.Random(f"{seed}/peer/t{i}/{trial}")
            passed += any(draw.random() < p for _ in range(1 + MAX_RETRIES))
        n, k = args.trials, args.k
        at_k.append(1 - math.comb(n - passed, k) / math.comb(n, k))
        hat_k.append(math.comb(passed, k) / math.comb(n, k))
    return {"passAtK": statistics.fmean(at_k), "passHatK": statistics.fmean(hat_k)}


def _compare(base: list[float], other: list[float]) -> dict[str, Any]:
    diffs = [o - b for b, o in zip(base, other, strict=True)]
    mean = statistics.fmean(diffs)
    stderr = statistics.stdev(diffs) / math.sqrt(len(diffs)) if len(diffs) > 1 else math.nan
    z = mean / stderr if stderr > 0 else (0.0 if mean == 0 else math.inf)
    return {"meanDiff": round(mean, 5), "stderr": round(stderr, 5), "z": round(z, 2),
            "withinMcError": abs(z) < 3}  # fmt: skip


async def _main(args: Any) -> dict[str, Any]:
    found: dict[str, dict[str, list[float]]] = {
        name: {m: [] for m in METRICS} for name in (*CONFIGS, "peerRetryIfBelow")
    }
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        async with await EventStore.open(str(Path(tmp) / "bias.db")) as store:
            for seed in range(args.seeds):
                tasks = random.Random(f"tasks/{seed}")
                probabilities = [tasks.uniform(0.1, 0.9) for _ in range(args.tasks)]
                for config in CONFIGS:
                    got = await _run_once(store, seed, config, probabilities, args)
                    for metric in METRICS:
                        found[config][metric].append(got[metric])
                peer = _peer(seed, probabilities, args)
                for metric in METRICS:
                    found["peerRetryIfBelow"][metric].append(peer[metric])
    base = found["errorFree"]
    return {
        "bench": "retry_bias",
        "seeds": args.seeds, "tasks": args.tasks, "trials": args.trials, "k": args.k,
        "errorRate": args.error_rate, "maxRetries": MAX_RETRIES,
        "mean": {name: {m: round(statistics.fmean(v), 5) for m, v in by.items()}
                 for name, by in found.items()},
        "vsErrorFree": {name: {m: _compare(base[m], found[name][m]) for m in METRICS}
                        for name in ("retries", "noRetry", "peerRetryIfBelow")},
        "seconds": round(time.perf_counter() - started, 1),
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--error-rate", type=float, default=0.2)
    parser.add_argument("--quick", action="store_true", help="8 seeds of 10 tasks")
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds, args.tasks = 8, 10
    report = anyio.run(_main, args)
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    ok = all(report["vsErrorFree"]["retries"][m]["withinMcError"] for m in METRICS)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
