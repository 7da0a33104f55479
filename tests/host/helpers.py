"""Helpers for the host tests: configs, an in-process host (ASGI transport), a real-socket host."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import pytest_asyncio
import uvicorn
from fastapi import FastAPI

from wopeval.engine.registry import SCRIPTED_AGENT_ID
from wopeval.host.app import create_app
from wopeval.host.config import HostConfig, parse_config
from wopeval.host.state import HostState

SUITES = Path(__file__).parent / "data" / "suites"
KEY_A = "key-acme-0123456789"
KEY_B = "key-other-0123456789"
TENANT_A = "acme"
TENANT_B = "other"
SCRIPTED = SCRIPTED_AGENT_ID
SLOW_AGENT = "test.slow"
DEMO_ID = "core.wopeval.evals.host-demo"
DEMO_REF = f"suite://{DEMO_ID}@1.0.0"
PLAIN_REF = "suite://core.wopeval.evals.plain"
SLOW_REF = "suite://core.wopeval.evals.slow"


def host_config(eval_suite: dict[str, Any] | None = None, **overrides: Any) -> HostConfig:
    """Two tenants (``acme``, ``other``), the test suites only, a slow agent; all facets on.

    Leaving waits at most half a second for running trials (the slow agent sleeps 30 s), not
    the default ten: tests that check the grace period itself set it.
    """
    data: dict[str, Any] = {
        "apiKeys": [
            {"key": KEY_A, "tenant": TENANT_A, "subjectId": "alice"},
            {"key": KEY_B, "tenant": TENANT_B, "subjectId": "bob", "kind": "workload"},
        ],
        "suiteDirectories": [str(SUITES)],
        "builtinSuites": False,
        "agents": {SLOW_AGENT: "tests.host.agents:slow_agent"},
        "shutdownGraceSeconds": 0.5,
    }
    if eval_suite is not None:
        data["evalSuite"] = eval_suite
    data.update(overrides)
    return parse_config(data)


def auth(key: str = KEY_A) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", "OpenWOP-Version": "2.0"}


def eval_body(ref: str = DEMO_REF, agent: str = SCRIPTED, **extra: Any) -> dict[str, Any]:
    return {"mode": "eval", "evalSuiteRef": ref, "agentId": agent, **extra}


def segment(run_id: str) -> str:
    """The projected (``~2F``) path form of a run id."""
    return run_id.replace("/", "~2F")


@dataclass
class Host:
    app: FastAPI
    client: httpx.AsyncClient

    @property
    def state(self) -> HostState:
        state = self.app.state.wopeval
        assert isinstance(state, HostState)
        return state

    async def create(
        self,
        body: Any = None,
        *,
        key: str = KEY_A,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        payload = eval_body() if body is None else body
        merged = {**auth(key), **(headers or {})}
        return await self.client.post("/runs", json=payload, headers=merged)

    async def get(self, path: str, key: str = KEY_A, **kwargs: Any) -> httpx.Response:
        return await self.client.get(path, headers={**auth(key), **kwargs.pop("headers", {})},
                                     **kwargs)  # fmt: skip

    async def run_id(self, body: Any = None) -> str:
        response = await self.create(body)
        assert response.status_code == 201, response.text
        return str(response.json()["runId"])

    async def wait_terminal(self, run_id: str, key: str = KEY_A) -> dict[str, Any]:
        """Poll until the run is terminal; returns the last poll body."""
        with anyio.fail_after(30):
            while True:
                response = await self.get(f"/runs/{segment(run_id)}/events/poll?timeout=5", key)
                body: dict[str, Any] = response.json()
                if body["isTerminal"]:
                    return body

    async def wait_event(self, run_id: str, event_type: str) -> None:
        """Wait until the run's log holds an event of ``event_type``."""
        store = self.state.store
        cursor = -1
        with anyio.fail_after(30):
            while True:
                for event in await store.wait_for_events(run_id, cursor, 1.0):
                    if event.type == event_type:
                        return
                    cursor = event.sequence

    async def wait_status(self, run_id: str, status: str) -> None:
        """Wait until the run's snapshot shows ``status``."""
        store = self.state.store
        with anyio.fail_after(30):
            while (await self.get(f"/runs/{segment(run_id)}")).json()["status"] != status:
                await store.wait_for_events(run_id, await store.last_sequence(run_id), 0.05)


@asynccontextmanager
async def running_host(store_url: str, config: HostConfig | None = None) -> AsyncIterator[Host]:
    """The app with its lifespan running, and an httpx client over the ASGI transport."""
    app = create_app(config or host_config(), store_url=store_url)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://host.test") as client:
            yield Host(app, client)


@asynccontextmanager
async def shared_host(store_url: str, config: HostConfig | None = None) -> AsyncIterator[Host]:
    """:func:`running_host` for a module-scoped fixture: pytest-asyncio sets such a fixture up
    and tears it down in two different tasks, and the host's task groups must be entered and
    left in one, so the host runs in a task of its own until the fixture ends."""
    ready: asyncio.Future[Host] = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()

    async def serve() -> None:
        async with running_host(store_url, config) as host:
            ready.set_result(host)
            await stop.wait()

    task = asyncio.create_task(serve())
    await asyncio.wait((task, ready), return_when=asyncio.FIRST_COMPLETED)
    if not ready.done():
        ready.cancel()
        await task  # raises what stopped the host from starting
        raise AssertionError("the host ended before it started")
    try:
        yield ready.result()
    finally:
        stop.set()
        await task


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class ServerThread:
    """The app served by uvicorn on a real socket (127.0.0.1, a free port) in a thread."""

    def __init__(self, app: FastAPI) -> None:
        self.port = free_port()
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_level="warning", ws="none",
            lifespan="on", timeout_graceful_shutdown=2,
        )  # fmt: skip
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ServerThread:
        self.thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the test server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        assert not self.thread.is_alive(), "the test server did not stop"


@contextmanager
def serving(store_url: str, config: HostConfig | None = None) -> Iterator[ServerThread]:
    with ServerThread(create_app(config or host_config(), store_url=store_url)) as server:
        yield server


# The tests that ask a module's shared host (:func:`module_host`), in the module's event loop.
ON_SHARED_HOST = pytest.mark.asyncio(loop_scope="module")


def module_host(name: str, config: HostConfig | None = None) -> Any:
    """A module-scoped fixture ``name``: one host on the module's store (``module_store_url``),
    shared by the module's tests that only refuse or read."""

    @pytest_asyncio.fixture(name=name, scope="module", loop_scope="module")
    async def fixture(module_store_url: str) -> AsyncIterator[Host]:
        async with shared_host(module_store_url, config) as shared:
            yield shared

    return fixture
