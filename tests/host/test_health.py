"""Liveness and readiness, and which store failures are the database being away (issue 30 §1):
those answer 503 with Retry-After and leave a run to resume; any other still fails as before."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.exc import DBAPIError, IntegrityError

from tests.host.helpers import running_host
from wopeval.errors import StoreError
from wopeval.events.reach import StoreUnreachableError, outage_reason, store_unreachable


async def test_healthz_and_readyz_need_no_key(tmp_path: Path) -> None:
    async with running_host(str(tmp_path / "s.db")) as host:
        live = await host.client.get("/healthz")
        ready = await host.client.get("/readyz")
        host.state.closing.set()  # shutting down: no new traffic, still alive
        draining_live = await host.client.get("/healthz")
        draining_ready = await host.client.get("/readyz")
    assert (live.status_code, live.json()) == (200, {"status": "live"})
    assert (ready.status_code, ready.json()) == (200, {"status": "ready"})
    assert draining_live.status_code == 200
    assert draining_ready.status_code == 503
    assert draining_ready.json()["error"] == "service_unavailable"


async def test_readyz_is_503_while_the_store_does_not_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with running_host(str(tmp_path / "s.db")) as host:

        async def refused(stmt: Any) -> Any:
            raise ConnectionRefusedError(errno.ECONNREFUSED, "Connect call failed")

        monkeypatch.setattr(host.state.store, "read", refused)
        ready = await host.client.get("/readyz")
        live = await host.client.get("/healthz")
    assert ready.status_code == 503
    assert ready.headers["Retry-After"] == "5"
    assert live.status_code == 200


async def test_a_request_failing_on_the_store_is_503_only_for_an_outage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dropped connection is 503 with Retry-After; a store that answers yet fails (a
    constraint, a bug) is still 500, which retrying would not mend."""
    cases: list[tuple[Exception, int]] = [
        (ConnectionResetError(errno.ECONNRESET, "reset by peer"), 503),
        (StoreError("could not append"), 500),
        (ValueError("a bug"), 500),
    ]
    answers = []
    async with running_host(str(tmp_path / "s.db")) as host:
        for raised, _ in cases:

            async def get_run(run_id: str, raised: Exception = raised) -> Any:
                raise raised

            monkeypatch.setattr(host.state.store, "get_run", get_run)
            answers.append(await host.get("/runs/acme~2Fr01M912T9HJ36Q9HK1GXKQKNGN7"))
    assert [a.status_code for a in answers] == [status for _, status in cases]
    assert [a.json()["error"] for a in answers] == [
        "service_unavailable",
        "internal_error",
        "internal_error",
    ]
    assert int(answers[0].headers["Retry-After"]) >= 1
    assert "Retry-After" not in answers[1].headers
    assert answers[2].json()["message"] == "internal error"  # no driver's text on the wire


class CannotConnectNowError(Exception):
    """Named as asyncpg names a server that is starting up."""


def _dbapi(invalidated: bool, orig: Exception) -> DBAPIError:
    return DBAPIError("INSERT INTO events VALUES ($1)", ("secret payload",), orig,
                      connection_invalidated=invalidated)  # fmt: skip


def _refused() -> OSError:
    return OSError(errno.ECONNREFUSED, "Connect call failed ('127.0.0.1', 5432)")


def _caused(error: Exception, cause: BaseException) -> Exception:
    error.__cause__ = cause
    return error


def _suppressed(error: Exception, context: BaseException) -> Exception:
    error.__context__ = context
    error.__suppress_context__ = True
    return error


@pytest.mark.parametrize(
    ("error", "away"),
    [
        (ConnectionRefusedError(errno.ECONNREFUSED, "refused"), True),
        (TimeoutError(errno.ETIMEDOUT, "connect timed out"), True),
        (CannotConnectNowError("the database system is starting up"), True),
        (StoreUnreachableError("acme/r1", "away"), True),
        (_caused(StoreError("could not append"), ConnectionResetError(errno.ECONNRESET, "")), True),
        (ExceptionGroup("trials", [ValueError("x"), _caused(StoreError("y"), _refused())]), True),
        (IntegrityError("INSERT", {}, Exception("duplicate key")), False),
        (StoreError("could not append"), False),
        (ValueError("not JSON"), False),
        (ExceptionGroup("trials", [ValueError("x"), KeyError("y")]), False),
        (_suppressed(RuntimeError("handled"), OSError("handled before")), False),
        (FileNotFoundError(errno.ENOENT, "/no/such/server"), False),  # an MCP command's
        (BrokenPipeError(errno.EPIPE, "broken pipe"), False),
        (OSError("no errno"), False),
        (OSError(errno.EHOSTUNREACH, "no route to host"), True),
    ],
)
def test_store_unreachable_tells_an_outage_from_other_failures(
    error: BaseException, away: bool
) -> None:
    assert store_unreachable(error) is away


def test_a_dropped_connection_is_an_outage_told_without_the_statement() -> None:
    closed = Exception("connection is closed")
    dropped = _caused(StoreError("could not append"), _dbapi(True, closed))
    assert store_unreachable(dropped)
    refused = _dbapi(False, Exception("syntax error at or near"))
    assert not store_unreachable(_caused(StoreError("could not append"), refused))
    reason = outage_reason(dropped)
    assert reason == "Exception: connection is closed"
    assert "secret payload" not in reason
    assert "\n" not in outage_reason(OSError(errno.ECONNRESET, "first line\nsecond line"))
