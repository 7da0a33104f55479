"""A tenant's agents run outside the host's event loop: one that blocks (a blocking call, a CPU
loop) or never yields (fixture-served tool calls in a loop) does not stall another tenant's
requests, in a worker process (``agentIsolation: process``, the default) or a worker thread.

Over a real socket, tenant ``other`` reads its run 150 times from a process of its own while
tenant ``acme``'s run has all three kinds of agent running; the fact asserted is that every read
was answered while the blocking agents still blocked (they stop only when the test releases them
afterwards), and the p99 latency is printed (``-s``), never asserted. The latency itself
is measured against a real ``wopeval serve`` by ``bench/agent_isolation.py``.

In a worker process, a trial that times out ends its agent: the spinning agent's process is
killed, where a thread could only be abandoned, still spinning.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.host.helpers import (
    KEY_A,
    KEY_B,
    PLAIN_REF,
    SUITES,
    auth,
    eval_body,
    host_config,
    segment,
    serving,
)
from tests.host.hog_agents import DIRECTORY, MODES, hog_suite, started
from wopeval.cli.startup import favour_the_loop

HOG = "test.hog"
HOG_REF = "suite://core.wopeval.evals.hogs"
READS = 150

# Reads from a process of their own, as another tenant's client would: a client thread in this
# process would contend for the interpreter lock with the agents it measures.
CLIENT = """
import json, sys, time, httpx
base, path, key, reads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
headers = {"Authorization": f"Bearer {key}", "OpenWOP-Version": "2.0"}
latencies = []
with httpx.Client(base_url=base, timeout=120) as client:
    for _ in range(reads):
        started = time.perf_counter()
        client.get(path, headers=headers).raise_for_status()
        latencies.append(time.perf_counter() - started)
print(json.dumps(latencies))
"""


def _terminal(client: httpx.Client, run_id: str, key: str) -> dict[str, Any]:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        body: dict[str, Any] = client.get(f"/runs/{segment(run_id)}", headers=auth(key)).json()
        if body["status"] in ("completed", "failed", "cancelled"):
            return body
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} did not end")


def _create(client: httpx.Client, body: dict[str, Any], key: str) -> str:
    response = client.post("/runs", json=body, headers=auth(key))
    assert response.status_code == 201, response.text
    return str(response.json()["runId"])


def _reads_from_another_process(base_url: str, run_id: str) -> list[float]:
    path = f"/runs/{segment(run_id)}"
    done = subprocess.run(
        [sys.executable, "-c", CLIENT, base_url, path, KEY_B, str(READS)],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    return [float(seconds) for seconds in json.loads(done.stdout)]


def _wait_started(directory: Path, modes: tuple[str, ...]) -> dict[str, int]:
    deadline = time.monotonic() + 60
    while set(started(directory)) < set(modes):
        assert time.monotonic() < deadline, f"started: {sorted(started(directory))}"
        time.sleep(0.05)
    return started(directory)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def hog_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    directory = tmp_path / "hogs"
    directory.mkdir()
    monkeypatch.setenv(DIRECTORY, str(directory))  # the workers inherit it
    try:
        yield directory
    finally:
        (directory / "release").touch()


@pytest.fixture
def favoured_loop() -> Iterator[None]:
    """The tuning ``wopeval serve`` applies to its process, for this test only."""
    before = sys.getswitchinterval()
    favour_the_loop()
    try:
        yield
    finally:
        sys.setswitchinterval(before)
        gc.unfreeze()


def _config(tmp_path: Path, isolation: str, **overrides: Any) -> Any:
    suites = tmp_path / "suites"
    suites.mkdir()
    (suites / "hogs.json").write_text(json.dumps(hog_suite("core.wopeval.evals.hogs")))
    agents = {HOG: "tests.host.hog_agents:hog_agent"}
    return host_config(suiteDirectories=[str(SUITES), str(suites)], agents=agents,
                       agentIsolation=isolation, **overrides)  # fmt: skip


@pytest.mark.slow
@pytest.mark.usefixtures("favoured_loop")
@pytest.mark.parametrize("isolation", ["process", "thread"])
def test_a_tenants_hogging_agents_do_not_stall_another_tenants_requests(
    tmp_path: Path, hog_dir: Path, isolation: str
) -> None:
    store = str(tmp_path / "store.db")
    with serving(store, _config(tmp_path, isolation)) as server, httpx.Client(
        base_url=server.base_url, timeout=120
    ) as client:  # fmt: skip
        theirs = _create(client, eval_body(PLAIN_REF), KEY_B)
        _terminal(client, theirs, KEY_B)
        hogs = _create(client, eval_body(HOG_REF, agent=HOG), KEY_A)
        pids = _wait_started(hog_dir, MODES)
        latencies = _reads_from_another_process(server.base_url, theirs)
        stopped = sorted(mode for mode in MODES if (hog_dir / f"stopped-{mode}").exists())
        (hog_dir / "release").touch()
        body = _terminal(client, hogs, KEY_A)
    # Every read was answered while all three agents were still hogging.
    assert stopped == []
    assert body["status"] == "completed"
    if isolation == "process":  # each trial in a worker of its own, none in this process
        assert len(set(pids.values())) == len(MODES)
        assert os.getpid() not in pids.values()
    else:
        assert set(pids.values()) == {os.getpid()}
    p99 = statistics.quantiles(latencies, n=100)[98]
    print(f"\n{isolation}: {READS} reads of another tenant's run: p50 "
          f"{statistics.median(latencies) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, "
          f"max {max(latencies) * 1000:.1f} ms")  # fmt: skip


@pytest.mark.slow
def test_a_timed_out_spinning_agent_s_worker_process_is_killed(
    tmp_path: Path, hog_dir: Path
) -> None:
    config = _config(tmp_path, "process", trialTimeoutSeconds=8.0)  # a worker starts in it
    with serving(str(tmp_path / "store.db"), config) as server, httpx.Client(
        base_url=server.base_url, timeout=120
    ) as client:  # fmt: skip
        hogs = _create(client, eval_body(HOG_REF, agent=HOG), KEY_A)
        pids = _wait_started(hog_dir, MODES)
        body = _terminal(client, hogs, KEY_A)  # without a release: every trial times out
        alive = {mode: _alive(pid) for mode, pid in pids.items()}
        summary = client.get(f"/runs/{segment(hogs)}/eval-summary", headers=auth(KEY_A))
    assert body["status"] == "completed"
    assert alive == {"block": False, "cpu": False, "calls": False}
    assert not any((hog_dir / f"stopped-{mode}").exists() for mode in MODES)  # killed, not ended
    assert summary.status_code == 200, summary.text
    assert (summary.json()["taskCount"], summary.json()["passedCount"]) == (3, 0)
