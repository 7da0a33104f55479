"""Every viewer page of a browser signed in by a session shows its tenant and a sign-out button
in its header, on a laptop and on a phone; signing out lands on the sign-in page and ends the
session. A request authenticated by an API key header (a script, a CI job) shows no sign-out.

Real runs on a real socket, Debian's chromium through Playwright; screenshots go to
``$WOPEVAL_SHOTS`` when it is set (to look at them), else the test's output folder.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.host.helpers import KEY_A, KEY_B, TENANT_A, TENANT_B, host_config, serving
from tests.viewer.browsing import NO_SIDEWAYS, VIEWPORTS, Browser, each_size, shots_dir
from tests.viewer.test_viewer_pages import DATA, make_run, off_loop
from wopeval.host.pages import COOKIE


@dataclass
class Site:
    url: str  # the host's root (the pages are under /view)
    plain: str
    rich: str
    shots: Path


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("viewer-signout")
    store = str(folder / "viewer.db")
    rich = anyio.run(make_run, store, DATA / "suite.yaml", TENANT_A)
    plain = anyio.run(make_run, store, DATA / "plain.yaml", TENANT_A)
    shots = shots_dir(folder)
    with serving(store, host_config()) as server:
        yield Site(server.base_url, plain, rich, shots)


def _pages(site: Site) -> dict[str, str]:
    return {
        "runs": "/view/",
        "run-plain": f"/view/run?id={site.plain}",
        "run": f"/view/run?id={site.rich}",
        "trial": f"/view/trial?run={site.rich}&task=refund-flow&i=1",
        "trial-plain": f"/view/trial?run={site.plain}&task=only&i=0",
        "compare": f"/view/compare?base={site.plain}&cand={site.plain}",
        "missing": f"/view/run?id={TENANT_A}/r00000000000000000000000000",
    }


def _sign_in(b: Browser, site: Site, key: str) -> None:
    b.page.goto(site.url + "/view/")
    assert b.page.url == site.url + "/view/login"  # a browser without a session is sent here
    for size, _ in each_size(b):
        assert b.page.evaluate(NO_SIDEWAYS), size
    b.page.fill("input[name=key]", key)
    b.page.click("button[type=submit]")
    b.page.wait_for_url(site.url + "/view/")


def _header_on_screen(b: Browser, width: int) -> None:
    """The tenant and the sign-out button are in the header, wholly inside the viewport."""
    for selector in ("header #tenant", "header #logout"):
        box = b.page.locator(selector).bounding_box()
        assert box is not None, selector
        assert box["x"] >= 0, (selector, box)
        assert box["x"] + box["width"] <= width, (selector, box)
    assert b.page.evaluate(NO_SIDEWAYS)


def test_every_page_of_a_session_shows_its_tenant_and_signs_out(
    site: Site, chromium_browser: Any
) -> None:
    """One session; each page loaded once and looked at on a laptop and a phone (resized);
    signed out on the phone."""
    width, height = VIEWPORTS["laptop"]
    context = chromium_browser.new_context(viewport={"width": width, "height": height})
    try:
        b = Browser(context.new_page())
        _sign_in(b, site, KEY_A)
        for name, path in _pages(site).items():
            answer = b.page.goto(site.url + path)
            assert answer is not None
            assert answer.status == (404 if name == "missing" else 200), name
            assert b.page.locator("header #tenant").inner_text() == TENANT_A, name
            for size, on_screen in each_size(b):
                _header_on_screen(b, on_screen)
                if name in ("runs", "run"):
                    b.page.screenshot(path=str(site.shots / f"signed-in-{name}-{size}.png"),
                                      full_page=True)  # fmt: skip
        b.page.goto(site.url + f"/view/run?id={site.rich}")
        assert b.page.evaluate("innerWidth") == VIEWPORTS["phone"][0]
        b.page.click("header #logout")
        b.page.wait_for_url(site.url + "/view/login")
        assert "Signed in" not in b.page.locator("body").inner_text()
        assert not [c for c in context.cookies() if c["name"] == COOKIE]
        for size, _ in each_size(b):
            assert b.page.evaluate(NO_SIDEWAYS), size
            b.page.screenshot(path=str(site.shots / f"signed-out-{size}.png"), full_page=True)
        b.page.goto(site.url + "/view/")
        assert b.page.url == site.url + "/view/login"  # the session is over
        assert [e for e in b.errors if "404" not in e] == []
    finally:
        context.close()


def test_a_page_shows_the_sessions_own_tenant(site: Site, chromium_browser: Any) -> None:
    context = chromium_browser.new_context(viewport={"width": 390, "height": 844})
    try:
        b = Browser(context.new_page())
        _sign_in(b, site, KEY_B)
        assert b.page.locator("header #tenant").inner_text() == TENANT_B
        assert site.rich not in b.page.locator("main").inner_text()  # acme's runs are not shown
    finally:
        context.close()


def test_a_request_with_an_api_key_shows_no_sign_out(site: Site) -> None:
    """The key authenticates it, not a session: there is nothing to sign out of, even when the
    browser also holds a session (the key decides the tenant)."""
    with httpx.Client(base_url=site.url) as client:
        keyed = client.get("/view/", headers={"Authorization": f"Bearer {KEY_A}"})
        assert client.post("/view/login", data={"key": KEY_B}).status_code == 303
        signed = client.get("/view/")
        both = client.get("/view/", headers={"Authorization": f"Bearer {KEY_A}"})
    assert keyed.status_code == signed.status_code == both.status_code == 200
    assert 'id="logout"' not in keyed.text
    assert 'id="logout"' in signed.text
    assert 'action="/view/logout"' in signed.text
    assert f'<b id="tenant">{TENANT_B}</b>' in signed.text
    assert 'id="logout"' not in both.text
    assert site.rich in both.text  # acme's, by the key


def test_the_local_viewer_shows_no_sign_out(tmp_path: Path) -> None:
    """``wopeval view`` has no sign-in: its pages have no sign-out."""
    from wopeval.viewer import create_viewer_app

    store = str(tmp_path / "s.db")
    run_id = off_loop(make_run, store, DATA / "plain.yaml", TENANT_A)

    async def fetch() -> httpx.Response:
        from wopeval.events.store import EventStore

        opened = await EventStore.open(store)
        try:
            transport = httpx.ASGITransport(app=create_viewer_app(store=opened))
            async with httpx.AsyncClient(transport=transport, base_url="http://v.test") as client:
                return await client.get("/run", params={"id": run_id})
        finally:
            await opened.close()

    page = off_loop(fetch)
    assert page.status_code == 200
    assert run_id in page.text
    assert "logout" not in page.text
