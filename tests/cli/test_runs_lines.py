"""``wopeval runs``: each run on a line that fits the terminal (the suite goes on the next line
when it would not), and a shard or merged run says its group."""

from __future__ import annotations

from tests.events.helpers import run_record
from wopeval.cli.render_runs import runs_lines


def test_runs_fit_80_columns_and_name_their_group() -> None:
    plain = run_record(suite_id="core.example.evals.a-long-suite-name", suite_version="1.0.0")
    shard = run_record(request={"shard": {"group": "job-7", "index": 1, "count": 3}})
    merged = run_record(request={"merged": {"group": "job-7"}})
    lines = runs_lines([plain, shard, merged], 80)
    assert all(len(line) <= 80 for line in lines), lines
    text = "\n".join(lines)
    assert "core.example.evals.a-long-suite-name@1.0.0" in text
    assert "shard 1/3 of job-7" in text
    assert "merged job-7" in text
    assert all(run.run_id in text for run in (plain, shard, merged))
    wide = runs_lines([plain], 200)
    assert len(wide) == 2  # the header and one line: room for the suite on it
    assert wide[1].endswith("a-long-suite-name@1.0.0")
