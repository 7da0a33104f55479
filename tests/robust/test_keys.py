"""API keys (issue 14, point 7): a minimum strength, failed authentication rate-limited per
client, and no part of a key shown to anyone."""

from __future__ import annotations

import hashlib

import pytest

from tests.host.helpers import KEY_A, host_config, running_host, segment
from wopeval.host.auth import MAX_AUTH_FAILURES
from wopeval.host.config import ConfigError, parse_config


@pytest.mark.parametrize("key", ["k", "short-key", "a" * 64, "abababababababababab"])
def test_weak_keys_are_refused_at_start_up(key: str) -> None:
    with pytest.raises(ConfigError, match=r"apiKeys\.0\.key"):
        parse_config({"apiKeys": [{"key": key, "tenant": "acme"}]})


async def test_failed_authentication_is_rate_limited_per_client(store_url: str) -> None:
    async with running_host(store_url) as host:
        codes = []
        for _ in range(MAX_AUTH_FAILURES + 3):
            response = await host.get("/runs/acme~2Fr0123456789abcdef", key="wrong-key-0123456789")
            codes.append(response.status_code)
        limited = await host.get("/runs/acme~2Fr0123456789abcdef", key="wrong-key-0123456789")
        right = await host.get("/runs/acme~2Fr0123456789abcdef", key=KEY_A)  # failures only are limited
    assert codes[:MAX_AUTH_FAILURES] == [401] * MAX_AUTH_FAILURES
    assert set(codes[MAX_AUTH_FAILURES:]) == {429}
    assert limited.status_code == 429
    assert limited.json()["error"] == "rate_limited"
    assert int(limited.headers["Retry-After"]) >= 1
    assert right.status_code == 404  # authenticated; no such run


async def test_no_part_of_a_key_reaches_another_holder(store_url: str) -> None:
    keys = ["first-key-of-acme-0123", "second-key-of-acme-4567"]
    config = host_config(apiKeys=[{"key": k, "tenant": "acme"} for k in keys])
    async with running_host(store_url, config) as host:
        created = await host.create(key=keys[0])
        assert created.status_code == 201, created.text
        run_id = created.json()["runId"]
        seen = await host.get(f"/runs/{segment(run_id)}", key=keys[1])
    text = seen.text
    assert seen.json()["owner"]["subject"]["subjectId"] == "key-1"
    for key in keys:
        digest = hashlib.sha256(key.encode()).hexdigest()
        assert key not in text
        assert all(digest[i : i + 8] not in text for i in range(0, 64, 8))
