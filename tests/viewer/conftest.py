"""The viewer's page tests share the HTML report's browser fixtures (Debian's chromium, one
launched browser per test process, its contexts closed at the end of each module)."""

from tests.exports.conftest import chromium, chromium_browser, chromium_launched

__all__ = ["chromium", "chromium_browser", "chromium_launched"]
