"""``wopeval report``: one self-contained page with the grid, the reasons and the diffs."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from playwright.sync_api import sync_playwright
from typer.testing import CliRunner

from tests.exports.test_html_report import ARGS
from tests.viewer.test_viewer_pages import DATA, make_run
from wopeval.cli.app import app


def test_report_shows_the_grid_reasons_and_trajectory_diff(tmp_path: Path, chromium: str) -> None:
    store = str(tmp_path / "r.db")
    run_id = anyio.run(make_run, store, DATA / "suite.yaml", "local")
    page_path = tmp_path / "report.html"
    made = CliRunner().invoke(app, ["report", run_id, "--store", store, "-o", str(page_path)])
    assert made.exit_code == 0, made.output
    text = page_path.read_text()
    assert "<script" not in text
    assert "src=" not in text  # self-contained: no external asset
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            errors: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(page_path.as_uri())
            assert page.locator("#tasks td.grid .cell").count() == 3 * 3
            closed = page.locator("#tasks tr[data-task=closed-miss] .cell")
            assert {closed.nth(i).get_attribute("data-status") for i in range(3)} == {"fail-closed"}
            failing = page.locator('#reasons li[data-task=refund-flow][data-trial="1"]')
            assert "forbidden tool billing:refund-all" in failing.inner_text()
            observed = failing.locator("td.observed")
            marks = [observed.nth(i).get_attribute("data-status") for i in range(observed.count())]
            assert marks == ["matched", "unexpected", "forbidden"]
            expected = failing.locator("td.expected")
            assert [expected.nth(i).get_attribute("data-status") for i in range(2)] == [
                "matched",
                "missing",
            ]
            page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
            assert errors == []
        finally:
            browser.close()


@pytest.mark.parametrize("suite", ["suite.yaml", "plain.yaml"])
def test_the_report_fits_a_laptop_and_a_phone(tmp_path: Path, chromium: str, suite: str) -> None:
    """Wide tables scroll inside their own box: the page itself never scrolls sideways, with
    the rich suite or the plainest one."""
    store = str(tmp_path / "r.db")
    run_id = anyio.run(make_run, store, DATA / suite, "local")
    page_path = tmp_path / "report.html"
    made = CliRunner().invoke(app, ["report", run_id, "--store", store, "-o", str(page_path)])
    assert made.exit_code == 0, made.output
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=ARGS)
        try:
            for width, height in ((1280, 800), (390, 844)):
                page = browser.new_page(viewport={"width": width, "height": height})
                page.goto(page_path.as_uri())
                page.screenshot(path=str(tmp_path / f"report-{width}.png"), full_page=True)
                sizes = page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
                assert sizes == [width, width], (suite, sizes)
                box = page.locator("#verdict").bounding_box()
                assert box is not None
                assert box["x"] + box["width"] <= width
        finally:
            browser.close()
