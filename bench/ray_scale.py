"""Ray executor scaling: trials/s with one Ray task per trial vs one per batch, 1 and 2 workers.

Prints one JSON document. For each cluster size (``ray.init(num_cpus=W)``: W worker processes
on this machine; ``--nodes`` instead starts a head and W-1 extra worker *nodes* with ``ray
start``, the multi-node shape) and each workload, the same suite runs with ``WOPEVAL_RAY_BATCH``
= 1 (a Ray task per trial, the old executor) and = ``--batch`` (default 50), and the
``batch_over_per_trial`` ratio of their throughputs is measured in the same cluster, back to
back. Workloads: ``trivial`` (an instant scripted agent: what the executor itself costs) and
``cpu`` (a few ms of pure Python per trial: what more workers buy). Every run appends its full
log to a SQLite store and is graded, as ``wopeval run`` does.

Usage: ``python3 bench/ray_scale.py [--quick] [--trials N] [--batch B] [--nodes]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from wopeval.engine.agent import AgentContext
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunHandle, RunSettings
from wopeval.events.store import EventStore
from wopeval.service.runs import create_run_record, execute
from wopeval.suite import parse_suite
from wopeval.suite.models import AgentEvalSuite

ROOT = Path(__file__).resolve().parent.parent
PORT = "6391"  # the --nodes head
CPU_LOOPS = 20_000  # ~2-4 ms of pure Python per trial on this machine


async def cpu_agent(task_input: Any, ctx: AgentContext) -> Any:
    """Pure-Python work (holds the GIL): the case more Ray workers can speed up."""
    total = 0
    for i in range(task_input["loops"]):
        total += i * i % 7
    return "ok" if total >= 0 else "no"


async def trivial_agent(task_input: Any, ctx: AgentContext) -> Any:
    return "ok"


def _suite(trials: int, loops: int) -> AgentEvalSuite:
    tasks = [
        {
            "taskId": f"t-{i}",
            "input": {"loops": loops},
            "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}},
        }
        for i in range(10)
    ]
    return parse_suite({
        "suiteId": "core.bench.evals.ray-scale",
        "version": "1.0.0",
        "modes": ["golden"],
        "trials": {"count": max(1, trials // 10)},
        "tasks": tasks,
    })  # fmt: skip


async def _one(store_url: str, suite: AgentEvalSuite, agent: str, concurrency: int) -> float:
    registry = Registry()
    registry.register_agent(agent, globals()[agent])
    settings = RunSettings(concurrency=concurrency, executor="ray")
    async with await EventStore.open(store_url) as store:
        record = await create_run_record(store, suite, agent, settings)
        started = time.perf_counter()
        summary = await execute(store, RunHandle(record.run_id), suite, agent, registry, settings)
        elapsed = time.perf_counter() - started
    assert summary is not None
    assert summary.passed, "every trial of the bench suite passes"
    return elapsed


def _measure(
    workdir: Path, suite: AgentEvalSuite, agent: str, batch: int, concurrency: int, repeat: int
) -> dict[str, Any]:
    trials = len(suite.tasks) * suite.trial_plan.effective_count
    out: dict[str, Any] = {"trials": trials}
    for label, size in (("per_trial", 1), ("batched", batch)):
        os.environ["WOPEVAL_RAY_BATCH"] = str(size)
        times = []
        for i in range(repeat):
            url = str(workdir / f"{agent}-{label}-{i}.db")
            times.append(anyio.run(_one, url, suite, agent, concurrency))
        best = sorted(times)[len(times) // 2]  # the median
        rate = round(trials / best)
        out[label] = {"batch": size, "seconds": round(best, 3), "trials_per_s": rate}
    out["batch_over_per_trial"] = round(
        out["batched"]["trials_per_s"] / out["per_trial"]["trials_per_s"], 2
    )
    return out


def _start_cluster(workers: int, nodes: bool) -> list[subprocess.Popen[bytes]]:
    """Start Ray for ``workers`` CPUs; with ``nodes``, as a head plus extra worker nodes, each a
    ``ray start --block`` child of this process (stopped by terminating it: never ``ray stop``,
    which would stop every Ray process on the machine)."""
    import ray

    runtime_env = {"env_vars": {"PYTHONPATH": str(ROOT)}}
    if not nodes:
        ray.init(num_cpus=workers, include_dashboard=False, runtime_env=runtime_env)
        return []
    port, cli = PORT, str(Path(sys.executable).parent / "ray")
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    os.environ["RAY_AUTH_MODE"] = "disabled"
    head = [cli, "start", "--head", f"--port={port}", "--num-cpus=1", "--include-dashboard=false"]
    children = [subprocess.Popen([*head, "--block"], env=env, stdout=subprocess.DEVNULL)]
    for _ in range(100):  # until the head answers
        probe = [cli, "status", f"--address=127.0.0.1:{port}"]
        if subprocess.run(probe, env=env, capture_output=True, check=False).returncode == 0:
            break
        time.sleep(0.3)
    for _ in range(workers - 1):
        node = [cli, "start", f"--address=127.0.0.1:{port}", "--num-cpus=1", "--block"]
        children.append(subprocess.Popen(node, env=env, stdout=subprocess.DEVNULL))
    ray.init(address=f"127.0.0.1:{port}", runtime_env=runtime_env)
    for _ in range(100):  # until every node has joined
        if ray.cluster_resources().get("CPU", 0) >= workers:  # type: ignore[no-untyped-call]
            break
        time.sleep(0.3)
    return children


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer trials, one repeat")
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--nodes", action="store_true", help="workers as separate Ray nodes")
    args = parser.parse_args()
    trials, repeat = (400, 1) if args.quick else (args.trials, args.repeat)
    import ray

    result: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "load_before": list(os.getloadavg())},
        "config": {"trials": trials, "batch": args.batch, "repeat": repeat, "nodes": args.nodes},
        "clusters": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        for workers in (1, 2):
            children: list[subprocess.Popen[bytes]] = []
            try:
                children = _start_cluster(workers, args.nodes)
                concurrency = 4 * args.batch * workers
                # warm-up: every worker process started and has imported wopeval
                _measure(workdir, _suite(100, 0), "trivial_agent", args.batch, concurrency, 1)
                result["clusters"][f"{workers}_worker"] = {
                    "trivial": _measure(
                        workdir, _suite(trials, 0), "trivial_agent", args.batch, concurrency, repeat
                    ),
                    "cpu": _measure(
                        workdir,
                        _suite(trials // 2, CPU_LOOPS),
                        "cpu_agent",
                        args.batch,
                        concurrency,
                        repeat,
                    ),
                }
            finally:
                ray.shutdown()
                for child in reversed(children):
                    child.terminate()
                    child.wait(timeout=60)
                if children:  # `ray start --head` left its address for every later ray.init()
                    current = Path(tempfile.gettempdir()) / "ray" / "ray_current_cluster"
                    if current.is_file() and current.read_text().strip().endswith(f":{PORT}"):
                        current.unlink()
    clusters = result["clusters"]
    result["scaling_2_over_1_worker"] = {
        load: {
            mode: round(
                clusters["2_worker"][load][mode]["trials_per_s"]
                / clusters["1_worker"][load][mode]["trials_per_s"],
                2,
            )
            for mode in ("per_trial", "batched")
        }
        for load in ("trivial", "cpu")
    }
    result["machine"]["load_after"] = list(os.getloadavg())
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
