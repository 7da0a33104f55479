"""Host config numbers are finite: ``.inf``/``.nan`` are refused naming the member, so discovery
(which advertises ``maxCostUsdPerSuite``) can always be rendered as JSON."""

from __future__ import annotations

from pathlib import Path

import pytest

from wopeval.host.config import ConfigError, load_config


@pytest.mark.parametrize(
    ("yaml_text", "member"),
    [
        ("evalSuite: {maxCostUsdPerSuite: .inf}", "evalSuite.maxCostUsdPerSuite"),
        ("evalSuite: {maxCostUsdPerSuite: .nan}", "evalSuite.maxCostUsdPerSuite"),
        ("trialTimeoutSeconds: .inf", "trialTimeoutSeconds"),
    ],
)
def test_config_refuses_non_finite_numbers(tmp_path: Path, yaml_text: str, member: str) -> None:
    path = tmp_path / "host.yaml"
    path.write_text(yaml_text + "\n")
    with pytest.raises(ConfigError, match=member):
        load_config(path)


def test_config_keeps_finite_numbers(tmp_path: Path) -> None:
    path = tmp_path / "host.yaml"
    path.write_text("evalSuite: {maxCostUsdPerSuite: 1e300}\ntrialTimeoutSeconds: 0.5\n")
    config = load_config(path)
    assert config.evalSuite.maxCostUsdPerSuite == 1e300
    assert config.trialTimeoutSeconds == 0.5
