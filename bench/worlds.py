"""The cost of a world call against a fixture-served call, through the real engine (issue 33 §3).

Three suites of the same shape (TASKS tasks × TRIALS trials, each trial making CALLS tool calls
then answering), run one after the other in this process on a fresh SQLite store each:

- ``fixture``: every call served by a ``toolResponses`` entry (the floor: the RFC 0244 §D path);
- ``world-read``: every call a world ``read`` rule with a placeholder pointer;
- ``world-write``: every call a world rule with a precondition, a ``set`` and an ``increment``,
  and the trial's final state graded by ``x-wopeval-finalState``.

Prints JSON: wall seconds and calls/s per variant (median of REPEATS, interleaved), and each
world variant's per-call overhead as a ratio to the fixture floor measured in the same run
(``ratioToFixture`` > 1: slower), with the load average before and after. Run on an idle
machine; no test asserts on these figures.

    python3 bench/worlds.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from wopeval.engine.agent import AgentContext
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunHandle, RunSettings
from wopeval.events.store import EventStore
from wopeval.service.runs import create_run_record, execute
from wopeval.suite import parse_suite

AGENT = "bench.world"
OK = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}


def _suite(variant: str, tasks: int, trials: int, calls: int) -> dict[str, Any]:
    items = []
    for index in range(tasks):
        task: dict[str, Any] = {"taskId": f"t{index}", "input": {"ref": "k"}, "expected": OK}
        if variant == "fixture":
            task["fixtures"] = {"onMiss": "fail", "toolResponses": [
                {"tool": "op", "response": {"n": 1}} for _ in range(calls)]}  # fmt: skip
        elif variant == "world-read":
            task["x-wopeval-world"] = {"initial": {"items": {"k": {"n": 1}}},
                                       "tools": {"op": [{"read": "/items/{/ref}"}]}}  # fmt: skip
        else:
            task["x-wopeval-world"] = {
                "initial": {"items": {"k": {"n": 0, "by": None}}},
                "tools": {"op": [{
                    "require": [{"pointer": "/items/{/ref}", "exists": True,
                                 "error": {"code": "nf", "message": "no item"}}],
                    "effects": [
                        {"op": "set", "pointer": "/items/{/ref}/by", "value": {"$arg": "/ref"}},
                        {"op": "increment", "pointer": "/items/{/ref}/n"}],
                    "read": "/items/{/ref}"}]},
            }  # fmt: skip
            task["expected"] = {**OK, "x-wopeval-finalState": {
                "match": "subset", "state": {"items": {"k": {"n": calls}}}}}  # fmt: skip
        items.append(task)
    return {"suiteId": "core.bench.evals.worlds", "version": "1.0.0", "modes": ["golden"],
            "tasks": items, "trials": {"count": trials}}  # fmt: skip


async def _run(variant: str, tasks: int, trials: int, calls: int) -> float:
    async def agent(task_input: Any, ctx: AgentContext) -> Any:
        for _ in range(calls):
            result = await ctx.call_tool("op", {"ref": task_input["ref"]})
            if not result.ok:
                return result.error_code
        return "ok"

    suite = parse_suite(_suite(variant, tasks, trials, calls))
    registry = Registry()
    registry.register_agent(AGENT, agent)
    with tempfile.TemporaryDirectory() as tmp:
        store = await EventStore.open(str(Path(tmp) / "bench.db"))
        try:
            settings = RunSettings(concurrency=100)
            record = await create_run_record(store, suite, AGENT, settings)
            started = time.perf_counter()
            summary = await execute(store, RunHandle(record.run_id), suite, AGENT, registry,
                                    settings)  # fmt: skip
            elapsed = time.perf_counter() - started
        finally:
            await store.close()
    if summary is None or not summary.passed:
        raise SystemExit(f"{variant}: the bench suite must pass")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller run, one repeat")
    args = parser.parse_args()
    tasks, trials, calls, repeats = (5, 20, 10, 1) if args.quick else (10, 50, 10, 3)
    load_before = os.getloadavg()
    variants = ("fixture", "world-read", "world-write")
    walls: dict[str, list[float]] = {v: [] for v in variants}
    for _ in range(repeats):
        for variant in variants:  # interleaved: drift hits every variant alike
            walls[variant].append(asyncio.run(_run(variant, tasks, trials, calls)))
    total_calls = tasks * trials * calls
    report: dict[str, Any] = {"trials": tasks * trials, "callsPerTrial": calls,
                              "repeats": repeats, "variants": {}}  # fmt: skip
    floor = statistics.median(walls["fixture"])
    for variant in variants:
        wall = statistics.median(walls[variant])
        row = {"wallS": round(wall, 4), "callsPerS": round(total_calls / wall, 1),
               "min": round(min(walls[variant]), 4),
               "max": round(max(walls[variant]), 4)}  # fmt: skip
        if variant != "fixture":
            row["ratioToFixture"] = round(wall / floor, 3)
        report["variants"][variant] = row
    report["loadAverage"] = {"before": load_before, "after": os.getloadavg()}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
