"""The viewer in a real browser (Debian's chromium via Playwright) over a real socket.

The pages are served by ``wopeval serve``'s app under ``/view`` (two tenants, Bearer keys) on a
SQLite store holding real runs of the scripted agent, made once for the module's tests, which
only read them (the live page's test makes its run on a store of its own). Screenshots of every
page are saved in the module's output folder, or ``$WOPEVAL_SHOTS`` when it is set.
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
from playwright.sync_api import Browser as Chromium

from tests.host.helpers import KEY_A, KEY_B, TENANT_A, TENANT_B, host_config, serving
from tests.viewer.agents import GATE, gated_agent
from tests.viewer.browsing import Browser, Pages, open_page, shots_dir
from wopeval.compare.verdict import compare_summaries
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunSettings
from wopeval.events.store import EventStore
from wopeval.service.runs import RunService
from wopeval.suite import load_suite
from wopeval.wire.summary import EvalSummary

DATA = Path(__file__).parent / "data"
SCRIPTED = "core.conformance.agents.scripted"


async def make_run(url: str, suite: Path, tenant: str, registry: Registry | None = None) -> str:
    async with await EventStore.open(url) as store:
        loaded = load_suite(suite)
        service = RunService(store, registry or Registry(), None)
        agent = loaded.targetAgentId or SCRIPTED
        plan = await service.plan(loaded, agent, RunSettings(), tenant=tenant)
        record, _ = await service.run(plan)
        return record.run_id


async def summary_of(url: str, run_id: str) -> EvalSummary:
    async with await EventStore.open(url) as store:
        record = await store.get_run(run_id)
        assert record is not None
        assert record.summary is not None
        return EvalSummary.model_validate(record.summary)


def off_loop(fn: Any, *args: Any) -> Any:
    """``anyio.run(fn, *args)`` in a thread of its own (Playwright's loop holds this one)."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = anyio.run(fn, *args)
        except BaseException as exc:  # pragma: no cover - re-raised below
            box["error"] = exc

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


@dataclass
class Site:
    url: str
    store: str
    baseline: str
    candidate: str
    foreign: str
    shots: Path


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("viewer-pages")
    store = str(folder / "viewer.db")
    baseline = anyio.run(make_run, store, DATA / "suite.yaml", TENANT_A)
    candidate = anyio.run(make_run, store, DATA / "candidate.yaml", TENANT_A)
    foreign = anyio.run(make_run, store, DATA / "suite.yaml", TENANT_B)
    with serving(store, host_config()) as server:
        url = server.base_url + "/view"
        yield Site(url, store, baseline, candidate, foreign, shots_dir(folder))


@pytest.fixture
def live_site(tmp_path: Path) -> Iterator[Site]:
    """A host on an empty store of its own, for the test that adds a running run."""
    store = str(tmp_path / "live.db")
    with serving(store, host_config()) as server:
        yield Site(server.base_url + "/view", store, "", "", "", shots_dir(tmp_path))


@pytest.fixture
def browser(pages: Pages) -> Any:
    """A laptop-sized page sending an API key (the module's, reused; a test names ``site``
    first: making its runs runs an event loop on this thread, which the browser marks as its
    own)."""

    def keyed(key: str = KEY_A) -> Browser:
        return pages("laptop", key)

    return keyed


def _shot(b: Browser, site: Site, name: str) -> None:
    path = site.shots / f"{name}.png"
    b.page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 1000


def test_every_page_loads_without_console_errors(site: Site, browser: Any) -> None:
    b = browser()
    b.page.goto(site.url + "/")
    rows = b.page.locator("#runs tbody tr")
    assert rows.count() == 2  # tenant acme's two runs, newest first; not tenant other's
    assert rows.nth(0).get_attribute("data-run") == site.candidate
    assert rows.nth(1).get_attribute("data-run") == site.baseline
    _shot(b, site, "runs")
    b.page.fill("input[name=q]", "viewer-test")
    b.page.click("form.filters button")
    b.page.wait_for_url("**q=viewer-test**")
    assert b.page.locator("#runs tbody tr").count() == 2
    b.page.goto(site.url + "/?status=running")
    assert b.page.locator("#runs tbody tr[data-run]").count() == 0
    b.page.goto(f"{site.url}/run?id={site.baseline}")
    assert b.page.locator("#verdict").inner_text() in ("PASSED", "FAILED")
    # the grid: 3 tasks × 3 trials, one flaky task (refund-flow), one fail-closed task
    assert b.page.locator("#grid a.cell").count() == 3 * 3
    assert b.page.locator("#grid tbody tr").count() == 3
    flaky = b.page.locator("#grid tr[data-task=refund-flow] .flaky")
    assert flaky.count() == 1
    closed = b.page.locator("#grid tr[data-task=closed-miss] a.cell")
    assert [closed.nth(i).get_attribute("data-status") for i in range(3)] == ["fail-closed"] * 3
    assert b.page.locator("#curves").count() == 1  # the pass@k / pass^k plot
    _shot(b, site, "run")
    b.page.goto(f"{site.url}/trial?run={site.baseline}&task=closed-miss&i=0")
    assert "fixture miss" in b.page.locator("#reason").inner_text()
    assert b.page.locator("[data-fixture=miss-failed]").count() == 1
    _shot(b, site, "trial-fail-closed")
    b.page.goto(f"{site.url}/compare?base={site.baseline}&cand={site.candidate}")
    _shot(b, site, "compare")
    assert b.errors == []


def test_clicking_a_failing_trial_shows_its_reason_and_trajectory_diff(
    site: Site, browser: Any
) -> None:
    b = browser()
    b.page.goto(f"{site.url}/run?id={site.baseline}")
    cell = b.page.locator('#grid tr[data-task=refund-flow] a.cell[data-col="1"]')
    assert cell.get_attribute("data-status") == "fail"
    cell.click()
    b.page.wait_for_url("**/trial?**")
    reason = b.page.locator("#reason").inner_text()
    assert "forbidden tool billing:refund-all" in reason
    assert "missing billing:refund" in reason
    expected = b.page.locator("#diff td.expected")
    assert [expected.nth(i).get_attribute("data-status") for i in range(expected.count())] == [
        "matched",
        "missing",
    ]
    observed = b.page.locator("#diff td.observed")
    marks = {
        observed.nth(i).locator("code").inner_text(): observed.nth(i).get_attribute("data-status")
        for i in range(observed.count())
    }
    assert marks == {
        "crm:lookup-order": "matched",
        "crm:note": "unexpected",
        "billing:refund-all": "forbidden",
    }
    served = b.page.locator("[data-type=tool-returned][data-fixture=served]")
    assert served.count() == 3
    assert "entry #0" in served.nth(0).inner_text()
    assert b.page.locator("[data-type=usage]").count() == 1
    assert "refund approved" in b.page.locator("#output").inner_text()
    _shot(b, site, "trial")
    assert b.errors == []


def test_comparison_shows_the_regression_verdict(site: Site, browser: Any) -> None:
    base = off_loop(summary_of, site.store, site.baseline)
    cand = off_loop(summary_of, site.store, site.candidate)
    want = compare_summaries(base, cand, site.baseline, method="sign-test", alpha=0.1)
    b = browser()
    b.page.goto(f"{site.url}/compare?base={site.baseline}&cand={site.candidate}"
                "&method=sign-test&alpha=0.1")  # fmt: skip
    assert b.page.locator("#verdict").inner_text() == want.regression.verdict
    assert b.page.locator("#method").inner_text() == "sign-test"
    assert b.page.locator("#alpha").inner_text() == "0.1"
    # The candidate's scripts (its tasks' inputs) differ from the baseline's: both shared tasks
    # changed, so none is paired, and the page says which were left out.
    assert b.page.locator("#paired").inner_text() == "0"
    cannot = b.page.locator("#cannot-decide").inner_text()
    assert cannot.startswith("cannot decide: sign-test cannot reach alpha 0.1 with 0 paired tasks")
    assert b.page.locator("#deltas tbody tr").count() == 2
    assert b.page.locator("#deltas tbody tr[data-changed]").count() == 2
    assert "refund-flow" in b.page.locator("#changed").inner_text()
    assert "lookup-only" in b.page.locator("#changed").inner_text()
    unpaired = b.page.locator("#unpaired").inner_text()
    assert "baseline only: closed-miss" in unpaired
    assert "candidate only: new-task" in unpaired
    delta = b.page.locator("#deltas tr[data-task=refund-flow] td").nth(3).inner_text()
    assert delta == "+0.333"  # 2/3 of the trials passed, then 3/3
    assert b.errors == []


def test_keyboard_navigation_moves_through_the_grid(site: Site, browser: Any) -> None:
    b = browser()
    b.page.goto(f"{site.url}/run?id={site.baseline}")
    b.page.keyboard.press("g")  # focus the first cell

    def focused() -> tuple[str | None, str | None]:
        return (
            b.page.evaluate("document.activeElement.dataset.row"),
            b.page.evaluate("document.activeElement.dataset.col"),
        )

    assert focused() == ("0", "0")
    b.page.keyboard.press("ArrowRight")
    assert focused() == ("0", "1")
    b.page.keyboard.press("ArrowDown")
    assert focused() == ("1", "1")
    b.page.keyboard.press("j")
    assert focused() == ("2", "1")
    b.page.keyboard.press("ArrowDown")  # the last row: stays
    assert focused() == ("2", "1")
    b.page.keyboard.press("Enter")
    b.page.wait_for_url("**/trial?**")
    assert "closed-miss" in b.page.locator("h1").inner_text()
    assert b.errors == []


def test_another_tenants_run_is_not_reachable(site: Site, browser: Any) -> None:
    b = browser(KEY_B)
    answer = b.page.goto(f"{site.url}/run?id={site.baseline}")
    assert answer is not None
    assert answer.status == 404
    foreign_text = b.page.locator("main").inner_text()
    missing = b.page.goto(f"{site.url}/run?id={TENANT_A}/r00000000000000000000000000")
    assert missing is not None
    assert missing.status == 404
    assert b.page.locator("main").inner_text() == foreign_text  # looks exactly like a missing one
    for path in (f"/trial?run={site.baseline}&task=refund-flow&i=1",
                 f"/compare?base={site.baseline}&cand={site.foreign}",
                 f"/live?run={site.baseline}"):  # fmt: skip
        answer = b.page.goto(site.url + path)
        assert answer is not None, path
        assert answer.status == 404, path
    b.page.goto(site.url + "/")
    runs = b.page.locator("#runs tbody tr[data-run]")
    assert [runs.nth(i).get_attribute("data-run") for i in range(runs.count())] == [site.foreign]
    anonymous = browser("not-a-key")
    answer = anonymous.page.goto(site.url + "/")
    assert answer is not None
    assert answer.status == 401


def _evaluate_live(store: str, done: dict[str, Any]) -> None:
    registry = Registry()
    registry.register_agent("test.gated", gated_agent)
    try:
        done["run"] = anyio.run(make_run, store, DATA / "live.yaml", TENANT_A, registry)
    except BaseException as exc:  # pragma: no cover - reported by the test
        done["error"] = exc


async def _running_run(store: str) -> str | None:
    async with await EventStore.open(store) as opened:
        for record in await opened.list_runs(tenant=TENANT_A):
            if record.suite_id == "core.wopeval.evals.viewer-live" and not record.terminal:
                found, _ = await _scored(opened, record.run_id)
                return record.run_id if found else None
    return None


async def _scored(store: EventStore, run_id: str) -> tuple[int, int]:
    events = await store.events(run_id)
    return sum(1 for e in events if e.type == "eval.scored"), len(events)


def test_the_live_page_receives_a_trial_that_finishes_after_it_opened(
    live_site: Site, chromium_browser: Chromium
) -> None:
    site = live_site
    GATE.clear()
    done: dict[str, Any] = {}
    worker = threading.Thread(target=_evaluate_live, args=(site.store, done), daemon=True)
    worker.start()
    try:
        deadline = time.monotonic() + 30
        run_id = None
        while run_id is None and time.monotonic() < deadline:
            run_id = off_loop(_running_run, site.store)
            time.sleep(0.1)
        assert run_id is not None, done
        b = open_page(chromium_browser, "laptop")  # a page of its own: its host goes after it
        b.page.goto(f"{site.url}/run?id={run_id}")
        held = b.page.locator('#grid tr[data-task=held] a.cell[data-col="0"]')
        assert held.get_attribute("data-status") == "pending"
        quick = b.page.locator('#grid tr[data-task=quick] a.cell[data-col="0"]')
        assert quick.get_attribute("data-status") == "pass"
        _shot(b, site, "live-running")
        GATE.set()
        b.page.wait_for_selector(
            '#grid tr[data-task=held] a.cell[data-col="0"][data-status=pass]', timeout=20_000
        )
        b.page.wait_for_function(
            "document.getElementById('run-status').textContent === 'completed'", timeout=20_000
        )
        assert b.page.evaluate("performance.getEntriesByType('navigation').length") == 1
        _shot(b, site, "live-finished")
        assert b.errors == []
    finally:
        GATE.set()
        worker.join(timeout=30)
    assert "run" in done, done


def test_a_browser_signs_in_with_a_key_cookie(site: Site) -> None:
    """Navigation sends no Authorization header: POST /view/login sets an HttpOnly cookie."""
    with httpx.Client(base_url=site.url, follow_redirects=False) as client:
        assert client.get("/").status_code == 401
        assert client.get("/login").status_code == 200
        refused = client.post("/login", data={"key": "wrong-key-0123456789"})
        assert refused.status_code == 401
        signed = client.post("/login", data={"key": KEY_B})
        assert signed.status_code == 303
        assert "httponly" in signed.headers["set-cookie"].lower()
        runs = client.get("/")
        assert runs.status_code == 200
        assert site.foreign in runs.text
        assert site.baseline not in runs.text
        assert client.get("/run", params={"id": site.baseline}).status_code == 404


def test_a_trial_page_shows_delegate_calls(site: Site, browser: Any) -> None:
    b = browser()
    b.page.goto(f"{site.url}/trial?run={site.baseline}&task=lookup-only&i=0")
    assert b.page.locator("#trial-status").inner_text() == "pass"
    delegate = b.page.locator("[data-type=invocation-started].ev-delegate")
    assert delegate.count() == 1
    assert "core.conformance.agents.scripted.helper" in delegate.inner_text()
    assert "checked" in b.page.locator("#transcript").inner_text()  # the delegate's answer
    assert "no refund is due" in b.page.locator("#output").inner_text()
    _shot(b, site, "trial-delegate")
    assert b.errors == []
