"""The three eval-suite fixtures (``0244.fixtures-valid``): valid, and designed to be decisive."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from wopeval.conformance.catalog import (
    FIXTURE_MISS_FIXTURE,
    FIXTURES,
    TRAJECTORY_FIXTURE,
    TRIALS_FIXTURE,
    Fixture,
)
from wopeval.conformance.legs.fixtures_valid import check_fixture, check_fixtures
from wopeval.conformance.reference import grade
from wopeval.conformance.suites import (
    content_strings,
    expectation_of,
    expected_pass,
    fixture_misses,
    load_fixture,
    scripted_calls,
    tasks_of,
)
from wopeval.suite import parse_suite, used_features
from wopeval.suite.load import validate_suite

AGENT = "core.conformance.agents.scripted"


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f.fixture_id)
def test_0244_fixtures_valid_each_fixture_passes_the_kit(fixture: Fixture) -> None:
    assert check_fixture(fixture, load_fixture(fixture)) == []


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f.fixture_id)
def test_0244_fixtures_valid_wopeval_loader_agrees(fixture: Fixture) -> None:
    """The project's own suite loader (schema + rules) accepts each fixture too."""
    suite, errors = validate_suite(load_fixture(fixture))
    assert errors == []
    assert suite is not None
    assert suite.suiteId == fixture.suite_id
    assert suite.version == "1.0.0"
    assert suite.targetAgentId == AGENT


def test_0244_G_each_fixture_needs_only_its_own_facet() -> None:
    """A host advertising only the leg's facet can run the leg's fixture (§G refusals)."""
    for fixture in FIXTURES:
        facets = {use.facet for use in used_features(parse_suite(load_fixture(fixture)))}
        assert facets == {fixture.facet}, fixture.fixture_id


def test_0244_A_trajectory_fixture_outcomes_are_known() -> None:
    """Hand-worked expected blocks; every call is served, so the path decides each task."""
    suite = load_fixture(TRAJECTORY_FIXTURE)
    want = {
        "in-order-match": (True, 2, 3, 2, 0),
        "wrong-order": (False, 2, 2, 2, 0),
        "forbidden-hit": (False, 2, 3, 2, 1),
        "subset-repeats": (True, 2, 4, 2, 0),
        "exact-args-mismatch": (False, 2, 2, 1, 0),
    }
    got: dict[str, tuple[Any, ...]] = {}
    for task in tasks_of(suite):
        calls = scripted_calls(task["input"], 0)
        assert fixture_misses(task, calls) == 0
        expectation = expectation_of(task)
        assert expectation is not None
        g = grade(expectation, calls, AGENT)
        got[task["taskId"]] = (
            g.matched,
            g.expected_count,
            g.observed_count,
            g.matched_count,
            g.forbidden_count,
        )
        assert expected_pass(task, 0) is g.matched
    assert got == want


def test_0244_B_trials_fixture_pattern_is_known() -> None:
    suite = load_fixture(TRIALS_FIXTURE)
    pattern = {t["taskId"]: tuple(expected_pass(t, i) for i in range(3)) for t in tasks_of(suite)}
    assert pattern == {
        "passes-three-of-three": (True, True, True),
        "passes-two-of-three": (True, False, True),
        "passes-one-of-three": (False, False, True),
        "passes-none": (False, False, False),
    }


def test_0244_D_fixture_miss_fixture_has_a_decoy_and_a_served_task() -> None:
    suite = load_fixture(FIXTURE_MISS_FIXTURE)
    by_id = {t["taskId"]: t for t in tasks_of(suite)}
    missed, served = by_id["missed-call"], by_id["served-call"]
    assert fixture_misses(missed, scripted_calls(missed["input"], 0)) == 1
    assert fixture_misses(served, scripted_calls(served["input"], 0)) == 0
    assert expected_pass(missed, 0) is False
    assert expected_pass(served, 0) is True
    # The decoy: ignoring the miss, the missed task's output would match its expectation.
    assert missed["expected"]["match"]["value"] in missed["input"]["output"]


def test_0244_H_content_strings_cover_tools_args_and_outputs() -> None:
    content = content_strings(load_fixture(TRAJECTORY_FIXTURE))
    assert {"crm:lookup-order", "billing:refund-all", "ORD-7731-A", "refund approved"} <= content
    assert "goodwill sweep" in content
    assert not content & {"in-order", "subset", "exact", "any-order", "in-order-match"}


def _mutate(fixture: Fixture, change: Callable[[dict[str, Any]], None]) -> list[str]:
    doc = copy.deepcopy(load_fixture(fixture))
    change(doc)
    return check_fixture(fixture, doc)


def _traj(doc: dict[str, Any]) -> dict[str, Any]:
    trajectory: dict[str, Any] = doc["tasks"][0]["expected"]["trajectory"]
    return trajectory


NEGATIVES: list[tuple[str, Fixture, Callable[[dict[str, Any]], None], str]] = [
    ("superset mode", TRAJECTORY_FIXTURE, lambda d: _traj(d).update(match="superset"), "schema:"),
    (
        "unknown trajectory member",
        TRAJECTORY_FIXTURE,
        lambda d: _traj(d).update(tools=[]),
        "schema:",
    ),
    ("trials.count 0", TRIALS_FIXTURE, lambda d: d["trials"].update(count=0), "schema:"),
    ("k above count", TRIALS_FIXTURE, lambda d: d["trials"].update(k=4), "rule: trials.k"),
    (
        "trajectory kind with match",
        TRAJECTORY_FIXTURE,
        lambda d: d["tasks"][3]["expected"].update(match={"strategy": "exact", "value": "x"}),
        "rule: tasks[3].expected.match",
    ),
    (
        "exact without args",
        TRAJECTORY_FIXTURE,
        lambda d: d["tasks"][2]["expected"]["trajectory"]["calls"][1].pop("args"),
        "rule: tasks[2].expected.trajectory.calls[1].args",
    ),
    (
        "duplicate taskId",
        FIXTURE_MISS_FIXTURE,
        lambda d: d["tasks"][1].update(taskId="missed-call"),
        "rule: tasks[1].taskId",
    ),
    ("wrong version", TRIALS_FIXTURE, lambda d: d.update(version="1.0.1"), "contract:"),
    ("other agent", TRIALS_FIXTURE, lambda d: d.update(targetAgentId="x.y"), "contract:"),
    (
        "a trajectory call left unserved",
        TRAJECTORY_FIXTURE,
        lambda d: d["tasks"][0]["fixtures"]["toolResponses"].pop(),
        "design:",
    ),
    (
        "no decoy",
        FIXTURE_MISS_FIXTURE,
        lambda d: d["tasks"][0]["input"].update(output="nothing"),
        "design:",
    ),
    ("uniform trials", TRIALS_FIXTURE, lambda d: d.update(tasks=d["tasks"][:1]), "design:"),
]


@pytest.mark.parametrize(
    ("fixture", "change", "prefix"), [n[1:] for n in NEGATIVES], ids=[n[0] for n in NEGATIVES]
)
def test_0244_fixtures_valid_negatives(
    fixture: Fixture, change: Callable[[dict[str, Any]], None], prefix: str
) -> None:
    errors = _mutate(fixture, change)
    assert any(error.startswith(prefix) for error in errors), errors


def test_0244_fixtures_valid_leg_reports_each_fixture() -> None:
    suites: dict[Fixture, dict[str, Any] | str] = {f: load_fixture(f) for f in FIXTURES}
    assert check_fixtures(suites).failures == []
    broken = copy.deepcopy(load_fixture(TRIALS_FIXTURE))
    broken["trials"]["k"] = 9
    suites[TRIALS_FIXTURE] = broken
    suites[FIXTURE_MISS_FIXTURE] = "cannot read it"
    failures = check_fixtures(suites).failures
    assert len(failures) == 2
    assert failures[0].startswith("conformance-eval-trials: rule: trials.k")
    assert failures[1] == "conformance-eval-fixture-miss: cannot read it"
