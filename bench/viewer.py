"""Viewer benchmark: server time of the run page and the runs page at 10, 1,000 and 10,000.

Prints one JSON document. For each size it times the page through the viewer app in process
(httpx's ASGI transport: routing, the store's queries and the template, i.e. the server's time
without the network) and, as the peer in the same run, the naive way of getting the same data:

* run page (``trials`` = 10, 1,000, 10,000 trials of the scripted agent, really run by the
  engine; 10 trials per task): the peer loads every event of the run and grades it in full
  with :func:`wopeval.grading.detail.run_detail`, which is what the static report does;
* runs page (``runs`` = 10, 1,000, 10,000 stored runs): the peer loads every run record with
  :meth:`EventStore.list_runs` (suite documents and summaries included).

``ratio`` = peer time / page time (> 1: the page is faster than the naive read). Each figure is
the median of ``--repeat`` requests after one warm-up. Usage:
``python3 bench/viewer.py [--quick] [--repeat N]`` (``--quick``: sizes 10 and 1,000).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx

from wopeval.engine.registry import Registry
from wopeval.engine.run import RunSettings
from wopeval.events.store import EventStore, RunRecord
from wopeval.grading.detail import run_detail
from wopeval.service.runs import RunService, grading_options
from wopeval.suite import parse_suite
from wopeval.viewer import create_viewer_app

SIZES = (10, 1_000, 10_000)
QUICK_SIZES = (10, 1_000)
TRIALS_PER_TASK = 10
SCRIPTED = "core.conformance.agents.scripted"


def _suite(trials: int) -> dict[str, Any]:
    """``trials`` trials: tasks of 10 trials each; one trial in 5 takes a forbidden tool."""
    tasks = []
    for t in range(max(1, trials // TRIALS_PER_TASK)):
        calls = [{"tool": "crm:lookup", "args": {"id": t}}, {"tool": "billing:refund"}]
        tasks.append({
            "taskId": f"task-{t:05d}",
            "input": {"calls": calls, "output": "ok",
                      "trials": {"3": {"calls": [*calls, {"tool": "billing:refund-all"}]}},
                      "usage": [{"provider": "mock", "model": "m", "inputTokens": 10,
                                 "outputTokens": 3, "costEstimateUsd": 0.0001}]},
            "expected": {"kind": "golden", "match": {"strategy": "contains", "value": "ok"},
                         "trajectory": {"match": "in-order",
                                        "calls": [{"tool": "crm:lookup"},
                                                  {"tool": "billing:refund"}],
                                        "forbidden": ["billing:refund-all"]}},
            "fixtures": {"onMiss": "fail", "toolResponses": [
                {"tool": "crm:lookup", "response": {"ok": True}},
                {"tool": "billing:refund", "response": {"ok": True}},
                {"tool": "billing:refund-all", "response": {"ok": True}}]},
        })  # fmt: skip
    return {
        "suiteId": f"core.wopeval.evals.bench-viewer-{trials}",
        "version": "1.0.0",
        "targetAgentId": SCRIPTED,
        "modes": ["golden"],
        "trials": {"count": min(trials, TRIALS_PER_TASK), "k": 2},
        "tasks": tasks,
    }


async def _timed(call: Callable[[], Awaitable[Any]], repeat: int) -> float:
    await call()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        await call()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


async def _get(client: httpx.AsyncClient, url: str) -> None:
    answer = await client.get(url)
    if answer.status_code != 200:
        raise SystemExit(f"{url}: {answer.status_code}")


async def _run_page(
    store: EventStore, client: httpx.AsyncClient, n: int, repeat: int
) -> dict[str, Any]:
    suite = parse_suite(_suite(n), source="bench")
    service = RunService(store, Registry(), None)
    started = time.perf_counter()
    record, _ = await service.run(await service.plan(suite, SCRIPTED, RunSettings(concurrency=16)))
    made = time.perf_counter() - started
    url = "/run?" + httpx.QueryParams({"id": record.run_id}).__str__()

    async def naive() -> None:
        run_detail(suite, await store.events(record.run_id), grading_options(record.run_request))

    page = await _timed(lambda: _get(client, url), repeat)
    peer = await _timed(naive, max(1, repeat // 2))
    events = await store.last_sequence(record.run_id) + 1
    return {
        "trials": n,
        "events": events,
        "page_s": round(page, 4),
        "peer_full_grade_s": round(peer, 4),
        "ratio": round(peer / page, 2),
        "setup_s": round(made, 1),
    }


async def _runs_page(
    store: EventStore,
    client: httpx.AsyncClient,
    template: RunRecord,
    n: int,
    have: int,
    repeat: int,
) -> dict[str, Any]:
    for i in range(have, n):
        run_id = f"{template.tenant}/rbench{i:021d}"
        created = f"2026-01-01T00:00:{i % 60:02d}.{i:06d}Z"
        await store.create_run(
            replace(template, run_id=run_id, idempotency_key=None, created_at=created)
        )
    page = await _timed(lambda: _get(client, "/?page=2"), repeat)
    peer = await _timed(lambda: store.list_runs(limit=n + 10), max(1, repeat // 2))
    return {"runs": n, "page_s": round(page, 4), "peer_list_all_s": round(peer, 4),
            "ratio": round(peer / page, 2)}  # fmt: skip


async def main(sizes: tuple[int, ...], repeat: int) -> dict[str, Any]:
    load = list(os.getloadavg())
    with tempfile.TemporaryDirectory() as tmp:
        async with await EventStore.open(str(Path(tmp) / "bench.db")) as store:
            app = create_viewer_app(store=store)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
                run_rows = [await _run_page(store, client, n, repeat) for n in sizes]
                # the runs page's rows are copies of the smallest run (one task of 10 trials)
                template = next(r for r in await store.list_runs(limit=10)
                                if r.suite_id.endswith(f"-{sizes[0]}"))  # fmt: skip
                runs_rows, have = [], len(sizes)
                for n in sizes:
                    runs_rows.append(await _runs_page(store, client, template, n, have, repeat))
                    have = max(have, n)
    return {"benchmark": "viewer", "python": sys.version.split()[0], "repeat": repeat,
            "load_average_before": load, "load_average_after": list(os.getloadavg()),
            "run_page": run_rows, "runs_page": runs_rows}  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sizes 10 and 1,000 only")
    parser.add_argument("--repeat", type=int, default=5, help="requests timed per figure")
    args = parser.parse_args()
    result = asyncio.run(main(QUICK_SIZES if args.quick else SIZES, args.repeat))
    print(json.dumps(result, indent=2))
