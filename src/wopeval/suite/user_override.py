"""The command line's ``--user-model`` / ``--user-base-url``: every LLM user's model and server
replaced in a suite (a copy; the scripted users and the rest of the suite as they were)."""

from __future__ import annotations

from wopeval.suite.models import AgentEvalSuite
from wopeval.suite.user_llm import LlmUser

__all__ = ["with_user_model"]


def with_user_model(
    suite: AgentEvalSuite, model: str | None, base_url: str | None
) -> AgentEvalSuite:
    """``suite`` with every LLM user's ``model`` and ``baseUrl`` replaced by those given (the
    command line's ``--user-model`` / ``--user-base-url``); the same suite when neither is."""
    update = {k: v for k, v in (("model", model), ("baseUrl", base_url)) if v is not None}
    if not update:
        return suite
    tasks = [
        task.model_copy(update={"x_wopeval_user": user.model_copy(update=update)})
        if isinstance(user := task.x_wopeval_user, LlmUser)
        else task
        for task in suite.tasks
    ]
    return suite.model_copy(update={"tasks": tasks})
