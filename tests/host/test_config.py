"""Host configuration files: YAML or JSON, closed, with defaults that advertise what is built."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wopeval.host.config import (
    DEV_TENANT,
    ConfigError,
    default_config,
    load_config,
    parse_config,
)


def test_config_yaml_file_with_relative_suite_directory(tmp_path: Path) -> None:
    (tmp_path / "suites").mkdir()
    file = tmp_path / "host.yaml"
    file.write_text(
        "apiKeys:\n"
        "  - {key: s3cret-key-acme-1, tenant: acme, subjectId: ci-bot, kind: workload}\n"
        "suiteDirectories: [suites]\n"
        "evalSuite:\n"
        "  trials: false\n"
        "  maxTasksPerSuite: 50\n"
        "concurrency: 2\n",
        encoding="utf-8",
    )
    config = load_config(file)
    assert config.suiteDirectories == [tmp_path.resolve() / "suites"]
    assert config.evalSuite.trials is None
    assert config.evalSuite.maxTasksPerSuite == 50
    assert config.apiKeys[0].subjectId == "ci-bot"
    assert config.concurrency == 2


def test_config_json_file(tmp_path: Path) -> None:
    file = tmp_path / "host.json"
    file.write_text(json.dumps({"evalSuite": {"trajectory": False}, "store": "x.db"}))
    config = load_config(file)
    assert config.evalSuite.trajectory is False
    assert config.store == "x.db"


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ({"apiKey": "x"}, "apiKey"),
        ({"evalSuite": {"modes": ["adversarial"]}}, "not implemented"),
        (
            {"evalSuite": {"modes": ["golden", "regression"], "baselineSelection": False}},
            "baselineSelection",
        ),
        ({"evalSuite": {"trials": {"maxTrials": 0}}}, "maxTrials"),
        ({"apiKeys": [{"key": "has space", "tenant": "a"}]}, "key"),
        ({"apiKeys": [{"key": "", "tenant": "a"}]}, "key"),
        ({"apiKeys": [{"key": "long-enough-key-1", "tenant": "no/slash"}]}, "tenant"),
        ({"apiKeys": [{"key": "long-enough-key-1", "tenant": "a"}] * 2}, "twice"),
        ({"familyUntil": "someday"}, "familyUntil"),
        ({"evalSuite": {"extensions": ["x-wopeval-nope"]}}, "extensions.*not a wopeval extension"),
        (
            {"evalSuite": {"extensions": ["x-wopeval-adaptive"] * 2}},
            "extensions.*must be unique",
        ),
    ],
)
def test_config_errors_name_the_member(data: object, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        parse_config(data)


def test_config_unreadable_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "absent.yaml")
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(ConfigError, match="cannot parse"):
        load_config(bad)


def test_default_config_one_dev_key_all_implemented_facets() -> None:
    config = default_config()
    assert len(config.apiKeys) == 1
    assert config.apiKeys[0].tenant == DEV_TENANT
    assert config.apiKeys[0].key.startswith("wopeval-dev-")
    assert config.builtinSuites is True
    assert config.advertised_modes() == ["golden", "live-shadow", "regression"]
    facets = config.evalSuite
    assert facets.trajectory
    assert facets.fixtureMatching
    assert facets.trials is not None
    assert facets.regressionVerdict
    assert facets.baselineSelection
    assert default_config("given-key-123456").apiKeys[0].key == "given-key-123456"


def test_config_judge_adds_rubric_and_with_key_adds_a_dev_key() -> None:
    config = parse_config({"judge": "tests.host.agents:fixed_judge"})
    assert config.advertised_modes() == ["golden", "rubric", "live-shadow", "regression"]
    added = config.with_key("another-key-1234")
    assert [(k.key, k.tenant) for k in added.apiKeys] == [("another-key-1234", DEV_TENANT)]


def test_config_weak_keys_are_refused_at_start_up() -> None:
    for weak, reason in (("dev-key", "at least 16"), ("k" * 20, "distinct")):
        with pytest.raises(ConfigError, match=f"apiKeys.0.key: .*{reason}"):
            parse_config({"apiKeys": [{"key": weak, "tenant": "local"}]})
