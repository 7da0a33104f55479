"""The browser for page tests: Debian's chromium, driven by Playwright (no browser download).

On a fresh machine of this project's kind chromium is not installed; as the README promises
that its test command does all the set-up, the fixture installs it with apt-get (these machines
run as root and reach Debian's archive), saying so on the terminal and showing apt-get's
progress, as it takes a minute or more. Where that is impossible the test fails, loudly.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest


def _say(config: pytest.Config, line: str) -> None:
    """A line on the terminal now, even under pytest's output capture."""
    capture = config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(f"\n[wopeval tests] {line}", file=sys.stderr, flush=True)


def _install_chromium(config: pytest.Config) -> None:
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        pytest.fail("the page tests need Debian's chromium: apt-get install chromium")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    started = time.monotonic()
    steps = [
        ("refreshing the package lists (apt-get update)", ["apt-get", "update", "-q"]),
        ("installing it (apt-get install chromium, a minute or two)",
         ["apt-get", "install", "-y", "-q", "chromium"]),
    ]  # fmt: skip
    _say(config, "chromium is missing; the HTML report test needs Debian's chromium.")
    for what, argv in steps:
        _say(config, what)
        capture = config.pluginmanager.getplugin("capturemanager")
        with capture.global_and_fixture_disabled():
            done = subprocess.run(argv, env=env, check=False)
        if done.returncode != 0:
            pytest.fail(f"{' '.join(argv)} exited {done.returncode}; install chromium by hand")
    _say(config, f"chromium installed in {time.monotonic() - started:.0f} s")


@pytest.fixture(scope="session")
def chromium(pytestconfig: pytest.Config) -> str:
    """The path of Debian's chromium, installed on first use if missing."""
    found = shutil.which("chromium")
    if found is None:
        _install_chromium(pytestconfig)
        found = shutil.which("chromium")
    if found is None:
        pytest.fail("chromium is still missing after apt-get install chromium")
    return found
