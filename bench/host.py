"""Host benchmark: eval runs created per second over HTTP against in-process creation, before and
after in one invocation; and SSE fan-out (``bench/host_fanout.py``).

Starts ``python -m wopeval.host`` (the same process ``wopeval serve`` runs) on a real socket and
prints one JSON document:

* ``creates``, per store (SQLite; PostgreSQL with ``--pg``): ``POST /runs`` (``mode: "eval"``, a
  one-task scripted suite) from 8 concurrent clients, after 40 warm-up creates; the host
  executes the runs meanwhile, as it does in use. Each request's latency is timed by its client
  (p50, p99). Peer, same invocation: ``create_run_record`` called in process by 8 concurrent
  tasks on a fresh store of the same kind (no HTTP, no execution); ``ratio`` = HTTP / in-process.
  Each repeat measures the peer, then both trees in alternating order (``before``: the
  ``--base`` commit's ``src`` from ``git archive``; ``after``: this checkout's), each on a fresh
  store (PostgreSQL: a scratch database, dropped after), after ``sync`` and a pause, so that
  the previous host's writes are not charged to the next (without them the tree measured
  second was slower in 10 of 12 pairs, whichever it was). Figures are the median of the repeats
  (4 by default: each tree goes first as often) with min–max; ``met`` is issue 32's goal 3
  (ratio within 2×) on the after median.
  ``host_cpu_ms_per_create``: the host process's CPU (``/proc``) over the measured creates;
  ``client_cpu_ms_per_create``: the clients' (this process's) CPU over them.
  Two more HTTP measurements per repeat, same clients: ``http_floor`` (``bench/http_floor.py``:
  the host's uvicorn and FastAPI stack answering ``POST /runs`` with no work behind it; what
  any create over this stack costs at least; ``goal_reachable_over_this_stack`` is its ratio
  against the goal) and ``after_held`` (the after tree creating runs of an agent that never
  returns, ``bench/host_held.py``, in thread isolation: the host executes nothing, like the
  peer). ``ratio_vs_http_floor`` = a tree's rate / the floor's. ``server`` names the stack used.
* ``fanout``: on the after tree, once per store (see ``bench/host_fanout.py``).

Usage: ``python3 bench/host.py [--quick] [--pg URL] [--base REF] [--no-before] [--repeats N]
[--creates N] [--subscribers N] [--no-fanout] [--no-pg | --no-sqlite]``. See bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "src")]

from bench.host_fanout import FANOUT_REF, bench_fanout  # noqa: E402
from bench.host_held import HELD_AGENT_ID, HELD_AGENT_REF  # noqa: E402
from bench.scale import _before_src, _pg_create, compile_tree  # noqa: E402
from wopeval.engine.registry import SCRIPTED_AGENT_ID  # noqa: E402
from wopeval.engine.run import RunSettings  # noqa: E402
from wopeval.events.store import EventStore  # noqa: E402
from wopeval.service.runs import create_run_record  # noqa: E402
from wopeval.suite import parse_suite  # noqa: E402

KEY = "bench-key-0123456789"
CREATE_CLIENTS = 8
WARM_UP = 40
GOAL_RATIO = 0.5  # issue 32, goal 3: within 2× of in-process creation
BASE = "32a78fa"  # main when issue 32's host work started
SETTLE_S = 2.0
SMALL_REF = "suite://core.bench.evals.small"
Store = Callable[[], tuple[str, Callable[[], None]]]


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


def _start_host(
    src: Path, directory: Path, store: str, port: int, held: bool = False
) -> subprocess.Popen[bytes]:
    config: dict[str, Any] = {
        "apiKeys": [{"key": KEY, "tenant": "bench"}],
        "suiteDirectories": [str(directory)],
        "builtinSuites": False,
        "concurrency": 4,
        "evalSuite": {"maxTasksPerSuite": 100},
        # One tenant drives the whole load: lift its per-tenant limits out of the way.
        "limits": {"activeRunsPerTenant": 100_000, "streamsPerTenant": 10_000},
        "shutdownGraceSeconds": 1,  # the runs still queued at the end are not measured
    }
    if held:
        config["agents"] = {HELD_AGENT_ID: HELD_AGENT_REF}
        config["agentIsolation"] = "thread"  # not a worker process per trial
    config_file = directory.parent / "host.json"
    config_file.write_text(json.dumps(config))
    command = [sys.executable, "-m", "wopeval.host", "--port", str(port), "--store", store,
               "--config", str(config_file), "--log-level", "warning"]  # fmt: skip
    return _spawn(command, src, port)


def _spawn(command: list[str], src: Path, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(ROOT)])}  # + bench/
    proc = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/.well-known/openwop", timeout=1)
            return proc
        except httpx.TransportError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("the host did not start")


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU of a process so far (Linux ``/proc``), else None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _body(ref: str, agent: str = SCRIPTED_AGENT_ID) -> dict[str, Any]:
    return {"mode": "eval", "evalSuiteRef": ref, "agentId": agent}


async def _clients(total: int, one: Callable[[], Any]) -> tuple[float, list[float]]:
    """``total`` calls of ``one`` by 8 concurrent clients: (calls per second, each call's s)."""
    latencies: list[float] = []

    async def client() -> None:
        for _ in range(total // CREATE_CLIENTS):
            started = time.perf_counter()
            await one()
            latencies.append(time.perf_counter() - started)

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(CREATE_CLIENTS):
            group.start_soon(client)
    return len(latencies) / (time.perf_counter() - started), latencies


def _figures(rate: float, latencies: list[float]) -> dict[str, float]:
    cuts = statistics.quantiles(latencies, n=100, method="inclusive")
    return {
        "per_s": round(rate, 1),
        "p50_ms": round(cuts[49] * 1000, 2),
        "p99_ms": round(cuts[98] * 1000, 2),
    }


async def peer_creates(store_url: str, directory: Path, total: int) -> dict[str, float]:
    suite = parse_suite(json.loads((directory / "small.json").read_text()))
    store = await EventStore.open(store_url)
    try:

        async def one() -> None:
            await create_run_record(store, suite, SCRIPTED_AGENT_ID, RunSettings(), tenant="peer")

        await _clients(WARM_UP, one)
        return _figures(*await _clients(total, one))
    finally:
        await store.close()


async def http_creates(
    port: int, pid: int, total: int, subscribers: int | None, agent: str = SCRIPTED_AGENT_ID
) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=(subscribers or 0) + 20)
    headers = {"Authorization": f"Bearer {KEY}", "OpenWOP-Version": "2.0"}
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", headers=headers,
                                 limits=limits, timeout=120) as client:  # fmt: skip
        fanout = None
        if subscribers:  # first: no queue of runs ahead of it
            fanout = await bench_fanout(client, subscribers, _body(FANOUT_REF))

        async def one() -> None:
            response = await client.post("/runs", json=_body(SMALL_REF, agent))
            response.raise_for_status()

        await _clients(WARM_UP, one)
        cpu_before, client_before = _cpu_seconds(pid), time.process_time()
        figures: dict[str, Any] = _figures(*await _clients(total, one))
        cpu_after, client_after = _cpu_seconds(pid), time.process_time()
    if cpu_before is not None and cpu_after is not None:
        figures["host_cpu_ms_per_create"] = round((cpu_after - cpu_before) / total * 1000, 2)
    figures["client_cpu_ms_per_create"] = round((client_after - client_before) / total * 1000, 2)
    return {"figures": figures, "fanout": fanout}


def _settle() -> None:
    """Let the previous measurement's writes reach the disk before the next one starts."""
    os.sync()
    time.sleep(SETTLE_S)


def measure_host(
    src: Path, directory: Path, store: str, total: int, subscribers: int | None, held: bool = False
) -> dict[str, Any]:
    _settle()
    port = _free_port()
    proc = _start_host(src, directory, store, port, held)
    agent = HELD_AGENT_ID if held else SCRIPTED_AGENT_ID
    try:
        return anyio.run(http_creates, port, proc.pid, total, subscribers, agent)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def measure_floor(total: int) -> dict[str, Any]:
    """The HTTP floor (``bench/http_floor.py``): the same clients against the host's server
    stack answering ``POST /runs`` with no work behind it."""
    _settle()
    port = _free_port()
    command = [sys.executable, str(ROOT / "bench" / "http_floor.py"), str(port)]
    proc = _spawn(command, ROOT / "src", port)
    try:
        return dict(anyio.run(http_creates, port, proc.pid, total, None)["figures"])
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _spread(values: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
    }


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    keys = [k for k in runs[0] if isinstance(runs[0][k], int | float)]
    return {k: _spread([r[k] for r in runs]) for k in keys}


def _ratios(figures: dict[str, Any], peer: dict[str, Any], floor: dict[str, Any]) -> dict[str, Any]:
    figures["ratio_http_vs_in_process"] = round(figures["per_s"] / peer["per_s"], 3)
    figures["ratio_vs_http_floor"] = round(figures["per_s"] / floor["per_s"], 3)
    return figures


def measure_store(
    args: argparse.Namespace, trees: dict[str, Path], new_store: Store, directory: Path
) -> dict[str, Any]:
    runs: dict[str, list[dict[str, Any]]] = {
        "peer": [], "http_floor": [], **{name: [] for name in trees}, "after_held": []
    }  # fmt: skip
    fanout = None
    for repeat in range(args.repeats):
        order = list(trees) if repeat % 2 == 0 else list(reversed(trees))
        url, drop = new_store()
        _settle()
        try:  # alone: no host is executing runs meanwhile
            peer = anyio.run(peer_creates, url, directory, args.creates)
        finally:
            drop()
        runs["peer"].append(peer)
        floor = measure_floor(args.creates)
        floor["ratio_http_vs_in_process"] = round(floor["per_s"] / peer["per_s"], 3)
        runs["http_floor"].append(floor)
        _progress(f"repeat {repeat + 1}: http_floor {floor}")
        for name in order:
            with_fanout = args.subscribers if name == "after" and fanout is None else None
            url, drop = new_store()
            try:
                result = measure_host(trees[name], directory, url, args.creates, with_fanout)
            finally:
                drop()
            fanout = fanout or result["fanout"]
            if name == "after":
                url, drop = new_store()
                try:
                    held = measure_host(trees[name], directory, url, args.creates, None, True)
                finally:
                    drop()
                runs["after_held"].append(_ratios(held["figures"], peer, floor))
                _progress(f"repeat {repeat + 1}: after_held {held['figures']}")
            figures = _ratios(result["figures"], peer, floor)
            runs[name].append(figures)
            _progress(f"repeat {repeat + 1}: {name} {figures}, peer {peer}")
    report: dict[str, Any] = {name: _summary(values) for name, values in runs.items()}
    report["runs"] = runs
    ratio = report["after"]["ratio_http_vs_in_process"]["median"]
    report["goal"] = f"after median ratio >= {GOAL_RATIO} (within 2x of in-process creation)"
    report["met"] = ratio >= GOAL_RATIO
    floor_ratio = report["http_floor"]["ratio_http_vs_in_process"]["median"]
    report["goal_reachable_over_this_stack"] = floor_ratio >= GOAL_RATIO
    report["fanout"] = fanout
    return report


def _progress(line: str) -> None:
    print(f"host: {time.strftime('%H:%M:%S')} {line} (load {os.getloadavg()[0]:.1f})",
          file=sys.stderr, flush=True)  # fmt: skip


def _server_stack() -> dict[str, str]:
    """What uvicorn's ``auto`` settings pick here (the host and the floor both use them)."""
    import importlib.metadata as metadata
    import importlib.util

    def installed(name: str) -> bool:
        return importlib.util.find_spec(name) is not None

    return {
        "uvicorn": metadata.version("uvicorn"),
        "http": "httptools" if installed("httptools") else "h11",
        "loop": "uvloop" if installed("uvloop") else "asyncio",
        "client": f"httpx {metadata.version('httpx')}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="160 creates, 10 subscribers")
    parser.add_argument("--creates", type=int, default=None, help="measured creates (400)")
    parser.add_argument("--subscribers", type=int, default=None, help="SSE subscribers (50)")
    parser.add_argument("--repeats", type=int, default=4, help="even: each tree first as often")
    parser.add_argument("--no-fanout", action="store_true", help="creates only")
    parser.add_argument(
        "--pg",
        default=os.environ.get("WOPEVAL_TEST_POSTGRES_URL"),
        help="PostgreSQL admin URL: scratch databases on it (default $WOPEVAL_TEST_POSTGRES_URL)",
    )
    parser.add_argument("--no-pg", action="store_true", help="SQLite only")
    parser.add_argument("--no-sqlite", action="store_true", help="PostgreSQL only (with --pg)")
    parser.add_argument("--base", default=BASE, help="the 'before' commit")
    parser.add_argument("--no-before", action="store_true", help="measure this tree only")
    args = parser.parse_args()
    args.creates = args.creates or (160 if args.quick else 400)
    args.subscribers = 0 if args.no_fanout else args.subscribers or (10 if args.quick else 50)
    pg = None if args.no_pg else args.pg
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="wopeval-bench-host-") as tmp_name:
        tmp = Path(tmp_name)
        directory = tmp / "suites"
        directory.mkdir()
        _write_suites(directory)
        trees = {} if args.no_before else {"before": _before_src(tmp, args.base)}
        trees["after"] = ROOT / "src"
        for tree in trees.values():
            compile_tree(tree)
        counter = iter(range(1_000_000))

        def sqlite() -> tuple[str, Callable[[], None]]:
            return str(tmp / f"store-{next(counter)}.db"), lambda: None

        stores: dict[str, Store] = {} if args.no_sqlite and pg else {"sqlite": sqlite}
        if pg:
            stores["postgresql"] = lambda: _pg_create(pg)
        creates = {name: measure_store(args, trees, new, directory) for name, new in stores.items()}
    machine = {"cpus": os.cpu_count(), "loadBefore": load_before, "loadAfter": os.getloadavg()}
    result = {
        "benchmark": "host creates (issue 32, goal 3)",
        "machine": machine,
        "base": None if args.no_before else args.base,
        "clients": CREATE_CLIENTS,
        "creates_per_measurement": args.creates,
        "server": _server_stack(),
        "repeats": args.repeats,
        "creates": creates,
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
