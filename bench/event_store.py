"""Event-store append throughput, against a hand-written raw-driver peer in the same run.

Prints JSON: events appended per second (each durable when ``append`` returns) by one appender,
by 8 runs appending at once, and by 50 appenders on one run, on SQLite and on PostgreSQL; and the
same event count written by the obvious raw loop (one INSERT + commit per event, aiosqlite /
asyncpg), as a ratio (store / raw; > 1 means the store is faster).

Usage: ``python3 bench/event_store.py [--events N] [--pg postgresql://postgres@127.0.0.1:5432]``.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiosqlite
import anyio
import asyncpg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from wopeval.events.ids import new_event_id, new_run_id, utc_now
from wopeval.events.store import EventStore, RunRecord

PAYLOAD = {"agentId": "support-bot", "toolName": "crm:lookup-order", "callId": "c-123456",
           "inputs": {"orderId": "A-1001"}, "x-wopeval-fixture": "served"}  # fmt: skip
PEER_TABLE = (
    "CREATE TABLE peer (run_id TEXT, sequence BIGINT, event_id TEXT, type TEXT, payload TEXT, "
    "timestamp TEXT, PRIMARY KEY (run_id, sequence))"
)


async def _new_run(store: EventStore) -> str:
    run_id, now = new_run_id("bench"), utc_now()
    record = RunRecord(run_id, "bench", "eval", "running", "core.b.evals.s", "1.0.0", "a", {},
                       {}, None, None, now, now, None)  # fmt: skip
    await store.create_run(record)
    return run_id


async def _store_rates(url: str, n: int) -> dict[str, float]:
    async with await EventStore.open(url) as store:
        rates: dict[str, float] = {}
        run_id = await _new_run(store)
        started = time.perf_counter()
        for _ in range(n):
            await store.append(run_id, "agent.tool-called", PAYLOAD)
        rates["oneAppender"] = n / (time.perf_counter() - started)

        runs = [await _new_run(store) for _ in range(8)]
        started = time.perf_counter()
        async with anyio.create_task_group() as group:
            for rid in runs:
                group.start_soon(_append_many, store, rid, n // 8)
        rates["eightRuns"] = (n // 8) * 8 / (time.perf_counter() - started)

        one = await _new_run(store)
        started = time.perf_counter()
        async with anyio.create_task_group() as group:
            for _ in range(50):
                group.start_soon(_append_many, store, one, n // 50)
        rates["fiftyAppendersOneRun"] = (n // 50) * 50 / (time.perf_counter() - started)
        return rates


async def _append_many(store: EventStore, run_id: str, count: int) -> None:
    for _ in range(count):
        await store.append(run_id, "agent.tool-called", PAYLOAD)


def _row(i: int) -> tuple[Any, ...]:
    return ("r", i, new_event_id(), "agent.tool-called", json.dumps(PAYLOAD), utc_now())


async def _raw_sqlite(path: str, n: int) -> float:
    async with aiosqlite.connect(path) as db:
        await db.execute("PRAGMA journal_mode=WAL")
        await db.execute("PRAGMA synchronous=NORMAL")
        await db.execute(PEER_TABLE)
        await db.commit()
        started = time.perf_counter()
        for i in range(n):
            await db.execute("INSERT INTO peer VALUES (?,?,?,?,?,?)", _row(i))
            await db.commit()
        return n / (time.perf_counter() - started)


async def _raw_pg(url: str, n: int) -> float:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(PEER_TABLE)
        started = time.perf_counter()
        for i in range(n):
            await conn.execute("INSERT INTO peer VALUES ($1,$2,$3,$4,$5,$6)", *_row(i))
        return n / (time.perf_counter() - started)
    finally:
        await conn.close()


async def _with_pg_database(server: str, n: int) -> dict[str, Any]:
    name = f"wopeval_bench_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(f"{server}/postgres")
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        try:
            rates = await _store_rates(f"{server}/{name}", n)
            raw = await _raw_pg(f"{server}/{name}", n)
        finally:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()
    return _report(rates, raw)


def _report(rates: dict[str, float], raw: float) -> dict[str, Any]:
    return {
        "eventsPerSecond": {k: round(v) for k, v in rates.items()},
        "peerRawDriverEventsPerSecond": round(raw),
        "ratioVsRaw": {k: round(v / raw, 2) for k, v in rates.items()},
    }


async def main(n: int, pg: str | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        rates = await _store_rates(str(Path(tmp) / "store.db"), n)
        raw = await _raw_sqlite(str(Path(tmp) / "raw.db"), n)
    result: dict[str, Any] = {
        "events": n,
        "cpus": os.cpu_count(),
        "loadAverage": os.getloadavg(),
        "peer": "raw driver loop: one INSERT and commit per event",
        "sqlite": _report(rates, raw),
    }
    if pg:
        result["postgresql"] = await _with_pg_database(pg, n)
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=4000)
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432",
                        help="PostgreSQL server ('' to skip)")  # fmt: skip
    args = parser.parse_args()
    print(json.dumps(anyio.run(main, args.events, args.pg or None), indent=2))
