"""wopeval's own engine, graded by the kit's independent legs (no HTTP; the lead runs the host).

Each fixture runs through :mod:`wopeval.engine` into a SQLite event store; the stored events and
the summary, as they would go on the wire, must pass every leg. A disagreement here means the
engine's grader or the kit's reference is wrong.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.engine.helpers import run_suite
from wopeval.conformance import catalog as C
from wopeval.conformance.catalog import Fixture
from wopeval.conformance.legs.common import RunCapture
from wopeval.conformance.legs.fixture_miss import check_fixture_miss
from wopeval.conformance.legs.gating_score import check_gating_mean, check_unmatched_keeps_score
from wopeval.conformance.legs.shape import check_content_free, check_wire_shape
from wopeval.conformance.legs.trajectory import check_trajectory
from wopeval.conformance.legs.trials import check_trial_stats, check_trials_per_task
from wopeval.conformance.suites import load_fixture
from wopeval.events.store import EventStore
from wopeval.suite import parse_suite


@pytest.fixture
async def sqlite_store(tmp_path: Path) -> AsyncIterator[EventStore]:
    store = await EventStore.open(str(tmp_path / "conformance.db"))
    try:
        yield store
    finally:
        await store.close()


async def _capture(store: EventStore, fixture: Fixture) -> RunCapture:
    doc = load_fixture(fixture)
    ran = await run_suite(store, parse_suite(doc))
    events = [event.to_wire() for event in ran.events]
    return RunCapture(fixture, doc, ran.run_id, "completed", events, ran.done.to_wire())


async def test_0244_engine_passes_every_leg(sqlite_store: EventStore) -> None:
    captures = {f: await _capture(sqlite_store, f) for f in C.FIXTURES}
    legs = {
        C.TRAJECTORY_GRADED: check_trajectory(captures[C.TRAJECTORY_FIXTURE]),
        C.TRIALS_PER_TASK: check_trials_per_task(captures[C.TRIALS_FIXTURE]),
        C.TRIAL_STATS_FORMULA: check_trial_stats(captures[C.TRIALS_FIXTURE]),
        C.FIXTURE_MISS_FAILS: check_fixture_miss(captures[C.FIXTURE_MISS_FIXTURE]),
        C.WIRE_SHAPE: check_wire_shape(list(captures.values()), {}),
        C.CONTENT_FREE: check_content_free(list(captures.values())),
    }
    assert {name: ck.failures for name, ck in legs.items()} == {key: [] for key in legs}
    assert all(ck.checks > 10 for ck in legs.values())


async def test_0246_engine_passes_the_gating_score_legs(sqlite_store: EventStore) -> None:
    unmatched = await _capture(sqlite_store, C.UNMATCHED_SCORE_FIXTURE)
    gating = await _capture(sqlite_store, C.GATING_MEAN_FIXTURE)
    legs = {
        C.EXT_UNMATCHED_KEEPS_SCORE: check_unmatched_keeps_score(unmatched),
        C.EXT_GATING_SCORE_MEAN: check_gating_mean(gating),
    }
    assert {name: ck.failures for name, ck in legs.items()} == {key: [] for key in legs}
    assert all(ck.checks > 10 for ck in legs.values())
    # The engine's own numbers, as the fixture tables in docs/conformance.md work them out.
    assert [entry["passed"] for entry in gating.summary["tasks"]] == [False, True]
    assert [entry["score"] for entry in gating.summary["tasks"]] == [2 / 3, 1.0]
    assert gating.summary["passed"] is False
