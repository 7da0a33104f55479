"""Run ids on the wire (OpenWOP v2 identity.md §5): ``<tenant>/<opaque>`` in bodies, one path
segment in URLs.

Projection: every UTF-8 byte outside ``[A-Za-z0-9._-]`` becomes ``~`` and two uppercase hex
digits (``acme/r-9f3c`` → ``acme~2Fr-9f3c``). The host emits the projected form in links and
accepts it, the legacy percent form (``acme%2Fr-9f3c``), and, because an ASGI server decodes
``%2F`` before routing, a plain ``/`` inside the captured path. A segment that is not the
projection of a run id (a ``~`` without two hex digits after it, bytes that are not UTF-8, no
tenant, a doubly projected id) is malformed: ``400 validation_error``, whether or not such a
run could exist (identity.md §5, RFC 0184 §A.1).
"""

from __future__ import annotations

import re

from wopeval.events.ids import RUN_ID_PATTERN

_PASSTHROUGH = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
_ESCAPE = re.compile(r"[~%]([0-9A-Fa-f]{2})")
_LONE_TILDE = re.compile(r"~(?![0-9A-Fa-f]{2})")
_RUN_ID_RE = re.compile(RUN_ID_PATTERN)


def project_id(bound: str) -> str:
    """``acme/r-9f3c`` → ``acme~2Fr-9f3c``."""
    return "".join(chr(b) if b in _PASSTHROUGH else f"~{b:02X}" for b in bound.encode("utf-8"))


def unproject_id(wire: str) -> str | None:
    """Decode a path segment (``~XX`` or ``%XX`` escapes) to the bound id; None if a ``~``
    does not introduce two hex digits or the bytes are not UTF-8."""
    if _LONE_TILDE.search(wire):
        return None
    out = bytearray()
    pos = 0
    for match in _ESCAPE.finditer(wire):
        out += wire[pos : match.start()].encode("utf-8")
        out.append(int(match.group(1), 16))
        pos = match.end()
    out += wire[pos:].encode("utf-8")
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        return None


def run_id_from_path(segment: str) -> str | None:
    """The bound run id a path segment names, or None when it is malformed."""
    bound = unproject_id(segment)
    if bound is None or not _RUN_ID_RE.fullmatch(bound):
        return None
    return bound


def tenant_of(run_id: str) -> str:
    return run_id.partition("/")[0]
