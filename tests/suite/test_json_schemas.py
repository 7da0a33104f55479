"""The generated JSON Schemas: well formed, closed, and compatible with the upstream ones.

Compatibility means every upstream-valid document validates against the generated schema.
Upstream is ``tests/data/openwop-v2`` (vendored, pre-RFC 0244); its ``$ref``s into
``ids.schema.json`` resolve through a ``referencing`` registry of the sibling files.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]
from referencing import Registry, Resource

from tests.suite.suite_strategies import (
    JsonDoc,
    mutated,
    rfc0244_suites,
    single_changes,
    upstream_suites,
    upstream_summaries,
)
from wopeval.suite import parse_suite, suite_to_document
from wopeval.suite.json_schemas import DRAFT_2020_12, suite_json_schema, summary_json_schema
from wopeval.suite.load import check_schema, read_document
from wopeval.wire.summary import EvalSummary

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "openwop-v2"
SUITES = Path(__file__).resolve().parents[1] / "data" / "suites"


def _upstream(name: str) -> Draft202012Validator:
    resources = []
    for file in ("ids.schema.json", name):
        contents = json.loads((REFERENCE / file).read_text(encoding="utf-8"))
        resources.append((contents["$id"], Resource.from_contents(contents)))
    registry: Registry[Any] = Registry().with_resources(resources)
    return Draft202012Validator(resources[-1][1].contents, registry=registry)


UPSTREAM_SUITE = _upstream("agent-eval-suite.schema.json")
UPSTREAM_SUMMARY = _upstream("eval-summary.schema.json")
SUITE_SCHEMA = suite_json_schema()
SUMMARY_SCHEMA = summary_json_schema()
GENERATED_SUITE = Draft202012Validator(SUITE_SCHEMA)
GENERATED_SUMMARY = Draft202012Validator(SUMMARY_SCHEMA)


def _load(path: Path) -> Any:
    return read_document(path)


def _schema_nodes(node: object) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _schema_nodes(value)
    elif isinstance(node, list):
        for value in node:
            yield from _schema_nodes(value)


# --- shape of the generated schemas ---------------------------------------------------------


@pytest.mark.parametrize("schema", [SUITE_SCHEMA, SUMMARY_SCHEMA], ids=["suite", "summary"])
def test_generated_schema_is_a_valid_draft_2020_12_schema(schema: dict[str, object]) -> None:
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == DRAFT_2020_12
    assert list(schema)[:3] == ["$schema", "title", "description"]


def test_titles_are_the_wire_names() -> None:
    assert SUITE_SCHEMA["title"] == "AgentEvalSuite"
    assert SUMMARY_SCHEMA["title"] == "EvalSummary"


@pytest.mark.parametrize("schema", [SUITE_SCHEMA, SUMMARY_SCHEMA], ids=["suite", "summary"])
def test_every_object_states_additional_properties(schema: dict[str, object]) -> None:
    objects = [node for node in _schema_nodes(schema) if node.get("type") == "object"]
    assert objects
    assert all("additionalProperties" in node for node in objects)
    open_objects = [node for node in objects if node["additionalProperties"] is not False]
    # Only the RFC 0081 memorySeed entries are open, as upstream, and the map of a world's
    # tools, whose keys are tool names (each a list of rules, a closed object).
    world_tools = {
        "type": "object",
        "minProperties": 1,
        "additionalProperties": {
            "type": "array",
            "minItems": 1,
            "items": {"$ref": "#/$defs/WorldRule"},
        },
    }
    assert open_objects == (
        [{"type": "object", "additionalProperties": True}, world_tools]
        if (schema is SUITE_SCHEMA)
        else []
    )


@pytest.mark.parametrize("schema", [SUITE_SCHEMA, SUMMARY_SCHEMA], ids=["suite", "summary"])
def test_reads_well_no_nulls_no_generated_titles(schema: dict[str, object]) -> None:
    text = json.dumps(schema)
    assert '"type": "null"' not in text
    assert '"default": null' not in text
    assert "``" not in text
    assert ":func:" not in text
    properties = [n["properties"] for n in _schema_nodes(schema) if "properties" in n]
    assert all("title" not in sub for props in properties for sub in props.values())


def test_suite_schema_keeps_upstream_sets_and_adds_rfc0244_members() -> None:
    props: Any = SUITE_SCHEMA["properties"]
    assert props["modes"]["uniqueItems"] is True
    assert props["allowedModels"]["uniqueItems"] is True
    defs: Any = SUITE_SCHEMA["$defs"]
    assert defs["Expected"]["properties"]["kind"]["enum"] == ["golden", "rubric", "trajectory"]
    assert defs["TrajectoryExpectation"]["properties"]["match"]["enum"] == [
        "exact",
        "in-order",
        "any-order",
        "subset",
    ]
    assert set(defs["Fixtures"]["properties"]) == {"toolResponses", "memorySeed", "onMiss"}
    assert props["trials"] == {"$ref": "#/$defs/Trials"}


# --- RFC 0244 §Examples negatives hold in the generated schema too --------------------------


def test_0244_examples_negatives_fail_the_generated_schema() -> None:
    superset = _load(SUITES / "invalid" / "superset-mode.json")
    assert not GENERATED_SUITE.is_valid(superset)
    assert not GENERATED_SUITE.is_valid(_load(SUITES / "invalid" / "count-zero.json"))
    unknown = _load(SUITES / "invalid" / "unknown-trajectory-member.json")
    assert not GENERATED_SUITE.is_valid(unknown)
    # k ≤ count is a suite rule, not a schema conditional (RFC 0244 acceptance criteria).
    assert GENERATED_SUITE.is_valid(_load(SUITES / "invalid" / "k-exceeds-count.yaml"))


def test_0244_examples_summary_trajectory_naming_tools_fails() -> None:
    summary = {
        "suiteId": "core.acme.evals.demo",
        "suiteVersion": "1.0.0",
        "aggregateScore": 0.5,
        "passed": False,
        "taskCount": 1,
        "passedCount": 0,
        "tasks": [
            {
                "taskId": "t",
                "score": 0.5,
                "passed": False,
                "trajectory": {
                    "mode": "in-order",
                    "matched": False,
                    "expectedCount": 2,
                    "observedCount": 3,
                    "matchedCount": 1,
                    "forbiddenCount": 1,
                },
            }
        ],
    }
    assert GENERATED_SUMMARY.is_valid(summary)
    summary["tasks"][0]["trajectory"]["tools"] = ["billing:refund"]  # type: ignore[index]
    assert not GENERATED_SUMMARY.is_valid(summary)


# --- example files ------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in (SUITES / "valid").iterdir()))
def test_valid_example_files_pass_the_generated_schema(name: str) -> None:
    data = _load(SUITES / "valid" / name)
    assert GENERATED_SUITE.is_valid(data)
    assert UPSTREAM_SUITE.is_valid(data) is name.startswith("rfc0081-")


# --- compatibility, by hypothesis ---------------------------------------------------------


@settings(deadline=None)
@given(upstream_suites(semantic=False))
def test_upstream_valid_suites_pass_the_generated_schema(data: JsonDoc) -> None:
    assert UPSTREAM_SUITE.is_valid(data)  # the strategy really follows upstream
    assert GENERATED_SUITE.is_valid(data)
    assert check_schema(data)[1] == []


@settings(deadline=None)
@given(upstream_suites(semantic=True))
def test_upstream_valid_suites_that_keep_the_rules_load_and_round_trip(data: JsonDoc) -> None:
    assert UPSTREAM_SUITE.is_valid(data)
    assert suite_to_document(parse_suite(data)) == data


@settings(deadline=None)
@given(rfc0244_suites())
def test_rfc0244_suites_pass_the_generated_schema_load_and_round_trip(data: JsonDoc) -> None:
    assert GENERATED_SUITE.is_valid(data)
    document = suite_to_document(parse_suite(data))
    assert document == data
    assert GENERATED_SUITE.is_valid(document)


def _sets_are_unique(data: object) -> bool:
    if not isinstance(data, dict):
        return True
    for name in ("modes", "allowedModels"):
        values = data.get(name)
        if isinstance(values, list) and len(values) != len({json.dumps(v) for v in values}):
            return False
    return True


def test_generated_schema_and_loader_agree_on_every_single_change() -> None:
    """Exhaustive over one rich suite: at every structural place, delete, null, each tricky
    value (``"1"``, ``true``, ``5.0``, ``"superset"``, …), integral floats, duplicated
    entries, added members. The generated schema and the loader's schema layer must agree
    on every one (``uniqueItems`` on ``modes``/``allowedModels`` is a loader rule)."""
    doc = _load(SUITES / "valid" / "rfc0244-every-member.json")
    disagreements = [
        label
        for label, changed in single_changes(doc)
        if GENERATED_SUITE.is_valid(changed)
        is not (not check_schema(changed)[1] and _sets_are_unique(changed))
    ]
    assert disagreements == []


@settings(deadline=None, max_examples=200)
@given(mutated(rfc0244_suites()))
def test_generated_schema_and_loader_agree_on_any_document(data: JsonDoc) -> None:
    """The generated schema accepts a document exactly when the loader's schema layer does.

    (``uniqueItems`` on ``modes``/``allowedModels`` is a schema keyword but a loader rule.)
    """
    loader_ok = not check_schema(data)[1] and _sets_are_unique(data)
    assert GENERATED_SUITE.is_valid(data) is loader_ok


@settings(deadline=None)
@given(upstream_summaries())
def test_upstream_valid_summaries_pass_the_generated_schema(data: JsonDoc) -> None:
    assert UPSTREAM_SUMMARY.is_valid(data)
    assert GENERATED_SUMMARY.is_valid(data)
    assert EvalSummary.model_validate(data, strict=True).to_wire() == data
