"""Run settings are declared once (wire.request.RunSettingsBase): RunSettings and the stored
RunRequest read and write every setting by that declaration, under the stored JSON keys."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from wopeval.engine.run import RunSettings
from wopeval.wire.request import RetryPolicy, RunRequest, RunSettingsBase, TrialLimits

AGENT = "core.acme.agent"
# A value other than the default for every setting, by its Python name.
CHANGED: dict[str, Any] = {
    "concurrency": 3,
    "trial_timeout_s": 12.5,
    "host_max_cost_usd": 2.0,
    "modes": ["golden", "regression"],
    "baseline_run_id": "local/r" + "1" * 26,
    "fixture_runs": {"t": "local/r" + "2" * 26},
    "regression_method": "mcnemar",
    "alpha": 0.01,
    "regression_verdict": False,
    "owner": {"principalId": "p-1"},
    "tags": ["nightly"],
    "metadata": {"git": "abc"},
    "executor": "ray",
    "gate": "every-task",
    "limits": TrialLimits(maxToolCalls=5),
    "ci_level": 0.9,
    "retry_infrastructure": RetryPolicy(maxRetries=2, budget=5),
}
# The stored JSON key of each setting: runs stored before now must read back unchanged.
STORED_KEYS = {
    "concurrency": "concurrency",
    "trial_timeout_s": "trialTimeoutS",
    "host_max_cost_usd": "hostMaxCostUsd",
    "modes": "evalModes",
    "baseline_run_id": "baselineRunId",
    "fixture_runs": "fixtureRuns",
    "regression_method": "regressionMethod",
    "alpha": "alpha",
    "regression_verdict": "regressionVerdict",
    "owner": "owner",
    "tags": "tags",
    "metadata": "metadata",
    "executor": "executor",
    "gate": "gate",
    "limits": "limits",
    "ci_level": "ciLevel",
    "retry_infrastructure": "retryInfrastructure",
}


def _json(value: Any) -> Any:
    """A setting as stored: a nested model as its members that differ from their defaults."""
    return value.model_dump(exclude_defaults=True) if isinstance(value, BaseModel) else value


def test_every_setting_is_tested_here() -> None:
    assert set(RunSettingsBase.model_fields) == set(CHANGED) == set(STORED_KEYS)
    assert set(RunSettings.model_fields) == set(RunSettingsBase.model_fields)


@pytest.mark.parametrize("name", sorted(CHANGED))
def test_each_setting_is_stored_under_its_key_and_read_back(name: str) -> None:
    settings = RunSettings(**{name: CHANGED[name]})
    stored = settings.to_request(AGENT).to_stored()
    assert stored[STORED_KEYS[name]] == _json(CHANGED[name])
    request = RunRequest.model_validate(stored)
    assert _json(getattr(request, name)) == _json(CHANGED[name])
    assert RunSettings.of(request) == settings


def test_the_plainest_settings_store_only_what_runs_always_stored() -> None:
    stored = RunSettings().to_request(AGENT).to_stored()
    assert stored == {"agentId": AGENT, "concurrency": 8, "trialTimeoutS": 300.0}
    in_full = RunSettings(**CHANGED).to_request(AGENT).to_stored()
    assert list(in_full) == ["agentId", *STORED_KEYS.values()]  # the order runs are stored in


def test_a_stored_request_is_read_by_its_stored_keys_only_where_they_differ() -> None:
    request = RunRequest.model_validate({"agentId": AGENT, "trialTimeoutS": 5, "evalModes": []})
    assert (request.trial_timeout_s, request.modes) == (5.0, [])
    with pytest.raises(ValidationError, match="trialTimeout"):
        RunRequest.model_validate({"agentId": AGENT, "trialTimeout": 5})


def test_sequences_and_no_fixture_runs_are_held_as_stored() -> None:
    settings = RunSettings(tags=("a", "b"), modes=("golden",), fixture_runs={})
    assert (settings.tags, settings.modes, settings.fixture_runs) == (["a", "b"], ["golden"], None)
    assert "fixtureRuns" not in settings.to_request(AGENT).to_stored()


@pytest.mark.parametrize(
    ("field", "value"),
    [("concurrency", 0), ("trial_timeout_s", 0), ("alpha", 1.5), ("executor", "k8s")],
)
def test_a_bad_setting_is_refused_naming_it(field: str, value: Any) -> None:
    with pytest.raises(ValidationError, match=f"^1 validation error for RunSettings\n{field}\n"):
        RunSettings(**{field: value})
    key = STORED_KEYS[field]
    with pytest.raises(ValidationError, match=f"^1 validation error for RunRequest\n{key}\n"):
        RunRequest.model_validate({"agentId": AGENT, key: value})
