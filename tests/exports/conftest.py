"""The browser for page tests: Debian's chromium, driven by Playwright (no browser download).

On a fresh machine of this project's kind chromium is not installed; as the README promises
that its test command does all the set-up, the fixture installs it with apt-get (these machines
run as root and reach Debian's archive). Where that is impossible the test fails, loudly.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest


def _install_chromium() -> None:
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        pytest.fail("the page tests need Debian's chromium: apt-get install chromium")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env, capture_output=True)
    subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], check=True, env=env,
                   capture_output=True)  # fmt: skip


@pytest.fixture(scope="session")
def chromium() -> str:
    """The path of Debian's chromium, installed on first use if missing."""
    found = shutil.which("chromium")
    if found is None:
        _install_chromium()
        found = shutil.which("chromium")
    if found is None:
        pytest.fail("chromium is still missing after apt-get install chromium")
    return found
