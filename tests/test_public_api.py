"""The public surface is pinned, and ``import wopeval`` stays light."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import wopeval

EXPECTED = [
    "AgentContext",
    "AgentEvalSuite",
    "ConversationEnded",
    "EvalResult",
    "EvalSummary",
    "EventStore",
    "GradingOptions",
    "Judge",
    "ObservedCall",
    "Registry",
    "RunSettings",
    "SuiteError",
    "ToolResult",
    "Usage",
    "__version__",
    "build_summary",
    "compare_summaries",
    "evaluate",
    "grade_trajectory",
    "load_suite",
    "parse_suite",
    "pass_at_k",
    "pass_hat_k",
]


def test_exported_names_are_pinned() -> None:
    assert sorted(wopeval.__all__) == sorted(EXPECTED)
    for name in wopeval.__all__:
        assert getattr(wopeval, name) is not None, name


def test_import_wopeval_loads_no_heavy_dependency() -> None:
    code = (
        "import json, sys; import wopeval; "
        "print(json.dumps(sorted(m for m in ('sqlalchemy', 'scipy', 'numpy', 'fastapi', "
        "'opentelemetry', 'ray', 'pydantic', 'typer') if m in sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


async def test_evaluate_runs_a_python_agent_end_to_end(tmp_path: Path) -> None:
    async def echo(task_input: Any, ctx: wopeval.AgentContext) -> Any:
        found = await ctx.call_tool("kb:search", {"q": task_input["q"]})
        return found.value

    suite = wopeval.parse_suite(
        {
            "suiteId": "core.test.evals.api",
            "version": "1.0.0",
            "modes": ["golden"],
            "tasks": [
                {
                    "taskId": "t",
                    "input": {"q": "x"},
                    "expected": {
                        "kind": "golden",
                        "match": {"strategy": "exact", "value": "hit"},
                        "trajectory": {"match": "exact", "calls": [{"tool": "kb:search"}]},
                    },
                    "fixtures": {
                        "onMiss": "fail",
                        "toolResponses": [{"tool": "kb:search", "response": "hit"}],
                    },
                }
            ],
        }
    )
    result = await wopeval.evaluate(suite, echo, store=str(tmp_path / "s.db"))
    assert result.passed
    assert result.summary.tasks[0].trajectory is not None
    assert result.summary.tasks[0].trajectory.matched
