"""``POST /runs`` refusals: status, ``error`` code, and the named field, for every rule.

RFC 0244 §G: a suite using a facet the host does not advertise is ``400 validation_error``
naming the field, never graded as if the field were absent.

A refusal leaves nothing behind: refusals by a host of the default config, and by one without
the regression mode, are asked of one host per store for the module (:func:`host`,
:func:`no_regression_host`).
"""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import httpx
import pytest

from tests.host.helpers import (
    KEY_B,
    ON_SHARED_HOST,
    PLAIN_REF,
    SCRIPTED,
    SLOW_AGENT,
    SLOW_REF,
    Host,
    auth,
    eval_body,
    host_config,
    module_host,
    running_host,
    segment,
)
from tests.host.wire_schemas import validate_error


def refused(
    response: httpx.Response, status: int, code: str, field: str | None = None
) -> dict[str, Any]:
    """Assert a refusal envelope; returns its ``details``."""
    assert response.status_code == status, response.text
    body = response.json()
    validate_error(body)
    assert body["error"] == code
    details: dict[str, Any] = body.get("details") or {}
    if field is not None:
        assert details.get("field") == field, body
        assert field in body["message"]
    assert response.headers["openwop-version"] == "2.0"
    return details


host = module_host("host")


no_regression_host = module_host("no_regression_host", host_config(eval_suite={
    "modes": ["golden", "live-shadow"], "baselineSelection": False, "regressionVerdict": False,
}))  # fmt: skip


# --- RFC 0244 §G: facets switched off are refused, naming the field -----------------------


@pytest.mark.parametrize(
    ("facets", "field"),
    [
        ({"trajectory": False}, "tasks[0].expected.trajectory"),
        ({"trials": False}, "trials.count"),
        ({"trials": {"maxTrials": 1}}, "trials.count"),
        ({"fixtureMatching": False}, "tasks[0].fixtures.toolResponses[1].args"),
    ],
)
async def test_0244_G_unadvertised_facet_refused_naming_field(
    store_url: str, facets: dict[str, Any], field: str
) -> None:
    async with running_host(store_url, host_config(eval_suite=facets)) as host:
        response = await host.create()
        discovery = (await host.client.get("/.well-known/openwop")).json()
    details = refused(response, 400, "validation_error", field)
    assert any(e["field"] == field for e in details["errors"])
    advertised = discovery["agents"]["evalSuite"]
    for name, value in facets.items():
        assert advertised.get(name) == (value or None)


async def test_0244_G_trials_above_max_trials_names_the_count(store_url: str) -> None:
    config = host_config(eval_suite={"trials": {"maxTrials": 1}})
    async with running_host(store_url, config) as host:
        response = await host.create()
    refused(response, 400, "validation_error", "trials.count")
    assert "exceeds maxTrials 1" in response.json()["message"]


async def test_0244_G_plain_suite_runs_with_every_facet_off(store_url: str) -> None:
    facets = {"trajectory": False, "trials": False, "fixtureMatching": False}
    async with running_host(store_url, host_config(eval_suite=facets)) as host:
        response = await host.create(eval_body(PLAIN_REF, evalModes=["golden"]))
        assert response.status_code == 201, response.text
        final = await host.wait_terminal(response.json()["runId"])
    assert final["status"] == "completed"


ADAPTIVE_REF = "suite://core.wopeval.evals.adaptive"


async def test_0244_G_unadvertised_wopeval_extension_refused_naming_field(store_url: str) -> None:
    config = host_config(eval_suite={"extensions": []})
    async with running_host(store_url, config) as host:
        response = await host.create(eval_body(ADAPTIVE_REF, evalModes=["golden"]))
        discovery = (await host.client.get("/.well-known/openwop")).json()
    details = refused(response, 400, "validation_error", "tasks[0].x-wopeval-adaptive")
    assert "x-wopeval-adaptive is not advertised by this host" in response.json()["message"]
    assert [e["field"] for e in details["errors"]] == ["tasks[0].x-wopeval-adaptive"]
    assert "x-wopeval-extensions" not in discovery["agents"]["evalSuite"]


async def test_0244_G_advertised_wopeval_extension_is_accepted(store_url: str) -> None:
    async with running_host(store_url) as host:
        response = await host.create(eval_body(ADAPTIVE_REF, evalModes=["golden"]))
        assert response.status_code == 201, response.text
        final = await host.wait_terminal(response.json()["runId"])
    assert final["status"] == "completed"


async def test_adaptive_refused_on_a_host_with_live_tools_naming_the_field(store_url: str) -> None:
    config = host_config(tools={"lookup": "tests.engine.test_adaptive_trials:live_lookup"})
    async with running_host(store_url, config) as host:
        response = await host.create(eval_body(ADAPTIVE_REF, evalModes=["golden"]))
    refused(response, 400, "validation_error", "tasks[0].x-wopeval-adaptive")
    assert "could reach a live tool" in response.json()["message"]


# --- capability, modes, tasks, judge -------------------------------------------------------


async def test_0081_eval_not_advertised_is_capability_not_provided(store_url: str) -> None:
    async with running_host(store_url, host_config(eval_suite={"enabled": False})) as host:
        response = await host.create()
        discovery = (await host.client.get("/.well-known/openwop")).json()
    details = refused(response, 422, "capability_not_provided")
    assert details == {"capability": "agents.evalSuite"}
    assert "agents" not in discovery


@pytest.mark.parametrize(
    ("body", "field", "needle"),
    [
        (eval_body(PLAIN_REF), "modes", "'regression' is not advertised"),
        (eval_body(PLAIN_REF, evalModes=["rubric"]), "evalModes", "not declared by the suite"),
        (eval_body(PLAIN_REF, evalModes=[]), "evalModes", "non-empty"),
        (eval_body(PLAIN_REF, evalModes="golden"), "evalModes", "non-empty"),
        (eval_body(PLAIN_REF, evalModes=["golden", "golden"]), "evalModes[1]", "twice"),
        (eval_body(PLAIN_REF, evalModes=["fuzzy"]), "evalModes[0]", "not one of"),
    ],
)
@ON_SHARED_HOST
async def test_0081_D_modes_outside_suite_or_host_refused(
    no_regression_host: Host, body: dict[str, Any], field: str, needle: str
) -> None:
    response = await no_regression_host.create(body)
    refused(response, 400, "validation_error", field)
    assert needle in response.json()["message"]


async def test_0251_B_eval_modes_subset_runs_and_is_echoed(store_url: str) -> None:
    async with running_host(store_url) as host:
        run_id = await host.run_id(eval_body(PLAIN_REF, evalModes=["golden"]))
        await host.wait_terminal(run_id)
        events = await host.state.store.events(run_id)
    started = next(e for e in events if e.type == "eval.started")
    assert started.payload["modes"] == ["golden"]


async def test_0081_host_mode_switched_off_refuses_suite_mode(store_url: str) -> None:
    async with running_host(store_url, host_config(eval_suite={"modes": ["golden"]})) as host:
        response = await host.create()  # host-demo declares golden and live-shadow
    refused(response, 400, "validation_error", "modes")


async def test_0081_too_many_tasks_refused(store_url: str) -> None:
    async with running_host(store_url, host_config(eval_suite={"maxTasksPerSuite": 2})) as host:
        response = await host.create()
    refused(response, 400, "validation_error", "tasks")
    assert "3 tasks exceed maxTasksPerSuite 2" in response.json()["message"]


async def test_0081_rubric_suite_without_judge_refused_naming_task(store_url: str) -> None:
    config = host_config(eval_suite={"modes": ["golden", "rubric"]})
    async with running_host(store_url, config) as host:
        response = await host.create(eval_body("suite://core.wopeval.evals.rubric-demo"))
    refused(response, 400, "validation_error", "tasks[1].expected.kind")


async def test_0081_rubric_suite_with_configured_judge_runs(store_url: str) -> None:
    config = host_config(judge="tests.host.agents:fixed_judge")
    async with running_host(store_url, config) as host:
        discovery = (await host.client.get("/.well-known/openwop")).json()
        run_id = await host.run_id(eval_body("suite://core.wopeval.evals.rubric-demo"))
        await host.wait_terminal(run_id)
        summary = (await host.get(f"/runs/{run_id.replace('/', '~2F')}/eval-summary")).json()
    assert "rubric" in discovery["agents"]["evalSuite"]["modes"]
    assert [t["score"] for t in summary["tasks"]] == [1.0, 0.75]


# --- the closed body and its members -----------------------------------------------------


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({**eval_body(), "priority": 1}, "priority"),
        ({**eval_body(), "configurable.run": {}}, "configurable.run"),
        ({**eval_body(), "mode": "workflow"}, "mode"),
        ({"evalSuiteRef": PLAIN_REF, "agentId": SCRIPTED}, "mode"),
        ({"mode": "eval", "agentId": SCRIPTED}, "evalSuiteRef"),
        ({"mode": "eval", "evalSuiteRef": PLAIN_REF}, "agentId"),
        (eval_body(agent="not an id"), "agentId"),
        (eval_body(evalSuiteRef=7), "evalSuiteRef"),
        (eval_body(tags="x"), "tags"),
        (eval_body(tags=["ok", 3]), "tags[1]"),
        (eval_body(metadata=[1]), "metadata"),
        (eval_body(configurable={"run": {}}), "configurable.version"),
        (eval_body(configurable={"version": 1, "turbo": {}}), "configurable.turbo"),
        (eval_body(inputs={"x": 1}), "inputs"),
        (eval_body(residency={"region": "eu"}), "residency"),
        (eval_body(callbackUrl="https://example.test/hook"), "callbackUrl"),
        (eval_body(tenantId="other"), "tenantId"),
        (eval_body(scopeId="has space"), "scopeId"),
        (eval_body(fixtureRuns=["acme/r0000000000000000"]), "fixtureRuns"),
        (eval_body(baselineRunId="acme/r0000000000000000"), "baselineRunId"),
        (eval_body(workflowId="core.wopeval.evals.other"), "workflowId"),
    ],
)
@ON_SHARED_HOST
async def test_create_malformed_body_refused_naming_field(
    host: Host, body: dict[str, Any], field: str
) -> None:
    response = await host.create(body)
    details = refused(response, 400, "validation_error", field)
    if field == "priority":
        assert details["unknown"] == ["priority"]


@pytest.mark.parametrize("raw", [b"{not json", b"[1, 2]", b"", b"null"])
@ON_SHARED_HOST
async def test_create_non_object_body_refused(host: Host, raw: bytes) -> None:
    response = await host.client.post(
        "/runs", content=raw, headers={**auth(), "Content-Type": "application/json"}
    )
    refused(response, 400, "validation_error", "$")


@ON_SHARED_HOST
async def test_create_workflow_run_is_not_found(host: Host) -> None:
    response = await host.create({"workflowId": "conformance-noop"})
    refused(response, 404, "not_found", "workflowId")


async def test_create_body_over_limit_is_payload_too_large(store_url: str) -> None:
    async with running_host(store_url, host_config(maxBodyBytes=2048)) as host:
        response = await host.create(eval_body(metadata={"pad": "x" * 4096}))
    refused(response, 413, "payload_too_large")


# --- suites and agents ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "ref",
    [
        "suite://core.wopeval.evals.absent",
        "suite://core.wopeval.evals.plain@9.9.9",
        "core.wopeval.evals.absent@1.0.0",
        "suite://no-such-fixture",
    ],
)
@ON_SHARED_HOST
async def test_create_unknown_suite_ref_is_not_found(host: Host, ref: str) -> None:
    response = await host.create(eval_body(ref))
    refused(response, 404, "not_found", "evalSuiteRef")


@pytest.mark.parametrize("ref", ["suite://Core.Bad Id", "suite://core.x.evals.y@1.0", "a/b"])
@ON_SHARED_HOST
async def test_create_malformed_suite_ref_is_validation_error(host: Host, ref: str) -> None:
    response = await host.create(eval_body(ref))
    refused(response, 400, "validation_error", "evalSuiteRef")


@ON_SHARED_HOST
async def test_create_malformed_suite_refused_naming_suite_field(host: Host) -> None:
    response = await host.create(eval_body("suite://core.wopeval.evals.broken"))
    details = refused(response, 400, "validation_error", "tasks[0].expected.kind")
    assert details["evalSuiteRef"] == "suite://core.wopeval.evals.broken"


@pytest.mark.parametrize("agent", ["core.acme.nobody", "os:system", "tests.host.agents:slow_agent"])
@ON_SHARED_HOST
async def test_create_unknown_agent_refused_naming_agent_id(host: Host, agent: str) -> None:
    response = await host.create(eval_body(PLAIN_REF, agent=agent, evalModes=["golden"]))
    refused(response, 400, "validation_error", "agentId")


async def test_create_target_agent_mismatch_refused_unless_overridable(store_url: str) -> None:
    ref = "suite://core.wopeval.evals.other-target"
    async with running_host(store_url) as host:
        refused_response = await host.create(eval_body(ref))
    async with running_host(store_url, host_config(allowTargetOverride=True)) as host:
        allowed = await host.create(eval_body(ref))
    refused(refused_response, 400, "validation_error", "agentId")
    assert allowed.status_code == 201


# --- RFC 0251 baselines (when baselineSelection is switched on) ---------------------------


async def test_0251_C_unusable_baseline_refused_identically(store_url: str) -> None:
    config = host_config(eval_suite={"baselineSelection": True, "modes": ["golden", "regression"]})
    async with running_host(store_url, config) as host:
        mine = await host.run_id(eval_body(PLAIN_REF, evalModes=["golden"]))
        await host.wait_terminal(mine)
        theirs_response = await host.create(eval_body(PLAIN_REF, evalModes=["golden"]), key=KEY_B)
        theirs = theirs_response.json()["runId"]
        other_suite = await host.run_id(eval_body("suite://core.wopeval.evals.host-demo@1.1.0"))
        await host.wait_terminal(other_suite)
        running = await host.run_id(eval_body(SLOW_REF, agent=SLOW_AGENT))
        modes = ["golden", "regression"]
        answers = [
            await host.create(eval_body(PLAIN_REF, evalModes=modes, baselineRunId=baseline))
            for baseline in (theirs, "acme/r0000000000000000", other_suite, running, "junk")
        ]
        needs_regression = await host.create(
            eval_body(PLAIN_REF, evalModes=["golden"], baselineRunId=mine)
        )
        accepted = await host.create(eval_body(PLAIN_REF, evalModes=modes, baselineRunId=mine))
        assert accepted.status_code == 201, accepted.text
        candidate = accepted.json()["runId"]
        await host.wait_terminal(candidate)
        summary = await host.get(f"/runs/{candidate.replace('/', '~2F')}/eval-summary")
    assert summary.status_code == 200, summary.text
    regression = summary.json()["regression"]
    assert regression["baselineRunId"] == mine
    assert regression["verdict"] == "inconclusive"  # the same agent on the same suite
    assert regression["method"] == "paired-bootstrap"
    for answer in answers:
        refused(answer, 400, "validation_error", "baselineRunId")
    assert len({(a.status_code, a.content) for a in answers}) == 1
    refused(needs_regression, 400, "validation_error", "baselineRunId")
    assert accepted.status_code == 201, accepted.text


# --- Idempotency-Key and OpenWOP-Dedup -----------------------------------------------------


async def _runs_with_key(host: Host, key: str) -> list[str]:
    runs = await host.state.store.list_runs(tenant="acme", limit=10_000)
    return [r.run_id for r in runs if r.idempotency_key == key]


async def test_idempotency_key_replays_the_same_201(store_url: str) -> None:
    headers = {"Idempotency-Key": f"create-once-{uuid.uuid4()}"}
    async with running_host(store_url) as host:
        first = await host.create(headers=headers)
        second = await host.create(headers=headers)
        other_tenant = await host.create(headers=headers, key=KEY_B)
        runs = await _runs_with_key(host, headers["Idempotency-Key"])
    assert first.status_code == second.status_code == 201
    assert first.json() == second.json()
    assert second.headers["OpenWOP-Idempotent-Replay"] == "true"
    assert "OpenWOP-Idempotent-Replay" not in first.headers
    assert len(runs) == 1
    assert other_tenant.status_code == 201
    assert other_tenant.json()["runId"] != first.json()["runId"]


async def test_idempotency_key_concurrent_creates_make_one_run(store_url: str) -> None:
    headers = {"Idempotency-Key": f"create-concurrent-{uuid.uuid4()}"}
    responses: list[httpx.Response] = []
    async with running_host(store_url) as host:

        async def one() -> None:
            responses.append(await host.create(headers=headers))

        async with anyio.create_task_group() as group:
            for _ in range(8):
                group.start_soon(one)
        runs = await _runs_with_key(host, headers["Idempotency-Key"])
    assert {r.status_code for r in responses} == {201}
    assert len({r.json()["runId"] for r in responses}) == 1
    assert len(runs) == 1


async def test_idempotency_key_with_other_body_is_mismatch(store_url: str) -> None:
    headers = {"Idempotency-Key": f"create-twice-{uuid.uuid4()}"}
    async with running_host(store_url) as host:
        await host.create(headers=headers)
        response = await host.create(eval_body(tags=["changed"]), headers=headers)
    refused(response, 409, "idempotency_key_mismatch", "Idempotency-Key")


@pytest.mark.parametrize("key", ["has space", "x" * 256])
@ON_SHARED_HOST
async def test_idempotency_key_invalid(host: Host, key: str) -> None:
    response = await host.create(headers={"Idempotency-Key": key})
    refused(response, 400, "idempotency_key_invalid", "Idempotency-Key")


async def test_dedup_enforce_refuses_second_active_run_of_scope(store_url: str) -> None:
    scope = f"ticket-{uuid.uuid4()}"
    body = eval_body(SLOW_REF, agent=SLOW_AGENT, scopeId=scope)
    headers = {"OpenWOP-Dedup": "enforce"}
    async with running_host(store_url) as host:
        first = await host.create(body, headers=headers)
        second = await host.create(body, headers=headers)
        other_scope = await host.create({**body, "scopeId": scope + "-b"}, headers=headers)
        bad_value = await host.create(body, headers={"OpenWOP-Dedup": "maybe"})
    assert first.status_code == 201
    refused(second, 409, "run_already_active")
    assert second.headers["Retry-After"]
    assert other_scope.status_code == 201
    refused(bad_value, 400, "validation_error", "OpenWOP-Dedup")


async def test_0244_G_regression_verdict_switched_off_reports_only_the_delta(
    store_url: str,
) -> None:
    facets = {"regressionVerdict": False, "modes": ["golden", "regression"]}
    async with running_host(store_url, host_config(eval_suite=facets)) as host:
        discovery = (await host.client.get("/.well-known/openwop")).json()
        baseline = await host.run_id(eval_body(PLAIN_REF, evalModes=["golden"]))
        await host.wait_terminal(baseline)
        body = eval_body(PLAIN_REF, evalModes=["golden", "regression"], baselineRunId=baseline)
        candidate = await host.run_id(body)
        await host.wait_terminal(candidate)
        summary = await host.get(f"/runs/{segment(candidate)}/eval-summary")
    assert "regressionVerdict" not in discovery["agents"]["evalSuite"]
    assert summary.json()["regression"] == {"baselineRunId": baseline, "scoreDelta": 0.0}


async def test_dedup_enforce_without_scope_id_never_collides(store_url: str) -> None:
    body = eval_body(SLOW_REF, agent=SLOW_AGENT)
    headers = {"OpenWOP-Dedup": "enforce"}
    async with running_host(store_url) as host:
        first = await host.create(body, headers=headers)
        second = await host.create(body, headers=headers)
    assert (first.status_code, second.status_code) == (201, 201)


WORLD_REF = "suite://core.wopeval.evals.world"


async def test_0244_G_33_3_unadvertised_world_refused_naming_field(store_url: str) -> None:
    config = host_config(eval_suite={"extensions": ["x-wopeval-adaptive"]})
    async with running_host(store_url, config) as host:
        response = await host.create(eval_body(WORLD_REF, evalModes=["golden"]))
    details = refused(response, 400, "validation_error", "tasks[0].x-wopeval-world")
    assert [e["field"] for e in details["errors"]] == ["tasks[0].x-wopeval-world"]


async def test_33_3_advertised_world_runs_over_http_and_its_summary_has_counts_only(
    store_url: str,
) -> None:
    async with running_host(store_url) as host:
        response = await host.create(eval_body(WORLD_REF, evalModes=["golden"]))
        assert response.status_code == 201, response.text
        run_id = response.json()["runId"]
        final = await host.wait_terminal(run_id)
        summary = (await host.get(f"/runs/{run_id.replace('/', '~2F')}/eval-summary")).json()
    assert final["status"] == "completed"
    (task,) = summary["tasks"]
    assert task["passed"] is True
    assert task["x-wopeval-finalState"] == {"matched": True, "mismatchCount": 0}
