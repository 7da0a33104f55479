"""The outage tests' in-process command line (:func:`tests.cli.in_process.wopeval_here`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.in_process import Done, wopeval_here


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Done]:
    """:func:`wopeval_here` from ``tmp_path``, as wide a terminal as the real-process runs'."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    return wopeval_here
