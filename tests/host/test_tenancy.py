"""Identity and tenancy: bearer keys, run-id path forms, and no existence oracle across tenants."""

from __future__ import annotations

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from openwop_client.wire_id import project_id as sdk_project_id
from openwop_client.wire_id import unproject_id as sdk_unproject_id

from tests.host.helpers import (
    KEY_A,
    KEY_B,
    SLOW_AGENT,
    SLOW_REF,
    Host,
    auth,
    eval_body,
    running_host,
    segment,
    serving,
)
from tests.host.wire_schemas import validate_error
from wopeval.host.ids import project_id, run_id_from_path, unproject_id

ID_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~-"


async def _answers(host: Host, key: str, seg: str) -> list[tuple[int, bytes, list[str]]]:
    """Every run-scoped read and the cancel, as (status, body, header names but date)."""
    requests = [
        ("GET", f"/runs/{seg}"),
        ("GET", f"/runs/{seg}/events"),
        ("GET", f"/runs/{seg}/events?streamMode=debug"),
        ("GET", f"/runs/{seg}/events/poll?timeout=1"),
        ("GET", f"/runs/{seg}/eval-summary"),
        ("POST", f"/runs/{seg}/cancel"),
        ("POST", f"/runs/{seg}:cancel"),
    ]
    out = []
    for method, path in requests:
        response = await host.client.request(method, path, headers=auth(key), json={})
        names = sorted(k for k in response.headers if k != "date")
        out.append((response.status_code, response.content, names))
    return out


async def test_cross_tenant_reads_are_identical_to_missing_runs(store_url: str) -> None:
    async with running_host(store_url) as host:
        mine = await host.run_id(eval_body(SLOW_REF, agent=SLOW_AGENT))
        foreign = await _answers(host, KEY_B, segment(mine))
        missing_own = await _answers(host, KEY_B, "other~2Fr0000000000000000000000000")
        missing_theirs = await _answers(host, KEY_B, "acme~2Fr0000000000000000000000000")
        garbage = await _answers(host, KEY_B, "not-a-run-id")
        still_mine = (await host.get(f"/runs/{segment(mine)}", KEY_A)).json()
    assert foreign == missing_own == missing_theirs
    assert {status for status, _, _ in garbage} == {400}  # malformed (identity.md §5)
    for status, body, _ in foreign:
        assert status == 404
        validate_error(httpx.Response(status, content=body).json())
    assert still_mine["status"] in ("pending", "running")  # the intruder's cancel did nothing


@pytest.mark.parametrize("form", ["projected", "percent", "lowercase-percent"])
async def test_run_id_path_forms_are_accepted(store_url: str, form: str) -> None:
    async with running_host(store_url) as host:
        run_id = await host.run_id()
        tenant, opaque = run_id.split("/")
        seg = {
            "projected": f"{tenant}~2F{opaque}",
            "percent": f"{tenant}%2F{opaque}",
            "lowercase-percent": f"{tenant}%2f{opaque}",
        }[form]
        snapshot = await host.get(f"/runs/{seg}")
        poll = await host.get(f"/runs/{seg}/events/poll?timeout=1")
    assert snapshot.status_code == poll.status_code == 200
    assert snapshot.json()["runId"] == run_id


def test_run_id_percent_form_over_a_real_socket(store_url: str) -> None:
    with serving(store_url) as server, httpx.Client(base_url=server.base_url) as client:
        run_id = client.post("/runs", json=eval_body(), headers=auth()).json()["runId"]
        percent = client.get("/runs/" + run_id.replace("/", "%2F"), headers=auth())
        projected = client.get("/runs/" + segment(run_id), headers=auth())
    assert percent.status_code == projected.status_code == 200
    assert percent.json()["runId"] == projected.json()["runId"] == run_id


@pytest.mark.parametrize(
    "authorization", [None, "Bearer", "Bearer wrong-key-123456", f"Basic {KEY_A}", KEY_A]
)
async def test_missing_or_unknown_key_is_unauthenticated(
    store_url: str, authorization: str | None
) -> None:
    headers = {"OpenWOP-Version": "2.0"}
    if authorization is not None:
        headers["Authorization"] = authorization
    async with running_host(store_url) as host:
        responses = [
            await host.client.post("/runs", json=eval_body(), headers=headers),
            await host.client.get("/runs/acme~2Fr0000000000000000", headers=headers),
            await host.client.get("/runs/acme~2Fr0000000000000000/events", headers=headers),
        ]
        discovery = await host.client.get("/.well-known/openwop")
    for response in responses:
        assert response.status_code == 401
        assert response.json()["error"] == "unauthenticated"
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
        validate_error(response.json())
    assert discovery.status_code == 200


async def test_owner_subject_comes_from_the_key(store_url: str) -> None:
    async with running_host(store_url) as host:
        response = await host.create(key=KEY_B)
        snapshot = (await host.get(f"/runs/{segment(response.json()['runId'])}", KEY_B)).json()
    assert response.json()["runId"].startswith("other/")
    assert snapshot["owner"] == {
        "tenant": "other",
        "subject": {
            "issuer": "urn:wopeval:api-key",
            "subjectId": "bob",
            "tenant": "other",
            "lane": "api-key",
            "kind": "workload",
        },
    }


@given(
    tenant=st.text(alphabet=ID_CHARS, min_size=1, max_size=20),
    opaque=st.text(alphabet=ID_CHARS, min_size=16, max_size=40),
)
def test_projection_agrees_with_the_sdk(tenant: str, opaque: str) -> None:
    run_id = f"{tenant}/{opaque}"
    projected = project_id(run_id)
    assert projected == sdk_project_id(run_id)
    assert "/" not in projected
    assert unproject_id(projected) == run_id == sdk_unproject_id(projected)
    assert run_id_from_path(projected) == run_id
    if "~" not in run_id:  # the legacy percent form leaves "~" bare: "~2F" would be ambiguous
        assert run_id_from_path(run_id.replace("/", "%2F")) == run_id
