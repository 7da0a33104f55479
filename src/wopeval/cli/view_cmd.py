"""``wopeval view``: the web viewer over a local store, on the loopback interface by default.

Prints ``wopeval view: http://HOST:PORT/`` once it listens (``--port 0`` picks a free port).
Exit codes: 0 after a clean stop, 2 for bad input (a store that does not exist, a busy port).
"""

from __future__ import annotations

import socket
from contextlib import suppress
from typing import Annotated, Any

import typer

from wopeval.cli.common import check_store_path, store_option
from wopeval.cli.serve_cmd import EXIT_STARTUP_FAILURE, _listen, _url


def view(
    store: Annotated[str | None, store_option()] = None,
    host: Annotated[
        str, typer.Option(help="Interface to listen on (loopback: only this machine).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="TCP port (0: a free one).")] = 8765,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "warning",
) -> None:
    """Browse stored runs, trials, trajectories and comparisons in a web browser."""
    import uvicorn

    from wopeval.viewer import create_viewer_app

    check_store_path(store, must_exist=True)
    sock = _listen(host, port)
    try:
        settings = uvicorn.Config(create_viewer_app(store), host=host, port=port,
                                  log_level=log_level)  # fmt: skip
        server = _server(settings, _url(sock) + "/")
        with suppress(KeyboardInterrupt):
            server.run(sockets=[sock])
    finally:
        sock.close()
    if not server.started:
        raise typer.Exit(EXIT_STARTUP_FAILURE)


def _server(settings: Any, url: str) -> Any:
    import uvicorn

    class Announcing(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started:
                typer.echo(f"wopeval view: {url}", err=True)

    return Announcing(settings)


def register(app: typer.Typer) -> None:
    app.command()(view)


__all__ = ["register", "view"]
