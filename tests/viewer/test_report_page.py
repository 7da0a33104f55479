"""``wopeval report``: one self-contained page with the grid, the reasons and the diffs."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from playwright.sync_api import Browser
from typer.testing import CliRunner

from tests.viewer.test_viewer_pages import DATA, make_run
from wopeval.cli.app import app

SUITES = ("suite.yaml", "plain.yaml")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The report of a run of each suite, made before the module's browser is opened (making a
    run runs an event loop on this thread)."""
    folder = tmp_path_factory.mktemp("report-page")
    made_pages = {}
    for suite in SUITES:
        store = str(folder / f"{suite}.db")
        run_id = anyio.run(make_run, store, DATA / suite, "local")
        page_path = folder / f"{suite}.html"
        made = CliRunner().invoke(app, ["report", run_id, "--store", store, "-o", str(page_path)])
        assert made.exit_code == 0, made.output
        made_pages[suite] = page_path
    return made_pages


def test_report_shows_the_grid_reasons_and_trajectory_diff(
    reports: dict[str, Path], chromium_browser: Browser, tmp_path: Path
) -> None:
    page_path = reports["suite.yaml"]
    text = page_path.read_text()
    assert "<script" not in text
    assert "src=" not in text  # self-contained: no external asset
    page = chromium_browser.new_page(viewport={"width": 1200, "height": 900})
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
    assert (tmp_path / "report.png").stat().st_size > 1000
    assert errors == []


@pytest.mark.parametrize("suite", SUITES)
def test_the_report_fits_a_laptop_and_a_phone(
    reports: dict[str, Path], chromium_browser: Browser, tmp_path: Path, suite: str
) -> None:
    """Wide tables scroll inside their own box: the page itself never scrolls sideways, with
    the rich suite or the plainest one (one page, resized from a laptop's to a phone's)."""
    page = chromium_browser.new_page()
    for width, height in ((1280, 800), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.goto(reports[suite].as_uri())
        page.screenshot(path=str(tmp_path / f"report-{width}.png"), full_page=True)
        sizes = page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
        assert sizes == [width, width], (suite, sizes)
        box = page.locator("#verdict").bounding_box()
        assert box is not None
        assert box["x"] + box["width"] <= width
