"""Shards (issue 13 §5): ``run --shard i/N`` slices, and ``merge`` grading a group as one run.

The merged summary must equal an unsharded run's of the same trials. Latency is read from the
store's commit timestamps, so these tests freeze the store's clock: then every summary field,
latency included, is compared byte for byte (``EvalSummary.to_json``).
"""

from __future__ import annotations

import math
import secrets
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from wopeval.engine.registry import Registry
from wopeval.engine.run import RunHandle, RunSettings
from wopeval.events.store import EventStore
from wopeval.grading.summary import build_summary
from wopeval.service.runs import RunPlan, RunService, grading_options
from wopeval.service.shards import ShardMismatch, ShardsIncomplete, merge_shards, plan_shard
from wopeval.service.slices import (
    ShardSpecError,
    ShardState,
    in_shard,
    parse_shard,
    shard_size,
)
from wopeval.suite import load_suite, parse_suite
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.events import EvalScored, RunEvent
from wopeval.wire.request import ShardRequest
from wopeval.wire.summary import EvalSummary

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart" / "suite.yaml"
AGENT = "wopeval.examples.support"
FROZEN = "2026-01-01T00:00:00.000Z"


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every commit timestamp the same: latencies are 0 in every run (compared exactly)."""
    monkeypatch.setattr("wopeval.events.log.utc_now", lambda: FROZEN)


def _suite(count: int = 5) -> AgentEvalSuite:
    """The quickstart suite (costs, fixture misses, trajectories, a failing trial or two)."""
    suite = load_suite(QUICKSTART)
    doc = suite.model_dump(mode="json", exclude_unset=True)
    doc["trials"] = {"count": count, "k": min(3, count), "passRule": "all"}
    return parse_suite(doc)


def _group() -> str:
    return "t-" + secrets.token_hex(6)  # the PostgreSQL database is shared by the session


async def _plan(store: EventStore, suite: AgentEvalSuite, **settings: Any) -> RunPlan:
    service = RunService(store, Registry())
    return await service.plan(suite, AGENT, RunSettings(concurrency=3, **settings))


async def _run(store: EventStore, plan: RunPlan) -> tuple[str, EvalSummary | None]:
    service = RunService(store, Registry())
    record, summary = await service.run(plan)
    return record.run_id, summary


async def _log(store: EventStore, run_id: str) -> list[RunEvent]:
    return await store.events(run_id)


@asynccontextmanager
async def _stores(
    store_url: str, tmp_path: Path, count: int, separate: bool
) -> AsyncIterator[list[EventStore]]:
    """``count`` shard stores: each its own SQLite file, or the one shared store."""
    async with AsyncExitStack() as stack:
        if separate:
            urls = [str(tmp_path / f"shard-{i}.db") for i in range(count)]
            yield [await stack.enter_async_context(await EventStore.open(u)) for u in urls]
        else:
            shared = await stack.enter_async_context(await EventStore.open(store_url))
            yield [shared] * count


def _scored(events: list[RunEvent]) -> Counter[tuple[str, int]]:
    return Counter(
        (p.taskId, p.trialIndex or 0) for e in events if isinstance(p := e.typed, EvalScored)
    )


# ---- slices ---------------------------------------------------------------------------------


def _slice(suite: AgentEvalSuite, index: int, count: int) -> list[tuple[int, int]]:
    return list(ShardState(shard=ShardRequest(group="g", index=index, count=count)).pending(suite))


@pytest.mark.parametrize(("tasks", "trials"), [(3, 5), (1, 1), (4, 1), (2, 6), (7, 3)])
@pytest.mark.parametrize("count", [1, 2, 3, 5, 8])
def test_slices_partition_every_planned_pair_evenly(tasks: int, trials: int, count: int) -> None:
    doc = _suite().model_dump(mode="json", exclude_unset=True)
    doc["tasks"] = [dict(doc["tasks"][0], taskId=f"t-{i}") for i in range(tasks)]
    doc["trials"] = {"count": trials}
    suite = parse_suite(doc)
    slices = [_slice(suite, i, count) for i in range(count)]
    everything = [pair for piece in slices for pair in piece]
    assert sorted(everything) == sorted((t, i) for t in range(tasks) for i in range(trials))
    assert len(everything) == len(set(everything))  # disjoint
    sizes = [len(piece) for piece in slices]
    assert max(sizes) - min(sizes) <= 1
    assert sizes == [shard_size(suite, i, count) for i in range(count)]
    # stable: the same suite document and N give the same slices (no process state involved)
    again = parse_suite(suite.model_dump(mode="json", exclude_unset=True))
    assert [_slice(again, i, count) for i in range(count)] == slices
    # a task's trials are spread over consecutive shards, not piled on one
    if trials >= count:
        for task in range(tasks):
            owners = {i for i, piece in enumerate(slices) for t, _ in piece if t == task}
            assert owners == set(range(count))


def test_a_shard_runs_its_pairs_trial_major_and_in_shard_agrees() -> None:
    suite = _suite(4)
    shard = ShardRequest(group="g", index=1, count=3)
    pairs = _slice(suite, 1, 3)
    assert pairs == sorted(pairs, key=lambda p: (p[1], p[0]))
    assert all(in_shard(suite, shard, t, i) for t, i in pairs)


@pytest.mark.parametrize(
    ("spec", "expected"), [("0/1", (0, 1)), ("2/3", (2, 3)), (" 0 / 4 ", (0, 4))]
)
def test_shard_spec_is_zero_based_i_over_n(spec: str, expected: tuple[int, int]) -> None:
    assert parse_shard(spec) == expected


@pytest.mark.parametrize("spec", ["3/3", "4/3", "0/0", "-1/3", "1", "a/b", "1/2/3", ""])
def test_a_bad_shard_spec_is_refused_naming_the_option(spec: str) -> None:
    with pytest.raises(ShardSpecError, match=r"^--shard: "):
        parse_shard(spec)


def test_a_one_based_last_shard_is_refused_with_the_zero_based_spelling() -> None:
    with pytest.raises(ShardSpecError, match=r"0-based.*2/3"):
        parse_shard("3/3")


# ---- merge == unsharded -------------------------------------------------------------------


@pytest.mark.parametrize("count", [1, 2, 3, 7])
@pytest.mark.parametrize("separate", [False, True], ids=["shared-store", "store-per-shard"])
async def test_rfc0244_B_merged_shards_grade_to_the_unsharded_summary(
    store_url: str, tmp_path: Path, count: int, separate: bool
) -> None:
    suite, group = _suite(), _group()
    async with await EventStore.open(store_url) as target:
        _, unsharded = await _run(target, await _plan(target, suite))
        assert unsharded is not None
        async with _stores(store_url, tmp_path, count, separate) as stores:
            shard_ids = []
            for index, store in enumerate(stores):
                plan = plan_shard(await _plan(store, suite), index, count, group)
                run_id, _ = await _run(store, plan)
                shard_ids.append(run_id)
                assert set(_scored(await _log(store, run_id))) == {
                    (suite.tasks[t].taskId, i) for t, i in _slice(suite, index, count)
                }
            merged = await merge_shards(RunService(target, Registry()), stores, group)
        assert merged.summary.to_json() == unsharded.to_json()
        assert merged.record.summary == unsharded.to_wire()
        assert [s.run_id for s in merged.shards if s is not None] == shard_ids
        assert merged.record.run_request.merged is not None
        assert merged.record.run_request.shard is None
        log = await _log(target, merged.record.run_id)
        assert [e.sequence for e in log] == list(range(len(log)))
        assert [e.type for e in log[:2]] == ["run.started", "eval.started"]
        assert [e.type for e in log[-2:]] == ["eval.completed", "run.completed"]
        planned = {(t.taskId, i) for t in suite.tasks for i in range(5)}
        assert _scored(log) == Counter(dict.fromkeys(planned, 1))
        regraded = await RunService(target, Registry()).regrade(merged.record.run_id)
        assert regraded.reproduces_stored  # invariant 1: grade reproduces the merged summary


async def test_rfc0244_B_cost_ceiling_counts_every_shards_spend(store_url: str) -> None:
    """The merged run counts every shard's usage against ``maxCostUsd`` (exactly): each shard
    alone stays under the ceiling (so none skipped a trial), the group does not, and the merged
    suite fails, as the unsharded run (which stopped starting trials at the ceiling) does."""
    suite, group = _suite(), _group()
    doc = suite.model_dump(mode="json", exclude_unset=True)
    doc["thresholds"] = {"passScore": 0.5, "maxCostUsd": 0.003}
    suite = parse_suite(doc)
    async with await EventStore.open(store_url) as store:
        _, unsharded = await _run(store, await _plan(store, suite))
        shard_costs: list[float] = []
        for index in range(2):
            _, partial = await _run(store, plan_shard(await _plan(store, suite), index, 2, group))
            assert partial is not None
            shard_costs.append(partial.totalCostUsd or 0.0)
        merged = await merge_shards(RunService(store, Registry()), [store], group)
    assert unsharded is not None
    assert not unsharded.passed
    assert all(cost <= 0.003 for cost in shard_costs)
    assert merged.summary.totalCostUsd == math.fsum(shard_costs)
    assert math.fsum(shard_costs) > 0.003
    assert not merged.summary.passed
    assert merged.missing_trials == 0  # no shard saw the others' spend: every trial ran


# ---- refusals -------------------------------------------------------------------------------


async def _shards(
    store: EventStore, suite: AgentEvalSuite, group: str, count: int, **settings: Any
) -> list[str]:
    ids = []
    for index in range(count):
        run_id, _ = await _run(
            store, plan_shard(await _plan(store, suite, **settings), index, count, group)
        )
        ids.append(run_id)
    return ids


async def test_merge_refuses_a_missing_shard_unless_partial(store_url: str) -> None:
    suite, group = _suite(), _group()
    async with await EventStore.open(store_url) as store:
        full_id, unsharded = await _run(store, await _plan(store, suite))
        await _run(store, plan_shard(await _plan(store, suite), 0, 3, group))
        await _run(store, plan_shard(await _plan(store, suite), 2, 3, group))
        service = RunService(store, Registry())
        with pytest.raises(ShardsIncomplete, match=r"shard 1 of group .* is in none"):
            await merge_shards(service, [store], group)
        merged = await merge_shards(service, [store], group, allow_partial=True)
        assert merged.partial
        assert merged.missing_shards == [1]
        assert merged.missing_trials == shard_size(suite, 1, 3)
        # what an unsharded run of the same trials grades to: its log without shard 1's trials
        assert unsharded is not None
        kept = _without_pairs(suite, await _log(store, full_id), 1, 3)
        options = grading_options(merged.record.run_request)
        assert merged.summary.to_json() == build_summary(suite, kept, options).to_json()
        assert not merged.summary.passed  # missing trials count as failed (and as skipped)
        assert (await service.regrade(merged.record.run_id)).reproduces_stored


def _without_pairs(
    suite: AgentEvalSuite, events: list[RunEvent], index: int, count: int
) -> Iterator[RunEvent]:
    shard = ShardRequest(group="g", index=index, count=count)
    task_index = {t.taskId: i for i, t in enumerate(suite.tasks)}
    dropped: set[str] = set()
    for event in events:
        payload = event.payload if isinstance(event.payload, dict) else {}
        key = payload.get("x-wopeval-taskId") if event.type == "agent.invocation-started" else None
        if key is not None and in_shard(
            suite, shard, task_index[key], int(payload.get("x-wopeval-trialIndex") or 0)
        ):
            dropped.add(event.eventId)
            continue
        if event.causationId in dropped:
            continue
        if event.type in ("eval.scored", "wopeval.trial-failed"):
            trial = payload.get("trialIndex") or 0
            if in_shard(suite, shard, task_index[payload["taskId"]], trial):
                continue
        yield event


async def test_merge_refuses_a_shard_recorded_twice_and_exclude_resolves_it(
    store_url: str,
) -> None:
    suite, group = _suite(2), _group()
    async with await EventStore.open(store_url) as store:
        ids = await _shards(store, suite, group, 2)
        again, _ = await _run(store, plan_shard(await _plan(store, suite), 1, 2, group))
        service = RunService(store, Registry())
        with pytest.raises(ShardsIncomplete, match=rf"shard 1 .* twice: runs {ids[1]} .* {again}"):
            await merge_shards(service, [store], group)
        with pytest.raises(ShardsIncomplete, match="twice"):  # partial does not pick for you
            await merge_shards(service, [store], group, allow_partial=True)
        merged = await merge_shards(service, [store], group, exclude=[again])
        assert [s.run_id for s in merged.shards if s] == ids


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"trial_timeout_s": 9.0}, "trialTimeoutS"),
        ({"host_max_cost_usd": 1.0}, "hostMaxCostUsd"),
    ],
)
async def test_merge_refuses_a_shard_with_other_settings_naming_shard_and_field(
    store_url: str, change: dict[str, Any], field: str
) -> None:
    suite, group = _suite(2), _group()
    async with await EventStore.open(store_url) as store:
        await _run(store, plan_shard(await _plan(store, suite), 0, 2, group))
        odd, _ = await _run(store, plan_shard(await _plan(store, suite, **change), 1, 2, group))
        with pytest.raises(ShardMismatch, match=rf"shard 1 \(run {odd}\): {field} is"):
            await merge_shards(RunService(store, Registry()), [store], group)


async def test_merge_refuses_a_shard_of_another_suite_or_count(store_url: str) -> None:
    suite, group = _suite(2), _group()
    doc = suite.model_dump(mode="json", exclude_unset=True)
    doc["tasks"][0]["input"]["message"] = "changed"
    other = parse_suite(doc)
    async with await EventStore.open(store_url) as store:
        await _run(store, plan_shard(await _plan(store, suite), 0, 2, group))
        odd, _ = await _run(store, plan_shard(await _plan(store, other), 1, 2, group))
        service = RunService(store, Registry())
        with pytest.raises(ShardMismatch, match=rf"shard 1 \(run {odd}\): its suite differs"):
            await merge_shards(service, [store], group)
        group2 = _group()
        await _run(store, plan_shard(await _plan(store, suite), 0, 2, group2))
        odd, _ = await _run(store, plan_shard(await _plan(store, suite), 1, 3, group2))
        with pytest.raises(ShardMismatch, match=rf"run {odd}\): shard.count is 3"):
            await merge_shards(service, [store], group2)


async def test_merge_refuses_an_unfinished_shard_unless_partial(store_url: str) -> None:
    suite, group = _suite(2), _group()
    async with await EventStore.open(store_url) as store:
        await _run(store, plan_shard(await _plan(store, suite), 0, 2, group))
        service = RunService(store, Registry())
        pending = await service.create(plan_shard(await _plan(store, suite), 1, 2, group))
        await store.set_status(pending.run_id, "running")  # as a killed process leaves it
        with pytest.raises(ShardsIncomplete, match=rf"run {pending.run_id}\) is running"):
            await merge_shards(service, [store], group)
        merged = await merge_shards(service, [store], group, allow_partial=True)
        assert merged.missing_trials == shard_size(suite, 1, 2)
        assert merged.missing_shards == []


async def test_rfc0244_B_merge_refuses_a_pair_scored_outside_its_shard(store_url: str) -> None:
    """``eval.scored`` is unique per (taskId, trialIndex): a shard whose log scored another
    shard's pairs (run with the wrong slice) is refused, naming it, never double-counted."""
    suite, group = _suite(2), _group()
    async with await EventStore.open(store_url) as store:
        await _run(store, plan_shard(await _plan(store, suite), 0, 2, group))
        service = RunService(store, Registry())
        wrong = await service.create(plan_shard(await _plan(store, suite), 1, 2, group))
        slice_0 = plan_shard(await _plan(store, suite), 0, 2, group)
        await service.execute(slice_0, RunHandle(wrong.run_id))  # ran shard 0's pairs
        with pytest.raises(ShardMismatch, match=rf"run {wrong.run_id}\) scored .* shard 0's"):
            await merge_shards(service, [store], group)


async def test_merge_reads_every_log_in_pages(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Flat memory: the merge never asks a store for a whole log at once."""
    suite, group = _suite(3), _group()
    async with await EventStore.open(store_url) as store:
        await _shards(store, suite, group, 2)
        limits: list[int | None] = []
        original = EventStore.events

        async def spy(
            self: EventStore, run_id: str, after: int = -1, limit: int | None = None
        ) -> list[RunEvent]:
            limits.append(limit)
            return await original(self, run_id, after, limit)

        monkeypatch.setattr(EventStore, "events", spy)
        monkeypatch.setattr("wopeval.service.shards.PAGE", 7)
        merged = await merge_shards(RunService(store, Registry()), [store], group)
    assert limits
    assert None not in limits
    assert max(x for x in limits if x is not None) <= 2000
    assert merged.summary.taskCount == 3
