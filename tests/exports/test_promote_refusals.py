"""``wopeval promote`` refuses (exit 2, naming what is missing) on real stored runs, SQLite and
PostgreSQL: no such run, task or trial; a trial that did not finish or never ran; a result
the log does not hold; options that cannot apply; an output file that exists."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from tests.engine.helpers import make_suite, run_suite
from tests.exports.promote_helpers import acli, stored_run
from wopeval.events.ids import new_event_id, new_run_id, utc_now
from wopeval.events.store import EventStore
from wopeval.wire.events import RunEvent


async def _copy(store: EventStore, run_id: str, keep: Callable[[RunEvent], bool]) -> str:
    """A new finished run holding the events of ``run_id`` that ``keep`` keeps (a log cut the
    way a stopped run or a lost write leaves it)."""
    record = await store.get_run(run_id)
    assert record is not None
    now = utc_now()
    copy = dataclasses.replace(
        record, run_id=new_run_id(record.tenant), created_at=now, updated_at=now, summary=None,
        idempotency_key=None, status="running",
    )  # fmt: skip
    await store.create_run(copy)
    ids: dict[str, str] = {}
    for event in await store.events(run_id):
        if not keep(event):
            continue
        ids[event.eventId] = new_event_id()
        item = store.emit_later(
            copy.run_id,
            event.typed,  # type: ignore[arg-type]
            event_id=ids[event.eventId],
            causation_id=ids.get(event.causationId or ""),
            timestamp=event.timestamp,
        )
        await item.committed()
    await store.set_status(copy.run_id, "failed")
    return copy.run_id


async def _refused(store_url: str, *args: str) -> str:
    code, out = await acli("promote", *args, "--store", store_url)
    assert code == 2, out
    return " ".join(out.split())


async def test_promote_refuses_what_is_not_in_the_run(
    store: EventStore, store_url: str, tmp_path: Path
) -> None:
    ran = await stored_run(store)
    run = ran.run_id
    out = await _refused(store_url, "acme/" + "0" * 26, "--task", "late", "--trial", "0")
    assert "RUN: run 'acme/00000000000000000000000000' is not in the store" in out
    out = await _refused(store_url, run, "--task", "nope", "--trial", "0")
    assert "--task: the run's suite has no task 'nope' (its tasks: 'damaged', 'late'" in out
    out = await _refused(store_url, run, "--task", "late", "--trial", "3")
    assert f"--trial: trial 3 of task 'late' is not in run {run} (its trials in the log: 0)" in out


# A log cut the way a stopped run, a lost write or a budget skip leaves it: what is kept, and
# the refusal that names what is missing.
CUTS: list[tuple[Callable[[RunEvent], bool], str]] = [
    (
        lambda e: e.type != "eval.scored",
        "trial 0 of task 'damaged' did not finish: the log has no eval.scored",
    ),
    (
        lambda e: e.type != "agent.invocation-completed",
        "did not finish: its agent.invocation-completed is missing",
    ),
    (lambda e: e.type == "eval.scored", "trial 0 of task 'damaged' never ran (not-run)"),
    (
        lambda e: e.type != "agent.tool-returned",
        'call 0 ("crm:lookup-order"): its result was not recorded',
    ),
]


async def test_promote_refuses_a_trial_that_did_not_finish_never_ran_or_lost_a_result(
    store: EventStore, store_url: str
) -> None:
    ran = await stored_run(store)
    for keep, message in CUTS:
        cut = await _copy(store, ran.run_id, keep)
        out = await _refused(store_url, cut, "--task", "damaged", "--trial", "0")
        assert message in out


async def test_promote_refuses_options_that_cannot_apply(
    store: EventStore, store_url: str, tmp_path: Path
) -> None:
    ran = await stored_run(store)
    run = ran.run_id
    late = (run, "--task", "late", "--trial", "0")
    out = await _refused(store_url, *late, "--forbid-call", "2")
    assert "--forbid-call 2: the trial made 2 call(s) (indexes: 0-1)" in out
    out = await _refused(store_url, run, "--task", "damaged", "--trial", "0", "--as-failure")
    assert "--as-failure: trial 0 of task 'damaged' passed" in out
    out = await _refused(store_url, *late, "--as-failure", "--forbid-call", "1")
    assert "--as-failure and --forbid-call: give one" in out
    out = await _refused(store_url, *late, "--as-failure", "--expect-output")
    assert "--as-failure and --expect-output: give one" in out
    out = await _refused(store_url, *late, "--format", "toml")
    assert "--format 'toml': expected yaml or json" in out
    out = await _refused(store_url, *late, "--cassette-out", str(tmp_path / "c"))
    assert "--cassette and --cassette-out: give both" in out
    out = await _refused(store_url, *late, "--task-id", "Not_A_Task")
    assert "promoted suite is invalid" in out
    assert "tasks[0].taskId" in out
    existing = tmp_path / "there.yaml"
    existing.write_text("kept\n")
    out = await _refused(store_url, *late, "-o", str(existing))
    assert f"--output: {existing} exists (pass --force to overwrite it)" in out
    assert existing.read_text() == "kept\n"
    code, said = await acli("promote", *late, "-o", str(existing), "--force", "--store", store_url)
    assert code == 0, said
    assert existing.read_text().startswith("# Promoted by wopeval")


async def test_promote_refuses_to_forbid_a_tool_the_trial_also_called_elsewhere(
    store: EventStore, store_url: str
) -> None:
    lookup = {"tool": "crm:lookup", "args": {"orderId": "A-1"}}
    task = {
        "taskId": "twice",
        "input": {"calls": [lookup, lookup], "output": None},
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": None}},
        "fixtures": {"toolResponses": [{"tool": "crm:lookup", "response": {"ok": True}}]},
    }
    ran = await run_suite(store, make_suite([task]))
    out = await _refused(
        store_url, ran.run_id, "--task", "twice", "--trial", "0", "--forbid-call", "0"
    )
    assert '--forbid-call 0: its tool "crm:lookup" is also called at 1' in out
    silent = await _copy(store, ran.run_id, lambda e: e.type != "agent.decided")
    out = await _refused(store_url, silent, "--task", "twice", "--trial", "0", "--expect-output")
    assert "--expect-output: trial 0 of task 'twice' recorded no output" in out
    # a null output is an output: expected exactly
    code, said = await acli(
        "promote", ran.run_id, "--task", "twice", "--trial", "0", "--expect-output",
        "--store", store_url,
    )  # fmt: skip
    assert code == 0, said
    assert "match:\n      strategy: exact\n      value: null\n" in said
