"""A real ``wopeval`` run in its own process, for the crash tests to kill with SIGKILL.

``python -m tests.service.crash_worker STORE_URL LIVE_LOG`` creates a run of :func:`crash_suite`
through the run service, prints its id, then executes it; the test kills it at a random point.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio

from wopeval.engine.agent import AgentContext
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunHandle, RunSettings
from wopeval.events.store import EventStore
from wopeval.service.runs import RunService
from wopeval.suite import parse_suite
from wopeval.suite.models import AgentEvalSuite

AGENT = "tests.service.crash_worker:slow_agent"
LIVE_TOOL = "live:effect"


async def slow_agent(task_input: Any, ctx: AgentContext) -> Any:
    """Calls its tools in order, a short pause after each, then answers ``output``; with
    ``holdWhile`` (a path), it also waits after each call for as long as that file exists."""
    hold = Path(task_input["holdWhile"]) if "holdWhile" in task_input else None
    for tool in task_input["tools"]:
        await ctx.call_tool(tool, {"task": ctx.task_id, "trial": ctx.trial_index})
        await anyio.sleep(task_input["pause"])
        while hold is not None and hold.exists():  # noqa: ASYNC110 (a file another process removes)
            await anyio.sleep(0.05)
    return task_input["output"]


def live_registry(live_log: Path) -> Registry:
    """A registry whose live tool appends one line per call to ``live_log`` (the effect)."""

    async def effect(args: Any) -> Any:
        with live_log.open("a") as out:
            out.write(f"{args['task']} {args['trial']}\n")
        return {"done": True}

    registry = Registry()
    registry.register_tool(LIVE_TOOL, effect)
    return registry


def crash_suite(with_live: bool) -> AgentEvalSuite:
    fixture = {"toolResponses": [{"tool": "kb:read", "response": {"ok": 1}}] * 2}
    tasks: list[dict[str, Any]] = []
    for index in range(5):
        output = "ok" if index % 3 else "wrong"
        tasks.append({
            "taskId": f"fixtured-{index}",
            "input": {"tools": ["kb:read", "kb:read"], "pause": 0.1, "output": output},
            "expected": {
                "kind": "golden",
                "match": {"strategy": "exact", "value": "ok"},
                # a re-run attempt must not inherit the calls of the partial one
                "trajectory": {"match": "exact", "calls": [{"tool": "kb:read"}] * 2},
            },
            "fixtures": fixture,
        })  # fmt: skip
    if with_live:  # first, so that a live trial is in flight early
        tasks.insert(0, {
            "taskId": "live",
            "input": {"tools": [LIVE_TOOL, LIVE_TOOL], "pause": 0.1, "output": "ok"},
            "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}},
        })  # fmt: skip
    doc = {
        "suiteId": "core.test.evals.crash",
        "version": "1.0.0",
        "modes": ["golden"],
        "trials": {"count": 3},
        "tasks": tasks,
    }
    return parse_suite(doc)


async def main(store_url: str, live_log: Path, with_live: bool) -> None:
    store = await EventStore.open(store_url)
    service = RunService(store, live_registry(live_log))
    plan = await service.plan(crash_suite(with_live), AGENT, RunSettings(concurrency=3))
    record = await service.create(plan)
    print(record.run_id, flush=True)
    await service.execute(plan, RunHandle(record.run_id))
    await store.close()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], Path(sys.argv[2]), sys.argv[3] == "live")
