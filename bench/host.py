"""Host benchmark: eval runs created per second over HTTP, and SSE fan-out to 50 subscribers.

Starts ``python -m wopeval.host`` (the same process ``wopeval serve`` runs) on a real socket and
prints one JSON document:

* ``creates``: ``POST /runs`` (``mode: "eval"``, a one-task scripted suite) from 8 concurrent
  clients; the host executes the runs meanwhile. Peer, same run: ``create_run_record`` called
  in-process on the same kind of store (no HTTP, no execution), as a ratio (HTTP / in-process).
* ``fanout``: one run with ~1,500 events; 50 SSE subscribers (``streamMode=debug``) attached
  as it is created (``live``: bounded by the run's own speed) and again after it completed
  (``replay``: pure delivery). Events delivered per second = frames received by all
  subscribers / wall time. Every subscriber's sequence is checked: no gap, no duplicate.
  Peer, same run: 50 long-polling clients (``/events/poll``) replaying it, as a ratio
  (SSE / poll).

Usage: ``python3 bench/host.py [--store URL] [--creates N] [--subscribers N]``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from wopeval.engine.registry import SCRIPTED_AGENT_ID
from wopeval.engine.run import RunSettings
from wopeval.events.store import EventStore
from wopeval.service.runs import create_run_record
from wopeval.suite import parse_suite

KEY = "bench-key-0123456789"
CREATE_CLIENTS = 8


def _task(task_id: str, calls: int) -> dict[str, Any]:
    script = {
        "calls": [{"tool": f"kb:tool-{i}", "args": {"i": i}} for i in range(calls)],
        "usage": [{"provider": "mock", "model": "m", "inputTokens": 5, "outputTokens": 2}],
        "output": "ok",
    }
    return {
        "taskId": task_id,
        "input": script,
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}},
    }


def _write_suites(directory: Path) -> None:
    small = {
        "suiteId": "core.bench.evals.small",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [_task("one", 1)],
    }
    # 25 tasks × 5 trials, each trial ≈ 12 events: ≈ 1,500 events in one run.
    big = {
        "suiteId": "core.bench.evals.fanout",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [_task(f"t{i}", 4) for i in range(25)],
        "trials": {"count": 5},
    }
    (directory / "small.json").write_text(json.dumps(small))
    (directory / "big.json").write_text(json.dumps(big))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _start_host(directory: Path, store: str, port: int) -> subprocess.Popen[bytes]:
    config = {
        "apiKeys": [{"key": KEY, "tenant": "bench"}],
        "suiteDirectories": [str(directory)],
        "builtinSuites": False,
        "concurrency": 4,
        "evalSuite": {"maxTasksPerSuite": 100},
        # One tenant drives the whole load: lift its per-tenant limits (issue 14) out of the way.
        "limits": {"activeRunsPerTenant": 100_000, "streamsPerTenant": 10_000},
    }
    config_file = directory.parent / "host.json"
    config_file.write_text(json.dumps(config))
    command = [sys.executable, "-m", "wopeval.host", "--port", str(port), "--store", store,
               "--config", str(config_file), "--log-level", "warning"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent / "src")}
    proc = subprocess.Popen(command, env=env)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/.well-known/openwop", timeout=1)
            return proc
        except httpx.TransportError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("the host did not start")


def _body(ref: str) -> dict[str, Any]:
    return {"mode": "eval", "evalSuiteRef": ref, "agentId": SCRIPTED_AGENT_ID}


async def bench_creates(client: httpx.AsyncClient, total: int) -> float:
    per_client = total // CREATE_CLIENTS

    async def one_client() -> None:
        for _ in range(per_client):
            response = await client.post("/runs", json=_body("suite://core.bench.evals.small"))
            response.raise_for_status()

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(CREATE_CLIENTS):
            group.start_soon(one_client)
    return per_client * CREATE_CLIENTS / (time.perf_counter() - started)


async def bench_in_process_creates(store_url: str, directory: Path, total: int) -> float:
    suite = parse_suite(json.loads((directory / "small.json").read_text()))
    store = await EventStore.open(store_url)
    try:
        per_client = total // CREATE_CLIENTS

        async def one_client() -> None:
            for _ in range(per_client):
                await create_run_record(store, suite, SCRIPTED_AGENT_ID, RunSettings(),
                                        tenant="peer")  # fmt: skip

        started = time.perf_counter()
        async with anyio.create_task_group() as group:
            for _ in range(CREATE_CLIENTS):
                group.start_soon(one_client)
        return per_client * CREATE_CLIENTS / (time.perf_counter() - started)
    finally:
        await store.close()


async def _subscribe(client: httpx.AsyncClient, path: str) -> list[int]:
    sequences: list[int] = []
    params = {"streamMode": "debug"}
    async with client.stream("GET", f"{path}/events", params=params) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                sequences.append(json.loads(line[6:])["sequence"])
    return sequences


async def _poll_replay(client: httpx.AsyncClient, path: str) -> list[int]:
    sequences: list[int] = []
    after = -1
    while True:
        params = {"afterSequence": after} if after >= 0 else {}
        response = await client.get(f"{path}/events/poll", params=params)
        response.raise_for_status()
        body = response.json()
        sequences += [e["sequence"] for e in body["events"]]
        after = body["lastSequence"]
        if body["isTerminal"] and not body["events"]:
            return sequences


async def _fan(
    client: httpx.AsyncClient, path: str, n: int, poll: bool
) -> tuple[float, list[list[int]]]:
    results: list[list[int]] = []

    async def one() -> None:
        results.append(await (_poll_replay(client, path) if poll else _subscribe(client, path)))

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(n):
            group.start_soon(one)
    return time.perf_counter() - started, results


def _check(results: list[list[int]]) -> dict[str, int]:
    gaps = duplicates = 0
    for sequences in results:
        duplicates += len(sequences) - len(set(sequences))
        gaps += sum(1 for a, b in itertools.pairwise(sequences) if b != a + 1)
        gaps += 0 if sequences and sequences[0] == 0 else 1
    return {"gaps": gaps, "duplicates": duplicates}


async def bench_fanout(client: httpx.AsyncClient, subscribers: int) -> dict[str, Any]:
    created = (await client.post("/runs", json=_body("suite://core.bench.evals.fanout"))).json()
    path = "/runs/" + created["runId"].replace("/", "~2F")
    live_s, live = await _fan(client, path, subscribers, poll=False)
    replay_s, replay = await _fan(client, path, subscribers, poll=False)
    poll_s, polled = await _fan(client, path, subscribers, poll=True)
    events = len(replay[0])
    checks = {
        k: _check(live)[k] + _check(replay)[k] + _check(polled)[k] for k in ("gaps", "duplicates")
    }
    complete = all(len(s) == events for s in live + replay + polled)
    sse_rate = subscribers * events / replay_s
    poll_rate = subscribers * events / poll_s
    return {
        "subscribers": subscribers,
        "events_per_run": events,
        "live": {"seconds": round(live_s, 3), "events_per_s": round(subscribers * events / live_s)},
        "replay": {"seconds": round(replay_s, 3), "events_per_s": round(sse_rate)},
        "peer_poll_replay": {"seconds": round(poll_s, 3), "events_per_s": round(poll_rate)},
        "ratio_sse_vs_poll": round(sse_rate / poll_rate, 2),
        "every_subscriber_complete": complete,
        **checks,
    }


async def main_async(args: argparse.Namespace, port: int, peer_rate: float) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=args.subscribers + 20)
    headers = {"Authorization": f"Bearer {KEY}", "OpenWOP-Version": "2.0"}
    base = f"http://127.0.0.1:{port}"
    async with httpx.AsyncClient(base_url=base, headers=headers, limits=limits,
                                 timeout=120) as client:  # fmt: skip
        fanout = await bench_fanout(client, args.subscribers)  # first: no queue ahead of it
        await bench_creates(client, 40)  # warm-up
        http_rate = await bench_creates(client, args.creates)
    return {
        "store": "postgresql" if args.store.startswith("postgres") else "sqlite",
        "cpus": os.cpu_count(),
        "creates": {
            "total": args.creates,
            "clients": CREATE_CLIENTS,
            "http_per_s": round(http_rate, 1),
            "peer_in_process_create_run_record_per_s": round(peer_rate, 1),
            "ratio_http_vs_in_process": round(http_rate / peer_rate, 3),
        },
        "fanout": fanout,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", help="store URL for the host (default: a temp SQLite file)")
    parser.add_argument("--creates", type=int, default=400)
    parser.add_argument("--subscribers", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "suites"
        directory.mkdir()
        _write_suites(directory)
        args.store = args.store or str(Path(tmp) / "host.db")
        args.peer_store = (
            args.store if args.store.startswith("postgres") else str(Path(tmp) / "peer.db")
        )
        # The peer runs first, alone: the host would otherwise still be executing runs.
        peer_rate = anyio.run(bench_in_process_creates, args.peer_store, directory, args.creates)
        port = _free_port()
        proc = _start_host(directory, args.store, port)
        try:
            result = anyio.run(main_async, args, port, peer_rate)
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
