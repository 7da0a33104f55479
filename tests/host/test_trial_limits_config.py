"""The host config's ``trialLimits``: the per-trial caps of every run the host creates. Each set
low fails (or clips) the trials it bounds with a reason naming the cap and is stored with the
run; left out, ``TrialLimits``' defaults hold; a bad value is refused naming its key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.host.helpers import DEMO_REF, PLAIN_REF, SUITES, eval_body, host_config, running_host
from wopeval.events.tables import dumps_json
from wopeval.host.config import ConfigError, parse_config
from wopeval.wire.request import TrialLimits
from wopeval.wire.vocab import TRIAL_FAILED

LONG = "z" * 5000
LONG_REF = "suite://core.wopeval.evals.long-answer"


def _long_answer_suite(folder: Path) -> Path:
    """The plainest suite (one task, no trials, no fixtures) whose answer is 5,000 characters."""
    folder.mkdir(parents=True)
    task = {
        "taskId": "only",
        "input": {"output": LONG},
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "done"}},
    }
    (folder / "long.json").write_text(json.dumps({"suiteId": "core.wopeval.evals.long-answer",
                                                  "version": "1.0.0", "modes": ["golden"],
                                                  "tasks": [task]}))  # fmt: skip
    return folder


async def _ran(
    tmp_path: Path, ref: str, **overrides: Any
) -> tuple[dict[str, Any], dict[tuple[str, int], str]]:
    """Run ``ref`` on a host configured with ``overrides``: its stored request, and each failed
    trial's stored reason as JSON text."""
    dirs = [str(SUITES), str(_long_answer_suite(tmp_path / "long"))]
    config = host_config(suiteDirectories=dirs, **overrides)
    async with running_host(str(tmp_path / "s.db"), config) as host:
        run_id = await host.run_id(eval_body(ref))
        await host.wait_terminal(run_id)
        store = host.state.store
        record = await store.get_run(run_id)
        assert record is not None
        assert record.status == "completed"
        reasons = {(e.payload["taskId"], e.payload["trialIndex"]): dumps_json(e.payload)
                   for e in await store.events(run_id) if e.type == TRIAL_FAILED}  # fmt: skip
        return record.request, reasons


@pytest.mark.parametrize(
    ("ref", "caps", "task", "named"),
    [
        # the refund task calls two tools; its lookup's fixture response is 15 bytes of JSON
        (DEMO_REF, {"maxToolCalls": 1}, "refund-approved", "maxToolCalls = 1"),
        (DEMO_REF, {"maxToolResultBytes": 5}, "refund-approved",
         "over the trial limit maxToolResultBytes = 5"),
        # "hello" is 7 bytes of JSON
        (PLAIN_REF, {"maxOutputBytes": 5}, "echo", "over the trial limit maxOutputBytes = 5"),
    ],
)  # fmt: skip
async def test_a_configured_cap_fails_the_trials_past_it_naming_the_cap(
    tmp_path: Path, ref: str, caps: dict[str, int], task: str, named: str
) -> None:
    request, reasons = await _ran(tmp_path, ref, trialLimits=caps)
    assert request["limits"] == caps
    mine = [text for (task_id, _), text in reasons.items() if task_id == task]
    assert mine, reasons
    assert all(named in text for text in mine), mine


async def test_a_configured_reason_cap_clips_the_reason(tmp_path: Path) -> None:
    request, reasons = await _ran(tmp_path, LONG_REF, trialLimits={"maxReasonChars": 256})
    assert request["limits"] == {"maxReasonChars": 256}
    (text,) = reasons.values()
    assert len(text) <= 256
    assert "[clipped]" in text
    assert json.loads(text)["kind"] == "output-mismatch"


async def test_without_trial_limits_a_host_run_has_the_defaults(tmp_path: Path) -> None:
    assert parse_config({}).trialLimits == TrialLimits()
    request, reasons = await _ran(tmp_path, LONG_REF)
    assert "limits" not in request  # a run's defaults are left out of its stored request
    (text,) = reasons.values()
    assert LONG in text  # quoted whole under the default reason cap
    _, demo = await _ran(tmp_path / "demo", DEMO_REF)
    assert not any("trial limit" in text or "maxToolCalls" in text for text in demo.values())


@pytest.mark.parametrize(
    ("caps", "named"),
    [
        ({"maxToolCalls": 0}, "trialLimits.maxToolCalls"),
        ({"maxOutputBytes": -1}, "trialLimits.maxOutputBytes"),
        ({"maxToolResultBytes": 1.5}, "trialLimits.maxToolResultBytes"),
        ({"maxReasonChars": 255}, "trialLimits.maxReasonChars"),
        ({"maxOutputBytes": "lots"}, "trialLimits.maxOutputBytes"),
        ({"maxToolCalls": True}, "maxToolCalls: true is not a number"),
        ({"maxToolCall": 5}, "trialLimits.maxToolCall"),  # a typo is not a cap left out
        (5, "trialLimits"),
    ],
)
def test_a_bad_trial_limit_is_refused_naming_its_key(caps: object, named: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_config({"trialLimits": caps})
    assert named in str(refused.value)
