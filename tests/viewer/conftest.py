"""The viewer's page tests share the HTML report's browser fixture (Debian's chromium), and one
launched browser per test module."""

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import sync_playwright

from tests.exports.conftest import chromium
from tests.exports.test_html_report import ARGS

__all__ = ["chromium", "chromium_browser"]


@pytest.fixture(scope="module")
def chromium_browser(chromium: str) -> Iterator[Any]:
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=chromium, args=ARGS)
        try:
            yield launched
        finally:
            launched.close()
