"""The viewer's cost-against-success page (``/view/pareto``) on hand-made runs, served on a real
socket and looked at in Debian's chromium on a laptop and a phone. Screenshots go to
``$WOPEVAL_SHOTS`` when it is set, else the test's output folder."""

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

# (trial outcomes, cost a trial): a 0.2 per success at 1/2; b 0.4 at 3/4 (both on the
# frontier); c 0.4 at 1/4 (a dominates it); d no success
MADE = {
    "a": ([True, True, False, False], 0.1),
    "b": ([True, True, True, False], 0.3),
    "c": ([True, False, False, False], 0.1),
    "d": ([False, False, False, False], 0.05),
}


@dataclass
class Site:
    url: str
    ids: dict[str, str]
    other: str
    shots: Path


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("pareto-page")
    store = str(folder / "viewer.db")
    ids = {}
    for name, (outcomes, cost) in MADE.items():
        (folder / name).mkdir()
        path = write_suite(folder / name, suite_doc([outcomes], cost_usd=cost))
        ids[name] = anyio.run(make_run, store, path, TENANT_A)
    other_doc = suite_doc([[True]])
    other_doc["suiteId"] = "core.test.evals.other"
    (folder / "other").mkdir()
    other = anyio.run(make_run, store, write_suite(folder / "other", other_doc), TENANT_A)
    shots = shots_dir(folder)
    with serving(store, host_config()) as server:
        yield Site(server.base_url + "/view", ids, other, shots)


@pytest.mark.parametrize("size", list(VIEWPORTS))
def test_the_page_plots_the_runs_with_error_bars_and_marks_the_frontier(
    site: Site, pages: Pages, size: str
) -> None:
    b = pages(size)
    runs = ",".join(site.ids[n] for n in "abcd")
    answer = b.page.goto(f"{site.url}/pareto?runs={runs}")
    assert answer is not None
    assert answer.status == 200
    b.page.screenshot(path=str(site.shots / f"pareto-{size}.png"), full_page=True)
    assert b.page.evaluate(NO_SIDEWAYS), size
    plot = b.page.locator("svg#pareto-plot")
    assert plot.locator("circle.run").count() == 3  # d has no cost per success: no dot
    assert plot.locator("circle.front").count() == 2
    assert plot.locator("line.xbar").count() == 3
    assert plot.locator("line.ybar").count() == 3
    assert plot.locator("path#frontier").count() == 1
    rows = b.page.locator("#pareto tbody tr")
    assert rows.count() == 4
    front = [site.ids[n] for n in "ab"]
    marked = b.page.locator("#pareto tbody tr[data-frontier]")
    assert [marked.nth(i).get_attribute("data-run") for i in range(marked.count())] == front
    d_row = b.page.locator(f'#pareto tr[data-run="{site.ids["d"]}"]')
    assert d_row.locator("td.cost").inner_text().startswith("no success [")
    a_row = b.page.locator(f'#pareto tr[data-run="{site.ids["a"]}"]')
    assert a_row.locator("td.cost").inner_text().startswith("0.2 [")
    assert "#4" in b.page.locator("#no-success").inner_text()
    assert b.errors == []


def test_ticking_runs_opens_the_page(site: Site, pages: Pages) -> None:
    b = pages("phone")
    b.page.goto(site.url + "/")
    button = b.page.locator("#pareto-ticked")
    assert button.is_disabled()
    b.page.locator(f'input[name=run][value="{site.ids["a"]}"]').check()
    b.page.locator(f'input[name=run][value="{site.ids["b"]}"]').check()
    assert button.is_enabled()
    button.click()
    b.page.wait_for_url("**/pareto?**")
    assert b.page.locator("#pareto tbody tr").count() == 2
    assert b.errors == []


def test_bad_requests_are_refused(site: Site) -> None:
    auth = {"Authorization": f"Bearer {KEY_A}"}
    with httpx.Client(base_url=site.url, headers=auth) as client:
        none = client.get("/pareto")
        unknown = client.get("/pareto", params={"runs": "acme/r00000000000000000000000000"})
        mixed = client.get("/pareto", params={"runs": f"{site.ids['a']},{site.other}"})
        plain = client.get("/pareto", params={"runs": site.other})
    assert none.status_code == 400
    assert unknown.status_code == 404
    assert mixed.status_code == 400
    assert "different suites" in mixed.text
    assert plain.status_code == 200  # one run, no cost: 0 per success, on the frontier
    assert "✓ on it" in plain.text
