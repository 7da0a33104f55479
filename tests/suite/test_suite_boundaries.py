"""Every suite limit tested at it and one past it (:mod:`wopeval.suite.bounds`), and the RFC
0244 §G ``trials`` refusal at its boundary (:mod:`wopeval.suite.features`).

A limit tested only far beyond it would let an off-by-one through; each row here sits on the
boundary. A refusal names the field (the documented promise); its wording is not asserted.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from wopeval.suite import FieldError, check_advertised, parse_suite, used_features
from wopeval.suite.bounds import (
    MAX_DEPTH,
    MAX_FIXTURE_RESPONSE_BYTES,
    MAX_INTEGER_DIGITS,
    MAX_SUITE_BYTES,
    MAX_TASKS,
    MAX_TRIALS,
    MAX_YAML_NODES,
    TooManyDigits,
    count_errors,
    parse_int,
    read_bounded,
    tree_errors,
)
from wopeval.suite.errors import ROOT_PATH, SuiteError
from wopeval.suite.load import read_document
from wopeval.suite.yaml_doc import check_yaml_expansion

GOLDEN: dict[str, Any] = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}


def _paths(errors: list[FieldError]) -> list[str]:
    """The fields named; each refusal also says something (its wording is not asserted)."""
    assert all(isinstance(error.message, str) and error.message for error in errors)
    return [error.path for error in errors]


# --- integers ------------------------------------------------------------------------------


@pytest.mark.parametrize("sign", ["", "-"])
def test_an_integer_of_max_digits_is_parsed_and_one_more_is_not(sign: str) -> None:
    at = sign + "9" * MAX_INTEGER_DIGITS
    assert parse_int(at) == int(at)
    beyond = parse_int(sign + "1" + "0" * MAX_INTEGER_DIGITS)
    assert isinstance(beyond, TooManyDigits)
    assert beyond.digits == MAX_INTEGER_DIGITS + 1


def test_integer_limit_in_a_parsed_tree_names_the_field() -> None:
    at = 10**MAX_INTEGER_DIGITS - 1
    data = {"a": at, "b": [-at, -(10**MAX_INTEGER_DIGITS)], "c": 10**MAX_INTEGER_DIGITS, "d": True}
    assert _paths(tree_errors(data)) == ["b[1]", "c"]
    assert tree_errors({"zero": 0, "flag": False}) == []
    digits = TooManyDigits("1" * 40)
    assert _paths(tree_errors({"tasks": [{"n": digits}]})) == ["tasks[0].n"]


def test_a_yaml_key_that_is_not_a_string_is_named_as_its_json_text() -> None:
    big = 10**MAX_INTEGER_DIGITS
    assert _paths(tree_errors({"m": {1: big}})) == _paths(tree_errors({"m": {"1": big}}))


# --- nesting -------------------------------------------------------------------------------


def _nested(containers: int) -> Any:
    value: Any = "leaf"
    for level in range(containers):
        value = [value] if level % 2 else {"k": value}
    return value


def test_containers_nest_up_to_max_depth() -> None:
    assert tree_errors(_nested(MAX_DEPTH)) == []
    errors = tree_errors(_nested(MAX_DEPTH + 1))
    assert len(errors) == 1
    assert errors[0].path.count("[0]") + errors[0].path.count("k") == MAX_DEPTH


def test_tree_errors_come_in_document_order() -> None:
    data = {"first": 10**MAX_INTEGER_DIGITS, "second": [_nested(MAX_DEPTH)], "third": -(10**40)}
    paths = _paths(tree_errors(data))
    assert paths[0] == "first"
    assert paths[-1] == "third"
    assert len(paths) == 3


def _chain(nodes: int) -> yaml.Node:
    node: yaml.Node = yaml.ScalarNode("tag:yaml.org,2002:str", "leaf")
    for _ in range(nodes - 1):
        node = yaml.SequenceNode("tag:yaml.org,2002:seq", [node])
    return node


def test_yaml_nodes_nest_up_to_max_depth() -> None:
    check_yaml_expansion(_chain(MAX_DEPTH + 1), "s.yaml")  # the leaf at depth MAX_DEPTH
    with pytest.raises(SuiteError) as refused:
        check_yaml_expansion(_chain(MAX_DEPTH + 2), "s.yaml")
    assert _paths(refused.value.errors) == [ROOT_PATH]
    assert refused.value.source == "s.yaml"


@pytest.mark.parametrize("side", ["key", "value"])
def test_yaml_mapping_keys_and_values_nest_up_to_max_depth(side: str) -> None:
    leaf = yaml.ScalarNode("tag:yaml.org,2002:str", "v")

    def mapping(chain: yaml.Node) -> yaml.Node:
        pair = (chain, leaf) if side == "key" else (leaf, chain)
        return yaml.MappingNode("tag:yaml.org,2002:map", [pair])

    check_yaml_expansion(mapping(_chain(MAX_DEPTH)), "s.yaml")  # its leaf at depth MAX_DEPTH
    with pytest.raises(SuiteError) as refused:
        check_yaml_expansion(mapping(_chain(MAX_DEPTH + 1)), "s.yaml")
    assert _paths(refused.value.errors) == [ROOT_PATH]
    assert refused.value.source == "s.yaml"


def _fan(children: int, mapping: bool = False) -> yaml.Node:
    leaf = yaml.ScalarNode("tag:yaml.org,2002:str", "x")  # one node, visited once per alias
    if mapping:
        return yaml.MappingNode("tag:yaml.org,2002:map", [(leaf, leaf)] * (children // 2))
    return yaml.SequenceNode("tag:yaml.org,2002:seq", [leaf] * children)


@pytest.mark.parametrize("mapping", [False, True])
def test_yaml_aliases_expand_to_at_most_max_nodes(mapping: bool) -> None:
    check_yaml_expansion(_fan(MAX_YAML_NODES - 1, mapping), "s.yaml")  # with the root: at it
    with pytest.raises(SuiteError) as refused:
        check_yaml_expansion(_fan(MAX_YAML_NODES + 1, mapping), "s.yaml")
    assert _paths(refused.value.errors) == [ROOT_PATH]
    assert refused.value.source == "s.yaml"
    check_yaml_expansion(None, "s.yaml")  # an empty document


# --- the file ------------------------------------------------------------------------------


def test_a_file_of_max_bytes_is_read_and_one_more_is_refused(tmp_path: Path) -> None:
    at = tmp_path / "at.yaml"
    at.write_bytes(b"#" * MAX_SUITE_BYTES)
    assert len(read_bounded(at, "at.yaml")) == MAX_SUITE_BYTES
    beyond = tmp_path / "beyond.yaml"
    beyond.write_bytes(b"#" * (MAX_SUITE_BYTES + 1))
    with pytest.raises(SuiteError) as refused:
        read_bounded(beyond, "beyond.yaml")
    assert _paths(refused.value.errors) == [ROOT_PATH]
    assert refused.value.source == "beyond.yaml"


@pytest.mark.parametrize("kind", ["directory", "fifo", "missing"])
def test_only_a_regular_file_is_read(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "suite.yaml"
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)  # opened without blocking, refused before any read
    with pytest.raises(SuiteError) as refused:
        read_document(path)
    assert _paths(refused.value.errors) == [ROOT_PATH]
    assert refused.value.source == str(path)


def test_a_file_that_grows_past_the_limit_after_its_size_was_read_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "growing.yaml"
    path.write_bytes(b"#" * (MAX_SUITE_BYTES + 1))
    real_fstat = os.fstat

    def fstat_before_growth(fd: int) -> os.stat_result:
        info = real_fstat(fd)
        return os.stat_result((info.st_mode, *info[1:6], 0, *info[7:]))  # st_size 0

    monkeypatch.setattr(os, "fstat", fstat_before_growth)
    with pytest.raises(SuiteError) as refused:
        read_bounded(path, "growing.yaml")
    assert _paths(refused.value.errors) == [ROOT_PATH]
    assert refused.value.source == "growing.yaml"


# --- tasks, trials, fixture responses -----------------------------------------------------


def _tasks(n: int) -> list[Any]:
    return [{}] * n


def test_a_suite_of_max_tasks_is_counted_and_one_more_is_refused() -> None:
    assert count_errors({"tasks": _tasks(MAX_TASKS)}) == []
    assert _paths(count_errors({"tasks": _tasks(MAX_TASKS + 1)})) == ["tasks"]


@pytest.mark.parametrize(
    ("n_tasks", "count", "refused"),
    [
        (10, MAX_TRIALS // 10, False),
        (10, MAX_TRIALS // 10 + 1, True),
        (1, MAX_TRIALS, False),
        (1, MAX_TRIALS + 1, True),
        (0, MAX_TRIALS, False),  # no task still counts as one: a count alone is bounded
        (0, MAX_TRIALS + 1, True),
    ],
)
def test_trials_in_all_are_bounded_at_max_trials(n_tasks: int, count: int, refused: bool) -> None:
    errors = count_errors({"tasks": _tasks(n_tasks), "trials": {"count": count}})
    assert _paths(errors) == (["trials.count"] if refused else [])


@pytest.mark.parametrize("count", [True, "1000000", 1e9 + 0.5, math.inf, math.nan, None])
def test_a_count_that_is_not_an_integer_is_left_to_the_schema(count: Any) -> None:
    assert count_errors({"tasks": _tasks(MAX_TASKS), "trials": {"count": count}}) == []


@pytest.mark.parametrize(("count", "refused"), [(float(MAX_TRIALS), False),
                         (MAX_TRIALS + 1.0, True), (1e300, True)])  # fmt: skip
def test_a_count_with_a_zero_fraction_is_bounded_as_the_integer_it_is(
    count: float, refused: bool
) -> None:
    # JSON Schema's integer (and the loader) reads 1e9 as 1000000000 trials
    errors = count_errors({"tasks": _tasks(1), "trials": {"count": count}})
    assert _paths(errors) == (["trials.count"] if refused else [])
    if refused:
        assert errors[0].message.startswith(f"{int(count)} trials of 1 task(s)")
        with pytest.raises(SuiteError) as caught:
            _suite(count)  # type: ignore[arg-type]
        assert _paths(caught.value.errors) == ["trials.count"]


def test_counting_a_document_that_is_not_an_object_finds_nothing() -> None:
    assert count_errors(["tasks"]) == []
    assert count_errors({}) == []
    assert count_errors({"trials": {"count": 2}}) == []
    assert count_errors({"tasks": "many", "trials": [1]}) == []


def test_tasks_that_are_not_a_list_count_as_none() -> None:
    # "ab" is not two tasks: the count alone is bounded, and MAX_TRIALS is at the limit
    assert count_errors({"tasks": "ab", "trials": {"count": MAX_TRIALS}}) == []


def _response_of(size: int) -> str:
    return "x" * (size - 2)  # a JSON string: two quotes and its characters


def _fixture_task(*responses: Any) -> dict[str, Any]:
    return {"fixtures": {"toolResponses": list(responses)}}


def test_a_fixture_response_of_max_bytes_is_accepted_and_one_more_is_refused() -> None:
    at = {"tool": "t", "response": _response_of(MAX_FIXTURE_RESPONSE_BYTES)}
    beyond = {"tool": "t", "response": _response_of(MAX_FIXTURE_RESPONSE_BYTES + 1)}
    data = {"tasks": [_fixture_task(at), _fixture_task(at, beyond)]}
    assert _paths(count_errors(data)) == ["tasks[1].fixtures.toolResponses[1].response"]


def test_a_fixture_response_is_measured_as_compact_json() -> None:
    # Compact, {"a":"x…"} is 8 bytes plus the text: exactly at the limit; with spaces after the
    # separators it would be one byte over.
    response = {"a": "x" * (MAX_FIXTURE_RESPONSE_BYTES - 8)}
    assert len(json.dumps(response, separators=(",", ":"))) == MAX_FIXTURE_RESPONSE_BYTES
    assert count_errors({"tasks": [_fixture_task({"tool": "t", "response": response})]}) == []


def test_fixture_entries_without_a_json_response_are_left_to_the_schema() -> None:
    big = _response_of(MAX_FIXTURE_RESPONSE_BYTES + 1)
    data = {
        "tasks": [
            "not a task",
            {"fixtures": "not fixtures"},
            {"fixtures": {"toolResponses": "not a list"}},
            _fixture_task("not an entry", {"tool": "t"}, {"tool": "t", "response": big}),
            _fixture_task({"tool": "t", "response": {1j}}, {"tool": "t", "response": big}),
        ]
    }
    assert _paths(count_errors(data)) == [
        "tasks[3].fixtures.toolResponses[2].response",
        "tasks[4].fixtures.toolResponses[1].response",
    ]


# --- §G: trials.count against the host's maxTrials ----------------------------------------


def _suite(count: int | None) -> Any:
    document: dict[str, Any] = {
        "suiteId": "core.acme.evals.demo",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [{"taskId": "t", "input": {}, "expected": GOLDEN}],
    }
    if count is not None:
        document["trials"] = {"count": count}
    return parse_suite(document)


@pytest.mark.parametrize(
    ("count", "max_trials", "refused"),
    [
        (None, None, False),
        (1, None, False),
        (2, None, True),  # §G: trials.count > 1 needs the trials facet
        (2, 2, False),
        (3, 2, True),
        (2, 1, True),
        (1, 1, False),
    ],
)
def test_0244_G_trials_count_at_and_past_max_trials(
    count: int | None, max_trials: int | None, refused: bool
) -> None:
    errors = check_advertised(
        _suite(count), trajectory=False, max_trials=max_trials, fixture_matching=False
    )
    assert _paths(errors) == (["trials.count"] if refused else [])


def test_0244_G_a_task_with_a_trajectory_and_fixtures_uses_both() -> None:
    suite = parse_suite(
        {
            "suiteId": "core.acme.evals.demo",
            "version": "1.0.0",
            "modes": ["golden"],
            "tasks": [
                {
                    "taskId": "t",
                    "input": {},
                    "expected": {
                        **GOLDEN,
                        "trajectory": {"match": "in-order", "calls": [{"tool": "a"}]},
                    },
                    "fixtures": {"onMiss": "fail"},
                }
            ],
        }
    )
    assert [(use.facet, use.path) for use in used_features(suite)] == [
        ("trajectory", "tasks[0].expected.trajectory"),
        ("fixtureMatching", "tasks[0].fixtures.onMiss"),
    ]
