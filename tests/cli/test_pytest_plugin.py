"""The pytest plugin: ``pytest --wopeval-suite SUITE --wopeval-agent pkg:agent`` gives one test per
task, failing with the task's failure reasons (wopeval.grading.detail). Run in a subprocess in
a throwaway directory, as a team's CI would run it: each exit code (0, 1 and the usage error 4)
of a real process at least once; the gate's rules also in a pytest session of its own in this
process (:func:`_session`)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

AGENT = '''
async def agent(task_input, ctx):
    """Looks the order up, then answers what the input asks for."""
    await ctx.call_tool("crm:lookup-order", {"orderId": task_input["orderId"]})
    return task_input["say"]
'''

FIXTURES = {
    "onMiss": "fail",
    "toolResponses": [
        {"tool": "crm:lookup-order", "args": {"orderId": "A-1"}, "argsMatch": "exact",
         "response": {"status": "delivered"}},
    ],
}  # fmt: skip


def _task(task_id: str, order: str, say: str) -> dict[str, object]:
    return {
        "taskId": task_id,
        "input": {"orderId": order, "say": say},
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "fine"}},
        "fixtures": FIXTURES,
    }


# Plugins this test has no use for, which take most of a bare pytest's start-up here (several
# seconds each run): the project's own pytest settings block the first two as well.
_UNRELATED = ("-p", "no:langsmith_plugin", "-p", "no:schemathesis", "-p", "no:hypothesispytest")


def _pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *_UNRELATED, *args],
        cwd=cwd, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_pytest_plugin_gives_one_test_per_task_with_the_failure_reason(tmp_path: Path) -> None:
    (tmp_path / "myagent.py").write_text(textwrap.dedent(AGENT))
    suite = {
        "suiteId": "core.test.evals.pytest",
        "version": "1.0.0",
        "modes": ["golden"],
        "trials": {"count": 2},
        "tasks": [
            _task("answers", "A-1", "fine"),
            _task("wrong-answer", "A-1", "not fine"),
            _task("misses-fixture", "B-2", "fine"),
        ],
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
    done = _pytest(
        tmp_path, "--wopeval-suite", "suite.yaml", "--wopeval-agent", "myagent:agent",
        "--junitxml", "out.xml", "-q",
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    cases = {c.get("name"): c for c in ET.parse(tmp_path / "out.xml").iter("testcase")}
    assert set(cases) == {"answers", "wrong-answer", "misses-fixture", "wopeval gate (suite)"}
    assert cases["wopeval gate (suite)"].find("failure") is not None  # 1 of 3 tasks passed
    assert cases["answers"].find("failure") is None
    wrong = cases["wrong-answer"].find("failure")
    missed = cases["misses-fixture"].find("failure")
    assert wrong is not None
    assert missed is not None
    assert "0/2 trials passed" in (wrong.text or "")
    assert 'output does not match (exact): expected "fine", got "not fine"' in (wrong.text or "")
    assert "fixture miss (onMiss: fail)" in (missed.text or "")
    assert "crm:lookup-order" in (missed.text or "")
    assert "1 passed" in done.stdout
    assert "3 failed" in done.stdout


def _session(cwd: Path, *args: str) -> int:
    """A pytest session of its own, in this process, from ``cwd`` (its output goes to this
    test's captured stdout and stderr); its own test module is forgotten afterwards."""
    with contextlib.chdir(cwd):
        try:
            return int(pytest.main(
                ["-p", "no:cacheprovider", "-p", "no:asyncio", *_UNRELATED,
                 "--import-mode=importlib", *args],
            ))  # fmt: skip
        finally:
            sys.modules.pop("test_mine", None)


def test_pytest_plugin_needs_an_agent_and_stays_out_of_the_way_without_a_suite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "suite.yaml").write_text("suiteId: x\n")
    usage = _pytest(tmp_path, "--wopeval-suite", "suite.yaml")
    assert usage.returncode == 4  # pytest's usage error
    assert "--wopeval-suite needs --wopeval-agent" in usage.stderr
    (tmp_path / "test_plain.py").write_text("def test_ok():\n    assert True\n")
    plain = _pytest(
        tmp_path, "-q", "-W", "error", "-o", "asyncio_default_fixture_loop_scope=function"
    )
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert "1 passed" in plain.stdout
    assert _session(tmp_path, "--help") == 0
    assert "--wopeval-suite=SUITE" in capsys.readouterr().out


def _gate_suite(tmp_path: Path) -> None:
    """The plainest suite (one task, no trials) whose task fails while RFC 0244's suite gate
    passes (passScore 0), and a test of the user's own next to it."""
    from tests.cli.gate_runs import suite_doc, write_suite

    write_suite(tmp_path, suite_doc([[False]], pass_score=0.0))
    mine = "import os\n\ndef test_mine():\n    assert not os.environ.get('FAIL_MINE')\n"
    (tmp_path / "test_mine.py").write_text(mine)


GATED = ("--wopeval-suite", "suite.json", "--wopeval-agent", "core.conformance.agents.scripted",
         "-q", "-rA")  # fmt: skip


def _gated(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _pytest(tmp_path, *GATED, *args)


def test_the_session_outcome_follows_the_gate_with_each_task_still_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _gate_suite(tmp_path)
    assert _session(tmp_path, *GATED, "--junitxml", "suite.xml") == 0
    passed = capsys.readouterr().out
    assert "FAILED suite.json::task-0" in passed  # the task's own test, still reported
    assert "PASSED suite.json::wopeval gate (suite)" in passed
    assert "wopeval gate suite passed (failing task tests do not fail the session)" in passed
    cases = {c.get("name"): c for c in ET.parse(tmp_path / "suite.xml").iter("testcase")}
    assert cases["task-0"].find("failure") is not None
    assert cases["wopeval gate (suite)"].find("failure") is None
    assert _session(tmp_path, *GATED, "--wopeval-gate", "every-task") == 1
    failed = capsys.readouterr().out
    assert "FAILED suite.json::wopeval gate (every-task)" in failed
    assert "gate every-task failed: 1 task(s) did not pass: task-0" in failed


def test_a_passing_gate_never_hides_another_failing_test(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _gate_suite(tmp_path)
    monkeypatch.setenv("FAIL_MINE", "1")
    assert _session(tmp_path, "-q", *GATED[:4]) == 1
    assert "2 failed, 1 passed" in capsys.readouterr().out


def test_an_unknown_gate_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _gate_suite(tmp_path)
    assert _session(tmp_path, *GATED, "--wopeval-gate", "nope") == 4  # pytest's usage error
    assert "--wopeval-gate: 'nope' is not one of suite, every-task" in capsys.readouterr().err


def test_the_session_follows_the_gate_with_tests_in_other_processes(tmp_path: Path) -> None:
    """Under pytest-xdist only the reports reach the session: they name each test's part."""
    _gate_suite(tmp_path)
    done = _gated(tmp_path, "-n", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAILED suite.json::task-0" in done.stdout
    assert "wopeval gate suite passed (failing task tests do not fail the session)" in done.stdout
