"""``POST /runs`` for a seeded workflow fixture (in process, both stores): what is refused, and
the create path it shares with eval runs (Idempotency-Key, OpenWOP-Dedup, tenancy of the key)."""

from __future__ import annotations

import secrets
from typing import Any

import pytest

from tests.host.helpers import KEY_B, auth, eval_body, host_config, running_host, segment

SEEDED = host_config(conformanceSeed=True)
NOOP = {"workflowId": "conformance-noop"}
# body → the field its 400 names (runs.md §Create: closed body; fixtures.md inputs)
REFUSED: list[tuple[dict[str, Any], str]] = [
    ({**NOOP, "evalSuiteRef": "suite://core.wopeval.evals.plain"}, "evalSuiteRef"),
    ({**NOOP, "agentId": "core.conformance.agents.scripted"}, "agentId"),
    ({**NOOP, "evalModes": ["golden"]}, "evalModes"),
    ({**NOOP, "inputs": []}, "inputs"),
    ({**NOOP, "residency": {"region": "eu"}}, "residency"),
    ({**NOOP, "tenantId": "other"}, "tenantId"),
    ({**NOOP, "fixtureRuns": {}}, "fixtureRuns"),
    ({**NOOP, "inputs": {"x": 1}}, "inputs.x"),
    ({"workflowId": "conformance-delay", "inputs": {"delayMs": True}}, "inputs.delayMs"),
    ({"workflowId": "conformance-delay", "inputs": {"delayMs": 1.0}}, "inputs.delayMs"),
    ({"workflowId": "conformance-delay", "inputs": {"delayMs": -1}}, "inputs.delayMs"),
    ({"workflowId": "conformance-cancellable", "inputs": {"delayMs": 0}}, "inputs.delayMs"),
    ({"workflowId": "conformance-idempotent"}, "inputs.nonce"),
    ({"workflowId": "conformance-idempotent", "inputs": {"nonce": 7}}, "inputs.nonce"),
    ({"workflowId": "conformance-identity", "inputs": {"payload": [1]}}, "inputs.payload"),
    # mode "eval" takes the eval path even with a seeded id: it needs its suite
    ({**NOOP, "mode": "eval"}, "evalSuiteRef"),
]


@pytest.mark.parametrize(("body", "field"), REFUSED, ids=[f for _, f in REFUSED])
async def test_runs_md_create_refuses_what_a_fixture_run_cannot_honour(
    store_url: str, body: dict[str, Any], field: str
) -> None:
    async with running_host(store_url, SEEDED) as host:
        before = len(await host.state.store.list_runs(limit=100_000))
        answer = await host.create(body)
        after = len(await host.state.store.list_runs(limit=100_000))
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == "validation_error"
    assert answer.json()["details"]["field"] == field
    assert after == before  # the session's PostgreSQL database is shared by every test


async def test_runs_md_idempotency_key_spans_eval_and_fixture_runs(store_url: str) -> None:
    key = {"Idempotency-Key": secrets.token_urlsafe(16)}
    async with running_host(store_url, SEEDED) as host:
        first = await host.create(NOOP, headers=key)
        as_eval = await host.create(eval_body(), headers=key)
        again = await host.create(NOOP, headers=key)
        other_tenant = await host.create(NOOP, headers=key, key=KEY_B)
    assert first.status_code == again.status_code == other_tenant.status_code == 201
    assert again.json()["runId"] == first.json()["runId"]
    assert again.headers["OpenWOP-Idempotent-Replay"] == "true"
    assert as_eval.status_code == 409
    assert as_eval.json()["error"] == "idempotency_key_mismatch"
    assert other_tenant.json()["runId"] != first.json()["runId"]


async def test_runs_md_dedup_enforce_covers_fixture_runs(store_url: str) -> None:
    held = {"workflowId": "conformance-cancellable", "scopeId": f"s-{secrets.token_hex(4)}"}
    dedup = {"OpenWOP-Dedup": "enforce"}
    async with running_host(store_url, SEEDED) as host:
        first = await host.create(held, headers=dedup)
        second = await host.create(held, headers=dedup)
        run_id = first.json()["runId"]
        await host.client.post(f"/runs/{segment(run_id)}/cancel", headers=auth(), json={})
        await host.wait_status(run_id, "cancelled")
        third = await host.create(held, headers=dedup)
        await host.client.post(
            f"/runs/{segment(third.json()['runId'])}/cancel", headers=auth(), json={}
        )
    assert first.status_code == third.status_code == 201
    assert second.status_code == 409
    assert second.json()["error"] == "run_already_active"
    assert second.json()["details"]["runId"] == run_id


async def test_runs_md_unseeded_workflow_id_keeps_its_404(store_url: str) -> None:
    async with running_host(store_url, host_config()) as host:
        answer = await host.create(NOOP)
    assert answer.status_code == 404
    assert answer.json() == {
        "error": "not_found",
        "message": "workflowId: no workflow 'conformance-noop' is seeded on this host",
        "details": {"field": "workflowId"},
    }
