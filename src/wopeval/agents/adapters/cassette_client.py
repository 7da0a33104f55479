"""The model client a framework adapter gives its framework while a model cassette is in force
(``--record-model`` / ``--replay-model``, :mod:`wopeval.agents.cassette`): an ``openai`` SDK
client over the run's HTTP client, whose transport records or replays, so the framework's own
loop makes its model requests through the cassette and, when replaying, opens no socket.

An adapter whose framework cannot be given such a client refuses the run before any trial
(:func:`refuse`), naming the agent and why: a cassette never lets a request go live unseen.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from wopeval.agents.cassette import Cassette
from wopeval.agents.clients import http_client
from wopeval.engine.scope import current_scope
from wopeval.errors import UserError

__all__ = ["cassette_http", "environment_base_url", "openai_client", "option_of", "refuse"]


def option_of(cassette: Cassette) -> str:
    """The command-line option that put ``cassette`` in force."""
    return "--record-model" if cassette.mode == "record" else "--replay-model"


def refuse(cassette: Cassette, agent: str, why: str) -> UserError:
    """The refusal of a cassette for an agent whose model requests it cannot carry."""
    return UserError(
        f"{option_of(cassette)}: {agent}: {why}, so its model requests would not pass through "
        "the cassette (docs/cassettes.md lists what is covered)"
    )


async def _aclose(client: Any) -> None:
    await client.aclose()


@asynccontextmanager
async def cassette_http(base_url: str | None) -> AsyncIterator[Any]:
    """The HTTP client under the SDK clients a framework gets: in a run, the run's one client
    for ``base_url`` (closed when the run ends); outside one, a client for this block."""
    import openai

    scope = current_scope()
    if scope is None:
        own = http_client(openai, base_url, 1)
        try:
            yield own
        finally:
            await own.aclose()
        return
    connections = scope.concurrency

    def make() -> Any:
        return http_client(openai, base_url, connections)

    yield scope.shared(("cassette-http", base_url), make, _aclose)


def openai_client(http: Any) -> Any:
    """An SDK client as a framework makes one by default (its base URL and key from the
    environment: ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``) over ``http``. With no key in the
    environment (a replay needs none) it sends a placeholder, never stored."""
    import openai

    key = os.environ.get("OPENAI_API_KEY") or "not-needed"
    return openai.AsyncOpenAI(api_key=key, http_client=http)


def environment_base_url() -> str | None:
    """The base URL an SDK client made from the environment uses (None: the SDK's default)."""
    return os.environ.get("OPENAI_BASE_URL") or None
