"""The closed v2 error envelope ``{error, message, details?}`` and the refusals the host makes.

Every refusal is a :class:`HostError` raised from a route and rendered by :func:`error_response`
with its registered HTTP status (error-envelope.schema.json ``x-openwop-http-status``). A
caller's mistake about a field names it twice: in the message (``trials.count: ...``) and in
``details.field`` (RFC 0244 §G "naming the field").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from wopeval.errors import NotFoundError, WopevalError, envelope_code
from wopeval.suite import FieldError
from wopeval.wire.api import ErrorEnvelope

PROTOCOL_VERSIONS: tuple[str, ...] = ("2.0",)
VERSION_HEADER = "OpenWOP-Version"

STATUS_OF: dict[str, int] = {
    "validation_error": 400,
    "unsupported_stream_mode": 400,
    "idempotency_key_invalid": 400,
    "unauthenticated": 401,
    "not_found": 404,
    "protocol_version_unsupported": 406,
    "run_already_active": 409,
    "run_state_conflict": 409,
    "run_terminal": 409,
    "idempotency_key_mismatch": 409,
    "payload_too_large": 413,
    "unsupported_media_type": 415,
    "capability_not_provided": 422,
    "capability_required": 422,
    "rate_limited": 429,
    "internal_error": 500,
    "service_unavailable": 503,
    "wopeval.method_not_allowed": 405,
}


class HostError(WopevalError):
    """A refusal: ``code`` is a registered (or ``wopeval.``-vendor) error code."""

    def __init__(
        self,
        code: str,
        message: str,
        details: dict[str, Any] | None = None,
        *,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details
        self.headers = headers or {}

    @property
    def status(self) -> int:
        return STATUS_OF[self.code]


def envelope(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return ErrorEnvelope(error=code, message=message, details=details).to_wire()


def error_response(error: HostError) -> JSONResponse:
    headers = {VERSION_HEADER: PROTOCOL_VERSIONS[0], **error.headers}
    body = envelope(error.code, error.message, error.details)
    return JSONResponse(body, status_code=error.status, headers=headers)


def invalid(field: str, message: str, **details: Any) -> HostError:
    """``400 validation_error`` naming ``field`` in the message and in ``details.field``
    (the empty member name is named ``$[""]``, never left blank)."""
    field = field or '$[""]'
    return HostError("validation_error", f"{field}: {message}", {"field": field, **details})


def invalid_suite(errors: Sequence[FieldError], **details: Any) -> HostError:
    """``400 validation_error`` naming the first suite field; ``details.errors`` lists all."""
    first = errors[0]
    listed = [{"field": e.path, "message": e.message} for e in errors]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return HostError(
        "validation_error",
        f"{first.path}: {first.message}{more}",
        {"field": first.path, "errors": listed, **details},
    )


# One body for every unknown-or-foreign run: a cross-tenant read must not be distinguishable.
RUN_NOT_FOUND_MESSAGE = "no run with this id"


def run_not_found() -> HostError:
    return HostError("not_found", RUN_NOT_FOUND_MESSAGE)


def unauthenticated(message: str) -> HostError:
    return HostError(
        "unauthenticated", message, headers={"WWW-Authenticate": 'Bearer realm="openwop"'}
    )


async def host_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HostError)
    return error_response(exc)


async def wopeval_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    """Any other error of the tree that reaches a route, mapped once (:func:`envelope_code`).

    A not-found answers exactly like a missing run (no existence oracle); a user error is a
    ``validation_error`` with its message; a run error is ``internal_error``.
    """
    assert isinstance(exc, WopevalError)
    code = envelope_code(exc)
    if isinstance(exc, NotFoundError):
        return error_response(run_not_found())
    message = str(exc) if code == "validation_error" else f"{type(exc).__name__}: {exc}"
    return error_response(HostError(code, message[:500]))


async def http_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    """Starlette's own 404/405 (no such route / method) as envelopes."""
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 405:
        allowed = (exc.headers or {}).get("Allow", "")
        error = HostError(
            "wopeval.method_not_allowed",
            "method not allowed on this path",
            headers={"Allow": allowed} if allowed else None,
        )
    elif exc.status_code == 404:
        error = HostError("not_found", "no such path on this host")
    else:
        error = HostError("internal_error", f"unexpected HTTP status {exc.status_code}")
    return error_response(error)
