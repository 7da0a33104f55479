"""``wopeval.cli.startup.preload``: the command's module imported with the collector paused,
what it leaves alive frozen, the collector back on, and nothing done for other arguments."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from wopeval.cli.lazy import LazyCommand
from wopeval.cli.startup import YOUNG_THRESHOLD, preload, tune_collector


@pytest.fixture
def fresh_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A module not imported yet that records whether the collector ran while it imported."""
    (tmp_path / "preload_probe.py").write_text(
        "import gc\nENABLED_WHILE_IMPORTED = gc.isenabled()\nKEPT = [[] for _ in range(1000)]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "preload_probe"
    sys.modules.pop("preload_probe", None)
    gc.unfreeze()


def test_the_command_module_is_imported_with_the_collector_paused_then_frozen(
    fresh_module: str,
) -> None:
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    preload(["run", "suite.json"], {"run": LazyCommand(fresh_module, "")})
    probe = sys.modules[fresh_module]
    assert probe.ENABLED_WHILE_IMPORTED is False
    assert gc.isenabled()
    assert gc.get_freeze_count() > len(probe.KEPT)  # its objects are out of the collector's reach


def test_other_arguments_import_nothing(fresh_module: str) -> None:
    commands = {"run": LazyCommand(fresh_module, "")}
    for argv in ([], ["--help"], ["nonsense", "run"]):
        preload(argv, commands)
        assert fresh_module not in sys.modules
    assert gc.isenabled()


def test_an_import_that_fails_raises_with_the_collector_back_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "preload_broken.py").write_text("raise ImportError('a missing extra')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ImportError, match="a missing extra"):
        preload(["run"], {"run": LazyCommand("preload_broken", "")})
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off(fresh_module: str) -> None:
    gc.disable()
    try:
        preload(["run"], {"run": LazyCommand(fresh_module, "")})
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize(
    ("before", "after"),
    [((700, 10, 10), (YOUNG_THRESHOLD, 10, 10)), ((90_000, 5, 6), (90_000, 5, 6))],
)
def test_the_wopeval_process_collects_its_young_generation_less_often(
    before: tuple[int, int, int], after: tuple[int, int, int]
) -> None:
    saved = gc.get_threshold()
    try:
        gc.set_threshold(*before)
        tune_collector()
        assert gc.get_threshold() == after  # a higher threshold already set is kept
    finally:
        gc.set_threshold(*saved)
