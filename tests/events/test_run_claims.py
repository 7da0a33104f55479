"""A run being executed is taken over only once its owner stopped: ``take_over`` refuses a
live claim (its process alive, even past its lease), takes a lapsed, released or dead owner's,
and of two resumers only one wins, nor one whose holder renewed meanwhile (both stores).
``owner_state`` tells a dead process on this machine from a live one, or a stranger."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from typing import Any

import pytest

from tests.events.helpers import run_record
from wopeval.events import owners
from wopeval.events.owners import owner_id, owner_state
from wopeval.events.store import EventStore


def _owner_of(pid: int, start: str | None = None) -> str:
    """An owner id of process ``pid`` on this machine, as :func:`owner_id` writes it."""
    start = start or owners._start_time(pid) or "1"
    return f"{socket.gethostname()[:64]}:{pid}:{start}.{owners._namespace()}:0badcafe"


def owner_gone(owner: str) -> bool:
    return owner_state(owner) == "gone"


def _dead_owner() -> str:
    """The owner id of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.2)"])
    owner = _owner_of(child.pid)
    child.wait()
    return owner


async def _owner(store: EventStore, run_id: str) -> str | None:
    record = await store.get_run(run_id)
    assert record is not None
    return record.owner


def test_an_owner_whose_process_exited_is_gone() -> None:
    assert owner_gone(_dead_owner())


def test_an_owner_killed_but_not_reaped_is_gone() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        os.kill(child.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not owner_gone(_owner_of(child.pid)):
            time.sleep(0.01)  # a zombie until reaped: gone all the same
        assert owner_gone(_owner_of(child.pid))
    finally:
        child.wait()


def test_live_processes_strangers_and_reused_pids_are_told_apart() -> None:
    assert owner_state(_owner_of(os.getppid())) == "alive"
    assert owner_state(owner_id()) == "alive"  # this process, under any claim of its own
    assert owner_state(_owner_of(os.getpid(), start="12")) == "gone"  # its pid, reused
    assert owner_state("another-machine:12345:77.1:0badcafe") == "unknown"  # the lease tells
    assert owner_state(f"{socket.gethostname()[:64]}:1:77.0:0badcafe") == "unknown"  # other ns
    assert owner_state(f"{socket.gethostname()[:64]}:12345:0badcafe") == "unknown"  # old form
    assert owner_state("no pid here") == "unknown"


async def _claimed(url: str, owner: str, lease_seconds: float = 30.0) -> EventStore:
    store = await EventStore.open(url)
    store.claim_runs(owner, lease_seconds)
    return store


async def test_a_live_claim_is_refused_and_a_released_one_taken_at_once(store_url: str) -> None:
    executing = await _claimed(store_url, _owner_of(os.getpid()))  # alive: this very process
    resumer = await _claimed(store_url, owner_id())
    library = await EventStore.open(store_url)  # claims nothing
    try:
        record = run_record()
        await executing.create_run(record)
        refused = await resumer.take_over(record.run_id)
        assert refused is not None
        assert "being executed by another process" in refused
        assert _owner_of(os.getpid()) in refused
        assert await library.take_over(record.run_id) is not None  # refused to it too
        assert await _owner(resumer, record.run_id) == _owner_of(os.getpid())

        assert await executing.release_leases() == 1  # it stopped executing the run
        assert await _owner(resumer, record.run_id) is None  # the claim is cleared
        assert await resumer.take_over(record.run_id) is None
        assert await _owner(resumer, record.run_id) == resumer.owner
        assert await resumer.take_over(record.run_id) is None  # its own: again
    finally:
        for opened in (executing, resumer, library):
            await opened.close()


async def test_a_lapsed_or_dead_owners_claim_is_taken(store_url: str) -> None:
    lapsed = await _claimed(store_url, "another-machine:12:77.1:0badcafe", lease_seconds=0.05)
    dead = await _claimed(store_url, await asyncio.to_thread(_dead_owner))
    resumer = await _claimed(store_url, owner_id())
    try:
        first, second = run_record(), run_record()
        await lapsed.create_run(first)
        await dead.create_run(second)
        await asyncio.sleep(0.1)
        assert await resumer.take_over(first.run_id) is None  # its lease ran out
        assert await resumer.take_over(second.run_id) is None  # its process is gone
        for run_id in (first.run_id, second.run_id):
            assert await _owner(resumer, run_id) == resumer.owner
    finally:
        for opened in (lapsed, dead, resumer):
            await opened.close()


async def test_of_two_resumers_only_one_takes_the_run(store_url: str) -> None:
    dead = await _claimed(store_url, await asyncio.to_thread(_dead_owner))
    one, other = await _claimed(store_url, owner_id()), await _claimed(store_url, owner_id())
    try:
        record = run_record()
        await dead.create_run(record)
        answers = await asyncio.gather(one.take_over(record.run_id), other.take_over(record.run_id))
        assert sorted(answer is None for answer in answers) == [False, True]
        winner = one if answers[0] is None else other
        assert await _owner(one, record.run_id) == winner.owner
    finally:
        for opened in (dead, one, other):
            await opened.close()


async def test_a_live_process_keeps_its_run_past_its_lease(store_url: str) -> None:
    """A blocked event loop lets the lease run out; the process is alive, so it still holds."""
    executing = await _claimed(store_url, owner_id(), lease_seconds=0.05)
    resumer = await _claimed(store_url, "another-machine:12:77.1:0badcafe")
    try:
        record = run_record()
        await executing.create_run(record)
        await asyncio.sleep(0.1)
        refused = await resumer.take_over(record.run_id)
        assert refused is not None
        assert "being executed by another process" in refused
    finally:
        await executing.close()
        await resumer.close()


async def test_a_holder_that_renews_meanwhile_keeps_its_run(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compare-and-set is on the owner and the lease judged: a renewal between the
    resumer's read and its claim wins."""
    holder = await _claimed(store_url, "another-machine:12:77.1:0badcafe", lease_seconds=0.05)
    resumer = await _claimed(store_url, owner_id())
    try:
        record = run_record()
        await holder.create_run(record)
        await asyncio.sleep(0.1)  # lapsed: the resumer judges it free
        read = resumer._read

        async def read_then_renew(stmt: Any) -> Any:
            rows = await read(stmt)
            holder.lease_seconds = 30.0
            await holder.renew_leases()  # the holder was only slow
            return rows

        monkeypatch.setattr(resumer, "_read", read_then_renew)
        refused = await resumer.take_over(record.run_id)
        assert refused is not None
        assert "meanwhile" in refused
        assert await _owner(holder, record.run_id) == holder.owner
    finally:
        await holder.close()
        await resumer.close()
