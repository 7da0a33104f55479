"""A run being executed is taken over only once its owner stopped: ``take_over`` refuses a
live claim, takes a lapsed, released or dead owner's, and of two resumers only one wins (both
stores). ``owner_gone`` tells a dead process on this machine from a live one, or a stranger."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time

from tests.events.helpers import run_record
from wopeval.events.owners import owner_gone, owner_id
from wopeval.events.store import EventStore


def _owner_of(pid: int) -> str:
    return f"{socket.gethostname()[:64]}:{pid}:0badcafe"


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


async def _owner(store: EventStore, run_id: str) -> str | None:
    record = await store.get_run(run_id)
    assert record is not None
    return record.owner


def test_an_owner_whose_process_exited_is_gone() -> None:
    assert owner_gone(_owner_of(_dead_pid()))


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


def test_live_processes_strangers_and_this_process_are_not_gone() -> None:
    assert not owner_gone(_owner_of(os.getppid()))  # alive
    assert not owner_gone(_owner_of(os.getpid()))  # this process, under another claim
    assert not owner_gone(owner_id())
    assert not owner_gone("another-machine:12345:0badcafe")  # only the lease can tell
    assert not owner_gone("no pid here")
    assert not owner_gone(f"{socket.gethostname()[:64]}:-4:0badcafe")


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
        assert await resumer.take_over(record.run_id) is None
        assert await _owner(resumer, record.run_id) == resumer.owner
        assert await resumer.take_over(record.run_id) is None  # its own: again
    finally:
        for opened in (executing, resumer, library):
            await opened.close()


async def test_a_lapsed_or_dead_owners_claim_is_taken(store_url: str) -> None:
    lapsed = await _claimed(store_url, _owner_of(os.getpid()), lease_seconds=0.05)
    dead = await _claimed(store_url, _owner_of(await asyncio.to_thread(_dead_pid)))
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
    dead = await _claimed(store_url, _owner_of(await asyncio.to_thread(_dead_pid)))
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
