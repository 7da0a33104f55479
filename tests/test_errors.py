"""One exception tree: every error class wopeval defines has the documented root and one mapping."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import wopeval
from wopeval import errors
from wopeval.cli import app as cli_app
from wopeval.errors import (
    NotFoundError,
    RunError,
    RunNotFound,
    StoreError,
    UserError,
    WopevalError,
    envelope_code,
    exit_code,
)

ROOT = Path(__file__).resolve().parents[1]


def _modules() -> list[str]:
    """Every wopeval module, found without importing it (the walk imports packages only): the
    parametrization below is built as each xdist worker collects, and importing every module
    there (every framework adapter) cost each worker seconds; each test imports its own."""
    found = []
    for info in pkgutil.walk_packages(wopeval.__path__, "wopeval."):
        if not info.name.endswith("__main__"):
            found.append(info.name)
    return found


MODULES = _modules()


def _exception_classes(module: str) -> dict[str, type[BaseException]]:
    """The exception classes ``module`` defines, by ``module:name`` (imported, not guessed by
    name)."""
    found = {}
    for name, cls in vars(importlib.import_module(module)).items():
        defined_here = inspect.isclass(cls) and cls.__module__ == module
        if defined_here and issubclass(cls, BaseException):
            found[f"{module}:{name}"] = cls
    return found


def test_the_walk_finds_the_errors_of_every_layer() -> None:
    every = {ref for module in MODULES for ref in _exception_classes(module)}
    assert {"wopeval.suite.errors:SuiteError", "wopeval.host.errors:HostError",
            "wopeval.engine.registry:AgentNotFound"} <= every  # fmt: skip


@pytest.mark.parametrize("module", MODULES)
def test_every_wopeval_error_class_is_in_the_tree(module: str) -> None:
    classes = _exception_classes(module).items()
    outside = [ref for ref, cls in classes if not issubclass(cls, WopevalError)]
    assert outside == [], f"not WopevalErrors: {outside}"


def test_the_tree_maps_once_to_exit_codes_and_envelopes() -> None:
    assert exit_code(UserError("x")) == errors.EXIT_BAD_INPUT == 2
    assert exit_code(RunNotFound("x")) == 2
    assert exit_code(StoreError("x")) == errors.EXIT_RUN_ERROR == 3
    assert envelope_code(RunNotFound("x")) == "not_found"
    assert envelope_code(UserError("x")) == "validation_error"
    assert envelope_code(RunError("x")) == "internal_error"
    assert issubclass(NotFoundError, LookupError)
    assert issubclass(UserError, ValueError)
    from wopeval.events.store import UnknownRunError

    assert UnknownRunError is RunNotFound  # the two names for one error are one class


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (UserError("field: bad"), 2),
        (StoreError("db"), 3),
        # One error from inside a run's task groups (anyio wraps even the host task's).
        (ExceptionGroup("tg", [ExceptionGroup("inner", [StoreError("db lost")])]), 3),
    ],
)
def test_the_cli_turns_a_tree_error_into_its_exit_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], error: Exception, code: int
) -> None:
    def raising() -> None:
        raise error

    monkeypatch.setattr(cli_app, "app", raising)
    monkeypatch.setattr(cli_app, "exit_past_blocked_agents", lambda code: None)
    with pytest.raises(SystemExit) as exited:
        cli_app.main()
    assert exited.value.code == code
    leaf = error
    while isinstance(leaf, ExceptionGroup):
        leaf = leaf.exceptions[0]
    assert str(leaf) in capsys.readouterr().err


def test_a_user_error_from_the_library_surfaces_in_the_cli_as_exit_2(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    result = subprocess.run(
        [sys.executable, "-m", "wopeval", "run", "examples/quickstart/suite.yaml",
         "--store", str(store), "--baseline", "local/r" + "0" * 26],
        capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "--baseline" in result.stderr
