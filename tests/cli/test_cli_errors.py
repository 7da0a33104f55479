"""Bad input at the CLI: one clear line naming the problem, exit 2, never a traceback.

Also: Ctrl-C cancels a run cleanly; SIGTERM interrupts it, resumable.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from wopeval.cli.app import app
from wopeval.wire.events import TERMINAL_TYPES

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = str(ROOT / "examples" / "quickstart" / "suite.yaml")


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def _no_traceback(code: int, out: str, needle: str) -> None:
    assert code == 2, out
    assert needle in " ".join(out.split()), out  # the console wraps long lines
    assert "Traceback" not in out


@pytest.mark.parametrize(
    ("store", "needle"),
    [
        ("mysql://u@h/db", "--store"),
        ("/etc/passwd", "--store"),
    ],
)
def test_bad_stores_are_one_line_errors(store: str, needle: str) -> None:
    for args in (("runs", "--store", store), ("run", QUICKSTART, "--store", store)):
        code, out = _run(*args)
        _no_traceback(code, out, needle)
        assert "--mcp" not in out


def test_a_directory_is_not_a_store(tmp_path: Path) -> None:
    code, out = _run("runs", "--store", str(tmp_path))
    _no_traceback(code, out, "--store")


@pytest.mark.parametrize(
    ("option", "value"),
    [("--trial-timeout", "inf"), ("--max-cost", "inf"), ("--trial-timeout", "1e400")],
)
def test_infinite_ceilings_and_timeouts_are_refused(
    option: str, value: str, tmp_path: Path
) -> None:
    code, out = _run("run", QUICKSTART, option, value, "--store", str(tmp_path / "s.db"))
    _no_traceback(code, out, option)


def test_unknown_agent_is_reported_before_target_advice(tmp_path: Path) -> None:
    code, out = _run(
        "run", QUICKSTART, "--agent", "nosuch.agent", "--store", str(tmp_path / "s.db")
    )
    _no_traceback(code, out, "not registered")
    assert "--override-target" not in out


def test_outputs_grades_and_comparisons_refuse_clearly(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    _, out = _run("run", QUICKSTART, "--store", store, "--json")
    quick = json.loads(out)["runId"]
    other = tmp_path / "other.json"
    other.write_text(json.dumps({
        "suiteId": "core.test.evals.other", "version": "1.0.0", "modes": ["golden"],
        "tasks": [{"taskId": "t", "input": {"output": "x"},
                   "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "x"}}}],
    }))  # fmt: skip
    _code, out = _run("run", str(other), "--agent", "core.conformance.agents.scripted",
                     "--store", store, "--json")  # fmt: skip
    other_id = json.loads(out)["runId"]
    _no_traceback(*_run("export", quick, "--store", store, "-o", str(tmp_path)), "--output")
    missing_dir = str(tmp_path / "nodir" / "x.html")
    _no_traceback(*_run("report", quick, "--store", store, "-o", missing_dir), "--output")
    _no_traceback(*_run("compare", quick, other_id, "--store", store), "different suites")


def test_grade_log_explains_unreadable_logs(tmp_path: Path) -> None:
    log = tmp_path / "obj.json"
    log.write_text('{"a": 1}')
    code, out = _run("grade-log", str(log), "--suite", QUICKSTART, "--agent", "x")
    _no_traceback(code, out, "expected a JSON array of events")
    log.write_text('{"eventId": "short"}\nnot json\n')
    code, out = _run("grade-log", str(log), "--suite", QUICKSTART, "--agent", "x")
    _no_traceback(code, out, "line 2: not JSON")
    log.write_text('[{"eventId": "short"}]')
    code, out = _run("grade-log", str(log), "--suite", QUICKSTART, "--agent", "x")
    _no_traceback(code, out, "event 0:")


def test_runs_never_cuts_the_run_id(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    _code, out = _run("run", QUICKSTART, "--store", store, "--json")
    run_id = json.loads(out)["runId"]
    listing = subprocess.run(
        [sys.executable, "-m", "wopeval.cli", "runs", "--store", store],
        capture_output=True, text=True, env={**os.environ, "COLUMNS": "80"}, check=True,
    )  # fmt: skip
    assert run_id in listing.stdout


def _wait_until_a_trial_runs(store: str) -> None:
    """Signal only once the run is really executing (its handlers are installed by then)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if Path(store).exists():
            _, out = _run("runs", "--store", store, "--json")
            runs = json.loads(out)["runs"] if out.strip().startswith("{") else []
            if runs and runs[0]["status"] == "running":
                _, shown = _run("show", runs[0]["runId"], "--store", store, "--json", "--events")
                events = json.loads(shown)["events"]
                if any(e["type"] == "agent.invocation-started" for e in events):
                    return
        time.sleep(0.2)
    raise AssertionError("the run never started a trial")


def _slow_run(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen[str], str, dict[str, str]]:
    """A ``wopeval run`` of one trial that takes 30 s, started and executing its trial."""
    (tmp_path / "slowagent.py").write_text(
        "import anyio\nasync def slow(i, ctx):\n    await anyio.sleep(30)\n    return 'x'\n"
    )
    suite = tmp_path / "slow.json"
    suite.write_text(json.dumps({
        "suiteId": "core.test.evals.slow", "version": "1.0.0", "modes": ["golden"],
        "tasks": [{"taskId": "t", "input": {},
                   "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "x"}}}],
    }))  # fmt: skip
    store = str(tmp_path / "s.db")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    command = [sys.executable, "-m", "wopeval.cli", "run", str(suite), "--agent",
               "slowagent:slow", "--store", store, *extra]  # fmt: skip
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    _wait_until_a_trial_runs(store)
    return process, store, env


def _events_of(store: str) -> tuple[dict[str, Any], list[str]]:
    _, out = _run("runs", "--store", store, "--json")
    (run,) = json.loads(out)["runs"]
    _code, out = _run("show", run["runId"], "--store", store, "--json", "--events")
    return run, [e["type"] for e in json.loads(out)["events"]]


def test_ctrl_c_cancels_the_run_cleanly(tmp_path: Path) -> None:
    process, store, _ = _slow_run(tmp_path)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 1, err
    assert "cancelled" in err
    run, types = _events_of(store)
    assert run["status"] == "cancelled"
    assert types[-1] == "run.cancelled"
    assert types.count("agent.invocation-started") == types.count("agent.invocation-completed")


def test_sigterm_interrupts_the_run_and_leaves_it_resumable(tmp_path: Path) -> None:
    """What Kubernetes, systemd or a CI time-out sends: the brackets are closed, no terminal
    event is written, and ``--resume`` (told on stderr and in --json) finishes the run."""
    process, store, env = _slow_run(tmp_path, "--json")
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 1, err
    doc = json.loads(out)
    assert doc["status"] == "interrupted"
    assert f"wopeval run --resume {doc['runId']} --store {store}" in err
    assert doc["resume"] == f"wopeval run --resume {doc['runId']} --store {store}"
    run, types = _events_of(store)
    assert run["status"] == "running"
    assert not set(types) & set(TERMINAL_TYPES)
    assert types.count("agent.invocation-started") == types.count("agent.invocation-completed")
    (tmp_path / "slowagent.py").write_text("async def slow(i, ctx):\n    return 'x'\n")
    resumed = subprocess.run(
        [sys.executable, "-m", "wopeval.cli", "run", "--resume", doc["runId"], "--store", store,
         "--json"], env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["summary"]["passed"] is True
    _, types = _events_of(store)
    assert types.count("eval.scored") == 1
    assert types[-1] == "run.completed"


def test_an_unreachable_store_server_is_a_store_error_not_bad_input() -> None:
    """Exit 3 (a run or store error, as the README says), naming the store: the URL may be
    right and the server down; a database that does not exist is the caller's input (2)."""
    from tests.host.helpers import free_port

    store = f"postgresql://postgres@127.0.0.1:{free_port()}/test"
    for args in (("runs", "--store", store), ("run", QUICKSTART, "--store", store)):
        code, out = _run(*args)
        assert code == 3, out
        assert "store error" in out
        assert "cannot reach the event store" in " ".join(out.split())
        assert "Traceback" not in out


def test_grade_log_takes_the_suite_s_target_agent_by_default(tmp_path: Path) -> None:
    """As ``import-otlp`` does; a suite without one names the missing option."""
    log = tmp_path / "log.jsonl"
    log.write_text("")
    code, out = _run("grade-log", str(log), "--suite", str(QUICKSTART), "--json")
    assert code == 1, out  # graded: no trial in the log, every task not run
    assert "--agent is required" not in out
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({
        "suiteId": "core.test.evals.bare", "version": "1.0.0", "modes": ["golden"],
        "tasks": [{"taskId": "t", "input": {},
                   "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "x"}}}],
    }))  # fmt: skip
    code, out = _run("grade-log", str(log), "--suite", str(bare))
    assert code == 2
    assert "--agent is required" in " ".join(out.split())


def test_an_unreachable_store_s_password_is_not_printed() -> None:
    from tests.host.helpers import free_port

    code, out = _run("runs", "--store", f"postgresql://postgres:s3cret@127.0.0.1:{free_port()}/t")
    assert code == 3, out
    assert "s3cret" not in out
    assert "postgres:***@" in out


def test_a_long_path_in_an_error_is_never_cut_mid_word(tmp_path: Path) -> None:
    """At 80 columns the console would fold a long path; the error leaves wrapping to the
    terminal, so the line stays one line a reader (or a CI log search) can copy whole."""
    deep = tmp_path / ("d" * 60) / ("e" * 60) / "missing-suite.yaml"
    done = subprocess.run(
        [sys.executable, "-m", "wopeval", "run", str(deep), "--agent", "x"],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "COLUMNS": "80", "NO_COLOR": "1"},
    )  # fmt: skip
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.startswith(f"invalid suite {deep}: ")
    assert line.endswith("cannot read file: No such file or directory")
