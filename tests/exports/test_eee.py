"""Every Eval Ever export, validated by the ``every-eval-ever`` package's own validator.

The validator needs Python ≥ 3.12 (wopeval supports 3.11), so the test finds a newer
interpreter on ``PATH`` (``python3.12`` …), makes a virtual environment for it under the
repository's ``.wopeval-test-cache/`` and installs ``every-eval-ever`` there with pip
(:mod:`tests.exports.eee_venv`; the test session starts that in the background as it begins, and
the test waits for it, saying so on the terminal). Without such an interpreter the test fails,
naming what to install — it is never skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.exports import eee_venv
from wopeval.cli.app import app
from wopeval.exports.eee import CI_METHOD, STDERR_METHOD

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart" / "suite.yaml"


def _say(config: pytest.Config, line: str) -> None:
    capture = config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(f"\n[wopeval tests] {line}", file=sys.stderr, flush=True)


def _wait_for_background_build(config: pytest.Config) -> int:
    """The lock, once the session's background build (if any) has ended; fails if it failed."""
    background = os.environ.get(eee_venv.ENV) == "1"
    if background and not eee_venv.STATUS.exists():
        _say(config, f"waiting for the EEE validator venv made in the background ({eee_venv.LOG})")
    fd = eee_venv.lock()
    status = eee_venv.STATUS.read_text() if eee_venv.STATUS.exists() else "ok"
    if background and status != "ok":
        os.close(fd)
        pytest.fail(f"making the EEE validator venv in the background {status}")
    return fd


@pytest.fixture(scope="module")
def eee_validator(pytestconfig: pytest.Config) -> Path:
    """The ``every_eval_ever`` command of a Python ≥ 3.12 venv, made on first use (see
    :mod:`tests.exports.eee_venv`: the session starts making it in the background)."""
    fd = _wait_for_background_build(pytestconfig)
    try:
        python = eee_venv.python312()
        if python is None:
            pytest.fail(eee_venv.NO_PYTHON)
        venv = eee_venv.venv_for(python)
        if not eee_venv.is_ready(venv):
            _say(pytestconfig, f"making {venv} with {python} and installing {eee_venv.EEE}")
            try:
                eee_venv.make(python, venv)
            except eee_venv.BuildError as exc:
                pytest.fail(str(exc))
        return eee_venv.command_of(venv)
    finally:
        os.close(fd)


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def _export(tmp_path: Path) -> tuple[dict[str, Any], list[dict[str, Any]], list[Path]]:
    store = str(tmp_path / "s.db")
    code, out = _cli("run", str(QUICKSTART), "--store", store, "--json")
    run_id = json.loads(out)["runId"]
    code, out = _cli("export", run_id, "-f", "eee", "-o", str(tmp_path / "eee"), "--store", store)
    assert code == 0, out
    paths = [Path(line) for line in out.split()]
    aggregate = json.loads(paths[0].read_text())
    lines = [json.loads(line) for line in paths[1].read_text().splitlines()]
    return aggregate, lines, paths


def test_eee_export_passes_the_every_eval_ever_validator(
    tmp_path: Path, eee_validator: Path
) -> None:
    aggregate, instances, paths = _export(tmp_path)
    relative = [str(path.relative_to(tmp_path / "eee")) for path in paths]
    assert relative[0].startswith("data/core.wopeval.evals.support-quickstart/")
    done = subprocess.run(
        [str(eee_validator), "validate", "--format", "json", *relative],
        cwd=tmp_path / "eee",
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert [(r["file_type"], r["valid"], r["errors"]) for r in report] == [
        ("aggregate", True, []),
        ("instance", True, []),
    ]
    assert report[1]["line_count"] == len(instances)
    assert aggregate["detailed_evaluation_results"]["file_path"] == relative[1]


def test_eee_records_are_content_free_with_one_line_per_trial(tmp_path: Path) -> None:
    aggregate, instances, _ = _export(tmp_path)
    assert len(instances) == 3 * 5  # three tasks × five trials
    assert aggregate["detailed_evaluation_results"]["total_rows"] == 15
    (result,) = aggregate["evaluation_results"]
    stderr = result["score_details"]["uncertainty"]["standard_error"]
    assert stderr["method"] == STDERR_METHOD
    assert stderr["value"] >= 0
    # the quickstart's task scores 1.0, 0.8, 0.8: s = 2.6 of 3, Beta⁻¹(0.025; 2.6, 1.4) = 0.196857
    # and Beta⁻¹(0.975; 3.6, 0.4) = 0.999978
    interval = result["score_details"]["uncertainty"]["confidence_interval"]
    assert interval["lower"] == pytest.approx(0.196857, abs=1e-6)
    assert interval["upper"] == pytest.approx(0.999978, abs=1e-6)
    assert interval["confidence_level"] == 0.95
    assert interval["method"] == CI_METHOD
    # no input, output, argument or fixture content of the suite reaches a line
    text = json.dumps(instances)
    for marker in ("A-100", "crushed", "refund approved", "totalMinor", "rf-1"):
        assert marker not in text
    assert {line["interaction_type"] for line in instances} == {"agentic"}
    assert {line["messages"] == [] for line in instances} == {True}
