"""``bench/grading_cold.py``'s table: every cold cell present, ``met`` from the compiled and
the fresh-process medians. No timing is asserted: the table is built from synthetic figures
on either side of the goal, and one cheap cell is graded once in this process for its shape."""

from __future__ import annotations

from typing import Any

import pytest

from bench import grading_cold


def _round(ms: float) -> tuple[dict[str, Any], dict[str, Any]]:
    """One round's in-process rows and fresh cells, every figure ``ms``."""
    modes = ("exact", "in-order", "any-order", "subset")
    matrix = {mode: {m: ms for m in ("ignore", "exact", "subset")} for mode in modes}
    whole = {
        mode: {"collect_trials_ms": 1.0, "grade_trial_ms": ms, "grade_trial_cold_ms": ms}
        for mode in modes
    }
    adversarial = {
        f"{shape}/{mode}": {"compiled_ms": ms, "cold_ms": ms}
        for shape in grading_cold.SHAPES
        for mode in ("any-order", "subset")
    }
    rows = {
        "cpu_10k": matrix,
        "cpu_10k_cold": matrix,
        "whole_trial_10k": whole,
        "adversarial_10k": adversarial,
    }
    fresh = {name: {"ms": ms, "full_collections": 0} for name in grading_cold.cell_names()}
    return rows, fresh


def test_every_cell_is_in_the_table_once() -> None:
    names = grading_cold.cell_names()
    assert len(names) == len(set(names)) == 12 + 4 + 4
    cells = grading_cold._cells(*map(list, zip(*[_round(10.0)] * 3, strict=True)))
    assert list(cells) == names
    assert all(cell["met"] for cell in cells.values())


@pytest.mark.parametrize(
    ("compiled", "fresh", "met"), [(49.9, 49.9, True), (50.0, 10.0, False), (10.0, 50.0, False)]
)
def test_met_reads_the_compiled_and_the_fresh_medians(
    compiled: float, fresh: float, met: bool
) -> None:
    rows, cells = _round(compiled)
    fresh_cells = {name: {"ms": fresh, "full_collections": 1} for name in cells}
    table = grading_cold._cells([rows], [fresh_cells])
    assert {cell["met"] for cell in table.values()} == {met}
    assert table["subset/subset"]["fresh_full_collections"] == [1]


def test_a_cheap_cell_graded_once_reports_its_ms_and_collections() -> None:
    found = grading_cold.fresh("any-order/ignore")
    assert set(found) == {"ms", "full_collections"}
    assert found["ms"] > 0
    assert found["full_collections"] >= 0
