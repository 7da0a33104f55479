"""The viewer's sign-in sessions: a random id in an ``HttpOnly`` cookie, the key kept server-side.

``POST /view/login`` checks an API key once and opens a session bound to the key's principal; the
browser holds only the session id (``secrets.token_urlsafe``, 256 bits), never the key. A session
ends at ``POST /view/logout``, after ``idleSeconds`` unused, or ``absoluteSeconds`` after sign-in,
whichever comes first.

Sessions live in the memory of one host process: nothing of them is written to the store (a
session is a credential, and the store is shared with every CLI user of it), and a restart signs
every browser out, which costs a user one sign-in. Hosts that share a store behind a load balancer
need sticky sessions for the viewer (the API's bearer keys work on any host).
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from wopeval.host.auth import Principal

# Sessions kept at once; opening one more ends the least recently used.
MAX_SESSIONS = 10_000


@dataclass
class _Session:
    principal: Principal
    opened: float
    used: float


def _digest(session_id: str) -> bytes:
    return hashlib.sha256(session_id.encode("utf-8")).digest()


class SessionBook:
    """Open sessions by the digest of their id (a lookup's timing says nothing about an id)."""

    def __init__(
        self,
        idle_seconds: float,
        absolute_seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.idle_seconds = idle_seconds
        self.absolute_seconds = absolute_seconds
        self.clock = clock
        self._open: OrderedDict[bytes, _Session] = OrderedDict()

    def __len__(self) -> int:
        return len(self._open)

    def open(self, principal: Principal) -> str:
        """A new session of ``principal``; its id, to be set as the cookie."""
        session_id = secrets.token_urlsafe(32)
        now = self.clock()
        self._open[_digest(session_id)] = _Session(principal, now, now)
        while len(self._open) > MAX_SESSIONS:
            self._open.popitem(last=False)
        return session_id

    def principal(self, session_id: str) -> Principal | None:
        """The principal of a live session (its idle time restarts), else None (an expired
        session is ended)."""
        key = _digest(session_id)
        found = self._open.get(key)
        if found is None:
            return None
        now = self.clock()
        if now - found.used >= self.idle_seconds or now - found.opened >= self.absolute_seconds:
            del self._open[key]
            return None
        found.used = now
        self._open.move_to_end(key)
        return found.principal

    def close(self, session_id: str) -> None:
        """End a session (nothing happens for an unknown one)."""
        self._open.pop(_digest(session_id), None)
