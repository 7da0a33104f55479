"""A forked run's page names the run and trial it was forked from, with links to both, on a
laptop and on a phone (a real socket, Debian's chromium). Screenshots go to ``$WOPEVAL_SHOTS``
when it is set, else the test's output folder."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from tests.host.helpers import TENANT_A, host_config, serving
from tests.viewer.browsing import NO_SIDEWAYS, VIEWPORTS, Pages, shots_dir
from tests.viewer.test_viewer_pages import DATA, make_run
from wopeval.engine.registry import Registry
from wopeval.events.store import EventStore
from wopeval.service.fork import plan_fork
from wopeval.service.runs import RunService


@dataclass
class Forked:
    url: str
    original: str
    fork: str
    shots: Path


async def _fork(store_url: str, run_id: str) -> str:
    async with await EventStore.open(store_url) as store:
        service = RunService(store, Registry())
        record, _ = await service.run(await plan_fork(service, run_id, "refund-flow", 1, 1))
        return record.run_id


@pytest.fixture(scope="module")
def forked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Forked]:
    folder = tmp_path_factory.mktemp("fork-page")
    store = str(folder / "viewer.db")
    original = anyio.run(make_run, store, DATA / "suite.yaml", TENANT_A)
    fork = anyio.run(_fork, store, original)
    with serving(store, host_config()) as server:
        yield Forked(server.base_url + "/view", original, fork, shots_dir(folder))


@pytest.mark.parametrize("size", list(VIEWPORTS))
def test_a_forked_run_page_links_to_the_original_run_and_trial(
    forked: Forked, pages: Pages, size: str
) -> None:
    b = pages(size)
    answer = b.page.goto(f"{forked.url}/run?id={forked.fork}")
    assert answer is not None
    assert answer.status == 200
    b.page.screenshot(path=str(forked.shots / f"fork-run-{size}.png"), full_page=True)
    assert b.page.evaluate(NO_SIDEWAYS), size
    line = b.page.locator("#forked-from")
    assert line.is_visible()
    text = " ".join(line.inner_text().split())
    assert text == (
        f"forked from {forked.original}: task refund-flow, trial 1, "
        "its first 1 tool call(s) served from its log"
    )
    links = line.locator("a")
    assert links.count() == 2
    with b.page.expect_navigation():
        links.nth(1).click()
    assert "/trial?" in b.page.url
    assert "i=1" in b.page.url
    assert b.page.locator("h1").count() == 1
    b.page.go_back()
    with b.page.expect_navigation():
        b.page.locator("#forked-from a").first.click()
    assert b.page.locator("#run-id").inner_text() == forked.original
    assert b.page.locator("#forked-from").count() == 0  # the original is no fork


def test_a_run_that_is_no_fork_has_no_fork_line(forked: Forked, pages: Pages) -> None:
    b = pages("phone")
    answer = b.page.goto(f"{forked.url}/run?id={forked.original}")
    assert answer is not None
    assert answer.status == 200
    assert b.page.locator("#forked-from").count() == 0
