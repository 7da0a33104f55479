"""Engine benchmark: harness overhead and concurrency efficiency, against named peers.

Prints one JSON document:

* ``overhead``: trials per second with an instant scripted agent making 3 fixtured tool calls,
  the SQLite event store included (every event durably appended);
* ``concurrency``: 2,000 trials of an agent that sleeps 50 ms at concurrency 200, as measured
  wall time / ideal time (ideal = 2000 × 0.05 / 200 = 0.5 s);
* the same two workloads through Inspect AI (``mockllm/model``, ``epochs``) and promptfoo
  (``--repeat``), as ratios (wopeval throughput / peer throughput; >1 means wopeval is faster).

Usage: ``python3 bench/engine.py [--quick] [--no-peers]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from wopeval.engine.agent import AgentContext
from wopeval.engine.registry import SCRIPTED_AGENT_ID, Registry
from wopeval.engine.run import RunHandle, RunSettings
from wopeval.events.store import EventStore
from wopeval.service.runs import create_run_record, execute
from wopeval.suite import parse_suite
from wopeval.suite.models import AgentEvalSuite

CALLS = [{"tool": f"kb:tool-{i}", "args": {"i": i}} for i in range(3)]


def _suite(trials: int, script: dict[str, Any], fixtured: bool) -> AgentEvalSuite:
    task: dict[str, Any] = {
        "taskId": "t",
        "input": script,
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}},
    }
    if fixtured:
        task["fixtures"] = {
            "onMiss": "fail",
            "toolResponses": [{"tool": c["tool"], "response": {"ok": True}} for c in CALLS],
        }
    return parse_suite(
        {
            "suiteId": "core.bench.evals.engine",
            "version": "1.0.0",
            "modes": ["golden"],
            "tasks": [task],
            "trials": {"count": trials},
        }
    )


async def _sleepy(task_input: Any, ctx: AgentContext) -> Any:
    await anyio.sleep(0.05)
    return "ok"


async def timed_run(
    suite: AgentEvalSuite,
    agent_id: str,
    concurrency: int,
    agents: Mapping[str, Any] | None = None,
) -> float:
    """Wall seconds of one run of ``suite`` on a fresh SQLite store (``agents``: registered by
    id besides the built-in ones; the default is this bench's sleeping agent)."""
    registry = Registry()
    for name, agent in (agents if agents is not None else {"bench.sleepy": _sleepy}).items():
        registry.register_agent(name, agent)
    with tempfile.TemporaryDirectory() as tmp:
        store = await EventStore.open(str(Path(tmp) / "bench.db"))
        try:
            settings = RunSettings(concurrency=concurrency)
            record = await create_run_record(store, suite, agent_id, settings)
            started = time.perf_counter()
            summary = await execute(
                store, RunHandle(record.run_id), suite, agent_id, registry, settings
            )
            elapsed = time.perf_counter() - started
            if summary is None or not summary.passed:
                raise RuntimeError("the benchmark run must complete and pass")
            return elapsed
        finally:
            await store.close()


def wopeval_overhead(trials: int) -> dict[str, float]:
    suite = _suite(trials, {"calls": CALLS, "output": "ok"}, fixtured=True)
    seconds = anyio.run(timed_run, suite, SCRIPTED_AGENT_ID, 16)
    return {"trials": trials, "seconds": seconds, "trialsPerSecond": trials / seconds}


def wopeval_concurrency(trials: int, concurrency: int, sleep_s: float) -> dict[str, float]:
    suite = _suite(trials, {}, fixtured=False)
    seconds = anyio.run(timed_run, suite, "bench.sleepy", concurrency)
    ideal = trials * sleep_s / concurrency
    return {
        "trials": trials,
        "seconds": seconds,
        "idealSeconds": ideal,
        "measuredOverIdeal": seconds / ideal,
        "trialsPerSecond": trials / seconds,
    }


def _peer(name: str, fn_name: str, **kwargs: Any) -> dict[str, Any]:
    try:
        module = __import__(f"bench.peers.{name}", fromlist=[fn_name])
        result: dict[str, Any] = getattr(module, fn_name)(**kwargs)
        return result
    except Exception as exc:  # a peer that cannot run is reported, not fatal
        return {"error": f"{type(exc).__name__}: {exc}"[:400]}


def _ratio(ours: dict[str, Any], theirs: dict[str, Any], key: str = "trialsPerSecond") -> Any:
    if key in ours and key in theirs and theirs[key]:
        return ours[key] / theirs[key]
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--no-peers", action="store_true", help="wopeval only")
    args = parser.parse_args()
    overhead_trials = 300 if args.quick else 2000
    conc_trials = 400 if args.quick else 2000
    result: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "loadAverageBefore": os.getloadavg()},
        "workloads": {
            "overhead": f"{overhead_trials} trials, instant agent, 3 fixtured tool calls",
            "concurrency": f"{conc_trials} trials sleeping 50 ms at concurrency 200",
        },
        "wopeval": {
            "overhead": wopeval_overhead(overhead_trials),
            "concurrency": wopeval_concurrency(conc_trials, 200, 0.05),
        },
    }
    if not args.no_peers:
        peers: dict[str, Any] = {}
        for peer in ("inspect_peer", "promptfoo_peer", "pydantic_evals_peer"):
            over = _peer(peer, "run_overhead", trials=overhead_trials, concurrency=16)
            conc = _peer(peer, "run_concurrency", trials=conc_trials, sleep_s=0.05, concurrency=200)
            entry: dict[str, Any] = {
                "overhead": over,
                "concurrency": conc,
                "ratioOverhead": _ratio(result["wopeval"]["overhead"], over),
                "ratioConcurrency": _ratio(result["wopeval"]["concurrency"], conc),
            }
            if "evalTrialsPerSecond" in over:  # promptfoo: its own eval time, without Node start-up
                entry["ratioOverheadEvalOnly"] = (
                    result["wopeval"]["overhead"]["trialsPerSecond"] / over["evalTrialsPerSecond"]
                )
            if "evalTrialsPerSecond" in conc:
                entry["ratioConcurrencyEvalOnly"] = (
                    result["wopeval"]["concurrency"]["trialsPerSecond"]
                    / conc["evalTrialsPerSecond"]
                )
            peers[peer.removesuffix("_peer")] = entry
        result["peers"] = peers
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
