"""Framework adapters: ``--agent pkg.module:obj`` recognises the object's framework.

Each adapter is an optional extra, imported only when an object of its framework is seen (by its
class's module, so recognising never imports a framework that is not already loaded).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wopeval.agents.definition import Price

# (framework, module, class): an instance of the class makes the object that framework's agent.
_KINDS = (
    ("agents", "agents", "Agent"),
    ("pydantic_ai", "pydantic_ai", "Agent"),
    ("langgraph", "langgraph.graph.state", "CompiledStateGraph"),
)


def _framework(obj: object) -> str | None:
    """The framework whose agent class ``obj`` is an instance of (only loaded modules count)."""
    for framework, module_name, class_name in _KINDS:
        module = sys.modules.get(module_name)
        klass = getattr(module, class_name, None) if module is not None else None
        if isinstance(klass, type) and isinstance(obj, klass):
            return framework
    return None


def is_framework_agent(obj: object) -> bool:
    return _framework(obj) is not None


def adapt(obj: Any, *, price: Price | None = None, max_cost_usd: float | None = None) -> Any:
    """``obj`` as a wopeval agent when it is a framework's agent; otherwise ``obj`` itself.
    ``price`` prices each model response's tokens; ``max_cost_usd`` bounds one trial."""
    framework = _framework(obj)
    if framework == "agents":
        from wopeval.agents.adapters.openai_agents import OpenAIAgentsAdapter

        return OpenAIAgentsAdapter(obj, price=price, max_cost_usd=max_cost_usd)
    if framework == "pydantic_ai":
        from wopeval.agents.adapters.pydantic_ai import PydanticAIAdapter

        return PydanticAIAdapter(obj, price=price, max_cost_usd=max_cost_usd)
    if framework == "langgraph":
        from wopeval.agents.adapters.langchain import LangChainAdapter

        return LangChainAdapter(obj, price=price, max_cost_usd=max_cost_usd)
    return obj
