"""Who executes a run: a process's owner id, and whether the process an id names is gone.

An owner id is ``host:pid:random`` (:func:`owner_id`; the random part tells a restarted pid
apart). A run's owner renews its lease while it executes the run (see
:meth:`~wopeval.events.store.EventStore.claim_runs`); a resumer waits for the lease to run out,
unless the owner provably stopped: :func:`owner_gone` says so of an owner on this machine whose
process no longer exists, or has exited and awaits reaping (a ``kill -9``, a crash). An owner
on another machine, or one whose pid is alive again (reused, or another container's), is never
taken for gone: the lease decides.
"""

from __future__ import annotations

import os
import secrets
import socket

__all__ = ["held", "owner_gone", "owner_id"]


def _host() -> str:
    return socket.gethostname()[:64]


def owner_id() -> str:
    """A new owner id for this process: host name, pid and a random part."""
    return f"{_host()}:{os.getpid()}:{secrets.token_hex(4)}"


def owner_gone(owner: str) -> bool:
    """The process ``owner`` names ran on this machine and exists no more."""
    host, sep, rest = owner.rpartition(":")[0].rpartition(":")
    pid_text = rest
    if not sep or host != _host() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # it exists (another user's, say)
        return False
    return _zombie(pid)


def _zombie(pid: int) -> bool:
    """The process has exited but is not reaped yet (Linux: its state in ``/proc`` is Z): a
    killed process whose parent is gone stays so until an init that may never reap it does."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
    except OSError:
        return False
    return bool(fields) and fields[0] == b"Z"


def held(owner: str | None, lease: str | None, now: str) -> bool:
    """A claim that still holds at ``now`` (``utc_now()`` form): an owner whose lease has
    not run out and whose process is not provably gone."""
    return owner is not None and (lease or "") > now and not owner_gone(owner)
