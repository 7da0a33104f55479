"""``wopeval import-otlp`` shows its progress on a terminal (stderr), and only there."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from tests.service.test_otlp_import import _indexed_traces, _suite, _task
from wopeval.cli.app import app


def _on_a_terminal(*args: str) -> tuple[int, str, str]:
    """Run wopeval with stderr on a pseudo-terminal; its exit code, stdout and stderr."""
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "80", "TERM": "xterm"}
    child = subprocess.Popen(
        [sys.executable, "-m", "wopeval", *args], stdout=subprocess.PIPE, stderr=slave, env=env
    )
    os.close(slave)
    seen = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        seen.append(data)
    os.close(master)
    out, _ = child.communicate(timeout=60)
    return child.returncode, out.decode(), b"".join(seen).decode(errors="replace")


def test_import_otlp_shows_spans_read_and_trials_graded_on_a_terminal(tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"
    _indexed_traces(traces, list(range(3)))
    suite = _suite(tmp_path, _task("t", "ignore"))
    code, out, err = _on_a_terminal("import-otlp", str(traces), "--suite", str(suite))
    assert code in (0, 1), err
    assert "spans read" in err
    assert "trials graded" in err
    assert "3/3" in err  # the bar's last state, before it is cleared
    assert "core.test.evals.otlp" in out  # the summary on stdout, after the bar
    piped = CliRunner().invoke(app, ["import-otlp", str(traces), "--suite", str(suite)])
    assert "spans read" not in piped.output  # not a terminal: no bar
    code, out, err = _on_a_terminal("import-otlp", str(traces), "--suite", str(suite), "--json")
    assert "trials graded" not in err  # --json: machine output, no bar


def test_an_events_out_write_error_is_printed_after_the_bar_is_cleared(tmp_path: Path) -> None:
    """The bar is cleared before the message, so nothing after it moves the cursor back over
    the message or redraws the bar (a full disk mid-grading: ``/dev/full``, whose first write
    fails once the buffer fills)."""
    traces = tmp_path / "traces.jsonl"
    _indexed_traces(traces, list(range(400)))  # more converted log than a write buffer holds
    suite = _suite(tmp_path, _task("t", "ignore"))
    code, _, err = _on_a_terminal(
        "import-otlp", str(traces), "--suite", str(suite), "--events-out", "/dev/full"
    )
    assert code == 2, err
    assert "spans read" in err  # there was a bar
    message = err.rindex("cannot write /dev/full")
    after = err[message:]
    assert "\x1b[1A" not in after, repr(after)  # cursor up
    assert "\x1b[2K" not in after, repr(after)  # erase line
    assert "trials graded" not in after
