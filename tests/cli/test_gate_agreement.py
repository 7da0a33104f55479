"""One gate behind every output: for random runs graded by the real engine, ``wopeval run``'s
exit code and ``--json``, the JUnit export's gate case, the Markdown summary, ``show`` and the
pytest plugin give the same verdict under each gate, and the verdict is the gate's rule
applied to the run's summary."""

from __future__ import annotations

import contextlib
import json
import tempfile
from fractions import Fraction
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tests.cli.gate_runs import SCRIPTED, junit_gate, markdown_passed, suites, write_suite
from wopeval.cli.app import app
from wopeval.grading.gate import GATES
from wopeval.grading.intervals import clopper_pearson
from wopeval.grading.summary_intervals import summary_intervals
from wopeval.wire.summary import EvalSummary

_UNRELATED = ("-p", "no:langsmith_plugin", "-p", "no:schemathesis", "-p", "no:hypothesispytest")


def _rule(summary: EvalSummary, gate: str, doc: dict[str, Any]) -> bool:
    """Each gate's documented rule, read off the summary (and the suite's passScore)."""
    every = summary.passed and all(task.passed for task in summary.tasks)
    if gate in ("suite", "every-task"):
        return summary.passed if gate == "suite" else every
    assert gate.endswith("lower-bound"), f"no rule here for gate {gate!r}: add it"
    given = (doc.get("thresholds") or {}).get("passScore")
    pass_score = Fraction(repr(1.0 if given is None else float(given)))
    aggregate = summary_intervals(summary).aggregate
    suite = summary.passed and aggregate is not None and aggregate.low_exact >= pass_score
    if gate == "lower-bound":
        return suite
    rates = [clopper_pearson(t.trials.passedCount, t.trials.n) if t.trials else
             clopper_pearson(int(t.passed), 1) for t in summary.tasks]  # fmt: skip
    return suite and every and all(rate.low_exact >= pass_score for rate in rates)


def _cli_outputs(runner: CliRunner, suite: Path, store: str, gate: str) -> dict[str, Any]:
    """The run through the CLI, then its stored verdict read back by every other output."""
    ran = runner.invoke(app, ["run", str(suite), "--gate", gate, "--store", store, "--json"])
    assert ran.exit_code in (0, 1), ran.output
    doc = json.loads(ran.stdout)
    run_id = doc["runId"]
    junit = runner.invoke(app, ["export", run_id, "-f", "junit", "--store", store])
    markdown = runner.invoke(app, ["export", run_id, "-f", "markdown", "--store", store])
    shown = runner.invoke(app, ["show", run_id, "--json", "--store", store])
    assert (junit.exit_code, markdown.exit_code, shown.exit_code) == (0, 0, 0)
    junit_passed, case = junit_gate(junit.stdout, gate)
    return {
        "summary": EvalSummary.model_validate(doc["summary"]),
        "verdicts": {
            "run exit code": ran.exit_code == 0,
            "run --json": doc["gate"]["passed"],
            "junit gate case": junit_passed,
            "markdown": markdown_passed(markdown.stdout, gate),
            "show --json": json.loads(shown.stdout)["gate"]["passed"],
        },
        "failing": doc["gate"]["failingTaskIds"],
        "junit case": case,
    }


@settings(max_examples=30, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=suites(), gate=st.sampled_from(sorted(GATES)))
def test_every_output_gives_the_gates_verdict(doc: dict[str, Any], gate: str) -> None:
    runner = CliRunner()
    with tempfile.TemporaryDirectory() as tmp:
        suite = write_suite(Path(tmp), doc)
        out = _cli_outputs(runner, suite, str(Path(tmp) / "s.db"), gate)
    summary = out["summary"]
    expected = _rule(summary, gate, doc)
    event(f"suite passed: {summary.passed}; every task: {summary.passedCount == summary.taskCount}")
    assert out["verdicts"] == dict.fromkeys(out["verdicts"], expected), out["verdicts"]
    not_passed = [t.taskId for t in summary.tasks if not t.passed]
    # A failing gate names every task that did not pass (first); a passing one names none.
    if expected or not gate.startswith("every-task-"):
        assert out["failing"] == ([] if expected else not_passed)
    else:  # and then the tasks that passed but whose pass rate's bound fell short
        assert out["failing"][: len(not_passed)] == not_passed
    failure = out["junit case"].find("failure")
    for task_id in not_passed if not expected else ():
        assert failure is not None
        assert task_id in (failure.text or "")


def _plugin(directory: Path, gate: str) -> tuple[int, Path]:
    """The plugin in a pytest session of its own, in this process: what is compared here is the
    verdict, and tests/cli/test_pytest_plugin.py pins the exit code of a real process."""
    xml = directory / "pytest.xml"
    with contextlib.chdir(directory):
        code = pytest.main(
            ["-p", "no:cacheprovider", "-p", "no:asyncio", *_UNRELATED, "-q",
             "--wopeval-suite", "suite.json", "--wopeval-agent", SCRIPTED,
             "--wopeval-gate", gate, "--junitxml", str(xml)],
        )  # fmt: skip
    assert code in (0, 1), code
    return int(code), xml


@pytest.mark.parametrize("gate", sorted(GATES))
@settings(max_examples=3, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=suites(max_tasks=3, max_trials=3))
def test_the_pytest_plugin_agrees_with_the_cli(gate: str, doc: dict[str, Any]) -> None:
    """The same generated suites through the pytest plugin (its own pytest session) and the
    CLI: the session's outcome and its gate test follow the gate; every task is still reported,
    failing exactly when its task did not pass."""
    runner = CliRunner()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        suite = write_suite(directory, doc)
        out = _cli_outputs(runner, suite, str(directory / "s.db"), gate)
        code, xml = _plugin(directory, gate)
        plugin_gate_passed, _ = junit_gate(xml, gate)
        tasks = {c.get("name"): c.find("failure") is None for c in ET.parse(xml).iter("testcase")}
    summary = out["summary"]
    expected = _rule(summary, gate, doc)
    assert out["verdicts"] == dict.fromkeys(out["verdicts"], expected)
    assert (code == 0, plugin_gate_passed) == (expected, expected)
    del tasks[f"wopeval gate ({gate})"]
    assert tasks == {t.taskId: t.passed for t in summary.tasks}
