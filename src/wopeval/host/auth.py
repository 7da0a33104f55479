"""Bearer API keys → the caller's tenant and subject (``lane: "api-key"``).

Keys are looked up by their SHA-256 digest, so the lookup's timing does not depend on how much
of a guessed key is right. A missing, malformed or unknown key is ``401 unauthenticated``.
The subject is the run owner on the wire (run-snapshot ``owner.subject``); it carries the
configured ``subjectId`` or a digest of the key, never the key.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fastapi import Request

from wopeval.host.config import ApiKey
from wopeval.host.errors import unauthenticated

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


class KeyRing:
    """The configured keys, by digest."""

    def __init__(self, keys: Sequence[ApiKey]) -> None:
        self._by_digest = {_digest(k.key): Principal(k.tenant, k.subject_id, k.kind) for k in keys}

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
        return self.principal(request.headers.get("authorization"))
