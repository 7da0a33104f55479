"""Who executes a run: a process's owner id, and whether the process an id names still runs.

An owner id is ``host:pid:start.ns:random`` (:func:`owner_id`): the host name, the pid, the
process's start time and pid namespace (Linux ``/proc``; ``0`` elsewhere) and a random part. A
run's owner renews its lease while it executes the run and clears its claim when it stops (see
:meth:`~wopeval.events.store.EventStore.claim_runs`). :func:`held` says whether a claim still
holds: on this machine and in this pid namespace the process itself decides — alive (the same
pid with the same start time: a claim that holds even if a blocked event loop let its lease run
out) or gone (no such process, a zombie, or a pid reused since: a ``kill -9``, a crash, a
restarted container); anywhere else, or for an id without those parts, the lease decides.
"""

from __future__ import annotations

import os
import secrets
import socket
from typing import Literal

__all__ = ["held", "owner_id", "owner_state"]

State = Literal["alive", "gone", "unknown"]


def _host() -> str:
    return socket.gethostname()[:64]


def _start_time(pid: int) -> str | None:
    """The process's start time (clock ticks since boot, ``/proc/<pid>/stat`` field 22), or
    None; its state is ``Z`` for a zombie."""
    fields = _stat(pid)
    return fields[19].decode() if fields is not None and len(fields) > 19 else None


def _stat(pid: int) -> list[bytes] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rpartition(b")")[2].split()  # after the name, which may hold spaces
    except OSError:
        return None


def _namespace() -> str:
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return "0"


def owner_id() -> str:
    """A new owner id for this process."""
    pid = os.getpid()
    return f"{_host()}:{pid}:{_start_time(pid) or '0'}.{_namespace()}:{secrets.token_hex(4)}"


def owner_state(owner: str) -> State:
    """Whether the process ``owner`` names still runs, as far as this process can tell."""
    parts = owner.split(":")
    if len(parts) not in (3, 4) or parts[0] != _host() or not parts[1].isdigit():
        return "unknown"
    pid = int(parts[1])
    start, _, namespace = parts[2].partition(".") if len(parts) == 4 else ("0", "", "0")
    if namespace != _namespace() or pid <= 0:
        return "unknown"  # another pid namespace (a container): its pids are not ours to see
    if start == "0":
        return "unknown"
    fields = _stat(pid)
    if fields is None:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return "gone"
        except OSError:
            return "unknown"
        return "unknown"  # alive, but no /proc to read its start time from
    if fields and fields[0] == b"Z":
        return "gone"  # exited, not reaped yet
    return "alive" if len(fields) > 19 and fields[19].decode() == start else "gone"


def held(owner: str | None, lease: str | None, now: str) -> bool:
    """A claim that still holds at ``now`` (``utc_now()`` form): its process alive, or, when
    that cannot be told, its lease not run out."""
    if owner is None:
        return False
    state = owner_state(owner)
    return state == "alive" or (state == "unknown" and (lease or "") > now)
