"""PyYAML is loaded only when a YAML suite file is read: a run of a JSON suite, or of a suite
built in Python, never imports it (a tenth of ``wopeval.suite``'s memory at import)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

_PROBE = """
import json, sys
from wopeval.service.api import evaluate
from wopeval.suite import load_suite, parse_suite
before = "yaml" in sys.modules
suite = load_suite(sys.argv[1])
after_json = "yaml" in sys.modules
yaml_suite = load_suite(sys.argv[2])
print(json.dumps([before, after_json, "yaml" in sys.modules, suite.suiteId, yaml_suite.suiteId]))
"""

_SUITE = {
    "suiteId": "core.test.evals.lazy",
    "version": "1.0.0",
    "modes": ["golden"],
    "tasks": [{"taskId": "t", "input": {},
               "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}}],
}  # fmt: skip


@pytest.mark.slow
def test_yaml_is_imported_by_the_first_yaml_file_only(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text(json.dumps(_SUITE))
    (tmp_path / "s.yaml").write_text(json.dumps({**_SUITE, "suiteId": "core.test.evals.yml"}))
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(tmp_path / "s.json"), str(tmp_path / "s.yaml")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    before, after_json, after_yaml, json_id, yaml_id = json.loads(done.stdout)
    assert (before, after_json, after_yaml) == (False, False, True)
    assert (json_id, yaml_id) == ("core.test.evals.lazy", "core.test.evals.yml")
