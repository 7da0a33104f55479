"""What the core host legs share: creating a fixture run and reading it to its end.

Every leg builds its own runs from the workflow fixtures of the OpenWOP fixture contract
(``conformance/fixtures.md``) and checks only what the wire shows. A run that cannot be created
or does not end fails the leg with the answer the host gave.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from wopeval.conformance.core_wire import TERMINAL_STATUSES, Answer, CoreWire
from wopeval.conformance.legs.common import Checker

NOOP = "conformance-noop"
IDENTITY = "conformance-identity"
DELAY = "conformance-delay"
FAILURE = "conformance-failure"
CANCELLABLE = "conformance-cancellable"
IDEMPOTENT = "conformance-idempotent"

# identity.md §5: <tenant>/<opaque>.
BOUND_RUN_ID = re.compile(r"^(anon:)?[A-Za-z0-9._~-]{1,128}/[A-Za-z0-9._~-]{16,128}$")
TERMINAL_WAIT_S = 10.0


def described(answer: Answer) -> str:
    body = answer.body if isinstance(answer.body, dict) else {}
    return f"{answer.status} {body.get('error') or ''} {body.get('message') or ''}".strip()


def on_base(link: object, base_url: str) -> bool:
    """Relative, or absolute under the request's origin without a scheme downgrade."""
    if not isinstance(link, str) or not link:
        return False
    if link.startswith("/"):
        return True
    got, base = urlsplit(link), urlsplit(base_url)
    return (got.scheme, got.netloc) == (base.scheme, base.netloc)


async def create_run(
    wire: CoreWire,
    ck: Checker,
    body: dict[str, Any],
    headers: dict[str, str] | None = None,
    *,
    links: bool = False,
) -> str | None:
    """``POST /runs``; checks ``201`` with a tenant-bound ``runId`` and returns it (else None).

    With ``links``, also checks that ``eventsUrl`` (and ``statusUrl`` when sent) stay on the base
    the run was created at (runs.md §Create, ``v2-created-run-readable``).
    """
    answer = await wire.create(body, headers)
    created = answer.body if isinstance(answer.body, dict) else {}
    run_id = created.get("runId")
    ok = ck.check(
        answer.status == 201 and isinstance(run_id, str),
        f"POST /runs {body} answered {described(answer)}, want 201 with a runId",
    )
    if not ok or not isinstance(run_id, str):
        return None
    ck.check(bool(BOUND_RUN_ID.fullmatch(run_id)), f"runId {run_id!r} is not <tenant>/<opaque>")
    for link in ("eventsUrl", "statusUrl") if links else ():
        if link in created or link == "eventsUrl":
            ck.check(
                on_base(created.get(link), wire.base_url),
                f"create: {link} {created.get(link)!r} is not on {wire.base_url}",
            )
    return run_id


async def run_to_end(
    wire: CoreWire, ck: Checker, run_id: str, want: str, timeout_s: float = TERMINAL_WAIT_S
) -> bool:
    """Wait for a terminal status; checks it is ``want``."""
    status = await wire.wait_status(run_id, lambda s: s in TERMINAL_STATUSES, timeout_s)
    return ck.check(
        status == want, f"run {run_id} ended {status!r} within {timeout_s:g} s, want {want!r}"
    )


async def finished_run(
    wire: CoreWire, ck: Checker, body: dict[str, Any], want: str = "completed"
) -> str | None:
    """Create a run and wait for it to end ``want``; its id, or None when either failed."""
    run_id = await create_run(wire, ck, body)
    if run_id is None or not await run_to_end(wire, ck, run_id, want):
        return None
    return run_id


def payload(event: dict[str, Any]) -> dict[str, Any]:
    value = event.get("payload")
    return value if isinstance(value, dict) else {}


def timestamp(event: dict[str, Any]) -> datetime | None:
    try:
        return datetime.fromisoformat(str(event.get("timestamp")))
    except ValueError:
        return None
