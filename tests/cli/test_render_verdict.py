"""The verdict line names why a run fell short as it did: trials skipped by a cost ceiling are
not trials missing from the log (a shard's, or a partial merge's), and it fits 80 columns."""

from __future__ import annotations

from wopeval.cli.render_detail import verdict_lines
from wopeval.grading.detail import RunDetail, TaskDetail, TrialCell, TrialStatus


def _detail(*statuses: TrialStatus) -> RunDetail:
    cells = [TrialCell(i, status, None, None) for i, status in enumerate(statuses)]
    task = TaskDetail("t", cells, 0.25, False)
    return RunDetail([task], 0.25, 0.8, False, True, skipped=True)


def test_missing_trials_are_not_called_budget_skips() -> None:
    text = " ".join(verdict_lines(_detail("pass", "missing", "missing", "missing")))
    assert "3 trials not in this log" in text
    assert "budget" not in text


def test_budget_skips_are_counted_apart_from_missing_trials() -> None:
    text = " ".join(verdict_lines(_detail("pass", "skipped", "missing", "fail")))
    assert "1 trial skipped (budget)" in text
    assert "1 trial not in this log" in text


def test_the_verdict_fits_80_columns() -> None:
    lines = verdict_lines(_detail("pass", "skipped", "skipped", "missing"), 80)
    assert all(len(line) <= 80 for line in lines)
    assert "gating aggregate 0.250 < passScore 0.8" in lines[0]
