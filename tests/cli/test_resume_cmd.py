"""``wopeval run --resume RUN``: finish a run left unfinished; refuse a finished one."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
from typer.testing import CliRunner

from wopeval.cli.app import app
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunSettings
from wopeval.events.owners import owner_id
from wopeval.events.store import EventStore
from wopeval.service.runs import RunService
from wopeval.suite import load_suite

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart" / "suite.yaml"


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


async def _created_not_executed(store_url: str, owner: str | None = None) -> str:
    """A run recorded as created and running, as a process killed right then leaves it (or,
    with ``owner``, as that process executing it has it: claimed)."""
    async with await EventStore.open(store_url) as store:
        if owner is not None:
            store.claim_runs(owner)
        suite = load_suite(QUICKSTART)
        service = RunService(store, Registry())
        plan = await service.plan(suite, suite.targetAgentId or "", RunSettings())
        record = await service.create(plan)
        await store.set_status(record.run_id, "running")
        return record.run_id


def test_run_resume_finishes_an_unfinished_run_and_refuses_a_finished_one(
    tmp_path: Path,
) -> None:
    store = str(tmp_path / "s.db")
    _, fresh = _run("run", str(QUICKSTART), "--store", store, "--json")
    run_id = anyio.run(_created_not_executed, store)
    code, out = _run("run", "--resume", run_id, "--store", store, "--json")
    doc = json.loads(out)
    assert doc["runId"] == run_id
    assert code == (0 if doc["summary"]["passed"] else 1)
    assert doc["summary"]["taskCount"] == json.loads(fresh)["summary"]["taskCount"]
    code, out = _run("grade", run_id, "--store", store, "--json")
    assert code == 0
    code, out = _run("run", "--resume", run_id, "--store", store)
    assert code == 2
    assert "completed and cannot be resumed" in out
    code, out = _run("run", "--store", store)
    assert code == 2
    assert "SUITE is required" in out


def test_run_resume_refuses_the_options_it_would_ignore(tmp_path: Path) -> None:
    """The run keeps its stored suite, agent and settings: giving others is bad input naming
    each one (they used to be dropped without a word), and the run is left as it was."""
    store = str(tmp_path / "s.db")
    run_id = anyio.run(_created_not_executed, store)
    given = ["--agent", "wopeval.examples.support", "--trial-timeout", "0.01",
             "--concurrency", "3", str(QUICKSTART)]  # fmt: skip
    code, out = _run("run", "--resume", run_id, "--store", store, *given)
    assert code == 2
    assert "SUITE, --agent, --concurrency, --trial-timeout: cannot be combined with --resume" in (
        " ".join(out.split())
    )
    code, out = _run("run", "--resume", run_id, "--store", store, "--json")  # as it was
    assert code in (0, 1)
    assert json.loads(out)["runId"] == run_id


def test_show_says_whether_an_unfinished_run_is_being_executed(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    left = anyio.run(_created_not_executed, store)
    code, out = _run("show", left, "--store", store)
    assert code == 0, out
    assert f"no process is executing it: finish it with wopeval run --resume {left}" in (
        " ".join(out.split())
    )
    held = anyio.run(_created_not_executed, store, owner_id())
    code, out = _run("show", held, "--store", store)
    assert f":{os.getpid()}:" in out
    assert "being executed by" in out
