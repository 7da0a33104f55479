"""A suite and agents for the ``wopeval ci`` tests: every task expects ``ok``; ``good`` says it
to every task, ``bad`` only to ``t0``, ``hostile`` answers with Markdown and HTML meant to render
(an image, a heading, a script) so the report must show it as text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

AGENTS = """
HOSTILE = (
    "<img src=x onerror=alert(1)>\\n# Pwned heading\\n"
    "![tracker](http://evil.example/x.png) <script>x</script> | cell"
)


async def good(task_input, ctx):
    return "ok"


async def bad(task_input, ctx):
    return "ok" if ctx.task_id == "t0" else "no"


async def hostile(task_input, ctx):
    return HOSTILE


async def crashing(task_input, ctx):
    raise RuntimeError(HOSTILE)
"""


def suite_doc(tasks: int = 8, *, suite_id: str = "core.test.evals.ci") -> dict[str, Any]:
    """The plainest suite: ``tasks`` golden tasks, no trials block, no fixtures."""
    return {
        "suiteId": suite_id,
        "version": "1.0.0",
        "modes": ["golden"],
        "thresholds": {"passScore": 0.1},
        "tasks": [
            {
                "taskId": f"t{i}",
                "input": {"n": i},
                "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}},
            }
            for i in range(tasks)
        ],
    }


def write_suite(path: Path, tasks: int = 8, *, suite_id: str = "core.test.evals.ci") -> Path:
    path.write_text(yaml.safe_dump(suite_doc(tasks, suite_id=suite_id)))
    return path


def write_agents(directory: Path, module: str = "ci_agents") -> str:
    (directory / f"{module}.py").write_text(AGENTS)
    return module
