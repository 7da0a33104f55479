"""Bearer API keys → the caller's tenant and subject (``lane: "api-key"``).

Keys are looked up by their SHA-256 digest, so the lookup's timing does not depend on how much
of a guessed key is right. A missing, malformed or unknown key is ``401 unauthenticated``.
The subject is the run owner on the wire (run-snapshot ``owner.subject``); it carries the
configured ``subjectId``, else ``key-<n>`` (the key's position among its tenant's keys in the
configuration), never the key nor any part or digest of it.

Failed authentication is rate-limited per client address: once a client has
:data:`MAX_AUTH_FAILURES` failures within :data:`AUTH_WINDOW_S` seconds, its further failures are
answered ``429 rate_limited`` with ``Retry-After`` until the window has passed. Only failures are
limited: a valid key always authenticates, so one careless client behind a shared proxy or NAT
address never locks the other tenants out (keys of at least 16 characters make guessing hopeless;
the limit keeps a misbehaving client's noise cheap and visible). The client address is the
socket's peer, or what a configured proxy forwarded (``trustedProxies``, applied by
:func:`wopeval.host.app.create_app`); a forwarded header from anyone else is ignored.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fastapi import Request

from wopeval.host.config import ApiKey
from wopeval.host.errors import HostError, unauthenticated

ISSUER = "urn:wopeval:api-key"


@dataclass(frozen=True)
class Principal:
    tenant: str
    subject_id: str
    kind: str

    def subject(self) -> dict[str, Any]:
        """The v2 Subject (subject.schema.json)."""
        return {
            "issuer": ISSUER,
            "subjectId": self.subject_id,
            "tenant": self.tenant,
            "lane": "api-key",
            "kind": self.kind,
        }

    def owner(self) -> dict[str, Any]:
        """``RunSnapshot.owner``, echoed exactly on ``run.started``."""
        return {"tenant": self.tenant, "subject": self.subject()}


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


MAX_AUTH_FAILURES = 20
AUTH_WINDOW_S = 60.0
_MAX_CLIENTS = 10_000  # failure records kept (oldest dropped first)


def _subject_ids(keys: Sequence[ApiKey]) -> list[str]:
    counts: dict[str, int] = {}
    ids = []
    for key in keys:
        counts[key.tenant] = counts.get(key.tenant, 0) + 1
        ids.append(key.subjectId or f"key-{counts[key.tenant]}")
    return ids


class KeyRing:
    """The configured keys, by digest; failed attempts counted per client."""

    def __init__(self, keys: Sequence[ApiKey]) -> None:
        self._by_digest = {
            _digest(k.key): Principal(k.tenant, subject, k.kind)
            for k, subject in zip(keys, _subject_ids(keys), strict=True)
        }
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()

    def principal(self, authorization: str | None) -> Principal:
        if not authorization:
            raise unauthenticated("an Authorization: Bearer <api key> header is required")
        scheme, _, token = authorization.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise unauthenticated("the Authorization header must be 'Bearer <api key>'")
        found = self._by_digest.get(_digest(token))
        if found is None:
            raise unauthenticated("the API key is not recognized")
        return found

    def authenticate(self, request: Request) -> Principal:
        """The caller of ``request`` by its ``Authorization`` header; a failure is counted
        against the client (:meth:`failed`)."""
        return self.check(request, request.headers.get("authorization"), "Authorization")

    def check(self, request: Request, authorization: str | None, field: str) -> Principal:
        """The principal of ``authorization``, or the refusal of a failure (``401``, or
        ``429`` naming ``field`` once the client is over the limit)."""
        try:
            return self.principal(authorization)
        except HostError as refused:
            raise self.failed(request, field) or refused from None

    def failed(self, request: Request, field: str) -> HostError | None:
        """Count a failed authentication of ``request``'s client: the ``429`` to answer when
        it is over the limit, else None (the caller's own refusal stands)."""
        client = request.client.host if request.client is not None else "?"
        now = time.monotonic()
        failures = self._failures.get(client)
        if failures is not None:
            while failures and failures[0] <= now - AUTH_WINDOW_S:
                failures.popleft()
            if len(failures) >= MAX_AUTH_FAILURES:
                wait = max(1, math.ceil(failures[0] + AUTH_WINDOW_S - now))
                return HostError(
                    "rate_limited",
                    f"too many failed authentications from this client; retry in {wait} s",
                    {"field": field},
                    headers={"Retry-After": str(wait)},
                )
        self._record_failure(client, now)
        return None

    def _record_failure(self, client: str, now: float) -> None:
        failures = self._failures.pop(client, None) or deque(maxlen=MAX_AUTH_FAILURES)
        failures.append(now)
        self._failures[client] = failures
        while len(self._failures) > _MAX_CLIENTS:
            self._failures.popitem(last=False)
