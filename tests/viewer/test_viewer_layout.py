"""Every viewer page with the plainest suite and the rich one, on a laptop and on a phone.

Real runs on a real socket, Debian's chromium through Playwright. A list page never scrolls
sideways (wide grids scroll inside their own box); every page answers 200 without console
errors. Screenshots go to ``$WOPEVAL_SHOTS`` when it is set (to look at them), else the
test's output folder.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.host.helpers import KEY_A, TENANT_A, host_config, serving
from tests.viewer.agents import GATE
from tests.viewer.browsing import NO_SIDEWAYS, VIEWPORTS, Pages, each_size, open_page, shots_dir
from tests.viewer.test_viewer_pages import (
    DATA,
    _evaluate_live,
    _running_run,
    make_run,
    off_loop,
)


@dataclass
class Runs:
    url: str
    store: str
    plain: str
    baseline: str
    candidate: str
    shots: Path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    folder = tmp_path_factory.mktemp("viewer-layout")
    store = str(folder / "viewer.db")
    baseline = anyio.run(make_run, store, DATA / "suite.yaml", TENANT_A)
    candidate = anyio.run(make_run, store, DATA / "candidate.yaml", TENANT_A)
    plain = anyio.run(make_run, store, DATA / "plain.yaml", TENANT_A)
    shots = shots_dir(folder)
    with serving(store, host_config()) as server:
        yield Runs(server.base_url + "/view", store, plain, baseline, candidate, shots)


def _pages(runs: Runs) -> dict[str, str]:
    return {
        "runs": "/",
        "run-plain": f"/run?id={runs.plain}",
        "trial-plain": f"/trial?run={runs.plain}&task=only&i=0",
        "run": f"/run?id={runs.baseline}",
        "trial": f"/trial?run={runs.baseline}&task=refund-flow&i=1",
        "trial-fail-closed": f"/trial?run={runs.baseline}&task=closed-miss&i=0",
        "compare": f"/compare?base={runs.baseline}&cand={runs.candidate}",
        "compare-plain": f"/compare?base={runs.plain}&cand={runs.plain}",
        "missing": "/run?id=acme/r00000000000000000000000000",
    }


def test_every_page_fits_the_screen_with_the_plainest_and_the_rich_suite(
    runs: Runs, pages: Pages
) -> None:
    """Each page loaded once, then looked at on a laptop and a phone (resized; the next page
    loads at the phone's size)."""
    b = pages("laptop")
    for name, path in _pages(runs).items():
        answer = b.page.goto(runs.url + path)
        assert answer is not None
        assert answer.status == (404 if name == "missing" else 200), name
        for size, _ in each_size(b):
            b.page.screenshot(path=str(runs.shots / f"{name}-{size}.png"), full_page=True)
            assert b.page.evaluate(NO_SIDEWAYS), (name, size, "scrolls sideways")
        if name == "missing":  # the browser reports the 404 itself
            assert [e for e in b.errors if "404" not in e] == []
            b.errors.clear()
        assert b.errors == [], name


@pytest.mark.parametrize("size", list(VIEWPORTS))
def test_the_runs_list_shows_each_runs_verdict_and_agent_on_screen(
    runs: Runs, pages: Pages, size: str
) -> None:
    b = pages(size)
    b.page.goto(runs.url + "/")
    width = VIEWPORTS[size][0]
    for run_id in (runs.plain, runs.baseline, runs.candidate):
        row = b.page.locator(f'#runs tr[data-run="{run_id}"]')
        for cell in ("verdict", "agent"):
            box = row.locator(f"[data-col={cell}]").bounding_box()
            assert box is not None, (run_id, cell)
            assert box["x"] >= 0, (run_id, cell, box)
            assert box["x"] + box["width"] <= width, (run_id, cell, box)
        assert row.locator("[data-col=agent]").inner_text().strip() == (
            "core.conformance.agents.scripted"
        )
    plain = b.page.locator(f'#runs tr[data-run="{runs.plain}"]')
    assert plain.locator("[data-col=verdict]").inner_text().split() == ["completed", "passed"]
    assert b.errors == []


def test_ticking_two_runs_compares_them_older_as_baseline(runs: Runs, pages: Pages) -> None:
    b = pages("phone")
    b.page.goto(runs.url + "/")
    button = b.page.locator("#compare-ticked")
    assert button.is_disabled()
    b.page.locator(f'input[name=run][value="{runs.candidate}"]').check()
    assert button.is_disabled()  # one is not a comparison
    b.page.locator(f'input[name=run][value="{runs.baseline}"]').check()
    assert button.is_enabled()
    button.click()
    b.page.wait_for_url("**/compare?**")
    text = b.page.locator("main").inner_text()
    assert text.index(runs.baseline) < text.index(runs.candidate)  # baseline → candidate
    assert b.page.locator("#deltas tbody tr").count() == 2
    assert b.errors == []


def test_compare_with_a_number_of_ticked_runs_other_than_two_is_refused(runs: Runs) -> None:
    auth = {"Authorization": f"Bearer {KEY_A}"}
    with httpx.Client(base_url=runs.url, headers=auth) as client:
        one = client.get("/compare", params={"run": runs.plain})
        three = client.get("/compare", params=[("run", runs.plain), ("run", runs.baseline),
                                               ("run", runs.candidate)])  # fmt: skip
        two = client.get("/compare", params=[("run", runs.candidate), ("run", runs.baseline)])
    assert one.status_code == three.status_code == 400
    assert "tick two runs" in one.text
    assert two.status_code == 200
    assert two.text.index(runs.baseline) < two.text.index(runs.candidate)


def test_the_live_page_refreshes_its_numbers_and_curves_when_the_run_ends(
    runs: Runs, chromium_browser: Any
) -> None:
    GATE.clear()
    done: dict[str, Any] = {}
    worker = threading.Thread(target=_evaluate_live, args=(runs.store, done), daemon=True)
    worker.start()
    try:
        deadline = time.monotonic() + 30
        run_id = None
        while run_id is None and time.monotonic() < deadline:
            run_id = off_loop(_running_run, runs.store)
            time.sleep(0.1)
        assert run_id is not None, done
        b = open_page(chromium_browser, "phone")
        b.page.goto(f"{runs.url}/run?id={run_id}")
        assert b.page.locator("#verdict").count() == 0  # no summary while it runs
        assert b.page.locator("#curves").count() == 0
        held = '#grid tr[data-task=held] td[data-col="%s"]'
        assert b.page.locator(held % "score").inner_text() == "–"
        GATE.set()
        b.page.wait_for_selector("#summary #verdict", timeout=20_000)
        b.page.wait_for_selector("#suite-curves svg#curves", timeout=20_000)
        assert b.page.locator("#verdict").inner_text() == "PASSED"
        assert b.page.locator("#tasks-passed").inner_text() == "2/2"
        assert b.page.locator(held % "score").inner_text() == "1.000"
        assert b.page.locator(held % "curve").locator("svg").count() == 1
        assert b.page.locator("#run-status").inner_text() == "completed"
        assert b.page.evaluate("performance.getEntriesByType('navigation').length") == 1
        assert b.page.evaluate(NO_SIDEWAYS)
        b.page.screenshot(path=str(runs.shots / "live-finished-phone.png"), full_page=True)
        assert b.errors == []
    finally:
        GATE.set()
        worker.join(timeout=30)
    assert "run" in done, done


@pytest.mark.parametrize("size", list(VIEWPORTS))
def test_the_run_page_shows_its_intervals_on_screen(runs: Runs, pages: Pages, size: str) -> None:
    """The rich run (3 tasks × 3 trials): the aggregate's 95 % interval over tasks, each task's
    pass rate interval (2/3: Clopper-Pearson [0.09, 0.99]) and the curves' bands; the plainest
    run (1/1) has its whiskers. Every interval is inside the viewport's width."""
    b = pages(size)
    width = VIEWPORTS[size][0]
    b.page.goto(f"{runs.url}/run?id={runs.baseline}")
    aggregate = b.page.locator("#aggregate-ci")
    assert aggregate.inner_text().startswith("95% CI [")
    box = aggregate.bounding_box()
    assert box is not None
    assert box["x"] + box["width"] <= width
    flow = b.page.locator('#grid tr[data-task=refund-flow] td[data-col="passed"] .ci')
    assert flow.inner_text() == "[0.09, 0.99]"
    assert b.page.locator('#grid td[data-col="curve"] svg path.ci').count() == 6  # 3 tasks × 2
    assert b.page.locator("#curves path.ci").count() == 2
    assert b.page.locator("#curve-table tr.ci-row").count() == 2
    b.page.goto(f"{runs.url}/run?id={runs.plain}")
    assert b.page.locator('#grid td[data-col="passed"] .ci').inner_text() == "[0.03, 1.00]"
    assert b.page.locator('#curves line[stroke-width="3"]').count() == 2  # the two whiskers
    assert b.page.evaluate(NO_SIDEWAYS)
    assert b.errors == []
