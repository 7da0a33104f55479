"""wopeval: evaluate AI agents the way OpenWOP RFC 0244 says they should be evaluated.

The public surface is exactly ``__all__``; everything else lives in modules users need not
import. Names load lazily (PEP 562), so ``import wopeval`` stays cheap: no SQLAlchemy, SciPy or
FastAPI until something that needs them is touched.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "AgentContext": "wopeval.engine.agent",
    "AgentEvalSuite": "wopeval.suite.models",
    "ConversationEnded": "wopeval.engine.agent",
    "EvalResult": "wopeval.service.api",
    "EvalSummary": "wopeval.wire.summary",
    "EventStore": "wopeval.events.store",
    "GradingOptions": "wopeval.grading.summary",
    "Judge": "wopeval.engine.judge",
    "ObservedCall": "wopeval.grading.trajectory",
    "Registry": "wopeval.engine.registry",
    "RunSettings": "wopeval.engine.run",
    "SuiteError": "wopeval.suite.errors",
    "ToolResult": "wopeval.engine.agent",
    "Usage": "wopeval.engine.agent",
    "build_summary": "wopeval.grading.summary",
    "compare_summaries": "wopeval.compare.verdict",
    "evaluate": "wopeval.service.api",
    "grade_trajectory": "wopeval.grading.trajectory",
    "load_suite": "wopeval.suite.load",
    "parse_suite": "wopeval.suite.load",
    "pass_at_k": "wopeval.grading.stats",
    "pass_hat_k": "wopeval.grading.stats",
}

__all__ = ["__version__", *sorted(_EXPORTS)]

if TYPE_CHECKING:
    from wopeval.compare.verdict import compare_summaries as compare_summaries
    from wopeval.engine.agent import AgentContext as AgentContext
    from wopeval.engine.agent import ConversationEnded as ConversationEnded
    from wopeval.engine.agent import ToolResult as ToolResult
    from wopeval.engine.agent import Usage as Usage
    from wopeval.engine.judge import Judge as Judge
    from wopeval.engine.registry import Registry as Registry
    from wopeval.engine.run import RunSettings as RunSettings
    from wopeval.events.store import EventStore as EventStore
    from wopeval.grading.stats import pass_at_k as pass_at_k
    from wopeval.grading.stats import pass_hat_k as pass_hat_k
    from wopeval.grading.summary import GradingOptions as GradingOptions
    from wopeval.grading.summary import build_summary as build_summary
    from wopeval.grading.trajectory import ObservedCall as ObservedCall
    from wopeval.grading.trajectory import grade_trajectory as grade_trajectory
    from wopeval.service.api import EvalResult as EvalResult
    from wopeval.service.api import evaluate as evaluate
    from wopeval.suite.errors import SuiteError as SuiteError
    from wopeval.suite.load import load_suite as load_suite
    from wopeval.suite.load import parse_suite as parse_suite
    from wopeval.suite.models import AgentEvalSuite as AgentEvalSuite
    from wopeval.wire.summary import EvalSummary as EvalSummary


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'wopeval' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
