"""Another tenant's request latency while a tenant's agents hog the host (a real ``wopeval
serve`` process, a client in this one).

Tenant ``other`` reads its finished run ``--reads`` times with the host idle, then again while
tenant ``acme``'s run has three agents running (``tests/host/hog_agents.py``): one blocking in
``time.sleep``, one spinning the CPU, one calling a fixture-served tool in a loop, all never
yielding to an event loop. The floor is the same reads with the host idle, in the same run; the
aim is a p99 under 100 ms while hogged (``meetsAim``). ``--isolation thread`` runs the agents in
the host's worker threads instead of worker processes (the host config's ``agentIsolation``).

Usage: ``python3 bench/agent_isolation.py [--reads N] [--repeats R]``; prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.host.hog_agents import DIRECTORY, MODES, hog_suite  # noqa: E402

KEY_A = "bench-acme-key-0123456789abcdef"
KEY_B = "bench-other-key-0123456789abcdef"
PLAIN_SUITE = {
    "suiteId": "core.bench.evals.plain",
    "version": "1.0.0",
    "modes": ["golden"],
    "tasks": [{"taskId": "t", "input": {"output": "x"},
               "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "x"}}}],
}  # fmt: skip
SCRIPTED = "core.conformance.agents.scripted"
HOG = "bench.hog"


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", "OpenWOP-Version": "2.0"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start(work: Path, isolation: str) -> tuple[subprocess.Popen[bytes], str]:
    suites = work / "suites"
    suites.mkdir()
    (suites / "hogs.json").write_text(json.dumps(hog_suite("core.bench.evals.hogs")))
    (suites / "plain.json").write_text(json.dumps(PLAIN_SUITE))
    config = {
        "apiKeys": [{"key": KEY_A, "tenant": "acme", "subjectId": "a"},
                    {"key": KEY_B, "tenant": "other", "subjectId": "b"}],
        "suiteDirectories": [str(suites)],
        "builtinSuites": False,
        "agents": {HOG: "tests.host.hog_agents:hog_agent"},
        "shutdownGraceSeconds": 0.5,
        "agentIsolation": isolation,
    }  # fmt: skip
    (work / "host.json").write_text(json.dumps(config))
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), DIRECTORY: str(work)}
    store, config_file = str(work / "store.db"), str(work / "host.json")
    command = [sys.executable, "-m", "wopeval.host", "--log-level", "critical", "--port",
               str(port), "--store", store, "--config", config_file]  # fmt: skip
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return proc, base
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the host did not start")


def _create(client: httpx.Client, suite: str, agent: str, key: str) -> str:
    body = {"mode": "eval", "evalSuiteRef": f"suite://{suite}", "agentId": agent}
    response = client.post("/runs", json=body, headers=_auth(key))
    response.raise_for_status()
    return str(response.json()["runId"])


def _path(run_id: str) -> str:
    return "/runs/" + run_id.replace("/", "~2F")


def _wait(client: httpx.Client, run_id: str, key: str) -> str:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        status = str(client.get(_path(run_id), headers=_auth(key)).json()["status"])
        if status in ("completed", "failed", "cancelled"):
            return status
        time.sleep(0.05)
    raise RuntimeError(f"run {run_id} did not end")


def _reads(client: httpx.Client, run_id: str, n: int) -> list[float]:
    out = []
    for _ in range(n):
        started = time.perf_counter()
        response = client.get(_path(run_id), headers=_auth(KEY_B))
        out.append((time.perf_counter() - started) * 1000)
        response.raise_for_status()
    return out


def _figures(ms: list[float]) -> dict[str, float]:
    p99 = statistics.quantiles(ms, n=100)[98]
    return {"p50": round(statistics.median(ms), 1), "p99": round(p99, 1), "max": round(max(ms), 1)}


def measure(reads: int, isolation: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="wopeval-isolation-") as tmp:
        work = Path(tmp)
        proc, base = _start(work, isolation)
        try:
            with httpx.Client(base_url=base, timeout=120) as client:
                theirs = _create(client, "core.bench.evals.plain", SCRIPTED, KEY_B)
                _wait(client, theirs, KEY_B)
                idle = _reads(client, theirs, reads)
                hogs = _create(client, "core.bench.evals.hogs", HOG, KEY_A)
                deadline = time.monotonic() + 60
                while not all((work / f"started-{m}").exists() for m in MODES):
                    if time.monotonic() > deadline:
                        raise RuntimeError("the hogging agents did not start")
                    time.sleep(0.05)
                hogged = _reads(client, theirs, reads)
                (work / "release").touch()
                status = _wait(client, hogs, KEY_A)
        finally:
            proc.terminate()
            proc.wait(30)
    return {"idle": _figures(idle), "hogged": _figures(hogged), "hogRun": status}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reads", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--isolation", choices=["process", "thread"], default="process")
    args = parser.parse_args()
    load_before = os.getloadavg()
    runs = [measure(args.reads, args.isolation) for _ in range(args.repeats)]
    p99s = [run["hogged"]["p99"] for run in runs]
    print(json.dumps({
        "bench": "agent_isolation",
        "reads": args.reads,
        "agentIsolation": args.isolation,
        "runs": runs,
        "hoggedP99MedianMs": statistics.median(p99s),
        "hoggedP99RangeMs": [min(p99s), max(p99s)],
        "idleP99MedianMs": statistics.median(run["idle"]["p99"] for run in runs),
        "aimMs": 100,
        "meetsAim": max(p99s) < 100,
        "loadAverage": {"before": load_before, "after": os.getloadavg()},
    }, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
