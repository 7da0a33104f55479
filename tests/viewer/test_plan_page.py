"""The viewer's plan page (``/view/plan?run=RUN``) from a completed run, served on a real socket
and looked at in Debian's chromium on a laptop and a phone; the run page links to it.
Screenshots go to ``$WOPEVAL_SHOTS`` when it is set, else the test's output folder."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import pytest

from tests.cli.gate_runs import suite_doc, write_suite
from tests.host.helpers import KEY_A, TENANT_A, host_config, serving
from tests.viewer.browsing import NO_SIDEWAYS, VIEWPORTS, Pages, shots_dir
from tests.viewer.test_viewer_pages import make_run

TABLES = ("suite", "methods", "tasks")
ONE_LINE = """cells => cells.map(cell => {
  const range = document.createRange();
  range.selectNodeContents(cell);
  const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
  return tops.size === 1;
})"""


@dataclass
class Site:
    url: str
    run_id: str
    plain: str
    shots: Path


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("plan-page")
    store = str(folder / "viewer.db")
    outcomes = [[True, True, True, False, True], [True, False, True, True, True], [True] * 5]
    (folder / "rich").mkdir()
    rich = write_suite(folder / "rich", suite_doc(outcomes, pass_rule="mean", pass_score=0.6))
    run_id = anyio.run(make_run, store, rich, TENANT_A)
    (folder / "plain").mkdir()
    plain = anyio.run(make_run, store, write_suite(folder / "plain", suite_doc([[True]])), TENANT_A)
    with serving(store, host_config()) as server:
        yield Site(server.base_url + "/view", run_id, plain, shots_dir(folder))


def test_the_plan_page_reads_on_a_laptop_and_a_phone(site: Site, pages: Pages) -> None:
    """One load of the page (computing the plan is most of its cost), then each screen size by
    resizing it: the viewer's layout is CSS alone (media queries, no script reads the width)."""
    b = pages("laptop")
    b.page.goto(f"{site.url}/run?id={site.run_id}")
    link = b.page.locator("#plan-link a")
    assert link.count() == 1
    link.click()
    b.page.wait_for_url("**/plan?**")
    for size, (width, height) in VIEWPORTS.items():
        b.page.set_viewport_size({"width": width, "height": height})
        b.page.screenshot(path=str(site.shots / f"plan-{size}.png"), full_page=True)
        assert b.page.evaluate("innerWidth") == width
        assert b.page.evaluate(NO_SIDEWAYS), size
        # a short name (task id, gate, method) reads on one line, never broken mid-word
        cells = b.page.locator(", ".join(f"#plan-{t} tbody td:first-child" for t in TABLES))
        assert cells.count() == 7
        assert cells.evaluate_all(ONE_LINE) == [True] * 7, size
    assert b.page.locator("#plan-suite tbody tr").count() == 2
    methods = b.page.locator("#plan-methods tbody tr")
    names = [methods.nth(i).get_attribute("data-method") for i in range(methods.count())]
    assert names == ["sign-test", "mcnemar"]  # the simulated ones on request
    assert b.page.locator("#plan-tasks tbody tr").count() == 3
    rates = b.page.locator("#plan-tasks tbody tr td[data-label=rate]")
    assert rates.nth(0).inner_text().startswith("0.800 (4/5)")
    assert b.errors == []


def test_the_form_changes_the_plan(site: Site, pages: Pages) -> None:
    b = pages("phone")
    b.page.goto(f"{site.url}/plan?run={site.run_id}")
    first = b.page.locator('#plan-methods tr[data-method="sign-test"] td[data-label=tasks]')
    before = int(first.inner_text())
    b.page.locator("#plan-form input[name=mde]").fill("0.3")
    b.page.locator("#plan-form button").click()
    b.page.wait_for_url("**mde=0.3**")
    after = int(first.inner_text())
    assert after < before  # a larger drop needs fewer tasks
    assert b.errors == []


def test_plain_run_and_bad_requests(site: Site) -> None:
    auth = {"Authorization": f"Bearer {KEY_A}"}
    with httpx.Client(base_url=site.url, headers=auth, timeout=120) as client:
        plain = client.get("/plan", params={"run": site.plain, "simulated": "1"})
        bad_mde = client.get("/plan", params={"run": site.run_id, "mde": "1.5"})
        bad_power = client.get("/plan", params={"run": site.run_id, "power": "0.01"})
        not_number = client.get("/plan", params={"run": site.run_id, "alpha": "x"})
        unknown = client.get("/plan", params={"run": "acme/r00000000000000000000000000"})
    assert plain.status_code == 200
    assert "1.000" in plain.text
    assert 'data-method="paired-bootstrap"' in plain.text
    assert bad_mde.status_code == 400
    assert "mde: must lie strictly between 0 and 1" in bad_mde.text
    assert bad_power.status_code == 400
    assert "power: must lie strictly between" in bad_power.text
    assert not_number.status_code == 400
    assert "alpha: &#39;x&#39; is not a number" in not_number.text
    assert unknown.status_code == 404
