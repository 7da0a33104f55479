"""wopeval's own ``x-wopeval-`` suite members: the registry, validation naming every field at
once, the refusal of an unadvertised one (the RFC 0244 §G rule), and the schema describing them."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

import pytest

from wopeval.suite import AgentEvalSuite, FieldError, SuiteError, parse_suite, suite_to_document
from wopeval.suite.adaptive_rules import adaptive_plan
from wopeval.suite.extensions import (
    EXTENSIONS,
    ExtensionUse,
    advertisement,
    check_extensions,
    extension_names,
    member,
    used_extensions,
)
from wopeval.suite.json_schemas import suite_json_schema
from wopeval.suite.load import validate_suite
from wopeval.suite.models import ExpectedCall, Task

GOLDEN: dict[str, Any] = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}
SPRT: dict[str, Any] = {"rule": "sprt", "alpha": 0.05, "threshold": 0.8, "minTrials": 1}


def doc(*tasks: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {
        "suiteId": "core.acme.evals.demo",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": list(tasks) or [task("plain")],
        "trials": {"count": 10, "k": 1},
        **changes,
    }


def task(task_id: str, **extra: Any) -> dict[str, Any]:
    return {"taskId": task_id, "input": {}, "expected": GOLDEN, **extra}


def errors_of(data: dict[str, Any]) -> list[str]:
    return [str(error) for error in validate_suite(data)[1]]


# --- the registry --------------------------------------------------------------------------


def test_registry_and_models_declare_the_same_members() -> None:
    # A member on a model is registered for that scope, and a registered scope has its field.
    for scope, model in (("suite", AgentEvalSuite), ("task", Task), ("call", ExpectedCall)):
        on_model = {
            info.alias
            for info in model.model_fields.values()
            if info.alias is not None and info.alias.startswith("x-wopeval-")
        }
        registered = {ext.name for ext in EXTENSIONS if scope in ext.scopes}
        assert on_model == registered, scope
    for ext in EXTENSIONS:
        assert ext.name.startswith("x-wopeval-")
        assert ext.summary.endswith(".")
        json.dumps(dict(ext.advertised))


def test_extension_names_are_the_registry_s_in_order() -> None:
    assert extension_names() == tuple(ext.name for ext in EXTENSIONS)
    assert {"x-wopeval-adaptive", "x-wopeval-world"} <= set(extension_names())


def test_advertisement_lists_only_the_chosen_extensions() -> None:
    assert advertisement(["x-wopeval-adaptive"]) == {"x-wopeval-adaptive": {"rules": ["sprt"]}}
    assert advertisement([]) == {}


# --- plain input: a plain RFC suite is untouched -------------------------------------------


def test_0244_G_plain_suite_uses_no_extension_and_round_trips_unchanged() -> None:
    data: dict[str, Any] = {"suiteId": "core.acme.evals.demo", "version": "1.0.0"}
    data.update(modes=["golden"], tasks=[task("plain")])
    suite = parse_suite(data)
    assert used_extensions(suite) == []
    assert check_extensions(suite, advertised=()) == []
    assert suite_to_document(suite) == data
    assert adaptive_plan(suite, suite.tasks[0]) is None


def test_one_task_suite_with_adaptive_keeps_its_member_by_wire_name() -> None:
    data = doc(task("one", **{"x-wopeval-adaptive": SPRT}))
    suite = parse_suite(data)
    assert suite_to_document(suite) == data
    assert member(suite.tasks[0], "x-wopeval-adaptive") == suite.tasks[0].x_wopeval_adaptive
    assert member(suite, "x-wopeval-adaptive") is None
    assert used_extensions(suite) == [
        ExtensionUse("x-wopeval-adaptive", "tasks[0].x-wopeval-adaptive")
    ]


def test_uses_in_document_order_tasks_then_the_suite() -> None:
    data = doc(
        task("a"),
        task("b", **{"x-wopeval-adaptive": SPRT}),
        **{"x-wopeval-adaptive": SPRT},
    )
    assert [use.path for use in used_extensions(parse_suite(data))] == [
        "tasks[1].x-wopeval-adaptive",
        "x-wopeval-adaptive",
    ]


# --- the refusal of an unadvertised extension (the §G rule for wopeval's own members) -------


def test_0244_G_unadvertised_extension_refused_naming_every_use() -> None:
    suite = parse_suite(
        doc(task("a", **{"x-wopeval-adaptive": SPRT}), **{"x-wopeval-adaptive": SPRT})
    )
    why = "x-wopeval-adaptive is not advertised by this host"
    assert check_extensions(suite, advertised=[]) == [
        FieldError("tasks[0].x-wopeval-adaptive", why),
        FieldError("x-wopeval-adaptive", why),
    ]
    assert check_extensions(suite, advertised=["x-wopeval-adaptive"]) == []


# --- hostile input: every error at once, each naming its field -----------------------------


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ({"rule": "sprt", "alpha": 0}, ".alpha: 0 must be greater than 0"),
        ({"rule": "sprt", "alpha": 1}, ".alpha: 1 must be less than 1"),
        ({"rule": "sprt", "alpha": -0.5}, ".alpha: -0.5 must be greater than 0"),
        ({"rule": "sprt", "alpha": 0.05, "beta": 1.5}, ".beta: 1.5 must be less than 1"),
        ({"rule": "sprt", "alpha": "0.05"}, ".alpha: expected a number, got string"),
        ({"rule": "sprt", "alpha": True}, ".alpha: expected a number, got boolean"),
        ({"rule": "wald", "alpha": 0.05}, ".rule: 'wald' is not one of sprt"),
        ({"alpha": 0.05}, ".rule: required"),
        ({"rule": "sprt"}, ".alpha: required"),
        (
            {"rule": "sprt", "alpha": 0.05, "minTrials": 0},
            ".minTrials: 0 is less than the minimum 1",
        ),
        ({"rule": "sprt", "alpha": 0.05, "minTrials": 2.5}, ".minTrials: expected an integer"),
        ({"rule": "sprt", "alpha": 0.05, "beta": None}, ".beta: null is not allowed"),
        ({"rule": "sprt", "alpha": 0.05, "maxTrials": 9}, ".maxTrials: unknown field (allowed: "),
    ],
)
def test_adaptive_shape_errors_name_the_field(setting: dict[str, Any], expected: str) -> None:
    errors = errors_of(doc(task("a", **{"x-wopeval-adaptive": setting})))
    assert len(errors) == 1, errors
    assert errors[0].startswith("tasks[0].x-wopeval-adaptive" + expected), errors


def test_adaptive_null_and_wrong_type_name_the_member() -> None:
    assert errors_of(doc(**{"x-wopeval-adaptive": None})) == [
        "x-wopeval-adaptive: null is not allowed (omit the field instead)"
    ]
    assert errors_of(doc(**{"x-wopeval-adaptive": [1]}))[0].startswith("x-wopeval-adaptive: ")


def test_0244_B_adaptive_with_one_trial_is_refused() -> None:
    errors = errors_of(doc(task("a", **{"x-wopeval-adaptive": SPRT}), trials={"count": 1}))
    assert errors == [
        "tasks[0].x-wopeval-adaptive: needs trials.count of at least 2, the most trials a task "
        "runs (got 1)"
    ]
    no_trials = doc(task("a", **{"x-wopeval-adaptive": SPRT}))
    del no_trials["trials"]
    assert errors_of(no_trials) == errors


def test_adaptive_min_trials_not_below_the_count_is_refused() -> None:
    setting = {**SPRT, "minTrials": 10}
    assert errors_of(doc(task("a", **{"x-wopeval-adaptive": setting}))) == [
        "tasks[0].x-wopeval-adaptive.minTrials: minTrials 10 must be below trials.count 10, "
        "or no trial could be saved"
    ]
    setting = {**SPRT, "minTrials": 11}
    assert len(errors_of(doc(task("a", **{"x-wopeval-adaptive": setting})))) == 1


def test_adaptive_default_min_trials_is_k_and_names_the_member() -> None:
    setting = {"rule": "sprt", "alpha": 0.05, "threshold": 0.8}
    # k absent ⇒ k = count = 10 ⇒ minTrials 10: nothing could stop early.
    assert errors_of(doc(task("a", **{"x-wopeval-adaptive": setting}), trials={"count": 10})) == [
        "tasks[0].x-wopeval-adaptive: minTrials (absent, so trials.k) 10 must be below "
        "trials.count 10, or no trial could be saved"
    ]


def test_0244_B_adaptive_min_trials_below_k_is_refused() -> None:
    setting = {**SPRT, "minTrials": 2}
    errors = errors_of(
        doc(task("a", **{"x-wopeval-adaptive": setting}), trials={"count": 10, "k": 3})
    )
    assert errors == [
        "tasks[0].x-wopeval-adaptive.minTrials: 2 is below trials.k 3 (pass@k needs at least k "
        "trials)"
    ]


@pytest.mark.parametrize(
    ("setting", "field"),
    [
        ({"rule": "sprt", "alpha": 0.05, "minTrials": 1}, "threshold"),  # passScore absent ⇒ 1
        ({**SPRT, "threshold": 0.95}, "threshold"),
        ({**SPRT, "threshold": 0.05}, "threshold"),
        ({**SPRT, "indifference": 0.2}, "indifference"),
        ({**SPRT, "threshold": 0.5, "indifference": 0.5}, "indifference"),
    ],
)
def test_adaptive_indifference_zone_must_stay_inside_the_unit_interval(
    setting: dict[str, Any], field: str
) -> None:
    errors = errors_of(doc(task("a", **{"x-wopeval-adaptive": setting})))
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"tasks[0].x-wopeval-adaptive.{field}: threshold ")
    assert "must stay inside (0, 1)" in errors[0]


def test_adaptive_threshold_defaults_to_the_pass_score() -> None:
    setting = {"rule": "sprt", "alpha": 0.05, "minTrials": 1}
    suite = parse_suite(
        doc(task("a", **{"x-wopeval-adaptive": setting}), thresholds={"passScore": 0.8})
    )
    plan = adaptive_plan(suite, suite.tasks[0])
    assert plan is not None
    assert (plan.threshold, plan.alpha, plan.beta, plan.min_trials, plan.max_trials) == (
        Fraction(4, 5),
        Fraction(1, 20),
        Fraction(1, 20),
        1,
        10,
    )
    assert (plan.p0, plan.p1) == (Fraction(7, 10), Fraction(9, 10))  # exact, not 0.70000…01


def test_task_setting_overrides_the_suite_setting() -> None:
    own = {**SPRT, "alpha": 0.01, "minTrials": 2}
    suite = parse_suite(
        doc(task("a"), task("b", **{"x-wopeval-adaptive": own}), **{"x-wopeval-adaptive": SPRT})
    )
    first, second = (adaptive_plan(suite, t) for t in suite.tasks)
    assert first is not None
    assert second is not None
    assert (first.alpha, first.min_trials) == (Fraction(1, 20), 1)
    assert (second.alpha, second.min_trials) == (Fraction(1, 100), 2)


def test_adaptive_on_a_live_tool_task_is_refused_naming_on_miss() -> None:
    live = {"onMiss": "live", "toolResponses": [{"tool": "a", "response": 1}]}
    errors = errors_of(
        doc(task("fixtured"), task("live", fixtures=live), **{"x-wopeval-adaptive": SPRT})
    )
    assert errors == [
        "tasks[1].fixtures.onMiss: 'live' cannot be used with x-wopeval-adaptive (a task with "
        "live tools runs every trial; drop the adaptive setting or serve every call from "
        "fixtures)"
    ]
    # Without the extension, onMiss: live is an RFC 0244 §D suite like any other.
    assert errors_of(doc(task("live", fixtures=live))) == []


def test_every_error_at_once() -> None:
    setting = {"rule": "sprt", "alpha": 0.05, "threshold": 0.95, "minTrials": 20}
    errors = errors_of(
        doc(
            task("a", fixtures={"onMiss": "live"}, **{"x-wopeval-adaptive": setting}),
            trials={"count": 10, "k": 1},
        )
    )
    assert [e.split(":")[0] for e in errors] == [
        "tasks[0].x-wopeval-adaptive.minTrials",
        "tasks[0].x-wopeval-adaptive.threshold",
        "tasks[0].fixtures.onMiss",
    ]
    with pytest.raises(SuiteError) as raised:
        parse_suite(doc(task("a", **{"x-wopeval-adaptive": setting})))
    assert len(raised.value.errors) == 2


# --- the schema describes every extension --------------------------------------------------


def test_schema_describes_each_extension_where_it_may_appear() -> None:
    schema: dict[str, Any] = suite_json_schema()
    for ext in EXTENSIONS:
        places = {
            "suite": schema["properties"],
            "task": schema["$defs"]["Task"]["properties"],
            "call": schema["$defs"]["ExpectedCall"]["properties"],
        }
        for scope in ext.scopes:
            entry = places[scope][ext.name]
            assert entry["description"] == ext.summary
            assert entry["$ref"] == f"#/$defs/{ext.model.__name__}"
    assert "x-wopeval-extensions" in str(schema["description"])
