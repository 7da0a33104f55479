"""The viewer's page tests share the HTML report's browser fixture (Debian's chromium)."""

from tests.exports.conftest import chromium

__all__ = ["chromium"]
