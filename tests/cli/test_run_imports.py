"""``wopeval run`` reaches its first trial without what it does not need."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# Not on the path to the first trial of a plain ``--agent`` run (the host, numpy, the exports
# and the conformance kit; rich, the agent-definition builders, MCP and the report's renderer
# are imported where a run uses them: a progress bar, --agent-file/--model, --mcp, the report).
# The detail view's cells (wopeval.grading.detail, a small pure module) are folded as the run
# is recorded, so that module is needed from the start.
NOT_BEFORE_FIRST_TRIAL = (
    "wopeval.engine.distributed",  # a Ray run's
    "wopeval.agents.example",  # the entry-point agents, looked up when an id needs them
    "wopeval.host",
    "numpy",
    "wopeval.exports",
    "wopeval.conformance",
    "rich",
    "wopeval.agents.build",
    "wopeval.agents.definition",
    "wopeval.engine.mcp_tools",
    "wopeval.cli.render",
)


def test_wopeval_run_imports_only_what_its_first_trial_needs(tmp_path: Path) -> None:
    marker = tmp_path / "modules.json"
    (tmp_path / "first_agent.py").write_text(
        "import json, sys\n"
        "async def agent(task_input, ctx):\n"
        f"    open({str(marker)!r}, 'w').write(json.dumps(sorted(sys.modules)))\n"
        "    return 'ok'\n"
    )
    suite = {
        "suiteId": "core.test.evals.startup",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [{"taskId": "t", "input": {},
                   "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}}],
    }  # fmt: skip
    (tmp_path / "one.json").write_text(json.dumps(suite))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    done = subprocess.run(
        [sys.executable, "-m", "wopeval", "run", "one.json", "--agent", "first_agent:agent",
         "--store", str(tmp_path / "s.db"), "--json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    modules = set(json.loads(marker.read_text()))
    loaded = [m for m in NOT_BEFORE_FIRST_TRIAL if m in modules]
    assert loaded == []
    assert "wopeval.events.store" in modules  # the probe saw a real run's modules
