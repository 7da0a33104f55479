"""The outage tests' in-process command line (:mod:`tests.outage.inproc`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.outage.inproc import Ran, wopeval_here


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Ran]:
    """:func:`wopeval_here` from ``tmp_path``, as wide a terminal as the real-process runs'."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    return wopeval_here
