"""wopeval's one exception tree. It imports nothing from wopeval, so every layer may use it.

::

    WopevalError                      the root: every error wopeval raises on purpose
    ├── UserError (ValueError)        the caller's mistake: a bad suite, option, agent, baseline …
    │   ├── NotFoundError (LookupError)   something named does not exist (a run, a suite, an agent)
    │   │   └── RunNotFound           no stored run has that id (or it is another tenant's)
    │   └── ExtraMissing              an optional extra a command needs is not installed
    └── RunError (RuntimeError)       a run or its infrastructure failed: recorded in the log,
        │                             the run ends ``failed``, nothing already recorded is lost
        ├── StoreError                the event store could not do what was asked
        └── InfrastructureError       a component the run depends on failed (a model server, an
                                      MCP server, an agent's process): a trial it strikes is
                                      labelled ``infrastructure``, never the agent's failure

Three kinds of error, never mixed (docs/design.md): a *user* error is refused before anything is
recorded and names the field it is about; a *run* error is recorded; a *tool* error is not an
exception at all (the agent receives it as a failed :class:`~wopeval.engine.agent.ToolResult`).

The mapping is done once each: :func:`exit_code` for the command line (``2`` for a user error,
``3`` for a run or infrastructure error) and :func:`envelope_code` for the HTTP host's error
envelope (``validation_error`` → 400, ``not_found`` → 404, ``internal_error`` → 500).
"""

from __future__ import annotations

import importlib

EXIT_BAD_INPUT = 2
EXIT_RUN_ERROR = 3


class WopevalError(Exception):
    """Root of every error wopeval raises on purpose."""


class UserError(WopevalError, ValueError):
    """The caller's mistake: refused before anything is recorded, with the field it is about."""


class NotFoundError(UserError, LookupError):
    """Something the caller named does not exist (or is not theirs to see)."""


class RunNotFound(NotFoundError):
    """No stored run has that id (or it belongs to another tenant)."""


class ExtraMissing(UserError):
    """An optional extra is not installed; the message names the ``pip install`` that adds it."""


class RunError(WopevalError, RuntimeError):
    """A run, or the infrastructure under it, failed. Recorded; nothing recorded is lost."""


class StoreError(RunError):
    """The store could not do what was asked (infrastructure failure or a state conflict)."""


class ModelMiss(RunError):
    """A replayed run's model request has no recording in its cassette: the trial fails closed
    (``model-miss``), its message naming the first field that differs from the nearest one."""


class InfrastructureError(RunError):
    """A component the run depends on failed, not the agent: the message names the component."""


# The packages of wopeval's optional extras: a user's module that fails to import one of them is
# told which extra installs it.
EXTRA_OF = {"openai": "openai", "mcp": "mcp", "agents": "openai-agents",
            "pydantic_ai": "pydantic-ai", "langgraph": "langchain", "langchain": "langchain",
            "ray": "ray"}  # fmt: skip


def extra_hint(error: ImportError) -> str:
    """``"; pip install 'wopeval[x]'"`` when the missing module is an extra's package, else
    ``""``."""
    missing = (error.name or "").partition(".")[0]
    return f"; pip install 'wopeval[{EXTRA_OF[missing]}]'" if missing in EXTRA_OF else ""


def require_extra(module: str, extra: str, needed_by: str) -> None:
    """Import ``module`` or raise :class:`ExtraMissing` naming the ``wopeval[extra]`` to install
    (a set-up check, so the command is refused before any trial runs)."""
    try:
        importlib.import_module(module)
    except ImportError:
        raise ExtraMissing(
            f"{needed_by} needs the {module} package: pip install 'wopeval[{extra}]'"
        ) from None


def exit_code(error: WopevalError) -> int:
    """The command line's exit code for an error (``0``/``1`` are pass/fail, never errors)."""
    return EXIT_BAD_INPUT if isinstance(error, UserError) else EXIT_RUN_ERROR


def envelope_code(error: WopevalError) -> str:
    """The OpenWOP error-envelope code the host answers an error with."""
    if isinstance(error, NotFoundError):
        return "not_found"
    if isinstance(error, UserError):
        return "validation_error"
    return "internal_error"


__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_RUN_ERROR",
    "EXTRA_OF",
    "ExtraMissing",
    "InfrastructureError",
    "ModelMiss",
    "NotFoundError",
    "RunError",
    "RunNotFound",
    "StoreError",
    "UserError",
    "WopevalError",
    "envelope_code",
    "exit_code",
    "extra_hint",
    "require_extra",
]


def message_of(exc: BaseException) -> str:
    """``str(exc)``, or a stand-in saying it could not be made. An exception's ``__str__`` is
    its raiser's code (an agent's, a tool's, a judge's) and may itself raise: turning it into
    text must fail nothing but that text."""
    try:
        return storable(str(exc))
    except Exception:
        return "<the exception's str() raised>"


def storable(text: str) -> str:
    """``text`` with each lone surrogate (which has no UTF-8, so no store or file takes it)
    written as its escape, ``\\ud800``."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def describe(exc: BaseException, limit: int = 500) -> str:
    """``Type: message`` of ``exc``, at most ``limit`` characters, whatever its ``__str__`` does."""
    return f"{type(exc).__name__}: {message_of(exc)}"[:limit]


def unwrap(exc: BaseException) -> BaseException:
    """The one exception ``exc`` stands for: through task groups' wrappers of a single error
    (nested groups of one); a group of several is returned as it is."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc
