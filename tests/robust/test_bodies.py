"""Bodies and headers a hostile client sends (issue 14, point 6): refused, naming the field."""

from __future__ import annotations

import json

import pytest

from tests.host.helpers import auth, eval_body, running_host

DEMO = json.dumps(eval_body())[1:-1]  # the members of a valid body, to embed


def _post(raw: bytes, content_type: str | None = "application/json") -> dict[str, str]:
    headers = auth()
    if content_type is not None:
        headers["Content-Type"] = content_type
    return headers


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        (b'{"tenantId":"beta","tenantId":"acme",' + DEMO.encode() + b"}", "tenantId"),
        (b'{"metadata":{"a":1,"a":2},' + DEMO.encode() + b"}", "metadata.a"),
        (b'{"tags":[{"x":1,"x":1}],' + DEMO.encode() + b"}", "tags[0].x"),
        (b'{"":1,' + DEMO.encode() + b"}", '$[""]'),
    ],
)
async def test_duplicate_and_blank_members_are_named(
    store_url: str, raw: bytes, field: str
) -> None:
    async with running_host(store_url) as host:
        response = await host.client.post("/runs", content=raw, headers=_post(raw))
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["error"] == "validation_error"
    assert body["details"]["field"] == field
    assert field in body["message"]


@pytest.mark.parametrize(
    "raw",
    [
        b"\xef\xbb\xbf" + json.dumps(eval_body()).encode(),
        json.dumps(eval_body()).encode("utf-16"),
        json.dumps(eval_body()).encode("utf-16-le"),
        json.dumps(eval_body()).encode("utf-32"),
        json.dumps(eval_body()).encode("utf-32-be"),
    ],
)
async def test_bodies_that_are_not_plain_utf8_are_refused(store_url: str, raw: bytes) -> None:
    async with running_host(store_url) as host:
        before = len(await host.state.store.list_runs(limit=100_000))
        response = await host.client.post("/runs", content=raw, headers=_post(raw))
        assert len(await host.state.store.list_runs(limit=100_000)) == before
    assert response.status_code == 400, response.text
    assert response.json()["details"]["field"] == "$"
    assert "UTF-8" in response.json()["message"]


@pytest.mark.parametrize(
    "content_type", [None, "text/plain", "application/x-www-form-urlencoded", "multipart/x"]
)
async def test_a_body_must_be_sent_as_json(store_url: str, content_type: str | None) -> None:
    raw = json.dumps(eval_body()).encode()
    async with running_host(store_url) as host:
        response = await host.client.post("/runs", content=raw, headers=_post(raw, content_type))
        accepted = await host.client.post(
            "/runs", content=raw, headers=_post(raw, "application/json; charset=utf-8")
        )
    assert response.status_code == 415, response.text
    assert response.json()["error"] == "unsupported_media_type"
    assert response.json()["details"]["field"] == "Content-Type"
    assert accepted.status_code == 201, accepted.text
