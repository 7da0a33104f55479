"""Rules the official OpenWOP v2 conformance scenarios check, each refused as they require.

``v2-configurable-closed`` (runs.md §Run options), ``v2-eval-mode-unadvertised-refused``
(runs.md §Refusals) and ``v2-bound-id-path-projection`` (identity.md §5, RFC 0184 §A.1).

A refusal leaves nothing behind: the refusals are asked of one host per store for the module
(:func:`host`).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.host.helpers import (
    ON_SHARED_HOST,
    PLAIN_REF,
    Host,
    eval_body,
    host_config,
    module_host,
    running_host,
    segment,
)
from tests.host.test_create_refusals import refused
from wopeval.host.discovery import capabilities
from wopeval.host.suites import SuiteCatalog
from wopeval.host.workflows import WorkflowCatalog

FULL = {
    "version": 1,
    "run": {"recursionLimit": 5, "runTimeoutMs": 1000, "maxLoopIterations": 3,
            "escalationThreshold": 0},
    "ai": {"provider": "p", "model": "m", "temperature": 0.5, "maxTokens": 10,
           "credentialRef": "c", "promptOverrides": {"system.greeting": "hi"},
           "mockProvider": {"any.thing": [1]}, "reasoningVerbosity": "summary", "maxRefusals": 0},
    "distillation": {"tokenBudget": 100},
    "budget": {"maxTokens": 1, "maxCostUsd": 0, "maxToolCalls": 1, "maxRetries": 0,
               "modelAllow": ["claude-*"], "modelDeny": [], "thresholdPercent": 80,
               "onExhaustion": "interrupt"},
    "extensions": {"acme-labs": {"any.key": {"open": True}}},
}  # fmt: skip


host = module_host("host")


def _with(section: str, member: str, value: Any) -> dict[str, Any]:
    return {"version": 1, section: {member: value}}


@pytest.mark.parametrize(
    ("configurable", "field"),
    [
        (_with("ai", "temprature", 0.5), "configurable.ai.temprature"),
        (_with("run", "recursionlimit", 5), "configurable.run.recursionlimit"),
        (_with("budget", "maxCost", 1), "configurable.budget.maxCost"),
        (_with("distillation", "tokens", 1), "configurable.distillation.tokens"),
        (_with("ai", "model.name", "m"), 'configurable.ai["model.name"]'),
        ({"version": 1, "ai.temperature": 0.5}, 'configurable["ai.temperature"]'),
        ({"version": 1, "extensions": {"acme.labs": {}}}, 'configurable.extensions["acme.labs"]'),
        ({"version": 1, "extensions": {"acme": 1}}, "configurable.extensions.acme"),
        (_with("ai", "temperature", "hot"), "configurable.ai.temperature"),
        (_with("ai", "temperature", 2.5), "configurable.ai.temperature"),
        (_with("ai", "temperature", None), "configurable.ai.temperature"),
        (_with("ai", "temperature", True), "configurable.ai.temperature"),
        (_with("run", "recursionLimit", 0), "configurable.run.recursionLimit"),
        (_with("run", "recursionLimit", 1.5), "configurable.run.recursionLimit"),
        (_with("run", "runTimeoutMs", "1000"), "configurable.run.runTimeoutMs"),
        (_with("ai", "reasoningVerbosity", "loud"), "configurable.ai.reasoningVerbosity"),
        (_with("ai", "promptOverrides", {"a": 1}), "configurable.ai.promptOverrides.a"),
        (_with("budget", "modelAllow", ["a", "a"]), "configurable.budget.modelAllow"),
        (_with("budget", "onExhaustion", "explode"), "configurable.budget.onExhaustion"),
    ],
)
@ON_SHARED_HOST
async def test_configurable_is_closed_and_typed_at_every_level(
    host: Host, configurable: dict[str, Any], field: str
) -> None:
    response = await host.create(eval_body(PLAIN_REF, configurable=configurable))
    refused(response, 400, "validation_error", field)


async def test_a_configurable_using_every_reserved_member_is_kept(store_url: str) -> None:
    async with running_host(store_url) as host:
        response = await host.create(eval_body(PLAIN_REF, configurable=FULL))
        assert response.status_code == 201, response.text
        run_id = response.json()["runId"]
        snapshot = (await host.get(f"/runs/{segment(run_id)}")).json()
        await host.wait_terminal(run_id)
    assert snapshot["configurable"] == FULL


async def test_eval_mode_without_eval_is_capability_not_provided(store_url: str) -> None:
    config = host_config(eval_suite={"enabled": False})
    async with running_host(store_url, config) as host:
        response = await host.create(eval_body(PLAIN_REF))
    assert refused(response, 422, "capability_not_provided") == {"capability": "agents.evalSuite"}


def test_discovery_without_eval_lists_no_eval_fixture() -> None:
    on = host_config(builtinSuites=True, suiteDirectories=[])
    off = host_config(eval_suite={"enabled": False}, builtinSuites=True, suiteDirectories=[])
    seeded = WorkflowCatalog.seeded(True).ids()
    listed = capabilities(on, SuiteCatalog([], builtins=True), seeded)["fixtures"]
    assert any(name.startswith("conformance-eval-") for name in listed)
    kept = capabilities(off, SuiteCatalog([], builtins=True), seeded)["fixtures"]
    assert kept == seeded


MALFORMED = [
    "~",
    "acme~",
    "acme~2",
    "acme~zz2Fr0123456789abcdef",
    "acme~2Fr0123456789abcdef~",
    "acme~2Fr~zz0123456789abcdef",
    "r0123456789abcdef0123",
    "acme~7E2Fr0123456789abcdef",
    "acme~2Fshort",
    "acme~FF~2Fr0123456789abcdef",
]


@pytest.mark.parametrize("path", ["", "/events", "/events/poll", "/eval-summary"])
@pytest.mark.parametrize("bad", MALFORMED)
@ON_SHARED_HOST
async def test_a_malformed_run_id_in_a_path_is_a_validation_error(
    host: Host, bad: str, path: str
) -> None:
    response = await host.get(f"/runs/{bad}{path}")
    refused(response, 400, "validation_error", "runId")


async def test_a_well_formed_unknown_or_foreign_run_id_is_still_not_found(store_url: str) -> None:
    async with running_host(store_url) as host:
        run_id = await host.run_id(eval_body(PLAIN_REF))
        await host.wait_terminal(run_id)
        mine = await host.get(f"/runs/{segment(run_id)}")
        missing = await host.get("/runs/acme~2Fr0123456789abcdef")
        foreign = await host.get(f"/runs/{segment(run_id)}", key="key-other-0123456789")
        cancel = await host.client.post(
            "/runs/~/cancel", headers={"Authorization": "Bearer key-acme-0123456789"}
        )
    assert mine.status_code == 200
    refused(missing, 404, "not_found")
    refused(foreign, 404, "not_found")
    refused(cancel, 400, "validation_error", "runId")
