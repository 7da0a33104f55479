"""pydantic-evals as a peer: the engine benchmark's two workloads through ``Dataset.evaluate``.

* Overhead: one ``Case`` (inputs ``q``, expected ``ok``) repeated N times (``repeat=N``), an
  async task that awaits three canned async "tool" functions and answers ``ok``, evaluator
  ``EqualsExpected``. pydantic-evals persists nothing (no log, no store); its report stays in
  memory.
* Concurrency: the same case, a task that sleeps 50 ms, ``max_concurrency=200``.

Both return at least ``{"seconds", "trialsPerSecond"}``; call them outside an event loop.
"""

from __future__ import annotations

import asyncio
import time
from importlib import metadata
from typing import Any


def version() -> str:
    return metadata.version("pydantic-evals")


def _dataset() -> Any:
    from pydantic_evals import Case, Dataset
    from pydantic_evals.evaluators import EqualsExpected

    return Dataset(name="bench", cases=[Case(name="t", inputs="q", expected_output="ok")],
                   evaluators=[EqualsExpected()])  # fmt: skip


async def _tool(i: int) -> dict[str, Any]:
    return {"ok": True, "i": i}


async def _overhead_task(inputs: str) -> str:
    for i in range(3):
        await _tool(i)
    return "ok"


def _run(task: Any, trials: int, concurrency: int) -> tuple[float, Any]:
    dataset = _dataset()
    started = time.perf_counter()
    report = dataset.evaluate_sync(task, max_concurrency=concurrency, progress=False, repeat=trials)
    return time.perf_counter() - started, report


def _check(report: Any, trials: int) -> None:
    cases = report.cases
    if len(cases) != trials or report.failures:
        raise RuntimeError(f"pydantic-evals ran {len(cases)} of {trials} cases")


def run_overhead(trials: int, concurrency: int = 16) -> dict[str, Any]:
    seconds, report = _run(_overhead_task, trials, concurrency)
    _check(report, trials)
    return {"version": version(), "seconds": seconds, "trialsPerSecond": trials / seconds,
            "persists": False}  # fmt: skip


def run_concurrency(
    trials: int = 2000, sleep_s: float = 0.05, concurrency: int = 200
) -> dict[str, Any]:
    async def sleepy(inputs: str) -> str:
        await asyncio.sleep(sleep_s)
        return "ok"

    seconds, report = _run(sleepy, trials, concurrency)
    _check(report, trials)
    ideal = trials * sleep_s / concurrency
    return {"version": version(), "seconds": seconds, "trialsPerSecond": trials / seconds,
            "measuredOverIdeal": seconds / ideal}  # fmt: skip
