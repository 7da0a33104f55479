"""The OpenWOP v2 host as an ASGI app: :func:`create_app` (``wopeval serve`` runs it in uvicorn).

The lifespan opens the event store (the same SQLite file or PostgreSQL database the CLI uses),
fails the host-created runs a previous host process left unfinished (``wopeval.interrupted``;
runs of the CLI are left alone), and runs the :class:`RunManager` task group that executes eval
runs. Every response carries ``OpenWOP-Version``; a request naming another protocol major is
refused ``406``. ``X-Forwarded-For`` and ``X-Forwarded-Proto`` are believed only from the peers
``trustedProxies`` lists (``wopeval serve`` turns uvicorn's own proxy-header handling off, which
would trust loopback).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast

from fastapi import FastAPI
from sqlalchemy.exc import SQLAlchemyError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from wopeval.engine.agent import AgentFn
from wopeval.engine.agent_process import AgentWorkers, ProcessAgent
from wopeval.engine.gateway import LiveTool
from wopeval.engine.judge import Judge
from wopeval.engine.registry import Registry, import_object
from wopeval.errors import StoreError, WopevalError
from wopeval.events.store import EventStore
from wopeval.host import discovery, events_api, health, otlp_api, runs
from wopeval.host.auth import KeyRing
from wopeval.host.config import HostConfig
from wopeval.host.errors import (
    PROTOCOL_VERSIONS,
    HostError,
    envelope,
    host_error_handler,
    http_error_handler,
    wopeval_error_handler,
)
from wopeval.host.lifecycle import draining, keep_leases
from wopeval.host.manager import RunManager
from wopeval.host.pages import mount_pages
from wopeval.host.sessions import SessionBook
from wopeval.host.state import HostState
from wopeval.host.suites import SuiteCatalog
from wopeval.host.workflows import WorkflowCatalog

log = logging.getLogger("wopeval.host")

# ``<major>.<minor>`` (wire digest §1.1): decimal numbers, so ``2.000`` is 2.0 and served.
_VERSION_RE = re.compile(r"^\s*([0-9]{1,9})(?:\.([0-9]{1,9}))?\s*$")
_SERVED_MAJORS = frozenset(int(v.split(".")[0]) for v in PROTOCOL_VERSIONS)


def build_registry(
    config: HostConfig, workers: AgentWorkers | None = None
) -> tuple[Registry, Judge | None]:
    """Built-in agents plus the configured ones (each run in ``workers``' processes when
    given); the configured judge and live tools."""
    registry = Registry()
    for agent_id, ref in config.agents.items():
        agent = cast(AgentFn, import_object(ref))  # a bad path is refused at start-up
        registry.register_agent(agent_id, agent if workers is None else ProcessAgent(ref, workers))
    for name, ref in config.tools.items():
        registry.register_tool(name, cast(LiveTool, import_object(ref)))
    judge = cast(Judge, import_object(config.judge)) if config.judge else None
    return registry, judge


class VersionMiddleware:
    """``OpenWOP-Version`` on every response; ``406`` for an unserved major; ``500`` envelopes."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        requested = _header(scope, b"openwop-version")
        if requested is not None and not _served(requested):
            await _send_json(send, 406, envelope(
                "protocol_version_unsupported",
                f"OpenWOP-Version {requested!r} is not served; this host serves "
                + ", ".join(PROTOCOL_VERSIONS),
                {"protocolVersions": list(PROTOCOL_VERSIONS)},
            ))  # fmt: skip
            return
        started = False

        async def send_with_version(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = [(k, v) for k, v in message.get("headers", []) if k != b"openwop-version"]
                headers.append((b"openwop-version", PROTOCOL_VERSIONS[0].encode()))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_version)
        except Exception:
            log.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
            if started:
                raise
            await _send_json(send, 500, envelope("internal_error", "internal error"))


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def _served(value: str) -> bool:
    match = _VERSION_RE.fullmatch(value)
    return match is not None and int(match.group(1)) in _SERVED_MAJORS


async def _send_json(send: Send, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body).encode()
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(data)).encode()),
            (b"openwop-version", PROTOCOL_VERSIONS[0].encode()),
        ],
    })  # fmt: skip
    await send({"type": "http.response.body", "body": data})


def create_app(config: HostConfig, store_url: str | None = None) -> FastAPI:
    """The host app. ``store_url`` overrides ``config.store`` (both default to the CLI's store)."""
    workers = AgentWorkers() if config.agentIsolation == "process" else None
    registry, judge = build_registry(config, workers)
    catalog = SuiteCatalog(config.suiteDirectories, builtins=config.builtinSuites)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        store = await EventStore.open(store_url or config.store)
        try:
            manager = RunManager(store, registry, judge, config.concurrency)
            resume = config.resumeInterrupted
            async with manager.running(), keep_leases(store, config.leaseSeconds, manager, resume):
                app.state.wopeval = state = HostState(
                    config=config, keys=KeyRing(config.apiKeys), catalog=catalog,
                    registry=registry, judge=judge, store=store, manager=manager,
                    workflows=WorkflowCatalog.seeded(config.conformanceSeed),
                    loop=asyncio.get_running_loop(),
                )  # fmt: skip
                async with draining(state):
                    yield
        finally:
            if workers is not None:
                await workers.aclose()
            await store.close()

    app = FastAPI(
        title="wopeval OpenWOP v2 host",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url="/openapi.json",  # generated from the wire/api.py models
    )
    app.include_router(discovery.router)
    app.include_router(health.router)  # /healthz (liveness), /readyz (the store answers)
    app.include_router(events_api.router)  # before runs: /runs/{id}/events* ahead of /runs/{id}
    app.include_router(runs.router)
    sessions = SessionBook(config.viewerSessions.idleSeconds, config.viewerSessions.absoluteSeconds)
    mount_pages(app, sessions)  # the viewer's pages under /view, same keys and tenancy
    app.include_router(otlp_api.router)
    app.add_exception_handler(HostError, host_error_handler)
    app.add_exception_handler(WopevalError, wopeval_error_handler)
    for failure in (StoreError, SQLAlchemyError, OSError):  # 503 while the store is away
        app.add_exception_handler(failure, health.store_error_handler)
    app.add_exception_handler(StarletteHTTPException, http_error_handler)
    app.add_middleware(VersionMiddleware)
    if config.trustedProxies:  # outermost: every layer sees the forwarded client and scheme
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=list(config.trustedProxies))
    return app
