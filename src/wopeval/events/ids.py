"""Run and event identifiers (OpenWOP v2 identity.md §5, wire notes §1.2) and timestamps.

A run id is ``<tenant>/<opaque>``: the tenant matches ``[A-Za-z0-9._~-]{1,128}`` and the opaque
part 16–128 characters of the same class. An event id is 16–128 such characters.

Both are ULID-shaped: 10 Crockford base32 characters of Unix milliseconds, then 16 characters
(80 bits) of randomness. Within one process the ids are strictly increasing (the random part is
incremented inside a millisecond, as in the ULID monotonic variant), so sorting run ids sorts
runs by creation time.
"""

from __future__ import annotations

import re
import secrets
import threading
import time

from wopeval.wire.vocab import EVENT_ID_PATTERN, RUN_ID_PATTERN, TENANT_PATTERN

__all__ = ["EVENT_ID_PATTERN", "RUN_ID_PATTERN", "TENANT_PATTERN", "new_event_id", "new_run_id"]

_TENANT_RE = re.compile(TENANT_PATTERN)
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_RANDOM_BITS = 80
_RANDOM_MAX = (1 << _RANDOM_BITS) - 1


class _MonotonicUlid:
    """ULID generator whose output strictly increases within the process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last_ms = -1
        self._last_random = 0
        # Kept, as ids come many per millisecond: the time digits and the random part's digits
        # but its last two (which an increment changes, unless it carries into them).
        self._prefix = ""

    def __call__(self) -> str:
        with self._lock:
            now_ms = time.time_ns() // 1_000_000
            if now_ms <= self._last_ms and self._last_random < _RANDOM_MAX:
                random_part = self._last_random + 1
                if not random_part & 1023:  # a carry past the last two digits
                    self._prefix = _base32(self._last_ms, 10) + _base32(random_part >> 10, 14)
            else:
                random_part = secrets.randbits(_RANDOM_BITS)
                self._last_ms = now_ms
                self._prefix = _base32(now_ms, 10) + _base32(random_part >> 10, 14)
            self._last_random = random_part
            return self._prefix + _PAIRS[random_part & 1023]


# Every pair of Crockford digits (10 bits), so an id takes 13 look-ups instead of 26.
_PAIRS = tuple(a + b for a in _CROCKFORD for b in _CROCKFORD)


def _base32(value: int, width: int) -> str:
    """``value`` as ``width`` (even) Crockford base32 digits, most significant first."""
    return "".join([_PAIRS[(value >> shift) & 1023] for shift in range(5 * width - 10, -1, -10)])


_ulid = _MonotonicUlid()


def new_run_id(tenant: str) -> str:
    """A fresh ``<tenant>/r<ULID>`` run id (27-character opaque part)."""
    if not _TENANT_RE.fullmatch(tenant):
        raise ValueError(f"tenant {tenant!r} does not match {TENANT_PATTERN}")
    return f"{tenant}/r{_ulid()}"


def new_event_id() -> str:
    """A fresh 26-character event id."""
    return _ulid()


_last_stamp: tuple[int, str] = (-1, "")
_last_second: tuple[int, str] = (-1, "")


def utc_now() -> str:
    """The current time as ISO 8601 UTC with milliseconds and ``Z`` (event and run timestamps).

    All stored timestamps use this one fixed-width form, so they sort as strings. The text of
    the last millisecond is kept (events come many per millisecond), and that of the last
    second: a new millisecond only formats its three digits (``datetime.isoformat`` cost
    about 7,000 instructions a call).
    """
    global _last_stamp, _last_second
    ms = time.time_ns() // 1_000_000
    last = _last_stamp
    if last[0] == ms:
        return last[1]
    second, milli = divmod(ms, 1000)
    cached = _last_second
    if cached[0] != second:
        cached = _last_second = (second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))
    text = f"{cached[1]}.{milli:03d}Z"
    _last_stamp = (ms, text)
    return text
