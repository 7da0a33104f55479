"""``wopeval serve``: the OpenWOP v2 host (docs/host.md) in uvicorn.

The listening socket is bound before anything else happens: a serve that cannot listen (a busy
port, an address this machine does not have) exits 2 before its lifespan touches the store,
where start-up would otherwise fail the runs another host left unfinished. Then the store is
opened once and closed, so an unreachable or unusable store is a one-line ``--store`` error
(exit 2) rather than a lifespan traceback. Once the host is up, ``wopeval serve: listening on
http://HOST:PORT`` is printed on stderr, with the bound port (``--port 0`` picks a free one).
Exit codes: 0 after a clean stop, 2 for bad input, 3 when the host cannot start otherwise
(uvicorn's start-up failure).
"""

from __future__ import annotations

import errno
import logging
import math
import re
import socket
import sys
from contextlib import suppress
from pathlib import Path
from typing import Annotated, Any

import anyio
import typer

from wopeval.cli.common import fail_input, opened_store, store_option
from wopeval.host.config import (
    DEV_TENANT,
    ConfigError,
    HostConfig,
    default_config,
    key_weakness,
    load_config,
    new_dev_key,
)

# uvicorn's wait for open connections beyond the host's own grace period (shutdownGraceSeconds).
CONNECTION_GRACE_S = 5
EXIT_STARTUP_FAILURE = 3  # uvicorn's own code for a server that did not start


def _config(config_path: Path | None, api_key: str | None) -> tuple[HostConfig, str | None]:
    """The config to serve, and the dev key to print (only when this command made it up)."""
    if api_key is not None and not re.fullmatch(r"[\x21-\x7e]{1,512}", api_key):
        fail_input("--api-key must be 1–512 visible ASCII characters")
    if api_key is not None and (weakness := key_weakness(api_key)) is not None:
        fail_input(f"--api-key {weakness}")
    if config_path is None:
        key = api_key or new_dev_key()
        return default_config(key), (key if api_key is None else None)
    try:
        config = load_config(config_path)
    except ConfigError as exc:
        fail_input(str(exc), title=f"invalid config {config_path}")
    if api_key is not None:
        config = config.with_key(api_key)
    if not config.apiKeys:
        key = new_dev_key()
        return config.with_key(key), key
    return config, None


def _listen(host: str, port: int) -> socket.socket:
    """The bound (not yet listening) socket uvicorn will serve on, as ``uvicorn.run`` binds it
    (IPv6 for a host with ``:``, ``SO_REUSEADDR``); every failure is the caller's, exit 2."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    where = f"[{host}]:{port}" if family == socket.AF_INET6 else f"{host}:{port}"
    # IPPROTO_TCP named explicitly: asyncio sets TCP_NODELAY on accepted connections only for a
    # socket whose proto is TCP, and without it every keep-alive request waits ~40 ms (Nagle
    # against delayed ACKs).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        if sys.platform != "win32":  # Windows' SO_REUSEADDR would let two servers share a port
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            fail_input(f"--port: {where} is already in use")
        if exc.errno == errno.EACCES:
            fail_input(f"--port: no permission to listen on {where}")
        fail_input(f"--host: cannot listen on {where}: {exc.strerror or exc}")
    return sock


def _url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if sock.family == socket.AF_INET6 else f"http://{host}:{port}"


def _check_store(url: str | None) -> None:
    """Open the store once (applying migrations) and close it: a failure is exit 2 (the
    ``--store`` given), or 3 when its server cannot be reached."""

    async def probe() -> None:
        async with opened_store(url):
            pass

    anyio.run(probe)


def serve(
    store: Annotated[str | None, store_option()] = None,
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="TCP port.")] = 8000,
    config: Annotated[
        Path | None, typer.Option("--config", help="Host config file (YAML or JSON).")
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option("--api-key", help=f"Also accept this API key (tenant {DEV_TENANT!r})."),
    ] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
) -> None:
    """Serve eval runs to any OpenWOP v2 client (discovery, POST /runs, SSE, eval summaries)."""
    import uvicorn

    from wopeval.cli.startup import favour_the_loop
    from wopeval.host.app import create_app

    host_config, printed_key = _config(config, api_key)
    sock = _listen(host, port)
    try:
        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
        _check_store(store or host_config.store)
        if printed_key is not None:
            typer.echo(
                f"wopeval serve: dev API key (tenant {DEV_TENANT!r}): {printed_key}", err=True
            )
        app = create_app(host_config, store_url=store)
        favour_the_loop()  # tenants' agents run in threads beside the loop
        grace = math.ceil(host_config.shutdownGraceSeconds) + CONNECTION_GRACE_S
        settings = uvicorn.Config(
            app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=grace,
            proxy_headers=False,  # the app believes only its trustedProxies (host/app.py)
        )  # fmt: skip
        server = _announcing_server(settings, _url(sock), app)
        with suppress(KeyboardInterrupt):  # a second Ctrl-C during shutdown, as uvicorn.run
            server.run(sockets=[sock])
    finally:
        sock.close()
    if not server.started:
        raise typer.Exit(EXIT_STARTUP_FAILURE)


def _announcing_server(settings: Any, url: str, app: Any) -> Any:
    """A ``uvicorn.Server`` that prints the URL it listens on once the host has started, and
    on SIGTERM or Ctrl-C drains the host (:func:`~wopeval.host.lifecycle.begin_shutdown`)
    and exits 0 instead of re-raising the signal."""
    import uvicorn

    from wopeval.host.lifecycle import begin_shutdown

    class AnnouncingServer(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            super().handle_exit(sig, frame)
            self._captured_signals.clear()  # a drained stop is a clean stop: exit 0
            begin_shutdown(app)

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started:
                typer.echo(f"wopeval serve: listening on {url}", err=True)

    return AnnouncingServer(settings)


def register(app: typer.Typer) -> None:
    app.command()(serve)


__all__ = ["register", "serve"]
