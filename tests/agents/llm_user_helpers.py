"""Helpers for the LLM user's tests: one scripted server answering the agent's model and the
user's model, each from its own script (told apart by the request's ``model``)."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from tests.agents.helpers import AGENT_ID, agent_registry
from tests.engine.helpers import Ran, make_suite, run_suite
from wopeval.agents.scripted_openai import HttpError, Reply, ScriptedOpenAI, Step
from wopeval.engine.registry import Registry
from wopeval.events.store import EventStore
from wopeval.suite.models import AgentEvalSuite

USER_MODEL = "user-model"
KEY = "x-wopeval-user"


class TwoModels:
    """A step for :class:`ScriptedOpenAI` (``repeat_last``) that answers the user's model from
    ``user`` and the agent's from ``agent``, each request in turn; the bodies each received."""

    def __init__(self, agent: Iterable[Step], user: Iterable[Step]) -> None:
        self._lock = threading.Lock()
        self.agent = list(agent)
        self.user = list(user)
        self.agent_bodies: list[dict[str, Any]] = []
        self.user_bodies: list[dict[str, Any]] = []

    def __call__(self, body: dict[str, Any]) -> Reply | HttpError:
        with self._lock:
            mine = body.get("model") == USER_MODEL
            (self.user_bodies if mine else self.agent_bodies).append(body)
            queue = self.user if mine else self.agent
            step: Step = queue.pop(0) if queue else HttpError(500, "the script has no more steps")
        return step(body) if callable(step) else step


def server_of(models: TwoModels) -> ScriptedOpenAI:
    return ScriptedOpenAI([models], repeat_last=True)


def llm_user(base_url: str, **extra: Any) -> dict[str, Any]:
    return {
        "kind": "llm",
        "model": USER_MODEL,
        "baseUrl": base_url,
        "persona": "A traveller in a hurry.",
        "instructions": "Move your flight to Friday; give your booking reference when asked.",
        "facts": ["Your booking reference is ABC123."],
        "maxReplyChars": 500,
        **extra,
    }


def user_suite(user: dict[str, Any], expected: str, **extra: Any) -> AgentEvalSuite:
    task: dict[str, Any] = {
        "taskId": "change",
        "input": "I want to change my flight.",
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": expected}},
        KEY: user,
        **extra,
    }
    return make_suite([task])


async def run_with_user(
    store: EventStore,
    server: ScriptedOpenAI,
    suite: AgentEvalSuite,
    *,
    registry: Registry | None = None,
    agent: dict[str, Any] | None = None,
) -> Ran:
    registry = registry or agent_registry(server, agent=agent)
    return await run_suite(store, suite, agent_id=AGENT_ID, registry=registry)
