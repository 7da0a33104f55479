"""The HTTP client under an ``openai`` SDK client: a connection pool sized to the run, and no
TLS set-up for a plain ``http://`` model server.

The SDK documents one client per process (per event loop), reused; a run is that unit here
(:mod:`wopeval.engine.scope`). The HTTP client is the SDK's own ``DefaultAsyncHttpxClient``
(its defaults: redirects followed, its timeout), given through the SDK's public
``http_client=``, with two differences: its pool holds as many connections as the run has
trials at once, and, for a plain-HTTP base URL with no proxy configured in the environment, a
transport that makes a verified TLS context only if a request ever goes to ``https://`` (a
redirect). The SDK's default builds one per client, loading the CA bundle (~25 ms of CPU).

The SDK's HTTP package is found from its own client class: ``httpx2`` from openai 3, ``httpx``
before it; both have the same public API.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from wopeval.agents.cassette import active_cassette
from wopeval.agents.cassette_transport import cassette_transport


def http_package(openai: Any) -> ModuleType:
    """The HTTP package whose ``AsyncClient`` the SDK's ``http_client=`` must be."""
    for klass in openai.DefaultAsyncHttpxClient.__mro__:
        if klass.__name__ == "AsyncClient":
            return importlib.import_module(klass.__module__.partition(".")[0])
    raise RuntimeError("the openai SDK's HTTP client class has no AsyncClient base")


def _plain_http(base_url: str | None) -> bool:
    """A base URL over plain HTTP that no environment proxy setting reroutes."""
    if base_url is None or urlsplit(base_url).scheme.lower() != "http":
        return False
    import urllib.request  # as httpx reads the environment's proxies

    return not urllib.request.getproxies()


def _tls_on_demand(httpx: ModuleType, limits: Any) -> Any:
    """A transport that sends ``http://`` requests over a pool without TLS and makes the
    verified (default) transport for ``https://`` only when one is asked for."""

    class TlsOnDemand(httpx.AsyncBaseTransport):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            # verify=False only skips loading the CA bundle: this pool never sees https.
            self._plain = httpx.AsyncHTTPTransport(verify=False, limits=limits)
            self._tls: Any = None

        async def handle_async_request(self, request: Any) -> Any:
            if request.url.scheme == "http":
                return await self._plain.handle_async_request(request)
            if self._tls is None:
                self._tls = httpx.AsyncHTTPTransport(limits=limits)
            return await self._tls.handle_async_request(request)

        async def aclose(self) -> None:
            await self._plain.aclose()
            if self._tls is not None:
                await self._tls.aclose()

    return TlsOnDemand()


def http_client(openai: Any, base_url: str | None, connections: int) -> Any:
    """The SDK's default async HTTP client with a pool of ``connections`` (all kept alive); under
    a model cassette (:mod:`wopeval.agents.cassette`), its transport records or replays."""
    httpx = http_package(openai)
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    cassette = active_cassette()
    if cassette is not None and cassette.mode == "replay":  # no transport under it: no socket
        transport = cassette_transport(httpx, cassette, None)
        return openai.DefaultAsyncHttpxClient(limits=limits, transport=transport)
    transport = _tls_on_demand(httpx, limits) if _plain_http(base_url) else None
    if cassette is not None:
        inner = transport or httpx.AsyncHTTPTransport(limits=limits)
        transport = cassette_transport(httpx, cassette, inner)
    if transport is not None:
        return openai.DefaultAsyncHttpxClient(limits=limits, transport=transport)
    return openai.DefaultAsyncHttpxClient(limits=limits)
