"""Every Eval Ever export, validated by the ``every-eval-ever`` package's own validator.

The validator needs Python ≥ 3.12 (wopeval supports 3.11), so the test finds a newer
interpreter on ``PATH`` (``python3.12`` …), makes a virtual environment for it under the
repository's ``.wopeval-test-cache/`` and installs ``every-eval-ever`` there with pip, saying so
on the terminal. Without such an interpreter the test fails, naming what to install — it is
never skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from wopeval.cli.app import app
from wopeval.exports.eee import STDERR_METHOD

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart" / "suite.yaml"
CACHE = ROOT / ".wopeval-test-cache"
EEE = "every-eval-ever==0.3.0"
PYTHONS = ("python3.14", "python3.13", "python3.12")


def _say(config: pytest.Config, line: str) -> None:
    capture = config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(f"\n[wopeval tests] {line}", file=sys.stderr, flush=True)


def _runs(python: str) -> bool:
    probe = [python, "-c", "import sys; sys.exit(sys.version_info < (3, 12))"]
    return subprocess.run(probe, capture_output=True, check=False).returncode == 0


def _pyenv_pythons() -> list[str]:
    """pyenv's installed versions ≥ 3.12 (its shims answer only for the selected version)."""
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    pyenv = shutil.which("pyenv") or (str(root / "bin" / "pyenv") if root.is_dir() else None)
    if pyenv is None or not Path(pyenv).exists():
        return []
    listed = subprocess.run([pyenv, "versions", "--bare"], capture_output=True, text=True)
    found = []
    for version in sorted(listed.stdout.split(), reverse=True):
        prefix = subprocess.run([pyenv, "prefix", version], capture_output=True, text=True)
        if prefix.returncode == 0:
            found.append(str(Path(prefix.stdout.strip()) / "bin" / "python"))
    return found


def _python312() -> str | None:
    on_path = [found for name in PYTHONS if (found := shutil.which(name))]
    return next((p for p in [*on_path, *_pyenv_pythons()] if _runs(p)), None)


@pytest.fixture(scope="module")
def eee_validator(pytestconfig: pytest.Config) -> Path:
    """The ``every_eval_ever`` command of a Python ≥ 3.12 venv, made on first use."""
    python = _python312()
    if python is None:
        pytest.fail(
            "the Every Eval Ever validator needs Python >= 3.12: put python3.12 on PATH "
            "(for example with pyenv) and run the test again"
        )
    version = subprocess.run(
        [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    venv = CACHE / f"eee-py{version}"
    command = venv / "bin" / "every_eval_ever"
    if not command.exists():
        _say(pytestconfig, f"making {venv} with {python} and installing {EEE} (a minute)")
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", EEE]
        subprocess.run(pip, check=True)
    return command


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
    # no input, output, argument or fixture content of the suite reaches a line
    text = json.dumps(instances)
    for marker in ("A-100", "crushed", "refund approved", "totalMinor", "rf-1"):
        assert marker not in text
    assert {line["interaction_type"] for line in instances} == {"agentic"}
    assert {line["messages"] == [] for line in instances} == {True}
