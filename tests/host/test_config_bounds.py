"""A host config file is read within bounds: an integer of thousands of digits (which Python
refuses to convert) or a document nested past the parser's depth is a ConfigError naming the
key, and ``wopeval serve`` exits 2 with one message, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from wopeval.cli.app import app
from wopeval.host.config import ConfigError, load_config

HUGE = "9" * 5000


@pytest.mark.parametrize(
    ("name", "text", "named"),
    [
        ("host.yaml", f"trialLimits: {{maxToolCalls: {HUGE}}}\n", "trialLimits.maxToolCalls"),
        ("host.yml", f"concurrency: -{HUGE}\n", "concurrency"),
        ("host.yaml", "maxBodyBytes: 0x" + "f_" * 2000 + "\n", "maxBodyBytes"),
        ("host.json", f'{{"trialLimits": {{"maxOutputBytes": {HUGE}}}}}',
         "trialLimits.maxOutputBytes"),
        ("host.json", f'{{"limits": {{"streamsPerTenant": -{HUGE}}}}}', "limits.streamsPerTenant"),
    ],
)  # fmt: skip
def test_a_huge_integer_is_refused_naming_its_key(
    tmp_path: Path, name: str, text: str, named: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    assert str(refused.value).startswith(f"{named}: an integer of ")
    result = CliRunner().invoke(app, ["serve", "--config", str(path), "--port", "0",
                                      "--store", str(tmp_path / "s.db")])  # fmt: skip
    assert result.exit_code == 2
    assert named in result.output
    assert "Traceback" not in result.output
    assert not isinstance(result.exception, ValueError)


@pytest.mark.parametrize("name", ["host.yaml", "host.json"])
def test_a_document_nested_past_the_parser_is_refused(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text('{"builtinSuites": ' + "[" * 500 + "]" * 500 + "}")
    with pytest.raises(ConfigError, match=r"nested too deeply|nests deeper"):
        load_config(path)


def test_ordinary_integers_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "host.yaml"
    path.write_text("trialLimits: {maxToolCalls: 1_000, maxOutputBytes: 0x100}\nconcurrency: 3\n")
    config = load_config(path)
    assert config.trialLimits.maxToolCalls == 1000
    assert config.trialLimits.maxOutputBytes == 256
    assert config.concurrency == 3
