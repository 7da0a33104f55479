"""Outages never read as regressions: ``wopeval run`` against real loopback servers, on both
stores.

Once a run has started, a model server that refuses connections, answers 500 after the SDK's
retries or hangs past the trial timeout, and an MCP server that dies mid-run, each end the
command with exit 3 and one line naming the component; every trial's events are kept, each
failed trial labelled ``infrastructure``, and ``wopeval grade`` reproduces the stored summary.
Before it starts, an MCP server that exits at start-up, a model the server does not have and a
missing optional extra are refused with exit 2, one line naming the fix, and no trial recorded.

Each exit code is proven by a real ``wopeval`` process at least once (a model server refusing
connections for ``run``'s and ``grade``'s, the shards' ``merge``, a missing extra, the store lost
mid-run); the other cases run the command line in the test's process
(:func:`tests.cli.in_process.wopeval_here`), their point being the outage's reading, not the
process boundary.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from tests.cli.in_process import Done
from tests.conftest import pg_admin, pg_create, pg_url
from tests.outage.model_server import ModelServer, refused_url
from wopeval.events.store import EventStore
from wopeval.wire.events import RunEvent
from wopeval.wire.vocab import (
    EVAL_SCORED,
    INVOCATION_COMPLETED,
    INVOCATION_STARTED,
    RUN_COMPLETED,
    TOOL_CALLED,
    TRIAL_FAILED,
    X_ERROR,
)

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).parent
DYING_MCP = f"{sys.executable} {HERE / 'dying_mcp_server.py'}"


def _suite(tmp_path: Path, *, trials: int = 1) -> tuple[str, str]:
    """A one-task golden suite with no fixtures (its tool calls reach the live tools) and
    ``trials`` trials. Returns its path and its own suiteId."""
    suite_id = f"core.outage.evals.t{secrets.token_hex(4)}"
    task: dict[str, Any] = {
        "taskId": "where",
        "input": "Where is order A1?",
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "late"}},
    }
    doc: dict[str, Any] = {"suiteId": suite_id, "version": "1.0.0", "modes": ["golden"],
                           "tasks": [task]}  # fmt: skip
    if trials > 1:
        doc["trials"] = {"count": trials, "k": 1}
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path), suite_id


def _wopeval(
    tmp_path: Path, store: str, *args: str, block: str = ""
) -> subprocess.CompletedProcess[str]:
    paths = [str(ROOT / "src"), str(ROOT)]
    if block:  # a sitecustomize makes these packages unimportable, as if never installed
        paths.insert(0, str(HERE / "blocker"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "WOPEVAL_TEST_BLOCK": block,
           "COLUMNS": "200"}  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "wopeval", *args, "--store", store],
        capture_output=True, text=True, timeout=180, cwd=tmp_path, env=env,
    )  # fmt: skip


def _one_line(stderr: str) -> str:
    """The command's one message line (no traceback, nothing else)."""
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    return lines[0]


async def _runs_of(store_url: str, suite_id: str) -> list[tuple[str, str]]:
    store = await EventStore.open(store_url)
    try:
        return [(r.run_id, r.status) for r in await store.list_runs(limit=1000)
                if r.suite_id == suite_id]  # fmt: skip
    finally:
        await store.close()


async def _events(store_url: str, run_id: str) -> list[RunEvent]:
    store = await EventStore.open(store_url)
    try:
        return await store.events(run_id)
    finally:
        await store.close()


async def _check_kept(store_url: str, suite_id: str, trials: int) -> list[RunEvent]:
    """The run completed with every trial's bracket, score and reason, each ``infrastructure``."""
    ((run_id, status),) = await _runs_of(store_url, suite_id)
    assert status == "completed"
    events = await _events(store_url, run_id)
    types = [e.type for e in events]
    assert types.count(INVOCATION_STARTED) == types.count(EVAL_SCORED) == trials
    completed = [e.payload for e in events if e.type == INVOCATION_COMPLETED]
    assert [(c["outcome"], c[X_ERROR]) for c in completed] == [
        ("failed", "infrastructure")
    ] * trials
    reasons = [e.payload for e in events if e.type == TRIAL_FAILED]
    assert [r["kind"] for r in reasons] == ["infrastructure"] * trials
    assert types[-1] == RUN_COMPLETED
    return events


def _graded_again(tmp_path: Path, store: str, run_id: str) -> None:
    regraded = _wopeval(tmp_path, store, "grade", run_id)
    assert regraded.returncode == 0, regraded.stdout + regraded.stderr


Here = Callable[..., Done]


def _graded_here(here: Here, store: str, run_id: str) -> None:
    regraded = here("grade", run_id, "--store", store)
    assert regraded.returncode == 0, regraded.stdout + regraded.stderr


# --- once the run has started: exit 3 --------------------------------------------------------


async def test_a_model_server_refusing_connections_exits_3_with_every_event_kept(
    tmp_path: Path, store_url: str
) -> None:
    suite, suite_id = _suite(tmp_path, trials=2)
    base_url = refused_url()
    ran = _wopeval(tmp_path, store_url, "run", suite, "--model", "m1", "--base-url", base_url,
                   "--json")  # fmt: skip
    assert ran.returncode == 3, ran.stdout + ran.stderr
    line = _one_line(ran.stderr)
    assert line.startswith("outage: 2 of 2 trial(s) of run ")
    assert f"the model server at {base_url} could not be reached" in line
    doc = json.loads(ran.stdout)
    assert doc["infrastructureFailures"] == 2
    assert [f["kind"] for f in doc["failures"]] == ["infrastructure", "infrastructure"]
    assert doc["summary"]["passed"] is False
    await _check_kept(store_url, suite_id, trials=2)
    _graded_again(tmp_path, store_url, doc["runId"])


def test_a_model_server_answering_500_exits_3_and_the_verdict_line_counts_them(
    tmp_path: Path, store_url: str, here: Here
) -> None:
    suite, suite_id = _suite(tmp_path)
    with ModelServer("error-500") as server:
        ran = here("run", suite, "--model", "m1", "--base-url", server.base_url,
                   "--store", store_url)  # fmt: skip
    assert ran.returncode == 3, ran.stdout + ran.stderr
    line = _one_line(ran.stderr)
    assert "1 of 1 trial(s)" in line
    assert "could not be judged (exit 3)" in line
    assert f"the model server at {server.base_url} answered HTTP 500 after 2 retries" in line
    assert server.completions == 3  # the request and the SDK's two retries, no more
    assert "1 trial failed for infrastructure, not the agent" in " ".join(ran.stdout.split())
    events = anyio.run(_check_kept, store_url, suite_id, 1)
    run_id = events[0].runId
    _graded_here(here, store_url, run_id)
    for fmt in ("junit", "markdown"):  # every view carries the reason
        exported = here("export", run_id, "--format", fmt, "--store", store_url)
        assert exported.returncode == 0, exported.stderr
        shown = exported.stdout.replace("\\", "")  # Markdown escapes its punctuation
        assert "infrastructure: ModelUnavailable: the model server at" in shown


def test_a_model_server_hanging_past_the_trial_timeout_exits_3(
    tmp_path: Path, store_url: str, here: Here
) -> None:
    suite, suite_id = _suite(tmp_path, trials=2)
    with ModelServer("hang") as server:
        ran = here("run", suite, "--model", "m1", "--base-url", server.base_url,
                   "--trial-timeout", "1", "--json", "--store", store_url)  # fmt: skip
    assert ran.returncode == 3, ran.stdout + ran.stderr
    line = _one_line(ran.stderr)
    assert "2 of 2 trial(s)" in line
    assert f"the model server at {server.base_url} did not answer within the trial timeout" in line
    assert json.loads(ran.stdout)["infrastructureFailures"] == 2
    anyio.run(_check_kept, store_url, suite_id, 2)


def test_an_mcp_server_dying_mid_run_exits_3_with_every_event_kept(
    tmp_path: Path, store_url: str, here: Here
) -> None:
    suite, suite_id = _suite(tmp_path, trials=2)
    ran = here("run", suite, "--agent", "tests.outage.agents:looks_up",
               "--mcp", f"crm:={DYING_MCP}", "--json", "--store", store_url)  # fmt: skip
    assert ran.returncode == 3, ran.stdout + ran.stderr
    # the server's own stderr passes through (to the process's real stderr); wopeval's is the
    # one line
    own = "\n".join(line for line in ran.stderr.splitlines()
                    if not line.startswith("dying_mcp_server:"))  # fmt: skip
    line = _one_line(own)
    assert "2 of 2 trial(s)" in line
    assert f"the MCP server '{DYING_MCP}' exited mid-run (tool 'lookup'" in line
    events = anyio.run(_check_kept, store_url, suite_id, 2)
    assert [e.payload["toolName"] for e in events if e.type == TOOL_CALLED] == ["crm:lookup"] * 2


def _rubric_suite(tmp_path: Path) -> tuple[str, str]:
    path, suite_id = _suite(tmp_path)
    doc = yaml.safe_load(Path(path).read_text())
    doc["modes"] = ["rubric"]
    rubric = [{"criterion": "says late", "weight": 1.0}]
    doc["tasks"][0]["expected"] = {"kind": "rubric", "rubric": rubric}
    Path(path).write_text(yaml.safe_dump(doc))
    return path, suite_id


def test_a_judge_whose_model_server_fails_exits_3_not_1(
    tmp_path: Path, store_url: str, here: Here
) -> None:
    path, suite_id = _rubric_suite(tmp_path)
    with ModelServer("error-500") as judge:
        ran = here("run", path, "--agent", "tests.outage.agents:answers", "--judge-model", "j1",
                   "--judge-base-url", judge.base_url, "--json", "--store", store_url)  # fmt: skip
    assert ran.returncode == 3, ran.stdout + ran.stderr
    line = _one_line(ran.stderr)
    assert "1 of 1 trial(s)" in line
    failed = "the judge model could not answer: ModelUnavailable: the model server at"
    assert f"{failed} {judge.base_url} answered HTTP 500" in line
    (failure,) = json.loads(ran.stdout)["failures"]
    assert failure["kind"] == "infrastructure"
    ((run_id, status),) = anyio.run(_runs_of, store_url, suite_id)
    assert status == "completed"
    _graded_here(here, store_url, run_id)


def test_an_agent_command_killed_mid_run_exits_3_with_every_event_kept(
    tmp_path: Path, store_url: str, here: Here
) -> None:
    suite, suite_id = _suite(tmp_path)
    killed = f"{sys.executable} -c 'import os; os.kill(os.getpid(), 9)'"
    ran = here("run", suite, "--agent-cmd", killed, "--json", "--store", store_url)
    assert ran.returncode == 3, ran.stdout + ran.stderr
    line = _one_line(ran.stderr)
    assert f"the agent command '{sys.executable}' was killed by SIGKILL mid-run" in line
    anyio.run(_check_kept, store_url, suite_id, 1)


def test_shards_that_failed_for_infrastructure_merge_to_exit_3(
    tmp_path: Path, store_url: str, here: Here
) -> None:
    suite, _ = _suite(tmp_path, trials=2)
    group = f"outage-{secrets.token_hex(4)}"
    # answering 500 rather than refusing: the SDK's retries then wait 1 ms, not its backoff
    with ModelServer("error-500") as server:
        for index in (0, 1):  # a shard exits 0 once its slice is recorded
            shard = here("run", suite, "--model", "m1", "--base-url", server.base_url, "--shard",
                         f"{index}/2", "--group", group, "--store", store_url)  # fmt: skip
            assert shard.returncode == 0, shard.stdout + shard.stderr
    merged = _wopeval(tmp_path, store_url, "merge", "--group", group, "--json")
    assert merged.returncode == 3, merged.stdout + merged.stderr
    assert "2 of 2 trial(s)" in _one_line(merged.stderr)
    assert json.loads(merged.stdout)["infrastructureFailures"] == 2


# --- before the run: exit 2, nothing recorded ------------------------------------------------


def test_an_mcp_server_exiting_at_start_up_is_refused_before_any_trial(
    tmp_path: Path, store_url: str, here: Here
) -> None:
    suite, suite_id = _suite(tmp_path)
    ran = here("run", suite, "--agent", "tests.outage.agents:looks_up",
               "--mcp", f"crm:={DYING_MCP} --exit-at-start", "--store", store_url)  # fmt: skip
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "Traceback" not in ran.stderr
    wrapped = " ".join(ran.stderr.split())
    assert (
        f"the MCP server '{DYING_MCP} --exit-at-start' did not start: Connection closed" in wrapped
    )
    assert anyio.run(_runs_of, store_url, suite_id) == []


def test_a_model_the_server_does_not_have_is_refused_before_any_completion(
    tmp_path: Path, store_url: str, here: Here
) -> None:
    suite, suite_id = _suite(tmp_path)
    with ModelServer("answer", models=("m1",)) as server:
        ran = here("run", suite, "--model", "m2", "--base-url", server.base_url,
                   "--store", store_url)  # fmt: skip
    assert ran.returncode == 2, ran.stdout + ran.stderr
    wrapped = " ".join(ran.stderr.split())
    assert f"model: the model server at {server.base_url} has no model 'm2'" in wrapped
    assert "Traceback" not in ran.stderr
    assert server.requests == [("GET", "/v1/models/m2")]  # asked, never a completion
    assert anyio.run(_runs_of, store_url, suite_id) == []


@pytest.mark.parametrize(
    ("blocked", "args", "fix"),
    [
        ("openai", ("--model", "m1", "--base-url", "http://127.0.0.1:9/v1"),
         "pip install 'wopeval[openai]'"),
        ("mcp", ("--agent", "tests.outage.agents:looks_up", "--mcp", f"crm:={DYING_MCP}"),
         "pip install 'wopeval[mcp]'"),
        ("mcp", ("--agent-cmd", f"{sys.executable} -c pass"), "pip install 'wopeval[mcp]'"),
        ("pydantic_ai", ("--agent-file", "AGENT_FILE"), "pip install 'wopeval[pydantic-ai]'"),
        ("pydantic_ai", ("--agent", "tests.agents.apps.pyd_app:agent"),
         "No module named 'pydantic_ai'; pip install 'wopeval[pydantic-ai]'"),
    ],
)  # fmt: skip
def test_a_missing_extra_is_refused_before_any_trial(
    tmp_path: Path, blocked: str, args: tuple[str, ...], fix: str
) -> None:
    # On SQLite only: the target is resolved (and refused) before the store is opened, so the
    # backend is not on this path.
    store_url = str(tmp_path / "store.db")
    suite, suite_id = _suite(tmp_path)
    agent_file = tmp_path / "agent.yaml"
    agent_file.write_text(yaml.safe_dump({"kind": "pydantic-ai",
                                          "agent": "tests.outage.agents:looks_up"}))  # fmt: skip
    args = tuple(str(agent_file) if a == "AGENT_FILE" else a for a in args)
    ran = _wopeval(tmp_path, store_url, "run", suite, *args, "--override-target", block=blocked)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "Traceback" not in ran.stderr
    assert fix in " ".join(ran.stderr.split())
    assert anyio.run(_runs_of, store_url, suite_id) == []


# --- the store lost under a running command: exit 3 ------------------------------------------


async def _started_a_trial(url: str, suite_id: str) -> bool:
    runs = await _runs_of(url, suite_id)
    return bool(runs) and any(e.type == INVOCATION_STARTED for e in await _events(url, runs[0][0]))


def _wait_for_a_trial(url: str, suite_id: str, process: subprocess.Popen[str]) -> None:
    """Until the run has recorded a trial's start (the run is executing, its store in use)."""
    while process.poll() is None:
        if anyio.run(_started_a_trial, url, suite_id):
            return
        time.sleep(0.05)
    raise AssertionError(f"the run ended before its store was lost: {process.communicate()}")


@pytest.mark.postgres
def test_the_store_lost_mid_run_exits_3_with_one_line(tmp_path: Path) -> None:
    suite, suite_id = _suite(tmp_path, trials=200)
    name = f"wopeval_test_outage_{secrets.token_hex(4)}"
    anyio.run(pg_create, name)
    url = pg_url(name)
    paths = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
    process = subprocess.Popen(
        [sys.executable, "-m", "wopeval", "run", suite, "--agent", "tests.outage.agents:slow",
         "--concurrency", "2", "--store", url],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": paths},
    )  # fmt: skip
    try:
        _wait_for_a_trial(url, suite_id, process)
        anyio.run(pg_admin, f'DROP DATABASE "{name}" WITH (FORCE)')
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        anyio.run(pg_admin, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    assert process.returncode == 3, stderr
    line = _one_line(stderr)
    # the database gone is the store unreachable: the run is left to resume, said in one line
    assert line.startswith("run local/")
    assert "was interrupted: the event store is unreachable" in line
    assert "wopeval run --resume local/" in line
    assert "[SQL:" not in line
