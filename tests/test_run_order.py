"""The test-run order lists of ``tests/conftest.py`` name test files that exist.

They only order and group files for the xdist workers (every test runs either way), so a renamed
file would silently drop out of them: this test says so instead.
"""

from __future__ import annotations

from pathlib import Path

from tests import conftest

ROOT = Path(__file__).resolve().parents[1]


def test_the_order_lists_name_existing_test_files() -> None:
    grouped = [path for pair in conftest.SAME_WORKER.items() for path in pair]
    paths = [*conftest.SLOW_FIRST, *conftest.LAST, *grouped]
    missing = [path for path in paths if not (ROOT / path).is_file()]
    assert missing == []
    assert len(set(conftest.SLOW_FIRST)) == len(conftest.SLOW_FIRST)
    assert not set(conftest.SLOW_FIRST) & set(conftest.LAST)
    assert ROOT / conftest.LAST[0] == conftest.EEE_TEST
