"""House rules checked on the source: comments and docstrings say what the code cannot, not
where it came from (history lives in commit messages, so no issue numbers in ``src``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_no_issue_numbers_in_the_source() -> None:
    found = subprocess.run(
        ["git", "grep", "--untracked", "-n", "-i", "-E", r"issue #?[0-9]+", "--", "src"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert found.returncode in (0, 1), found.stderr
    assert found.stdout == ""
