"""``wopeval import-otlp`` of input that holds no spans, or is not OTLP at all: exit 2 with the
reason (it used to grade an empty file as a failing run, exit 1, and call plain text corrupt
protobuf), and a JSON error that says where in its line it is."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.service.test_otlp_import import _suite, _task
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
