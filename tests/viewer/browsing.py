"""What the viewer's browser tests share: the two screen sizes, the no-sideways-scroll check,
a page that collects its console errors, a page signed in by API key, a module's reused pages,
and where screenshots go."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from playwright.sync_api import Page

from tests.host.helpers import KEY_A

VIEWPORTS = {"laptop": (1280, 800), "phone": (390, 844)}
NO_SIDEWAYS = "document.documentElement.scrollWidth <= window.innerWidth"


class Browser:
    """One chromium page with the caller's API key; console errors are collected."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.errors: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))


def open_page(chromium_browser: Any, size: str, key: str | None = KEY_A) -> Browser:
    """A page at ``size``, sending ``key`` as a bearer token on every request (none: a browser
    that has to sign in)."""
    width, height = VIEWPORTS[size]
    headers = {"Authorization": f"Bearer {key}"} if key is not None else {}
    context = chromium_browser.new_context(
        viewport={"width": width, "height": height}, extra_http_headers=headers
    )
    return Browser(context.new_page())


def each_size(b: Browser) -> Iterator[tuple[str, int]]:
    """Resizes the loaded page to each screen size in turn: (its name, its width). The
    viewer's layout is CSS alone (media queries; viewer.js reads no width), so a page resized
    is laid out as one loaded at that size."""
    for size, (width, height) in VIEWPORTS.items():
        b.page.set_viewport_size({"width": width, "height": height})
        assert b.page.evaluate("innerWidth") == width, size
        yield size, width


class Pages:
    """A module's pages, one per screen size and key, reused by the tests that only read pages
    (a context and a page's first load cost more than the test's own loads). Each call starts
    the page afresh on about:blank, which ends what the previous test left running and takes
    in the console messages it left, at its size, and clears the collected errors."""

    def __init__(
        self, chromium_browser: Any, viewports: dict[str, tuple[int, int]] = VIEWPORTS
    ) -> None:
        self._browser = chromium_browser
        self._viewports = viewports
        self._open: dict[tuple[str, str | None], Browser] = {}

    def __call__(self, size: str, key: str | None = KEY_A) -> Browser:
        width, height = self._viewports[size]
        found = self._open.get((size, key))
        if found is None:
            headers = {"Authorization": f"Bearer {key}"} if key is not None else {}
            context = self._browser.new_context(
                viewport={"width": width, "height": height}, extra_http_headers=headers
            )
            found = self._open[(size, key)] = Browser(context.new_page())
        found.page.goto("about:blank")
        found.page.set_viewport_size({"width": width, "height": height})  # a test may resize
        found.errors.clear()
        return found


def shots_dir(folder: Path) -> Path:
    """Where screenshots go: ``$WOPEVAL_SHOTS`` (to look at them), else ``folder``."""
    shots = Path(os.environ.get("WOPEVAL_SHOTS") or folder)
    shots.mkdir(parents=True, exist_ok=True)
    return shots
