"""Which trial failures are the infrastructure's, not the agent's.

A trial whose agent raised an :class:`~wopeval.errors.InfrastructureError` (its model server
unreachable or failing after the SDK's retries, an MCP server or agent process that died),
anywhere in the exception's causes or task-group members, failed for ``infrastructure``. So did
one whose timeout struck while the agent waited on such a component: an agent marks those waits
with :func:`waiting_on` (the OpenAI-compatible agent marks each model request), and the trial
reads the mark it left when the timeout cancelled it. Everything else is the agent's own
``agent-error`` or ``timeout``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import TypeVar

from wopeval.errors import InfrastructureError
from wopeval.wire.events import Failure
from wopeval.wire.vocab import INFRASTRUCTURE_LABEL

__all__ = [
    "INFRASTRUCTURE_LABEL",
    "Waits",
    "cause_of",
    "infrastructure_cause",
    "timed_out_waiting",
    "waiting_on",
]

_CAUSES = 32  # how deep the causes and groups of one exception are searched
E = TypeVar("E", bound=BaseException)


class Waits:
    """What one trial's agent is waiting on (a component's name, or None). ``with`` it around
    the agent call: :func:`waiting_on` marks it (a class, not a generator: one per trial)."""

    __slots__ = ("_token", "component")

    def __init__(self) -> None:
        self.component: str | None = None
        self._token: Token[Waits | None] | None = None

    def __enter__(self) -> Waits:
        self._token = _waits.set(self)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._token is not None:
            _waits.reset(self._token)
            self._token = None


_waits: ContextVar[Waits | None] = ContextVar("wopeval_trial_waits", default=None)


@contextmanager
def waiting_on(component: str) -> Iterator[None]:
    """Mark a wait on ``component`` (e.g. ``"the model server at http://h/v1"``). The mark is
    cleared when the wait ends normally and kept when it ends by an exception, so a trial
    cancelled by its timeout knows what it was waiting on. Outside a trial it does nothing."""
    waits = _waits.get()
    if waits is None:
        yield
        return
    waits.component = component
    yield
    waits.component = None


def cause_of(exc: BaseException, kind: type[E]) -> E | None:
    """The ``kind`` of error behind ``exc``: itself, a cause or context, or a member of an
    exception group (a framework may wrap what a model call raised), searched breadth first."""
    seen: set[int] = set()
    pending: list[BaseException] = [exc]
    while pending and len(seen) < _CAUSES:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, kind):
            return current
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        pending.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return None


def infrastructure_cause(exc: BaseException) -> InfrastructureError | None:
    """The :class:`InfrastructureError` behind ``exc`` (:func:`cause_of`), if any."""
    return cause_of(exc, InfrastructureError)


def timed_out_waiting(waits: Waits, timeout_s: float) -> Failure | None:
    """The failure of a trial whose timeout struck while it waited on a component, or None."""
    if waits.component is None:
        return None
    return Failure(
        exceptionType="TimeoutError",
        message=f"{waits.component} did not answer within the trial timeout of {timeout_s}s",
    )
