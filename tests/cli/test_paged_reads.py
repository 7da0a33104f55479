"""``show``, ``export`` and ``report`` read a stored run's log in pages, never all at once
(issue 13 §2), and print what reading it whole printed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from typer.testing import CliRunner

from wopeval.cli import export_cmds
from wopeval.cli.app import app
from wopeval.events.store import EventStore
from wopeval.exports.ci import junit_xml, markdown
from wopeval.grading.detail import run_detail
from wopeval.grading.gate import decide
from wopeval.grading.summary_intervals import summary_intervals
from wopeval.service import runs
from wopeval.suite import parse_suite
from wopeval.wire.events import RunEvent
from wopeval.wire.summary import EvalSummary

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart" / "suite.yaml"
PAGE = 7


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


async def _whole(url: str, run_id: str) -> tuple[Any, list[RunEvent]]:
    store = await EventStore.open(url)
    try:
        return await store.get_run(run_id), await store.events(run_id)
    finally:
        await store.close()


@pytest.fixture
def stored(tmp_path: Path) -> tuple[str, str, Any, list[RunEvent]]:
    store = str(tmp_path / "s.db")
    _, out = _run("run", str(QUICKSTART), "--store", store, "--json")
    run_id = json.loads(out)["runId"]
    record, log = anyio.run(_whole, store, run_id)
    assert len(log) > 3 * PAGE
    return store, run_id, record, log


@pytest.fixture
def limits(monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    """Every ``limit`` the store's event reads are given, with pages of ``PAGE`` events."""
    seen: list[int | None] = []
    read = EventStore.events

    async def events(
        self: EventStore, run_id: str, after: int = -1, limit: int | None = None
    ) -> list[RunEvent]:
        seen.append(limit)
        return await read(self, run_id, after, limit)

    monkeypatch.setattr(EventStore, "events", events)
    for module in (runs, export_cmds):  # stored_cmds reads runs.LOG_PAGE when it pages
        monkeypatch.setattr(module, "LOG_PAGE", PAGE)
    return seen


def test_show_and_exports_read_the_log_in_pages_with_the_same_output(
    stored: tuple[str, str, Any, list[RunEvent]], limits: list[int | None], tmp_path: Path
) -> None:
    store, run_id, record, log = stored
    suite = parse_suite(record.suite_document)
    detail = run_detail(suite, log, runs.grading_options(record.run_request))
    summary = EvalSummary.model_validate(record.summary)

    _, out = _run("show", run_id, "--store", store, "--json", "--events")
    doc = {"runId": run_id, "status": record.status, "summary": record.summary,
           "error": record.error, "gate": decide(summary).to_json(),
           "intervals": summary_intervals(summary).to_json(),
           "events": [e.to_wire() for e in log]}  # fmt: skip
    assert out == json.dumps(doc) + "\n"
    _, out = _run("show", run_id, "--store", store, "--events")
    assert f"events {len(log)}" in out
    assert out.count(" agent.tool-called") == sum(e.type == "agent.tool-called" for e in log)
    _, out = _run("export", run_id, "-f", "events", "--store", store)
    assert out == "\n".join(json.dumps(e.to_wire()) for e in log) + "\n"
    _, out = _run("export", run_id, "-f", "junit", "--store", store)
    assert out == junit_xml(summary, run_id, detail) + "\n"
    _, out = _run("export", run_id, "-f", "markdown", "--store", store)
    assert out == markdown(summary, run_id, detail) + "\n"
    code, _ = _run("report", run_id, "--store", store, "-o", str(tmp_path / "r.html"))
    assert code == 0
    code, _ = _run("export", run_id, "-f", "eee", "--store", store, "-o", str(tmp_path / "e"))
    assert code == 0
    assert limits, "the commands read the log"
    assert all(limit is not None and limit <= PAGE for limit in limits), limits
