"""Telling "the database is away" from every other failure of the store.

A restarting, failing-over or unreachable database fails whatever is using it at that moment:
a refused connection, a connection dropped mid-statement, a server that is shutting down or not
yet accepting connections. Nothing is wrong with the run or the request then, and retrying once
the database is back succeeds; so a run stopped that way is left unfinished, to be resumed
(``wopeval run --resume``; a host resumes its own), never failed, and a request is answered
``503`` with ``Retry-After``. :func:`store_unreachable` recognises such a failure anywhere in an
error's causes (and in task groups' errors).
"""

from __future__ import annotations

import errno
import socket

from wopeval.errors import StoreError

# A connection refused, reset, aborted or timed out, a host or network away: never a file's
# error, nor a pipe's (an MCP server's stdio), which are no database's absence.
_NETWORK_ERRNOS = frozenset({
    errno.ECONNREFUSED, errno.ECONNRESET, errno.ECONNABORTED, errno.ETIMEDOUT,
    errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EHOSTDOWN, errno.ENETDOWN,
})  # fmt: skip
# asyncpg's errors for a server that is going away, away, or not accepting connections yet.
_AWAY = frozenset({
    "AdminShutdownError",
    "CannotConnectNowError",
    "ConnectionDoesNotExistError",
    "ConnectionFailureError",
    "CrashShutdownError",
})  # fmt: skip


class StoreUnreachableError(StoreError):
    """A run stopped because its store could not be reached; what it recorded is kept and it
    can be resumed (``run_id``)."""

    def __init__(self, run_id: str, message: str) -> None:
        super().__init__(message)
        self.run_id = run_id


def store_unreachable(error: BaseException) -> bool:
    """Whether ``error`` comes of the database being unreachable: a connection refused, reset
    or timed out, a host or network unreachable, a name that does not resolve, a connection
    SQLAlchemy found dropped (``connection_invalidated``), or a server shutting down or
    starting up, in ``error`` or its causes."""
    return _outage(error) is not None


def outage_reason(error: BaseException) -> str:
    """What made the store unreachable, in one line (``ConnectionRefusedError: ...``): the
    driver's or the system's error, never the statement or its parameters."""
    found = _outage(error) or error
    if isinstance(found, StoreUnreachableError):
        return str(found)
    lines = str(found).strip().splitlines() or [""]
    return f"{type(found).__name__}: {lines[0]}"[:300]


def _outage(error: BaseException) -> BaseException | None:
    seen: set[int] = set()
    pending: list[BaseException] = [error]
    while pending:
        found = pending.pop()
        if id(found) in seen:
            continue
        seen.add(id(found))
        orig = getattr(found, "orig", None)  # the driver's error SQLAlchemy wrapped
        if isinstance(found, StoreUnreachableError | socket.gaierror) or (
            isinstance(found, OSError) and found.errno in _NETWORK_ERRNOS
        ):
            return found
        if any(kind.__name__ in _AWAY for kind in type(found).__mro__):
            return found
        if getattr(found, "connection_invalidated", False) is True:
            return orig if isinstance(orig, BaseException) else found
        if isinstance(found, BaseExceptionGroup):
            pending.extend(found.exceptions)
        if isinstance(orig, BaseException):
            pending.append(orig)
        if found.__cause__ is not None:
            pending.append(found.__cause__)
        elif found.__context__ is not None and not found.__suppress_context__:
            pending.append(found.__context__)
    return None
