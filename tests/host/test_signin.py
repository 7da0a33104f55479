"""Sign-in and tenancy (issue 30 §3): failures are limited, never a valid key; the viewer's
sign-in is a server-side session that expires and ends at logout; a browser without one is sent
to the sign-in page; a foreign run costs what a missing one does."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.host.helpers import KEY_A, KEY_B, host_config, running_host
from wopeval.host.auth import MAX_AUTH_FAILURES
from wopeval.host.config import ConfigError, parse_config
from wopeval.host.pages import COOKIE

WRONG = "wrong-key-0123456789"


def _cookie_of(response: httpx.Response, name: str) -> str:
    """The Set-Cookie header setting ``name``."""
    found = [h for h in response.headers.get_list("set-cookie") if h.startswith(f"{name}=")]
    assert len(found) == 1, response.headers.get_list("set-cookie")
    return found[0]


async def test_a_valid_key_authenticates_from_a_client_over_the_limit(tmp_path: Path) -> None:
    async with running_host(str(tmp_path / "s.db")) as host:
        for _ in range(MAX_AUTH_FAILURES):
            assert (await host.get("/runs/acme~2Fr0123456789abcdef", key=WRONG)).status_code == 401
        limited = await host.get("/runs/acme~2Fr0123456789abcdef", key=WRONG)
        right = await host.get("/runs/acme~2Fr0123456789abcdef", key=KEY_A)
        other_tenant = await host.get("/runs/other~2Fr0123456789abcdef", key=KEY_B)
        still = await host.get("/runs/acme~2Fr0123456789abcdef", key=WRONG)
    assert limited.status_code == 429
    assert int(limited.headers["Retry-After"]) >= 1
    assert right.status_code == 404  # authenticated: no such run
    assert other_tenant.status_code == 404
    assert still.status_code == 429


async def test_view_login_is_limited_like_the_api(tmp_path: Path) -> None:
    async with running_host(str(tmp_path / "s.db")) as host:
        first = await host.client.post("/view/login", data={"key": ""})
        codes = [first.status_code]
        for _ in range(MAX_AUTH_FAILURES + 1):
            codes.append((await host.client.post("/view/login", data={"key": WRONG})).status_code)
        limited = await host.client.post("/view/login", data={"key": WRONG})
        api = await host.get("/runs/acme~2Fr0123456789abcdef", key=WRONG)  # one count for both doors
        signed = await host.client.post("/view/login", data={"key": KEY_A})
    assert codes == [401] * MAX_AUTH_FAILURES + [429, 429]
    assert 'id="message" role="alert">this API key is not recognized' in first.text
    assert limited.status_code == 429
    assert int(limited.headers["Retry-After"]) >= 1
    assert "too many failed authentications" in limited.text
    assert api.status_code == 429
    assert signed.status_code == 303  # the right key still signs in


async def test_the_view_bearer_header_counts_failures_too(tmp_path: Path) -> None:
    async with running_host(str(tmp_path / "s.db")) as host:
        for _ in range(MAX_AUTH_FAILURES):
            assert (await host.get("/view/", key=WRONG)).status_code == 401
        assert (await host.get("/view/", key=WRONG)).status_code == 429
        assert (await host.get("/view/", key=KEY_A)).status_code == 200


async def test_the_sign_in_cookie_is_a_session_never_the_key(tmp_path: Path) -> None:
    async with running_host(str(tmp_path / "s.db")) as host:
        client = host.client
        signed = await client.post("/view/login", data={"key": KEY_A})
        assert signed.status_code == 303
        header = _cookie_of(signed, COOKIE)
        session_id = header.partition("=")[2].partition(";")[0]
        runs = await client.get("/view/", headers={"Accept": "text/html"})
        form = await client.get("/view/login")
    everything = " ".join(signed.headers.get_list("set-cookie"))
    assert KEY_A not in everything
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", session_id)  # 32 random bytes
    flags = {part.strip().lower() for part in header.split(";")[1:]}
    assert {"httponly", "samesite=strict", "path=/view"} <= flags
    assert "secure" not in flags  # plain http: a Secure cookie would never come back
    assert 'wopeval_key=""' in _cookie_of(signed, "wopeval_key")  # the old key cookie: cleared
    assert runs.status_code == 200
    assert "Signed in to tenant <b>acme</b>" in form.text
    assert 'action="/view/logout"' in form.text


async def test_the_sign_in_cookie_is_secure_over_https(tmp_path: Path) -> None:
    async with running_host(str(tmp_path / "s.db")) as host:
        transport = httpx.ASGITransport(app=host.app)
        async with httpx.AsyncClient(transport=transport, base_url="https://host.test") as tls:
            signed = await tls.post("/view/login", data={"key": KEY_A})
            ended = await tls.post("/view/logout")
    assert "secure" in _cookie_of(signed, COOKIE).lower().split("; ")
    assert "secure" in _cookie_of(ended, COOKIE).lower().split("; ")


async def test_logout_ends_the_session_on_the_server(tmp_path: Path) -> None:
    async with running_host(str(tmp_path / "s.db")) as host:
        client = host.client
        await client.post("/view/login", data={"key": KEY_A})
        session_id = client.cookies[COOKIE]
        assert (await client.get("/view/logout")).status_code == 405  # a link cannot sign out
        ended = await client.post("/view/logout")
        kept = httpx.Cookies({COOKIE: session_id})  # a copy taken before, sent again
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=host.app), base_url="http://host.test", cookies=kept
        ) as replay:
            again = await replay.get("/view/", headers={"Accept": "text/html"})
            plain = await replay.get("/view/")
        sessions = len(host.app.state.viewer_sessions)
    assert ended.status_code == 303
    assert ended.headers["location"] == "/view/login"
    assert 'wopeval_session=""' in _cookie_of(ended, COOKIE)
    assert sessions == 0
    assert again.status_code == 303
    assert again.headers["location"] == "/view/login"
    assert plain.status_code == 401


async def test_sessions_expire_idle_and_absolute(tmp_path: Path) -> None:
    config = host_config(viewerSessions={"idleSeconds": 100, "absoluteSeconds": 250})
    now = [1000.0]
    async with running_host(str(tmp_path / "s.db"), config) as host:
        host.app.state.viewer_sessions.clock = lambda: now[0]
        html = {"Accept": "text/html"}

        async def status() -> int:
            return (await host.client.get("/view/", headers=html)).status_code

        await host.client.post("/view/login", data={"key": KEY_A})
        seen = []
        for step in (99, 99, 50):  # used within the idle time: alive until 250 s after sign-in
            now[0] += step
            seen.append(await status())
        now[0] += 3  # 251 s after sign-in
        seen.append(await status())
        await host.client.post("/view/login", data={"key": KEY_A})
        now[0] += 99.5
        seen.append(await status())
        now[0] += 100  # unused for the idle time
        seen.append(await status())
    assert seen == [200, 200, 200, 303, 200, 303]


@pytest.mark.parametrize("accept", ["text/html,application/xhtml+xml,*/*;q=0.8", "text/html"])
async def test_a_browser_without_a_session_is_sent_to_sign_in(tmp_path: Path, accept: str) -> None:
    async with running_host(str(tmp_path / "s.db")) as host:
        pages = [
            await host.client.get(path, headers={"Accept": accept})
            for path in ("/view/", "/view/run?id=acme/x", "/view/trial?run=acme/x&task=t&i=0")
        ]
        api = await host.client.get("/view/", headers={"Accept": "application/json"})
        stale = await host.client.get(
            "/view/", headers={"Accept": accept, "Cookie": f"{COOKIE}=made-up-session-id"}
        )
    for page in [*pages, stale]:
        assert page.status_code == 303
        assert page.headers["location"] == "/view/login"
    assert api.status_code == 401
    assert api.json()["error"] == "unauthenticated"


async def test_a_foreign_run_is_refused_by_the_same_look_up_as_a_missing_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Structural, not timed: both ids go through one tenant-scoped look-up of the id alone, and
    neither loads the run (its suite document) before the caller's tenant is known to own it."""
    async with running_host(str(tmp_path / "s.db")) as host:
        created = await host.create(key=KEY_B)
        assert created.status_code == 201, created.text
        foreign = created.json()["runId"]
        await host.wait_terminal(foreign, key=KEY_B)
        missing = "acme/r" + foreign.partition("/r")[2]  # the same opaque part, this tenant's
        store = host.state.store
        reads: list[tuple[str, dict[str, Any]]] = []
        loads: list[str] = []
        real_read, real_get = store.read, store.get_run

        async def read(stmt: Any) -> Any:
            compiled = stmt.compile()
            reads.append((str(compiled), dict(compiled.params)))
            return await real_read(stmt)

        async def get_run(run_id: str) -> Any:
            loads.append(run_id)
            return await real_get(run_id)

        monkeypatch.setattr(store, "read", read)
        monkeypatch.setattr(store, "get_run", get_run)
        answers = {}
        for name, run_id in (("foreign", foreign), ("missing", missing)):
            reads.clear()
            page = await host.get("/view/run", params={"id": run_id})
            answers[name] = (page.status_code, page.text, list(reads))
        assert loads == []  # nothing of either run was loaded
        own = await host.get("/view/run", params={"id": foreign}, key=KEY_B)
    (f_status, f_text, f_reads), (m_status, m_text, m_reads) = answers.values()
    assert (f_status, f_text) == (m_status, m_text) == (404, m_text)
    assert len(f_reads) == len(m_reads) == 1
    (f_sql, f_params), (m_sql, m_params) = f_reads[0], m_reads[0]
    assert f_sql == m_sql
    assert "suite" not in f_sql.partition("FROM")[0]  # the id alone is selected
    assert {k: v for k, v in f_params.items() if v != foreign} == {
        k: v for k, v in m_params.items() if v != missing
    }
    assert "acme" in f_params.values()  # scoped to the caller's tenant
    assert own.status_code == 200
    assert loads == [foreign]  # the owner's page loads the run


# ---- forwarded headers, through the real `wopeval serve` ----------------------------------------


@contextmanager
def _served(tmp_path: Path, **config: Any) -> Iterator[str]:
    data = {"apiKeys": [{"key": KEY_A, "tenant": "acme"}], "builtinSuites": False, **config}
    path = tmp_path / "host.json"
    path.write_text(json.dumps(data))
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("WOPEVAL_STORE", None)
    command = [sys.executable, "-m", "wopeval", "serve", "--log-level", "warning", "--port", "0",
               "--config", str(path), "--store", str(tmp_path / "s.db")]  # fmt: skip
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
    watchdog = threading.Timer(60, proc.kill)
    watchdog.start()
    try:
        assert proc.stderr is not None
        url = None
        for line in proc.stderr:
            found = re.search(r"listening on (http://\S+)$", line.strip())
            if found:
                url = found.group(1)
                break
        assert url is not None, "no 'listening on' line"
        yield url
    finally:
        watchdog.cancel()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
        if proc.stderr is not None:
            proc.stderr.close()


def _bad(client: httpx.Client, forwarded: str) -> int:
    headers = {"Authorization": f"Bearer {WRONG}", "X-Forwarded-For": forwarded}
    return client.get("/runs/acme~2Fr0123456789abcdef", headers=headers).status_code


def test_forwarded_for_from_an_untrusted_peer_does_not_evade_the_limit(tmp_path: Path) -> None:
    with _served(tmp_path) as url, httpx.Client(base_url=url, timeout=10) as client:
        codes = [_bad(client, f"203.0.113.{n}") for n in range(MAX_AUTH_FAILURES + 5)]
        tls = client.post(
            "/view/login", data={"key": KEY_A}, headers={"X-Forwarded-Proto": "https"}
        )
    assert codes == [401] * MAX_AUTH_FAILURES + [429] * 5
    assert tls.status_code == 303
    assert "secure" not in _cookie_of(tls, COOKIE).lower().split("; ")


def test_forwarded_for_from_a_trusted_proxy_names_the_client(tmp_path: Path) -> None:
    served = _served(tmp_path, trustedProxies=["127.0.0.1"])
    with served as url, httpx.Client(base_url=url, timeout=10) as client:
        first = [_bad(client, "203.0.113.7") for _ in range(MAX_AUTH_FAILURES + 1)]
        other = _bad(client, "198.51.100.9")  # another client behind the same proxy
        tls = client.post(
            "/view/login", data={"key": KEY_A}, headers={"X-Forwarded-Proto": "https"}
        )
    assert first == [401] * MAX_AUTH_FAILURES + [429]
    assert other == 401
    assert "secure" in _cookie_of(tls, COOKIE).lower().split("; ")


@pytest.mark.parametrize("proxy", ["proxy.example", "10.0.0.300", "", "10.0.0.5/8"])
def test_a_trusted_proxy_must_be_an_address(proxy: str) -> None:
    with pytest.raises(ConfigError, match=r"trustedProxies\.0"):
        parse_config({"trustedProxies": [proxy]})


def test_trusted_proxies_take_addresses_networks_or_any_alone() -> None:
    given = ["10.0.0.5", "10.1.0.0/16", "::1", "fd00::/8"]
    assert parse_config({"trustedProxies": given}).trustedProxies == given
    assert parse_config({"trustedProxies": ["*"]}).trustedProxies == ["*"]
    with pytest.raises(ConfigError, match=r"trustedProxies: .*'\*' trusts every peer"):
        parse_config({"trustedProxies": ["*", "10.0.0.5"]})
