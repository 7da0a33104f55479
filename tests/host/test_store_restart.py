"""A PostgreSQL restart during a run (issue 30 §1): the host answers 503 with Retry-After and
reports not-ready while the database is away, reconnects when it is back, resumes the run it
was executing, and loses nothing: every (task, trial) scored exactly once, one gap-free log."""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import secrets
import sys
import threading
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import anyio
import asyncpg
import pytest

from tests.host.helpers import eval_body, host_config, running_host, segment
from tests.host.pgcluster import Cluster, throwaway_cluster
from wopeval.events.store import EventStore
from wopeval.wire.events import EvalScored

pytestmark = pytest.mark.slow

TASKS, TRIALS = 2, 40
SUITE = {
    "suiteId": "core.wopeval.evals.restart",
    "version": "1.0.0",
    "modes": ["golden"],
    "trials": {"count": TRIALS},
    "tasks": [
        {
            "taskId": f"echo-{i}",
            "input": {"output": "hello"},
            "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "hello"}},
        }
        for i in range(TASKS)
    ],
}
REF = "suite://core.wopeval.evals.restart@1.0.0"
GATED = "test.gated"
LEASE_S = 3
FREE = 6  # trials that end at once; the rest wait for the gate, opened once the database is down
GATE = threading.Event()
CALLS = itertools.count()


async def gated_agent(task_input: Any, ctx: Any) -> Any:
    if next(CALLS) >= FREE:
        while not GATE.is_set():  # noqa: ASYNC110 (set from the test, not an anyio event)
            await anyio.sleep(0.01)
    return task_input["output"]


async def _until(check: Any, what: str, seconds: float = 60) -> Any:
    with anyio.fail_after(seconds):
        while not (found := await check()):  # noqa: ASYNC110 (a condition of the store's)
            await anyio.sleep(0.05)
    return found


@pytest.fixture(scope="module")
def shared_cluster() -> Iterator[Cluster]:
    """One throwaway cluster for the module (``initdb`` takes seconds)."""
    with throwaway_cluster() as cluster:
        yield cluster


@pytest.fixture
def cluster(shared_cluster: Cluster) -> Cluster:
    """The module's cluster, started (a test before may have failed while it was stopped), and
    a database of this test's own in it (its ``url``)."""
    if not shared_cluster.running():
        shared_cluster.start()
    name = f"restart_{secrets.token_hex(4)}"

    async def create() -> None:
        conn = await asyncpg.connect(shared_cluster.url)
        try:
            await conn.execute(f'CREATE DATABASE "{name}"')
        finally:
            await conn.close()

    anyio.run(create)
    return dataclasses.replace(shared_cluster, database=name)


def test_0244_host_survives_a_postgresql_restart_during_a_run(
    tmp_path: Path, cluster: Cluster
) -> None:
    suites = tmp_path / "suites"
    suites.mkdir()
    (suites / "restart.json").write_text(json.dumps(SUITE))
    anyio.run(_restart_during_a_run, cluster, suites)


async def _restart_during_a_run(cluster: Any, suites: Path) -> None:
    agents = {GATED: f"{__name__}:gated_agent"}
    # In a thread of this process: the agent waits on this test's gate and counts its calls.
    config = host_config({"trials": {"maxTrials": TRIALS}}, suiteDirectories=[str(suites)],
                         leaseSeconds=LEASE_S, trialConcurrency=2, agents=agents,
                         agentIsolation="thread")  # fmt: skip
    async with running_host(cluster.url, config) as host:
        store, manager = host.state.store, host.state.manager
        run_id = await host.run_id(eval_body(REF, GATED))
        path = f"/runs/{segment(run_id)}"

        async def scored_some() -> bool:
            events = await store.events(run_id)
            return sum(e.type == "eval.scored" for e in events) >= FREE

        await _until(scored_some, "trials scored")
        await anyio.to_thread.run_sync(cluster.stop)
        GATE.set()  # the waiting trials end now, their events unwritable
        await _until(lambda: _is(run_id in manager.stranded), "the run stopped")

        down = {
            "healthz": await host.client.get("/healthz"),
            "readyz": await host.client.get("/readyz"),
            "snapshot": await host.get(path),
            "create": await host.create(eval_body(REF, GATED)),
            "poll": await host.get(f"{path}/events/poll?timeout=1"),
        }
        discovery = await host.client.get("/.well-known/openwop")
        await anyio.sleep(LEASE_S + 1)  # the outage outlasts the run's lease

        await anyio.to_thread.run_sync(cluster.start)

        async def ended() -> dict[str, Any] | None:
            answer = await host.get(path)
            body: dict[str, Any] = answer.json()
            return body if answer.status_code == 200 and body["status"] == "completed" else None

        final = await _until(ended, "the run completed")
        ready = await host.client.get("/readyz")
        again = await host.create(eval_body(REF, GATED))
        events = await store.events(run_id)

    assert down["healthz"].status_code == 200  # alive: a liveness probe must not restart it
    for name in ("readyz", "snapshot", "create", "poll"):
        answer = down[name]
        assert answer.status_code == 503, (name, answer.text)
        assert answer.json()["error"] == "service_unavailable"
        assert int(answer.headers["Retry-After"]) >= 1
    assert discovery.status_code == 200
    assert final["status"] == "completed"
    assert ready.status_code == 200
    assert again.status_code == 201, again.text
    assert [e.sequence for e in events] == list(range(len(events)))
    assert [e.type for e in events].count("run.started") == 1
    assert events[-1].type == "run.completed"
    scored = [(p.taskId, p.trialIndex) for e in events if isinstance(p := e.typed, EvalScored)]
    assert sorted(scored) == sorted((f"echo-{i}", t) for i in range(TASKS) for t in range(TRIALS))


async def _is(value: bool) -> bool:
    return value


# ---- the same for a CLI run --------------------------------------------------------------------

CLI_TRIALS = 12
CLI_SUITE = {
    "suiteId": "core.wopeval.evals.clirestart",
    "version": "1.0.0",
    "modes": ["golden"],
    "trials": {"count": CLI_TRIALS},
    "tasks": [
        {
            "taskId": "echo",
            "input": {"output": "hello"},
            "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "hello"}},
        }
    ],
}
GATE_ENV = "WOPEVAL_TEST_GATE"


async def file_gated_agent(task_input: Any, ctx: Any) -> Any:
    """:func:`gated_agent` for another process: the gate is the file ``$WOPEVAL_TEST_GATE``."""
    gate = anyio.Path(os.environ[GATE_ENV])
    if next(CALLS) >= FREE:
        while not await gate.exists():  # noqa: ASYNC110 (another process creates the file)
            await anyio.sleep(0.01)
    return task_input["output"]


def test_0244_cli_run_is_interrupted_by_a_postgresql_restart_and_resumed(
    tmp_path: Path, cluster: Cluster
) -> None:
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps(CLI_SUITE))
    anyio.run(_cli_restart, cluster, suite, tmp_path / "gate")


async def _scored(url: str) -> tuple[str, list[Any]] | None:
    async with await EventStore.open(url) as store:
        found = await store.list_runs()
        if not found:
            return None
        events = await store.events(found[0].run_id)
        return found[0].run_id, events


async def _cli_restart(cluster: Any, suite: Path, gate: Path) -> None:
    env = {**os.environ, GATE_ENV: str(gate), "PYTHONUNBUFFERED": "1"}
    env.pop("WOPEVAL_STORE", None)
    wopeval = [sys.executable, "-m", "wopeval", "run"]
    agent = f"{__name__}:file_gated_agent"
    command = [*wopeval, str(suite), "--agent", agent, "--override-target", "--store",
               cluster.url, "--concurrency", "2", "--json"]  # fmt: skip
    async with await anyio.open_process(command, env=env) as process:

        async def some_scored() -> bool:
            found = await _scored(cluster.url)
            return found is not None and sum(e.type == "eval.scored" for e in found[1]) >= FREE

        await _until(some_scored, "trials scored")
        await anyio.to_thread.run_sync(cluster.stop)
        await anyio.Path(gate).touch()  # the waiting trials end now, their events unwritable
        with anyio.fail_after(60):
            code = await process.wait()
        assert process.stdout is not None
        assert process.stderr is not None
        out = await _read_all(process.stdout)
        err = await _read_all(process.stderr)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 3, err
    assert len(lines) == 1, err
    assert out.count("\n") == 1, out
    assert "was interrupted: " in lines[0]
    assert "Finish it with: wopeval run --resume" in lines[0]
    stopped = json.loads(out)
    assert stopped["status"] == "interrupted"
    run_id = stopped["runId"]
    assert stopped["resume"] == f"wopeval run --resume {run_id} --store {cluster.url}"

    await anyio.to_thread.run_sync(cluster.start)
    resumed = await anyio.run_process(
        [*wopeval, "--resume", run_id, "--store", cluster.url, "--json"], env=env, check=False
    )
    assert resumed.returncode == 0, resumed.stderr.decode()
    assert json.loads(resumed.stdout)["summary"]["passed"] is True
    found = await _scored(cluster.url)
    assert found is not None
    assert found[0] == run_id
    events = found[1]
    assert [e.sequence for e in events] == list(range(len(events)))
    assert events[-1].type == "run.completed"
    scored = sorted(p.trialIndex or 0 for e in events if isinstance(p := e.typed, EvalScored))
    assert scored == list(range(CLI_TRIALS))


async def _read_all(stream: Any) -> str:
    chunks = []
    with suppress(anyio.EndOfStream):
        while True:
            chunks.append(await stream.receive())
    return b"".join(chunks).decode()
