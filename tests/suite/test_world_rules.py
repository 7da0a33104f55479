"""Issue 33 §3 and RFC 0244 §D: a world definition or final-state assertion that is wrong is
refused before any trial runs, with every error at once, each naming its field."""

from __future__ import annotations

from typing import Any

import pytest

from wopeval.suite import parse_suite
from wopeval.suite.digest import definition_digests, diff_documents, task_definition
from wopeval.suite.errors import SuiteError
from wopeval.suite.extensions import advertisement, check_extensions
from wopeval.suite.load import suite_to_document, validate_suite
from wopeval.suite.pointers import PointerSyntaxError, parse_pointer

ERROR = {"code": "nope", "message": "no"}
W = "tasks[0].x-wopeval-world"


def doc(world: Any = None, expected: dict[str, Any] | None = None) -> dict[str, Any]:
    task: dict[str, Any] = {
        "taskId": "t",
        "input": "go",
        "expected": expected or {"kind": "golden", "match": {"strategy": "exact", "value": 1}},
    }
    if world is not None:
        task["x-wopeval-world"] = world
    return {"suiteId": "core.test.evals.w", "version": "1.0.0", "modes": ["golden"],
            "tasks": [task]}  # fmt: skip


def errors_of(data: dict[str, Any]) -> list[str]:
    _, errors = validate_suite(data)
    return [str(error) for error in errors]


def test_33_3_plain_a_world_with_one_read_rule_loads_and_round_trips() -> None:
    data = doc({"initial": {"n": 1}, "tools": {"get": [{"read": "/n"}]}})
    suite = parse_suite(data)
    assert suite.tasks[0].world is not None
    assert suite_to_document(suite) == data


def test_33_3_final_state_alone_on_a_trajectory_task_loads() -> None:
    expected = {"kind": "trajectory", "x-wopeval-finalState": {"match": "exact", "state": {}}}
    suite = parse_suite(doc({"tools": {"get": [{}]}}, expected))
    final = suite.tasks[0].expected.final_state
    assert final is not None
    assert final.match == "exact"


def test_33_3_a_trajectory_task_without_trajectory_or_final_state_is_still_refused() -> None:
    assert errors_of(doc({"tools": {"get": [{}]}}, {"kind": "trajectory"})) == [
        "tasks[0].expected.trajectory: required when kind is 'trajectory'"
    ]


def test_33_3_shape_errors_name_every_field_at_once() -> None:
    world = {
        "initial": {"n": 1},
        "tools": {
            "get": [
                {
                    "when": {"args": {}, "argsMatch": "ignore"},
                    "require": [{"pointer": "/n", "exists": False, "error": {"code": "no spaces"}}],
                    "effects": [{"op": "explode", "pointer": "/n"}],
                    "reed": "/n",
                }
            ],
            "empty": [],
        },
        "extra": 1,
    }
    assert errors_of(doc(world)) == [
        f"{W}.tools.get[0].when.argsMatch: 'ignore' is not one of exact, subset",
        f"{W}.tools.get[0].require[0].error.code: 'no spaces' does not match the pattern "
        "^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$",
        f"{W}.tools.get[0].require[0].error.message: required",
        f"{W}.tools.get[0].effects[0].op: 'explode' is not one of set, merge, append, "
        "increment, remove",
        f"{W}.tools.get[0].reed: unknown field (allowed: effects, read, require, result, when)",
        f"{W}.tools.empty: must have at least 1 item (got 0)",
        f"{W}.extra: unknown field (allowed: initial, tools)",
    ]


def test_33_3_rule_errors_name_every_field_at_once() -> None:
    world = {
        "tools": {
            "billing:refund": [
                {
                    "when": {"args": [1], "argsMatch": "subset"},
                    "require": [
                        {"pointer": "n", "exists": True, "error": ERROR},
                        {"pointer": "/n", "error": ERROR},
                        {"pointer": "/n", "exists": True, "absent": True, "error": ERROR},
                        {"pointer": "/n", "equals": {"$state": "/n"}, "error": ERROR},
                        {"pointer": "/n", "absent": False, "error": ERROR},
                    ],
                    "effects": [
                        {"op": "remove", "pointer": "", "value": 1},
                        {"op": "set", "pointer": "/a~2"},
                        {"op": "increment", "pointer": "/n", "value": "1"},
                        {"op": "merge", "pointer": "/n", "value": [1]},
                        {"op": "append", "pointer": "/{x}"},
                        {"op": "set", "pointer": "/n", "value": {"k": [{"$arg": 3}]}},
                        {"op": "set", "pointer": "/n", "value": {"$arg": "/a", "b": 1}},
                    ],
                    "read": "/n",
                    "result": {"$state": "bad"},
                }
            ]
        }
    }
    rule = f'{W}.tools["billing:refund"][0]'
    assert errors_of(doc(world)) == [
        f"{rule}.when.args: must be an object when argsMatch is 'subset' (got array)",
        f"{rule}.require[0].pointer: not a JSON Pointer: 'n' must be empty or start with '/'",
        f"{rule}.require[1]: give exactly one of equals, exists, absent (got none)",
        f"{rule}.require[2]: give exactly one of equals, exists, absent (got exists and absent)",
        f"{rule}.require[3].equals: $state cannot be read here (only in a rule's result)",
        f"{rule}.require[4].absent: must be true (or omitted)",
        f"{rule}.effects[0].value: not allowed when op is 'remove'",
        f"{rule}.effects[0].pointer: the whole state cannot be removed",
        f"{rule}.effects[1].pointer: not a JSON Pointer: '/a~2': '~' must be followed by 0 or 1 "
        "(RFC 6901)",
        f"{rule}.effects[1].value: required when op is 'set'",
        f"{rule}.effects[2].value: must be a number or an $arg reference (got string)",
        f"{rule}.effects[3].value: must be an object or an $arg reference when op is 'merge' "
        "(got array)",
        f"{rule}.effects[4].pointer: not a JSON Pointer: 'x' must be empty or start with '/'",
        f"{rule}.effects[4].value: required when op is 'append'",
        f'{rule}.effects[5].value.k[0]["$arg"]: must be a JSON Pointer string',
        f"{rule}.effects[6].value: a $arg reference has no other keys (found 'b')",
        f"{rule}.read: give read or result, not both",
        f"{rule}.result[\"$state\"]: not a JSON Pointer: 'bad' must be empty or start with '/'",
    ]


@pytest.mark.parametrize(
    ("final", "world", "message"),
    [
        ({"match": "subset", "state": [1]}, {"tools": {"t": [{}]}},
         ".state: must be an object when match is 'subset' (got array)"),
        ({"match": "exact", "state": 1}, None,
         ": needs the task's x-wopeval-world (there is no state to assert)"),
        ({"match": "partial", "state": {}}, {"tools": {"t": [{}]}},
         ".match: 'partial' is not one of exact, subset"),
        ({"match": "exact"}, {"tools": {"t": [{}]}}, ".state: required"),
    ],
)  # fmt: skip
def test_33_3_a_bad_final_state_assertion_is_refused_naming_the_field(
    final: dict[str, Any], world: Any, message: str
) -> None:
    expected = {"kind": "trajectory", "x-wopeval-finalState": final}
    assert errors_of(doc(world, expected)) == [f"tasks[0].expected.x-wopeval-finalState{message}"]


def test_33_3_hostile_values_in_a_world_are_refused() -> None:
    world = {"initial": {"n": float("nan")}, "tools": {"t": [{"result": {1: "x"}}]}}
    with pytest.raises(SuiteError) as raised:
        parse_suite(doc(world))
    text = str(raised.value)
    assert f"{W}.initial.n: nan is not a JSON number" in text
    assert f"{W}.tools.t[0].result: object keys must be strings" in text


def test_33_3_the_python_names_are_not_document_members() -> None:
    data = doc()
    data["tasks"][0]["world"] = {"tools": {"t": [{}]}}
    data["tasks"][0]["expected"]["final_state"] = {"match": "exact", "state": 1}
    assert errors_of(data) == [
        "tasks[0].expected.final_state: unknown field (allowed: kind, match, rubric, trajectory, "
        "x-wopeval-finalState)",
        "tasks[0].world: unknown field (allowed: expected, fixtures, input, taskId, "
        "x-wopeval-adaptive, x-wopeval-user, x-wopeval-world)",
    ]


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", ()),
        ("/", ("",)),
        ("/a~1b/~0c", ("a/b", "~c")),
        ("/a/0", ("a", "0")),
    ],
)
def test_rfc6901_pointers_parse_as_the_rfc_says(text: str, tokens: tuple[str, ...]) -> None:
    assert parse_pointer(text) == tokens


@pytest.mark.parametrize("text", ["a", "/a~", "/a~2", "#/a"])
def test_rfc6901_a_malformed_pointer_is_refused(text: str) -> None:
    with pytest.raises(PointerSyntaxError):
        parse_pointer(text)


def test_33_3_a_world_is_part_of_its_task_definition_and_a_plain_task_digest_is_unchanged() -> None:
    plain = doc()
    with_world = doc({"tools": {"get": [{"read": ""}]}})
    other_world = doc({"tools": {"get": [{"read": "/x"}]}})
    digests = [definition_digests(parse_suite(d)).tasks["t"] for d in (plain, with_world,
                                                                       other_world)]  # fmt: skip
    assert len(set(digests)) == 3
    task = plain["tasks"][0]
    assert task_definition(task) == {p: task.get(p) for p in ("input", "expected", "fixtures")}
    (change,) = diff_documents(with_world, other_world).changed
    assert change.parts == ("x-wopeval-world",)


def test_0244_G_33_3_a_world_is_refused_where_it_is_not_advertised() -> None:
    data = doc({"tools": {"get": [{}]}})
    data["tasks"].append({**data["tasks"][0], "taskId": "plain"})
    del data["tasks"][1]["x-wopeval-world"]
    suite = parse_suite(data)
    assert [str(e) for e in check_extensions(suite, ())] == [
        "tasks[0].x-wopeval-world: x-wopeval-world is not advertised by this host"
    ]
    assert check_extensions(suite, ("x-wopeval-world",)) == []
    advertised: Any = advertisement(["x-wopeval-world"])["x-wopeval-world"]
    assert advertised["finalState"] == [
        "exact",
        "subset",
    ]
