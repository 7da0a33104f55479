"""``wopeval import-otlp`` of input that holds no spans, or is not OTLP at all: exit 2 with the
reason (it used to grade an empty file as a failing run, exit 1, and call plain text corrupt
protobuf), and a JSON error that says where in its line it is."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.service.test_otlp_import import _indexed_traces, _suite, _task
from wopeval.cli.app import app


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"", "no spans: the input is empty"),
        (b"\n \n\t\n", "no spans: the input is empty"),
        (b"{}\n", "no spans in it (no resourceSpans)"),
        (b'{"resourceSpans": []}\n', "no spans in it (no resourceSpans)"),
        (
            b"hello world\n",
            "neither OTLP/JSON (its first line does not start with { or [) nor "
            "OTLP protobuf: 'hello world'",
        ),
        (
            b'{"resourceSpans": []}\n{"resourceSpans": [{"x": "cut',
            "line 2: not JSON (Unterminated string starting at, column 26)",
        ),
    ],
)
def test_input_without_spans_or_not_otlp_is_bad_input(
    tmp_path: Path, content: bytes, said: str
) -> None:
    traces = tmp_path / "traces"
    traces.write_bytes(content)
    suite = _suite(tmp_path, _task("t", "ignore"))
    result = CliRunner().invoke(app, ["import-otlp", str(traces), "--suite", str(suite)])
    assert result.exit_code == 2, result.output
    assert said in " ".join(result.output.split())
    assert "Traceback" not in result.output


def test_a_suite_with_none_of_the_traces_tasks_is_bad_input(tmp_path: Path) -> None:
    """The wrong ``--suite`` is exit 2 naming the traces' tasks (it graded every task of that
    suite as not run: a failing result, exit 1, that blamed the agent)."""
    traces = tmp_path / "traces.jsonl"
    _indexed_traces(traces, [0, 1])  # of task 't'
    wrong = _suite(tmp_path, _task("other", "ignore"))
    result = CliRunner().invoke(app, ["import-otlp", str(traces), "--suite", str(wrong)])
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert "--suite: no trace is of a task of" in said
    assert "the traces name 't'" in said
    partly = _suite(tmp_path, _task("t", "ignore"), _task("other", "ignore"))
    result = CliRunner().invoke(app, ["import-otlp", str(traces), "--suite", str(partly)])
    assert result.exit_code in (0, 1), result.output  # some traces are of it: graded
