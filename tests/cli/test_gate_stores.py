"""A run's gate, stored on each backend, read back by every view of the run: ``runs`` (text and
``--json``), ``show``, the JUnit and Markdown exports, the HTML report and the viewer's runs list
and run page.
The plainest suite (one task, no trials, passScore 0): its task fails, RFC 0244's suite gate
passes, ``every-task`` fails."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import httpx
from typer.testing import CliRunner

from tests.cli.gate_runs import junit_gate, markdown_passed, suite_doc, write_suite
from wopeval.cli.app import app
from wopeval.events.store import EventStore
from wopeval.viewer import create_viewer_app


def _cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def _viewer_page(store_url: str, path: str, **params: str) -> str:
    async def go() -> str:
        store = await EventStore.open(store_url)
        try:
            transport = httpx.ASGITransport(app=create_viewer_app(store=store))
            async with httpx.AsyncClient(transport=transport, base_url="http://view") as client:
                page = await client.get(path, params=params)
                assert page.status_code == 200, page.text[:300]
                return page.text
        finally:
            await store.close()

    return anyio.run(go)


def _listed_verdict(html: str, run_id: str) -> str:
    """The verdict beside the run's status in the viewer's runs list."""
    row = re.search(rf'data-run="{re.escape(run_id)}">(.*?)</tr>', html, re.S)
    assert row is not None, html[:2000]
    found = re.search(r'completed</span> <span class="verdict v-\w+"[^>]*>(\w+)<', row.group(1))
    assert found is not None, row.group(1)
    return found.group(1)


def _verdict_of(html: str) -> str:
    found = re.search(r'id="verdict"[^>]*>([^<]*)<', html)
    assert found is not None, html[:2000]
    return found.group(1)


def test_every_view_of_a_stored_run_gives_its_gates_verdict(store_url: str, tmp_path: Path) -> None:
    suite = write_suite(tmp_path, suite_doc([[False]], pass_score=0.0))
    ids = {}
    for gate, code in (("suite", 0), ("every-task", 1)):
        ran = _cli("run", str(suite), "--gate", gate, "--store", store_url, "--json")
        assert ran.exit_code == code, ran.output
        ids[gate] = json.loads(ran.stdout)["runId"]
    listed = json.loads(_cli("runs", "--store", store_url, "--json", "--limit", "100").stdout)
    rows = {row["runId"]: row for row in listed["runs"]}
    assert (rows[ids["suite"]]["gate"], rows[ids["suite"]]["passed"]) == ("suite", True)
    assert (rows[ids["every-task"]]["gate"], rows[ids["every-task"]]["passed"]) == (
        "every-task",
        False,
    )
    text = _cli("runs", "--store", store_url, "--limit", "100").stdout
    for gate, word in (("suite", "pass"), ("every-task", "FAIL")):
        (line,) = [line for line in text.splitlines() if line.startswith(ids[gate])]
        assert line.split()[1] == word, text
    for gate, passed in (("suite", True), ("every-task", False)):
        run_id = ids[gate]
        shown = json.loads(_cli("show", run_id, "--store", store_url, "--json").stdout)
        assert shown["gate"]["passed"] is passed
        junit = _cli("export", run_id, "-f", "junit", "--store", store_url).stdout
        assert junit_gate(junit, gate)[0] is passed
        markdown = _cli("export", run_id, "-f", "markdown", "--store", store_url).stdout
        assert markdown_passed(markdown, gate) is passed
        report = tmp_path / f"{gate}.html"
        made = _cli("report", run_id, "-o", str(report), "--store", store_url)
        assert made.exit_code == 0, made.output
        html = report.read_text(encoding="utf-8")
        assert _verdict_of(html) == ("PASSED" if passed else "FAILED")
        assert f"gate {gate}" in html
        page = _viewer_page(store_url, "/run", id=run_id)
        assert _verdict_of(page) == ("PASSED" if passed else "FAILED")
        assert f"(gate {gate})" in page
        listed = _viewer_page(store_url, "/")
        assert _listed_verdict(listed, run_id) == ("passed" if passed else "failed")
