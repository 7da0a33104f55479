"""Host start-up never fails runs that are not its to fail.

A ``wopeval serve`` that cannot bind its port exits 2 before opening the store (it used to fail
every unfinished run first, then exit 3), and a host that does start fails only the runs a host
created, never a ``wopeval run`` of the CLI that may be executing in another process.
"""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path

import httpx
import typer
from typer.testing import CliRunner

from tests.host.helpers import (
    SLOW_AGENT,
    SLOW_REF,
    SUITES,
    auth,
    eval_body,
    host_config,
    running_host,
    segment,
    serving,
)
from wopeval.cli.serve_cmd import register
from wopeval.engine.run import RunSettings
from wopeval.events.store import EventStore, RunRecord
from wopeval.host.manager import HOST_REQUEST_KEY
from wopeval.service.runs import create_run_record
from wopeval.suite import load_suite
from wopeval.wire.events import RUN_FAILED
from wopeval.wire.request import HostRequest

KEY = "k-0123456789abcd"  # meets the minimum key strength

HOST_MARK = HostRequest(bodySha256="0" * 64)


def _serve(*args: str) -> tuple[int, str]:
    app = typer.Typer()
    register(app)
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


async def _unfinished_runs(store_url: str) -> tuple[RunRecord, RunRecord]:
    """A running CLI run and a running host-created run, each with ``run.started`` recorded."""
    suite = load_suite(SUITES / "plain.json")
    async with await EventStore.open(store_url) as store:
        made = []
        for extra in (None, HOST_MARK):
            record = await create_run_record(
                store, suite, SLOW_AGENT, RunSettings(), tenant="acme", host=extra
            )
            await store.set_status(record.run_id, "running")
            await store.append(record.run_id, "run.started", {"workflowId": suite.suiteId})
            made.append(record)
    return made[0], made[1]


async def _state(store_url: str, run_id: str) -> tuple[str, list[str]]:
    async with await EventStore.open(store_url) as store:
        record = await store.get_run(run_id)
        assert record is not None
        return record.status, [e.type for e in await store.events(run_id)]


def test_serve_on_a_busy_port_exits_2_and_touches_no_run(store_url: str) -> None:
    cli_run, host_run = asyncio.run(_unfinished_runs(store_url))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code, output = _serve("--port", str(port), "--store", store_url, "--api-key", KEY)
    assert code == 2
    assert f"--port: 127.0.0.1:{port} is already in use" in output
    assert "Traceback" not in output
    for record in (cli_run, host_run):  # not even the host-created run: this serve never started
        assert asyncio.run(_state(store_url, record.run_id)) == ("running", ["run.started"])


def test_serve_beside_a_live_host_leaves_its_executing_run_alone(store_url: str) -> None:
    """The reported case: a second serve on the first one's port must not fail its runs."""
    with serving(store_url) as server, httpx.Client(base_url=server.base_url) as client:
        created = client.post("/runs", json=eval_body(SLOW_REF, agent=SLOW_AGENT), headers=auth())
        run_id = created.json()["runId"]
        path = f"/runs/{segment(run_id)}"
        deadline = time.monotonic() + 30
        while client.get(path, headers=auth()).json()["status"] != "running":
            assert time.monotonic() < deadline, "the run did not start"
            time.sleep(0.02)
        code, output = _serve("--port", str(server.port), "--store", store_url)
        still = client.get(path, headers=auth()).json()
        cancelled = client.post(path + "/cancel", headers=auth()).json()
        log = client.get(path + "/events/poll?timeout=1", headers=auth()).json()
    assert code == 2
    assert "already in use" in output
    assert still["status"] == "running"
    assert "error" not in still
    assert cancelled["status"] == "cancelled"
    types = [e["type"] for e in log["events"]]
    assert RUN_FAILED not in types
    assert types[-1] == "run.cancelled"


def test_serve_on_an_address_it_does_not_have_exits_2(store_url: str) -> None:
    code, output = _serve("--host", "192.0.2.1", "--port", "0", "--store", store_url)
    assert code == 2
    assert "--host: cannot listen on 192.0.2.1:0" in output


async def test_restart_fails_host_runs_but_never_cli_runs(store_url: str) -> None:
    cli_run, host_run = await _unfinished_runs(store_url)
    async with running_host(store_url, host_config(resumeInterrupted=False)) as host:
        cli_snapshot = (await host.get(f"/runs/{segment(cli_run.run_id)}")).json()
        host_snapshot = (await host.get(f"/runs/{segment(host_run.run_id)}")).json()
        cli_log = [e.type for e in await host.state.store.events(cli_run.run_id)]
        host_log = [e.type for e in await host.state.store.events(host_run.run_id)]
    assert cli_snapshot["status"] == "running"
    assert cli_log == ["run.started"]
    assert host_snapshot["status"] == "failed"
    assert host_snapshot["error"]["code"] == "wopeval.interrupted"
    assert host_log == ["run.started", RUN_FAILED]


async def test_runs_created_over_http_carry_the_host_mark(store_url: str) -> None:
    """The mark start-up filters on is what the create route stores (no drift between them)."""
    async with running_host(store_url) as host:
        run_id = await host.run_id(eval_body(scopeId="s-1"))
        record = await host.state.store.get_run(run_id)
    assert record is not None
    assert set(record.request[HOST_REQUEST_KEY]) == {"bodySha256", "scopeId"}


def test_serve_whose_store_cannot_open_exits_2_after_binding(tmp_path: Path) -> None:
    """Bound fine, then the store could not open: the caller's ``--store``, one line, exit 2."""
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    code, out = _serve("--port", "0", "--store", str(blocker / "store.db"), "--api-key", KEY)
    assert code == 2
    assert "--store: cannot open the event store" in out
    assert "Traceback" not in out
