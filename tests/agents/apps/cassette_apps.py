"""Framework agents whose model wopeval can point at its cassette transport, as a user would
write them: each names an OpenAI model (served from ``OPENAI_BASE_URL``), or, for pydantic-ai,
holds an ``OpenAIChatModel`` whose client was made for ``CASSETTE_APP_URL`` at import."""

from __future__ import annotations

import os

from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from agents import Agent, function_tool, set_default_openai_api

REAL_CALLS: list[str] = []

# The scripted server speaks chat completions; the SDK's default is the Responses API.
set_default_openai_api("chat_completions")


@function_tool
def lookup_order(order_id: str) -> dict[str, str]:
    """Look an order up (the real tool: a fixture must replace it)."""
    REAL_CALLS.append(order_id)
    return {"status": "real"}


oai_named = Agent(name="support", instructions="Help.", model="m1", tools=[lookup_order])

pyd_named = PydanticAgent("openai-chat:m1", name="support")

_client_url = os.environ.get("CASSETTE_APP_URL", "http://127.0.0.1:9/v1")
pyd_object = PydanticAgent(
    OpenAIChatModel(
        "m1", provider=OpenAIProvider(base_url=_client_url, api_key="sk-app-object-secret")
    ),
    name="support",
)


def _lookup(order_id: str) -> dict[str, str]:
    """Look an order up (the real tool: a fixture must replace it)."""
    REAL_CALLS.append(order_id)
    return {"status": "real"}


for _agent in (pyd_named, pyd_object):
    _agent.tool_plain(name="lookup_order")(_lookup)
