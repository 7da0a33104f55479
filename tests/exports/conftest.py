"""The browser for page tests: Debian's chromium, driven by Playwright (no browser download),
launched once per test process and shared by every page test module in this folder or the
viewer's (each module gets its contexts closed at its end).

On a fresh machine of this project's kind chromium is not installed; as the README promises
that its test command does all the set-up, the fixture installs it with apt-get (these machines
run as root and reach Debian's archive), saying so on the terminal and showing apt-get's
progress, as it takes a minute or more. Where that is impossible the test fails, loudly.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from playwright.sync_api import Browser, sync_playwright

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


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


@dataclass
class _Launched:
    browser: Browser
    loop: asyncio.AbstractEventLoop


# The process's one launch: tests/viewer/conftest.py imports the fixture below, which makes it
# a second session fixture there; the one set up second finds the launch here, and is torn
# down first (session fixtures end in the reverse order of their start).
_LAUNCHED: list[_Launched] = []


@pytest.fixture(scope="session")
def chromium_launched(chromium: str) -> Iterator[_Launched]:
    """One Playwright driver and one chromium for the whole test process.

    Playwright's sync API marks its event loop as this thread's running loop between its calls,
    so that a test cannot start a second loop under it; a test file without a browser that ran
    after a page test file on the same worker would find a loop running and fail (asyncio.run,
    anyio.run, pytest-asyncio). The mark is therefore set only while a module that asked for
    ``chromium_browser`` runs, as Playwright would have it, and cleared in between, with
    ``asyncio._set_running_loop``: the private call Playwright itself makes for the mark (the
    tests' own; no library code path uses it).
    """
    if _LAUNCHED:
        yield _LAUNCHED[0]
        return
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=ARGS)
        launched = _Launched(browser, asyncio.get_running_loop())
        asyncio._set_running_loop(None)
        _LAUNCHED.append(launched)
        try:
            yield launched
        finally:
            _LAUNCHED.clear()
            asyncio._set_running_loop(launched.loop)
            browser.close()


@pytest.fixture(scope="module")
def chromium_browser(chromium_launched: _Launched) -> Iterator[Browser]:
    """The shared browser for one test module (a fixture that runs an event loop on this
    thread, such as a module's stored runs made by ``anyio.run``, comes before it); the
    module's contexts and pages are closed at its end."""
    assert asyncio._get_running_loop() is None, "an event loop runs on the page tests' thread"
    asyncio._set_running_loop(chromium_launched.loop)
    try:
        yield chromium_launched.browser
    finally:
        for context in chromium_launched.browser.contexts:
            context.close()
        asyncio._set_running_loop(None)
