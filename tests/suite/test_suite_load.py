"""Loading and schema validation of suites: RFC 0244 §Examples negatives, all errors at once,
JSON and YAML files, field-path messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from wopeval.suite import (
    AgentEvalSuite,
    FieldError,
    SuiteError,
    load_suite,
    parse_suite,
    suite_to_document,
)
from wopeval.suite.load import check_schema, read_document, validate_suite

SUITES = Path(__file__).resolve().parents[1] / "data" / "suites"


def minimal(**changes: Any) -> dict[str, Any]:
    """A valid one-task golden suite, with top-level members replaced by ``changes``."""
    suite: dict[str, Any] = {
        "suiteId": "core.acme.evals.demo",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [
            {
                "taskId": "t",
                "input": {"message": "hi"},
                "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}},
            }
        ],
    }
    suite.update(changes)
    return suite


def with_expected(expected: dict[str, Any], **changes: Any) -> dict[str, Any]:
    task = {"taskId": "t", "input": {}, "expected": expected}
    return minimal(tasks=[task], **changes)


def errors_of(data: object) -> list[str]:
    with pytest.raises(SuiteError) as caught:
        parse_suite(data)
    return [str(error) for error in caught.value.errors]


# --- RFC 0244 §Examples, Negative (schema), and the §Conformance shape negatives ------------


def test_0244_examples_superset_mode_fails_the_enum() -> None:
    expected = {"kind": "trajectory", "trajectory": {"match": "superset", "calls": []}}
    assert errors_of(with_expected(expected)) == [
        "tasks[0].expected.trajectory.match: "
        "'superset' is not one of exact, in-order, any-order, subset"
    ]


def test_0244_examples_k_above_count_fails() -> None:
    assert errors_of(minimal(trials={"count": 5, "k": 6})) == ["trials.k: 6 exceeds trials.count 5"]


def test_0244_conformance_count_zero_fails() -> None:
    assert errors_of(minimal(trials={"count": 0})) == ["trials.count: 0 is less than the minimum 1"]


def test_0244_conformance_unknown_trajectory_member_fails() -> None:
    trajectory = {"match": "exact", "calls": [], "tools": ["billing:refund"]}
    expected = {"kind": "trajectory", "trajectory": trajectory}
    assert errors_of(with_expected(expected)) == [
        "tasks[0].expected.trajectory.tools: "
        "unknown field (allowed: calls, forbidden, includeDelegates, match)"
    ]


def test_0244_A_trajectory_kind_with_match_and_rubric_fails() -> None:
    expected = {
        "kind": "trajectory",
        "match": {"strategy": "exact", "value": "ok"},
        "rubric": [{"criterion": "c", "weight": 1}],
        "trajectory": {"match": "exact", "calls": []},
    }
    assert [e.split(":")[0] for e in errors_of(with_expected(expected))] == [
        "tasks[0].expected.match",
        "tasks[0].expected.rubric",
    ]


# --- every error at once, in document order -----------------------------------------------


def test_three_problems_are_reported_at_once() -> None:
    data = minimal(suiteId="Acme-Evals", trials={"count": 0})
    data["tasks"][0]["expected"]["tools"] = ["billing:refund"]
    assert errors_of(data) == [
        r"suiteId: 'Acme-Evals' does not match the pattern ^[a-z0-9.-]+\.evals\.[a-z0-9-]+$ "
        "(expected a suite id like core.acme.evals.support-resolver)",
        (
            "tasks[0].expected.tools: unknown field "
            "(allowed: kind, match, rubric, trajectory, x-wopeval-finalState)"
        ),
        "trials.count: 0 is less than the minimum 1",
    ]


def test_errors_follow_document_order_across_tasks() -> None:
    task = {"taskId": "ok", "input": 1, "expected": {"kind": "golden", "match": None}}
    data = minimal(tasks=[task, {"taskId": "Bad", "expected": {"kind": "x"}}], version="1")
    paths = [error.split(":")[0] for error in errors_of(data)]
    assert paths == [
        "version",
        "tasks[0].expected.match",
        "tasks[1].taskId",
        "tasks[1].input",
        "tasks[1].expected.kind",
    ]


def test_suite_error_message_lists_every_error() -> None:
    with pytest.raises(SuiteError) as caught:
        parse_suite(minimal(version="one", modes=[]), source="demo.yaml")
    error = caught.value
    assert error.source == "demo.yaml"
    assert str(error).splitlines() == [
        "demo.yaml: invalid suite (2 errors)",
        "  version: 'one' does not match the pattern ^[0-9]+\\.[0-9]+\\.[0-9]+$ "
        "(expected a version like 1.0.0)",
        "  modes: must have at least 1 item (got 0)",
    ]
    assert isinstance(error, ValueError)


def test_schema_errors_come_before_rules_and_hide_them() -> None:
    """Rules run only on a schema-valid suite, so a rule problem waits for the schema fix."""
    data = minimal(modes=["golden", "golden"], thresholds={"passScore": 2})
    assert errors_of(data) == ["thresholds.passScore: 2 is greater than the maximum 1"]
    data["thresholds"] = {"passScore": 1}
    assert errors_of(data) == ["modes[1]: duplicate 'golden' (already at modes[0])"]


# --- message forms ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"suiteId": None}, "suiteId: expected a string, got null"),
        ({"modes": "golden"}, "modes: expected an array, got string"),
        (
            {"modes": ["golden", 3]},
            "modes[1]: 3 is not one of golden, rubric, adversarial, regression, live-shadow",
        ),
        (
            {"thresholds": {"maxP95LatencyMs": 1.5}},
            "thresholds.maxP95LatencyMs: expected an integer, got 1.5",
        ),
        (
            {"thresholds": {"maxCostUsd": -1}},
            "thresholds.maxCostUsd: -1 is less than the minimum 0",
        ),
        (
            {"thresholds": {"passScore": True}},
            "thresholds.passScore: expected a number, got boolean",
        ),
        ({"thresholds": "high"}, "thresholds: expected an object, got string"),
        ({"trials": {"count": "5"}}, "trials.count: expected an integer, got string"),
        ({"trials": {"passRule": "most"}}, "trials.passRule: 'most' is not one of all, any, mean"),
        ({"tasks": []}, "tasks: must have at least 1 item (got 0)"),
        (
            {"targetAgentId": "a b"},
            "targetAgentId: 'a b' does not match the pattern "
            "^[A-Za-z0-9._~:-]{1,128}$ (expected an agent id like core.acme.support)",
        ),
        ({"trials": None}, "trials: null is not allowed (omit the field instead)"),
        (
            {"x-vendor": 1},
            "x-vendor: unknown field (allowed: allowedModels, modes, suiteId, "
            "targetAgentId, tasks, thresholds, trials, version, x-wopeval-adaptive)",
        ),
    ],
)
def test_messages_name_the_field(changes: dict[str, Any], expected: str) -> None:
    assert errors_of(minimal(**changes)) == [expected]


def test_missing_members_are_required() -> None:
    assert errors_of({"tasks": [{"expected": {}}]}) == [
        "suiteId: required",
        "version: required",
        "modes: required",
        "tasks[0].taskId: required",
        "tasks[0].input: required",
        "tasks[0].expected.kind: required",
    ]


def test_whole_document_errors_use_dollar() -> None:
    assert errors_of(["not", "a", "suite"]) == ["$: expected an object, got array"]
    assert errors_of(None) == ["$: expected an object, got null"]


def test_empty_rubric_and_empty_criterion() -> None:
    expected = {"kind": "rubric", "rubric": [{"criterion": "", "weight": 0.5}]}
    assert errors_of(with_expected(expected)) == [
        "tasks[0].expected.rubric[0].criterion: must not be empty"
    ]


def test_non_json_values_in_opaque_content_are_refused() -> None:
    data = minimal()
    data["tasks"][0]["input"] = {"at": {1, 2}, "n": float("nan"), 3: "x"}
    assert errors_of(data) == [
        "tasks[0].input: object keys must be strings, got integer 3",
        "tasks[0].input.at: not a JSON value (set)",
        "tasks[0].input.n: nan is not a JSON number",
    ]


def test_null_is_fine_where_content_is_opaque() -> None:
    data = minimal()
    data["tasks"][0]["input"] = None
    data["tasks"][0]["expected"]["match"]["value"] = None
    suite = parse_suite(data)
    assert suite.tasks[0].input is None
    assert suite_to_document(suite) == data


def test_integral_float_is_an_integer_as_in_json_schema() -> None:
    suite = parse_suite(minimal(trials={"count": 5.0, "k": 2}))
    assert suite.trials is not None
    assert suite.trials.count == 5
    assert isinstance(suite.trials.count, int)


# --- files --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in (SUITES / "valid").iterdir()))
def test_valid_example_files_load(name: str) -> None:
    suite = load_suite(SUITES / "valid" / name)
    assert isinstance(suite, AgentEvalSuite)
    assert suite_to_document(suite) == read_document(SUITES / "valid" / name)


@pytest.mark.parametrize(
    ("name", "count"),
    [
        ("superset-mode.json", 1),
        ("k-exceeds-count.yaml", 1),
        ("count-zero.json", 1),
        ("unknown-trajectory-member.json", 1),
        ("trajectory-with-match-and-rubric.yaml", 2),
        ("three-problems.yaml", 3),
        ("broken-syntax.json", 1),
        ("broken-syntax.yaml", 1),
    ],
)
def test_invalid_example_files_report_every_problem(name: str, count: int) -> None:
    path = SUITES / "invalid" / name
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    assert caught.value.source == str(path)
    assert len(caught.value.errors) == count


def test_json_parse_error_names_line_and_column() -> None:
    with pytest.raises(SuiteError) as caught:
        load_suite(SUITES / "invalid" / "broken-syntax.json")
    assert caught.value.errors == [
        FieldError("$", "invalid JSON at line 4, column 3: Expecting ',' delimiter")
    ]


def test_yaml_parse_error_names_line_and_column() -> None:
    with pytest.raises(SuiteError) as caught:
        load_suite(SUITES / "invalid" / "broken-syntax.yaml")
    [error] = caught.value.errors
    assert error.path == "$"
    assert error.message.startswith("invalid YAML at line 4, column 6: ")


def test_yaml_and_json_spellings_load_the_same_suite(tmp_path: Path) -> None:
    data = minimal(trials={"count": 3, "k": 2, "passRule": "any"})
    (tmp_path / "s.json").write_text(json.dumps(data), encoding="utf-8")
    (tmp_path / "s.yml").write_text(
        "suiteId: core.acme.evals.demo\n"
        "version: 1.0.0\n"
        "modes: [golden]\n"
        "trials: {count: 3, k: 2, passRule: any}\n"
        "tasks:\n"
        "  - taskId: t\n"
        "    input: {message: hi}\n"
        "    expected: {kind: golden, match: {strategy: exact, value: ok}}\n",
        encoding="utf-8",
    )
    assert load_suite(tmp_path / "s.json") == load_suite(tmp_path / "s.yml")


def test_yaml_dates_stay_strings(tmp_path: Path) -> None:
    path = tmp_path / "dated.yaml"
    path.write_text(
        "suiteId: core.acme.evals.demo\nversion: 1.0.0\nmodes: [golden]\ntasks:\n"
        "  - {taskId: t, input: {asOf: 2026-10-14},"
        " expected: {kind: golden, match: {strategy: exact, value: 2026-10-14}}}\n",
        encoding="utf-8",
    )
    suite = load_suite(path)
    assert suite.tasks[0].input == {"asOf": "2026-10-14"}


def test_yaml_binary_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "bin.yaml"
    path.write_text(
        "suiteId: core.acme.evals.demo\nversion: 1.0.0\nmodes: [golden]\ntasks:\n"
        "  - {taskId: t, input: !!binary aGk=, expected: {kind: rubric, rubric: "
        "[{criterion: c, weight: 1}]}}\n",
        encoding="utf-8",
    )
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    assert [str(e) for e in caught.value.errors] == ["tasks[0].input: not a JSON value (bytes)"]


def test_empty_yaml_file_is_not_a_suite(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("", encoding="utf-8")
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    assert [str(e) for e in caught.value.errors] == ["$: expected an object, got null"]


def test_unreadable_and_unsupported_files(tmp_path: Path) -> None:
    with pytest.raises(SuiteError) as missing:
        load_suite(tmp_path / "nope.json")
    assert missing.value.errors == [FieldError("$", "cannot read file: No such file or directory")]
    (tmp_path / "suite.toml").write_text("x = 1", encoding="utf-8")
    with pytest.raises(SuiteError) as unsupported:
        load_suite(tmp_path / "suite.toml")
    assert unsupported.value.errors == [
        FieldError("$", "unsupported file type '.toml' (expected .json, .yaml or .yml)")
    ]
    (tmp_path / "latin.json").write_bytes(b'{"suiteId": "\xe9"}')
    with pytest.raises(SuiteError) as undecodable:
        load_suite(tmp_path / "latin.json")
    assert undecodable.value.errors[0].message.startswith("not UTF-8 text")


# --- round trip and layers ----------------------------------------------------------------


def test_round_trip_keeps_exactly_what_the_author_wrote() -> None:
    data = minimal(trials={"count": 2})
    data["tasks"][0]["fixtures"] = {"toolResponses": [{"tool": "crm:lookup", "args": None}]}
    document = suite_to_document(parse_suite(data))
    assert document == data
    assert "k" not in document["trials"]  # type: ignore[operator]
    assert parse_suite(document) == parse_suite(data)


def test_layers_are_exposed_for_the_cli() -> None:
    suite, errors = check_schema(minimal(modes=["golden", "golden"]))
    assert suite is not None
    assert errors == []
    suite, errors = validate_suite(minimal(modes=["golden", "golden"]))
    assert suite is not None
    assert errors == [FieldError("modes[1]", "duplicate 'golden' (already at modes[0])")]
    suite, errors = validate_suite(minimal(modes=[]))
    assert suite is None
    assert len(errors) == 1


def test_0244_B_rule_errors_are_reported_alongside_schema_errors() -> None:
    from wopeval.suite import SuiteError, parse_suite

    task = {
        "taskId": "a",
        "input": {},
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": 1}},
    }
    doc = {"suiteId": "core.x.evals.y", "version": "1.0.0", "modes": ["golden"],
           "tasks": [task, dict(task), {**task, "taskId": "Bad Id"}],
           "trials": {"count": 5, "k": 6}}  # fmt: skip
    with pytest.raises(SuiteError) as raised:
        parse_suite(doc)
    paths = [error.path for error in raised.value.errors]
    assert "tasks[2].taskId" in paths  # the schema error (pattern)
    assert "tasks[1].taskId" in paths  # the duplicate, in the same pass
    assert "trials.k" in paths  # k > count, in the same pass


# --- bounds met while reading a file --------------------------------------------------------

_YAML_HEAD = "suiteId: core.acme.evals.demo\nversion: 1.0.0\nmodes: [golden]\ntasks:\n"
_YAML_TASK = (
    "  - {taskId: t, input: {n: %s},"
    " expected: {kind: rubric, rubric: [{criterion: c, weight: 1}]}}\n"
)


@pytest.mark.parametrize("spelling", ["+" + "9" * 30, "-" + "9" * 30, "9" * 15 + "_" + "9" * 15])
def test_a_yaml_integer_of_max_digits_is_read_whatever_its_sign_and_underscores(
    tmp_path: Path, spelling: str
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(_YAML_HEAD + _YAML_TASK % spelling, encoding="utf-8")
    assert load_suite(path).tasks[0].input == {"n": int(spelling.replace("_", ""))}


@pytest.mark.parametrize(("suffix", "text"), [
    (".yaml", _YAML_HEAD + _YAML_TASK % ("+" + "9" * 31)),
    (".json", json.dumps(minimal()).replace('"hi"', "-" + "9" * 31)),
])  # fmt: skip
def test_an_integer_of_one_digit_more_is_refused_unread(
    tmp_path: Path, suffix: str, text: str
) -> None:
    path = tmp_path / f"s{suffix}"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    assert caught.value.source == str(path)
    [error] = caught.value.errors
    assert error.message == "an integer of 31 digits; at most 30"
    assert error.path in ("tasks[0].input.n", "tasks[0].input.message")


def test_a_json_file_nested_past_the_parser_is_named_with_its_source(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    assert caught.value.source == str(path)
    assert [str(e) for e in caught.value.errors] == ["$: nests deeper than 64 levels"]


def test_a_yaml_alias_bomb_is_refused_before_it_is_built(tmp_path: Path) -> None:
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 7)]
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    assert caught.value.source == str(path)
    assert [str(e) for e in caught.value.errors] == ["$: YAML aliases expand beyond 200000 nodes"]


def test_a_task_is_found_by_its_id() -> None:
    suite = parse_suite(minimal())
    assert suite.task("t") is suite.tasks[0]
    with pytest.raises(KeyError, match="'u'"):
        suite.task("u")


def _refused(path: Path) -> list[str]:
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    assert caught.value.source == str(path)
    return [str(e) for e in caught.value.errors]


def test_file_refusals_name_their_file(tmp_path: Path) -> None:
    bare = tmp_path / "suite"
    bare.write_text("{}", encoding="utf-8")
    assert _refused(bare) == ["$: unsupported file type (none) (expected .json, .yaml or .yml)"]
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"suiteId: \xe9\n")
    assert _refused(latin)[0].startswith("$: not UTF-8 text: ")
    bell = tmp_path / "bell.yaml"
    bell.write_text("suiteId: a\x07\n", encoding="utf-8")
    assert _refused(bell)[0].startswith("$: invalid YAML: unacceptable character #x0007")
    flow = tmp_path / "flow.yaml"
    flow.write_text("tasks: {a: 1\n", encoding="utf-8")
    assert _refused(flow) == [
        "$: invalid YAML at line 2, column 1: expected ',' or '}', but got '<stream end>' "
        "(while parsing a flow mapping)"
    ]
    # Past the YAML composer's recursion (it recurses twice a level: about 500 levels at the
    # default limit), so the RecursionError path; PyYAML scans nested flow collections in
    # quadratic time, 3 s at 3,000 levels.
    deep = tmp_path / "deep.yaml"
    deep.write_text("a: " + "[" * 700 + "]" * 700 + "\n", encoding="utf-8")
    assert _refused(deep) == ["$: nests deeper than 64 levels"]
    repeated = tmp_path / "repeated.json"
    repeated.write_text('{"suiteId": "a", "suiteId": "b"}', encoding="utf-8")
    assert _refused(repeated) == ["suiteId: duplicate key 'suiteId'; each key may appear once"]


def test_bounds_are_refused_before_repeated_keys(tmp_path: Path) -> None:
    path = tmp_path / "both.json"
    path.write_text('{"a": 1, "a": 2, "n": ' + "9" * 31 + "}", encoding="utf-8")
    assert _refused(path) == ["n: an integer of 31 digits; at most 30"]


def test_data_given_in_code_is_bounded_as_a_file_is() -> None:
    data = minimal()
    data["tasks"][0]["input"] = {"n": 10**40}
    with pytest.raises(SuiteError) as caught:
        parse_suite(data)
    assert caught.value.source == "<suite>"
    assert [e.path for e in caught.value.errors] == ["tasks[0].input.n"]


def test_a_suite_built_in_code_is_written_as_json() -> None:
    call = {"tool": "t", "args": (1, 2), "argsMatch": "exact"}
    data = minimal(modes=["golden"])
    data["tasks"][0]["expected"] = {"kind": "trajectory", "trajectory": {"match": "exact",
                                    "calls": [call]}}  # fmt: skip
    document: Any = suite_to_document(AgentEvalSuite.model_validate(data))
    assert document["tasks"][0]["expected"]["trajectory"]["calls"][0]["args"] == [1, 2]
