"""A tenant's agents run off the host's event loop: one that blocks (a blocking call, a CPU loop)
or never yields (fixture-served tool calls in a loop) does not stall another tenant's requests.

Over a real socket, tenant ``other`` reads its run 150 times while tenant ``acme``'s run has all
three kinds of agent running; the fact asserted is that every read was answered while the
blocking agents still blocked (they stop only when the test releases them afterwards), and the
p99 latency is printed (``-s``) with a generous bound. The latency itself is measured against
a real ``wopeval serve`` by ``bench/agent_isolation.py``."""

from __future__ import annotations

import gc
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.host import hog_agents
from tests.host.helpers import (
    KEY_A,
    KEY_B,
    PLAIN_REF,
    SLOW_AGENT,
    SUITES,
    auth,
    eval_body,
    host_config,
    segment,
    serving,
)
from wopeval.host.manager import favour_the_loop

HOG = "test.hog"
HOG_SUITE = {
    "suiteId": "core.wopeval.evals.hogs",
    "version": "1.0.0",
    "modes": ["golden"],
    "tasks": [
        {
            "taskId": mode,
            "input": {"mode": mode},
            "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "done"}},
            "fixtures": {
                "onMiss": "fail",
                "toolResponses": [{"tool": "kb:look", "response": {"hit": True}}],
            },
        }
        for mode in hog_agents.MODES
    ],
}
READS = 150


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


def _reads_from_another_process(base_url: str, run_id: str) -> list[float]:
    path = f"/runs/{segment(run_id)}"
    done = subprocess.run(
        [sys.executable, "-c", CLIENT, base_url, path, KEY_B, str(READS)],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    return [float(seconds) for seconds in json.loads(done.stdout)]


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


@pytest.mark.slow
@pytest.mark.usefixtures("favoured_loop")
def test_a_tenants_hogging_agents_do_not_stall_another_tenants_requests(tmp_path: Path) -> None:
    hog_agents.reset()
    suites = tmp_path / "suites"
    suites.mkdir()
    (suites / "hogs.json").write_text(json.dumps(HOG_SUITE))
    agents = {SLOW_AGENT: "tests.host.agents:slow_agent", HOG: "tests.host.hog_agents:hog_agent"}
    config = host_config(suiteDirectories=[str(SUITES), str(suites)], agents=agents)
    store = str(tmp_path / "store.db")
    with serving(store, config) as server, httpx.Client(base_url=server.base_url,
                                                        timeout=120) as client:  # fmt: skip
        theirs = _create(client, eval_body(PLAIN_REF), KEY_B)
        _terminal(client, theirs, KEY_B)
        hogs = _create(client, eval_body("suite://core.wopeval.evals.hogs", agent=HOG), KEY_A)
        try:
            for mode in hog_agents.MODES:
                assert hog_agents.STARTED[mode].wait(60), mode
            latencies = _reads_from_another_process(server.base_url, theirs)
            still = {mode: hog_agents.HOGGING[mode].is_set() for mode in ("block", "cpu")}
        finally:
            hog_agents.RELEASE.set()
        _terminal(client, hogs, KEY_A)
    # Every read was answered while the blocking agents were still blocking.
    assert still == {"block": True, "cpu": True}
    p99 = statistics.quantiles(latencies, n=100)[98]
    print(f"\n{READS} reads of another tenant's run: p50 {statistics.median(latencies) * 1000:.1f}"
          f" ms, p99 {p99 * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms")  # fmt: skip
    assert p99 < 1.0  # ten times the 100 ms aim: a loaded two-core machine, a spinning agent
