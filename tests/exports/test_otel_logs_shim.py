"""The logs SDK's underscore modules are reached through one shim, on checked versions only."""

from __future__ import annotations

import re
import subprocess
from importlib.metadata import version
from pathlib import Path

from wopeval.exports import otel_logs

ROOT = Path(__file__).resolve().parents[2]
PRIVATE = r"sdk\._logs|_log_encoder|c_make_encoder"


def _minor(text: str) -> tuple[int, int]:
    found = re.match(r"(\d+)\.(\d+)", text)
    assert found is not None, text
    return int(found[1]), int(found[2])


def test_the_installed_logs_packages_are_in_the_checked_range() -> None:
    for distribution, (lowest, beyond) in otel_logs.CHECKED.items():
        assert lowest <= _minor(version(distribution)) < beyond, distribution


def test_no_other_module_imports_a_private_logs_module() -> None:
    found = subprocess.run(
        ["git", "grep", "--untracked", "-l", "-E", PRIVATE, "--", "src"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert found.returncode in (0, 1), found.stderr
    assert found.stdout.split() == ["src/wopeval/exports/otel_logs.py"]
