"""Reading commands (``wopeval runs``, ``wopeval show``) start without the heavy modules.

Each command runs in a fresh interpreter through the ``wopeval`` entry point (``main``) on a
stored one-task run; the probe prints the exit code, the output and which of the heavy
modules were imported. No time is asserted: what is imported decides the start-up, and
``bench/read_cmds.py`` measures it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from wopeval.cli.app import app

# Nothing a reading command needs: the host and viewer stacks, the statistics, the exporters,
# the model clients, the conformance kit and the comparison.
HEAVY = (
    "numpy", "scipy", "fastapi", "starlette", "uvicorn", "jinja2", "opentelemetry", "openai",
    "ray", "httpx", "jsonschema", "wopeval.host", "wopeval.viewer", "wopeval.conformance",
    "wopeval.compare", "wopeval.exports.otel", "wopeval.exports.html",
)  # fmt: skip
# Needed only where a log is folded, paged or re-graded.
ENGINE = ("wopeval.service.runs", "wopeval.engine.run")
# Needed only by a command that prints a run's detail as text (``show``, ``grade``): a listing
# and the JSON documents render no table; a listing reads no judge's spend either.
TEXT = ("rich", "wopeval.cli.render", "wopeval.grading.detail")
JUDGE = ("wopeval.engine", "wopeval.engine.judge")


def _probe(args: list[str], cwd: Path) -> tuple[int, str, list[str]]:
    watched = HEAVY + ENGINE + TEXT + JUDGE
    probe = (
        "import contextlib, io, json, sys\n"
        f"sys.argv = ['wopeval', *{args!r}]\n"
        "from wopeval.cli.app import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    try:\n        main()\n        code = 0\n"
        "    except SystemExit as exc:\n        code = exc.code\n"
        f"print(json.dumps([code, out.getvalue(), [m for m in {watched!r} if m in sys.modules]]))\n"
    )
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "80"}
    done = subprocess.run([sys.executable, "-c", probe], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120, check=True)  # fmt: skip
    code, out, loaded = json.loads(done.stdout.splitlines()[-1])
    return code, out, loaded


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A store holding one completed run of the plainest suite: one task, no trials."""
    tmp = tmp_path_factory.mktemp("read")
    suite = {
        "suiteId": "core.test.evals.read",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [{"taskId": "t", "input": {"output": "ok"},
                   "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}}],
    }  # fmt: skip
    (tmp / "one.json").write_text(json.dumps(suite))
    store = str(tmp / "s.db")
    result = CliRunner().invoke(app, ["run", str(tmp / "one.json"), "--agent",
                                      "core.conformance.agents.scripted", "--store", store,
                                      "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    listed = CliRunner().invoke(app, ["runs", "--store", store, "--json"])
    (run,) = json.loads(listed.output)["runs"]
    return tmp, store, str(run["runId"])


@pytest.mark.parametrize("as_json", [False, True])
def test_runs_imports_no_heavy_module_nor_the_engine_nor_a_renderer(
    stored: tuple[Path, str, str], as_json: bool
) -> None:
    tmp, store, run_id = stored
    code, out, loaded = _probe(["runs", "--store", store, *(["--json"] if as_json else [])], tmp)
    assert code == 0
    assert run_id in out
    assert loaded == []


def test_show_json_imports_no_heavy_module_nor_the_engine(stored: tuple[Path, str, str]) -> None:
    """A JSON document renders no table; the judge's spend is read (the engine's package with
    it), the run service and the engine's run loop are not."""
    tmp, store, run_id = stored
    code, out, loaded = _probe(["show", run_id, "--store", store, "--json"], tmp)
    assert code == 0
    assert json.loads(out)["status"] == "completed"
    assert [m for m in loaded if m not in JUDGE] == []


@pytest.mark.parametrize("extra", [[], ["--events"]])
def test_show_imports_no_heavy_module(stored: tuple[Path, str, str], extra: list[str]) -> None:
    tmp, store, run_id = stored
    code, out, loaded = _probe(["show", run_id, "--store", store, *extra], tmp)
    assert code == 0
    assert f"run {run_id}" in out
    assert "run.completed" in out if extra else "passed" in out.lower()
    assert [m for m in loaded if m in HEAVY] == []
    assert "rich" in loaded  # the probe sees what a text command does import
