"""docs/host.md's configuration example is a valid config, and every facet switch it shows is the
default (the example doubles as the list of defaults, so it must not drift from the code)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from wopeval.host.config import HostConfig, parse_config

DOC = (Path(__file__).resolve().parents[2] / "docs" / "host.md").read_text(encoding="utf-8")
SWITCHES = ("enabled", "trajectory", "fixtureMatching", "regressionVerdict", "baselineSelection",
            "recordedFixtures")  # fmt: skip


def _example() -> dict[str, object]:
    blocks = re.findall(r"```yaml\n(.*?)```", DOC, flags=re.S)
    assert len(blocks) == 1
    data = yaml.safe_load(blocks[0])
    assert isinstance(data, dict)
    return data


def test_the_config_example_parses(tmp_path: Path) -> None:
    # Relative suite directories resolve against the config's folder (nothing is read there).
    config = parse_config(_example(), tmp_path)
    assert config.suiteDirectories == [tmp_path / "suites"]


def test_the_config_example_shows_the_default_facet_switches() -> None:
    shown = _example()["evalSuite"]
    assert isinstance(shown, dict)
    defaults = HostConfig().evalSuite
    for switch in SWITCHES:
        assert shown[switch] == getattr(defaults, switch), switch


def test_the_default_modes_the_doc_states_are_the_default() -> None:
    """The comment on ``modes`` names the default modes in the order the host advertises them."""
    assert "# default: golden, live-shadow, regression (+ rubric" in DOC
    assert HostConfig().advertised_modes() == ["golden", "live-shadow", "regression"]
    with_judge = HostConfig(judge="mypkg.judges:rubric_judge").advertised_modes()
    assert set(with_judge) == {"golden", "rubric", "live-shadow", "regression"}
