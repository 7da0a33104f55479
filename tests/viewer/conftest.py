"""The viewer's page tests share the HTML report's browser fixtures (Debian's chromium, one
launched browser per test process, its contexts closed at the end of each module), and reuse
a module's pages where they only read them."""

from typing import Any

import pytest

from tests.exports.conftest import chromium, chromium_browser, chromium_launched
from tests.viewer.browsing import Pages

__all__ = ["chromium", "chromium_browser", "chromium_launched", "pages"]


@pytest.fixture(scope="module")
def pages(chromium_browser: Any) -> Pages:
    """The module's reused pages at the two screen sizes (a test names the module's stored
    runs first: making them runs an event loop on this thread, which the browser marks as its
    own)."""
    return Pages(chromium_browser)
