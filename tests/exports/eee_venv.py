"""The Every Eval Ever validator's virtual environment, made once under ``.wopeval-test-cache/``.

The validator needs Python ≥ 3.12 (wopeval supports 3.11), so a newer interpreter is found on
``PATH`` (``python3.12`` …) or among pyenv's versions, a virtual environment is made for it and
``every-eval-ever`` is installed there with pip. A finished environment holds a ready-marker
naming what was installed; one without it (an interrupted build) is made again.

Making it takes a minute, so the test session starts it in the background as it begins
(``python -m tests.exports.eee_venv``, from ``tests/conftest.py``): the session holds
:data:`LOCK` from before the start and hands it to the child, which keeps it until it exits. The
EEE test's fixture takes the same lock, so it waits for that build — or makes the environment
itself when there was none — and reads :data:`STATUS` for the background build's outcome.
Standard library only: it runs before anything else is imported.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".wopeval-test-cache"
EEE = "every-eval-ever==0.3.0"
PYTHONS = ("python3.14", "python3.13", "python3.12")
LOCK = CACHE / "eee.lock"
LOG = CACHE / "eee-build.log"  # the background build's output
STATUS = CACHE / "eee-build.status"  # its outcome: "ok" or "failed: ..."
READY = ".wopeval-ready"
ENV = "WOPEVAL_TEST_EEE_BUILD"  # "1": this session started a background build
NO_PYTHON = (
    "the Every Eval Ever validator needs Python >= 3.12: put python3.12 on PATH "
    "(for example with pyenv) and run the test again"
)


class BuildError(Exception):
    """The environment could not be made; the message says why."""


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


def python312() -> str | None:
    """A Python ≥ 3.12 interpreter, or None."""
    on_path = [found for name in PYTHONS if (found := shutil.which(name))]
    return next((p for p in [*on_path, *_pyenv_pythons()] if _runs(p)), None)


def venv_for(python: str) -> Path:
    version = subprocess.run(
        [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    return CACHE / f"eee-py{version}"


def command_of(venv: Path) -> Path:
    return venv / "bin" / "every_eval_ever"


def is_ready(venv: Path) -> bool:
    marker = venv / READY
    return marker.is_file() and marker.read_text() == EEE and command_of(venv).exists()


def make(python: str, venv: Path) -> None:
    """Make ``venv`` from scratch with ``python`` and install :data:`EEE`; BuildError if not."""
    shutil.rmtree(venv, ignore_errors=True)
    steps = [
        [python, "-m", "venv", str(venv)],
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", EEE],
    ]
    for argv in steps:
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise BuildError(
                f"{' '.join(argv)} exited {done.returncode}:\n{done.stdout}{done.stderr}"
            )
    (venv / READY).write_text(EEE)


def lock() -> int:
    """An open descriptor of :data:`LOCK`, locked exclusively (blocks while another holds it)."""
    CACHE.mkdir(exist_ok=True)
    fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def start_background() -> subprocess.Popen[bytes] | None:
    """Start the build in a child process holding :data:`LOCK`; None if another holds it."""
    CACHE.mkdir(exist_ok=True)
    fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:  # another session is making it: the fixture waits for that one
        os.close(fd)
        return None
    try:
        STATUS.unlink(missing_ok=True)
        with LOG.open("wb") as log:
            child = subprocess.Popen(
                [sys.executable, "-m", "tests.exports.eee_venv", str(fd)],
                cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                pass_fds=(fd,), start_new_session=True,
            )  # fmt: skip
    finally:
        os.close(fd)  # the child's copy keeps the lock until it exits
    os.environ[ENV] = "1"  # inherited by the xdist workers, started after this
    return child


def stop_background(child: subprocess.Popen[bytes]) -> None:
    """End a build still running at the end of the session (an interrupted one is redone)."""
    if child.poll() is None:
        os.killpg(child.pid, signal.SIGTERM)
    child.wait()


def main() -> int:
    """The background build: the lock is inherited as ``sys.argv[1]`` (an open descriptor)."""
    fd = int(sys.argv[1]) if len(sys.argv) > 1 else lock()
    try:
        python = python312()
        if python is None:
            raise BuildError(NO_PYTHON)
        venv = venv_for(python)
        if not is_ready(venv):
            print(f"making {venv} with {python} and installing {EEE}", flush=True)
            make(python, venv)
        STATUS.write_text("ok")
        return 0
    except (BuildError, OSError, subprocess.CalledProcessError) as exc:
        STATUS.write_text(f"failed: {exc}")
        return 1
    finally:
        os.close(fd)


if __name__ == "__main__":
    sys.exit(main())
