"""RFC 0244 §G: feature detection and the refusal of unadvertised facets."""

from __future__ import annotations

from typing import Any

from wopeval.suite import AgentEvalSuite, FieldError, check_advertised, parse_suite, used_features
from wopeval.suite.features import FeatureUse

GOLDEN: dict[str, Any] = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}
PATH: dict[str, Any] = {"match": "in-order", "calls": [{"tool": "crm:lookup"}]}


def load(*tasks: dict[str, Any], **changes: Any) -> Any:
    return parse_suite(
        {
            "suiteId": "core.acme.evals.demo",
            "version": "1.0.0",
            "modes": ["golden"],
            "tasks": list(tasks),
            **changes,
        }
    )


def task(task_id: str, expected: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"taskId": task_id, "input": {}, "expected": expected or GOLDEN, **extra}


EVERYTHING = load(
    task("plain"),
    task("graded-path", {**GOLDEN, "trajectory": PATH}),
    task("path-only", {"kind": "trajectory", "trajectory": PATH}),
    task(
        "fixtured",
        fixtures={
            "toolResponses": [
                {"tool": "a", "response": 1},
                {"tool": "b", "args": {"id": 1}, "argsMatch": "subset"},
                {"tool": "c", "argsMatch": "ignore"},
            ],
            "onMiss": "fail",
        },
    ),
    trials={"count": 12, "k": 3},
)


def test_0244_G_rfc0081_suite_uses_no_feature() -> None:
    suite = load(task("a"), task("b"), trials={"count": 1, "passRule": "any"})
    assert used_features(suite) == []


def test_0244_G_features_in_document_order() -> None:
    assert used_features(EVERYTHING) == [
        FeatureUse("trajectory", "tasks[1].expected.trajectory"),
        FeatureUse("trajectory", "tasks[2].expected.trajectory"),
        FeatureUse("fixtureMatching", "tasks[3].fixtures.toolResponses[1].args"),
        FeatureUse("fixtureMatching", "tasks[3].fixtures.toolResponses[2].argsMatch"),
        FeatureUse("fixtureMatching", "tasks[3].fixtures.onMiss"),
        FeatureUse("trials", "trials.count"),
    ]


def test_0244_G_trajectory_kind_without_block_is_named_by_kind() -> None:
    # Schema-valid, rule-invalid: built directly so feature detection still sees it.
    suite = AgentEvalSuite.model_validate(
        {
            "suiteId": "core.acme.evals.demo",
            "version": "1.0.0",
            "modes": ["golden"],
            "tasks": [task("t", {"kind": "trajectory"})],
        }
    )
    assert used_features(suite) == [FeatureUse("trajectory", "tasks[0].expected.kind")]


def test_0244_G_everything_advertised_refuses_nothing() -> None:
    assert check_advertised(EVERYTHING, trajectory=True, max_trials=12, fixture_matching=True) == []


def test_0244_G_nothing_advertised_names_every_field() -> None:
    errors = check_advertised(EVERYTHING, trajectory=False, max_trials=None, fixture_matching=False)
    assert [str(error) for error in errors] == [
        "tasks[1].expected.trajectory: trajectory grading is not advertised by this host",
        "tasks[2].expected.trajectory: trajectory grading is not advertised by this host",
        "tasks[3].fixtures.toolResponses[1].args: fixture matching is not advertised by this host",
        "tasks[3].fixtures.toolResponses[2].argsMatch: "
        "fixture matching is not advertised by this host",
        "tasks[3].fixtures.onMiss: fixture matching is not advertised by this host",
        "trials.count: trials are not advertised by this host",
    ]


def test_0244_G_examples_negative_capability_names_trials_count() -> None:
    """§Examples: the positive suite on a host advertising evalSuite without trials."""
    suite = load(task("t", {**GOLDEN, "trajectory": PATH}), trials={"count": 5, "k": 3})
    errors = check_advertised(suite, trajectory=True, max_trials=None, fixture_matching=False)
    assert errors == [FieldError("trials.count", "trials are not advertised by this host")]


def test_0244_G_count_above_max_trials_is_refused() -> None:
    errors = check_advertised(EVERYTHING, trajectory=True, max_trials=10, fixture_matching=True)
    assert errors == [FieldError("trials.count", "12 exceeds maxTrials 10")]


def test_0244_G_single_trial_needs_no_trials_facet() -> None:
    suite = load(task("t"), trials={"count": 1})
    assert check_advertised(suite, trajectory=False, max_trials=None, fixture_matching=False) == []
