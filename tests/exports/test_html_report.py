"""The HTML report, rendered in a real browser (Debian's chromium driven by Playwright)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Browser
from typer.testing import CliRunner

from wopeval.cli.app import app

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    """The quickstart's report (made before the module's browser: ``run`` runs an event loop)."""
    tmp_path = tmp_path_factory.mktemp("html-report")
    store = str(tmp_path / "s.db")
    runner = CliRunner()
    ran = runner.invoke(
        app, ["run", str(ROOT / "examples/quickstart/suite.yaml"), "--store", store, "--json"]
    )
    doc = json.loads(ran.output)
    page = tmp_path / "report.html"
    made = runner.invoke(app, ["report", doc["runId"], "--store", store, "-o", str(page)])
    assert made.exit_code == 0, made.output
    return page, doc["summary"]


def test_report_page_shows_every_task_and_the_verdict(
    report: tuple[Path, dict[str, object]], tmp_path: Path, chromium_browser: Browser
) -> None:
    page_path, summary = report
    page = chromium_browser.new_page(viewport={"width": 1200, "height": 700})
    page.goto(page_path.as_uri())
    rows = page.locator("#tasks tbody tr")
    tasks = summary["tasks"]
    assert isinstance(tasks, list)
    assert rows.count() == len(tasks)
    assert [rows.nth(i).get_attribute("data-task") for i in range(rows.count())] == [
        t["taskId"] for t in tasks
    ]
    verdict = page.locator("#verdict").inner_text()
    assert verdict == ("PASSED" if summary["passed"] else "FAILED")
    passed_text = page.locator("#tasks-passed").inner_text()
    assert passed_text == f"{summary['passedCount']}/{summary['taskCount']}"
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    assert (tmp_path / "report.png").stat().st_size > 1000
