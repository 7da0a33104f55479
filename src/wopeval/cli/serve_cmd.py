"""``wopeval serve``: the OpenWOP v2 host (docs/host.md) in uvicorn."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Annotated

import typer

from wopeval.cli.common import fail_input, store_option
from wopeval.host.config import (
    DEV_TENANT,
    ConfigError,
    HostConfig,
    default_config,
    load_config,
    new_dev_key,
)

GRACEFUL_SHUTDOWN_S = 5


def _config(config_path: Path | None, api_key: str | None) -> tuple[HostConfig, str | None]:
    """The config to serve, and the dev key to print (only when this command made it up)."""
    if api_key is not None and not re.fullmatch(r"[\x21-\x7e]{1,512}", api_key):
        fail_input("--api-key must be 1–512 visible ASCII characters")
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

    from wopeval.host.app import create_app

    host_config, printed_key = _config(config, api_key)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    for tenant in host_config.weak_keys():
        logging.getLogger("wopeval.host").warning("the API key of tenant %r is short", tenant)
    if printed_key is not None:
        typer.echo(f"wopeval serve: dev API key (tenant {DEV_TENANT!r}): {printed_key}", err=True)
    app = create_app(host_config, store_url=store)
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level=log_level,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
    )


def register(app: typer.Typer) -> None:
    app.command()(serve)


__all__ = ["register", "serve"]
