"""Issue 33 §3: what a world's rules do to one trial's state, pure (no store, no engine).

Each test states one rule of :mod:`wopeval.engine.world`: which rule serves a call, each
operation, each precondition, each run-time failure (a tool error the agent sees, never a
crash), and that a failed call leaves the state as it was.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from wopeval.engine.agent import ToolSpec
from wopeval.engine.fork_prefix import ForkPrefix, PrefixCall, PrefixGateway
from wopeval.engine.gateway import ToolGateway
from wopeval.engine.resume import fail_closed
from wopeval.engine.toolspec import undeclared_fixture_tools
from wopeval.engine.world import WORLD_ERROR, WorldAnswer, WorldState
from wopeval.suite import parse_suite
from wopeval.suite.models import Fixtures
from wopeval.suite.world import World

ERROR = {"code": "refused", "message": "the precondition failed"}


def world(tools: dict[str, Any], initial: Any = None) -> WorldState:
    doc: dict[str, Any] = {"tools": tools}
    if initial is not None:
        doc["initial"] = initial
    model = World.model_validate(doc)
    return WorldState(model, copy.deepcopy(model.initial_state))


def one(rule: dict[str, Any], initial: Any = None, tool: str = "t") -> WorldState:
    return world({tool: [rule]}, initial)


def ok(answer: WorldAnswer | None) -> Any:
    assert answer is not None
    assert answer.ok, answer
    return answer.value


def failed(answer: WorldAnswer | None) -> tuple[str, str]:
    assert answer is not None
    assert answer.ok is False, answer
    return answer.code, answer.message


# --- which rule serves a call -------------------------------------------------------------------


def test_33_3_a_world_without_initial_starts_as_an_empty_object() -> None:
    state = one({"read": ""})
    assert ok(state.call("t", {})) == {}


def test_33_3_read_answers_the_value_at_a_pointer() -> None:
    state = one({"read": "/a/b"}, {"a": {"b": [1, 2]}})
    assert ok(state.call("t", None)) == [1, 2]


def test_33_3_a_placeholder_token_is_filled_from_the_arguments() -> None:
    initial = {"bookings": {"ABC": {"status": "open"}, "X/Y": {"status": "slashed"}}}
    state = one({"read": "/bookings/{/ref}/status"}, initial)
    assert ok(state.call("t", {"ref": "ABC"})) == "open"
    assert ok(state.call("t", {"ref": "X/Y"})) == "slashed"  # the value is the key, unescaped


def test_33_3_a_nested_placeholder_and_an_index_placeholder() -> None:
    state = one({"read": "/rows/{/at/row}"}, {"rows": ["a", "b"]})
    assert ok(state.call("t", {"at": {"row": 1}})) == "b"


@pytest.mark.parametrize(
    ("args", "why"),
    [
        ({}, "the call has no argument at /ref"),
        ({"ref": True}, "is not a string or an index"),
        ({"ref": -1}, "is not a string or an index"),
        ({"ref": {"x": 1}}, "is not a string or an index"),
    ],
)
def test_33_3_a_placeholder_the_call_cannot_fill_is_a_tool_error(args: Any, why: str) -> None:
    state = one({"read": "/b/{/ref}"}, {"b": {"x": 1}})
    code, message = failed(state.call("t", args))
    assert code == WORLD_ERROR
    assert why in message


def test_33_3_the_first_rule_whose_when_matches_serves_the_call() -> None:
    rules = [
        {"when": {"args": {"kind": "a"}, "argsMatch": "subset"}, "result": "first"},
        {"when": {"args": {"kind": "a", "n": 1}, "argsMatch": "exact"}, "result": "never"},
        {"result": "fallback"},
    ]
    state = world({"t": rules})
    assert ok(state.call("t", {"kind": "a", "n": 1})) == "first"
    answer = state.call("t", {"kind": "b"})
    assert answer is not None
    assert (answer.value, answer.rule) == ("fallback", 2)


def test_33_3_when_uses_the_argsmatch_number_and_boolean_policy() -> None:
    rules = [{"when": {"args": {"n": 1}, "argsMatch": "exact"}, "result": "one"}]
    state = world({"t": rules})
    assert ok(state.call("t", {"n": 1.0})) == "one"  # 1 == 1.0
    assert state.call("t", {"n": True}) is None  # a boolean is never a number
    assert state.call("t", {"n": "1"}) is None


def test_33_3_a_call_no_rule_serves_is_a_miss() -> None:
    rules = [{"when": {"args": {"ref": "A"}, "argsMatch": "exact"}, "result": 1}]
    state = world({"t": rules})
    assert state.call("t", {"ref": "B"}) is None
    assert state.call("other", {"ref": "A"}) is None
    assert state.call("t", {"ref": float("nan")}) is None  # not JSON: matches no pattern


# --- the operations -----------------------------------------------------------------------------


def test_33_3_set_writes_a_template_with_arg_references() -> None:
    rule = {
        "effects": [{"op": "set", "pointer": "/b/{/ref}", "value": {"by": {"$arg": "/who"}}}],
        "read": "/b",
    }
    state = one(rule, {"b": {}})
    assert ok(state.call("t", {"ref": "k", "who": ["ann"]})) == {"k": {"by": ["ann"]}}


def test_33_3_set_replaces_the_whole_state_and_array_items() -> None:
    state = one({"effects": [{"op": "set", "pointer": "", "value": [0, 0]}]}, {"x": 1})
    ok(state.call("t", {}))
    assert state.state == [0, 0]
    state = one({"effects": [{"op": "set", "pointer": "/1", "value": 9}]}, [0, 0])
    ok(state.call("t", {}))
    assert state.state == [0, 9]
    state = one({"effects": [{"op": "set", "pointer": "/-", "value": 9}]}, [0])
    ok(state.call("t", {}))
    assert state.state == [0, 9]


def test_33_3_merge_updates_an_object() -> None:
    rule = {"effects": [{"op": "merge", "pointer": "/u", "value": {"b": {"$arg": "/b"}}}]}
    state = one(rule, {"u": {"a": 1, "b": 1}})
    ok(state.call("t", {"b": 2}))
    assert state.state == {"u": {"a": 1, "b": 2}}


def test_33_3_append_adds_to_an_array() -> None:
    state = one({"effects": [{"op": "append", "pointer": "/log", "value": {"$arg": ""}}]},
                {"log": []})  # fmt: skip
    ok(state.call("t", {"n": 1}))
    ok(state.call("t", {"n": 2}))
    assert state.state == {"log": [{"n": 1}, {"n": 2}]}


def test_33_3_increment_adds_one_or_the_amount() -> None:
    rules = [
        {"when": {"args": {"by": 1}, "argsMatch": "exact"}, "effects": [
            {"op": "increment", "pointer": "/n"}]},
        {"effects": [{"op": "increment", "pointer": "/n", "value": {"$arg": "/by"}}]},
    ]  # fmt: skip
    state = world({"t": rules}, {"n": 1})
    ok(state.call("t", {"by": 1}))
    ok(state.call("t", {"by": 2.5}))
    assert state.state == {"n": 4.5}
    root = one({"effects": [{"op": "increment", "pointer": ""}]}, 41)
    ok(root.call("t", {}))
    assert root.state == 42


def test_33_3_remove_deletes_a_key_or_an_item() -> None:
    state = one({"effects": [{"op": "remove", "pointer": "/a/{/k}"}]}, {"a": {"x": 1, "y": 2}})
    ok(state.call("t", {"k": "x"}))
    assert state.state == {"a": {"y": 2}}
    items = one({"effects": [{"op": "remove", "pointer": "/0"}]}, ["a", "b"])
    ok(items.call("t", {}))
    assert items.state == ["b"]


def test_33_3_result_reads_the_state_after_the_effects() -> None:
    rule = {
        "effects": [{"op": "increment", "pointer": "/n"}],
        "result": {"n": {"$state": "/n"}, "lit": {"$literal": {"$arg": "/x"}}, "list": [1]},
    }
    state = one(rule, {"n": 0})
    assert ok(state.call("t", {})) == {"n": 1, "lit": {"$arg": "/x"}, "list": [1]}


def test_33_3_no_read_and_no_result_answers_null() -> None:
    assert ok(one({}).call("t", {})) is None


# --- preconditions ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("requirement", "holds"),
    [
        ({"exists": True}, True),
        ({"absent": True}, False),
        ({"equals": "open"}, True),
        ({"equals": {"$arg": "/want"}}, False),
    ],
)
def test_33_3_each_precondition_on_a_present_value(
    requirement: dict[str, Any], holds: bool
) -> None:
    rule = {"require": [{"pointer": "/s/{/ref}", **requirement, "error": ERROR}], "result": "done"}
    state = one(rule, {"s": {"A": "open"}})
    answer = state.call("t", {"ref": "A", "want": "closed"})
    if holds:
        assert ok(answer) == "done"
    else:
        assert failed(answer) == ("refused", "the precondition failed")


@pytest.mark.parametrize(
    ("requirement", "holds"),
    [({"exists": True}, False), ({"absent": True}, True), ({"equals": None}, False)],
)
def test_33_3_each_precondition_on_an_absent_value(
    requirement: dict[str, Any], holds: bool
) -> None:
    rule = {"require": [{"pointer": "/s/B", **requirement, "error": ERROR}], "result": "done"}
    answer = one(rule, {"s": {"A": "open"}}).call("t", {})
    assert (answer is not None and answer.ok) is holds


def test_33_3_equals_uses_the_number_and_boolean_policy() -> None:
    rule = {"require": [{"pointer": "/n", "equals": 1, "error": ERROR}], "result": "done"}
    assert ok(one(rule, {"n": 1.0}).call("t", {})) == "done"
    assert failed(one(rule, {"n": True}).call("t", {}))[0] == "refused"


def test_33_3_the_first_failing_precondition_is_the_error_and_nothing_changes() -> None:
    rule = {
        "require": [
            {"pointer": "/a", "exists": True, "error": {"code": "no_a", "message": "no a"}},
            {"pointer": "/b", "exists": True, "error": {"code": "no_b", "message": "no b"}},
            {"pointer": "/c", "exists": True, "error": {"code": "no_c", "message": "no c"}},
        ],
        "effects": [{"op": "set", "pointer": "/done", "value": True}],
    }
    state = one(rule, {"a": 1})
    assert failed(state.call("t", {})) == ("no_b", "no b")
    assert state.state == {"a": 1}


# --- run-time failures: a tool error, the state unchanged ---------------------------------------


@pytest.mark.parametrize(
    ("effect", "initial", "why"),
    [
        ({"op": "remove", "pointer": "/gone"}, {"a": 1}, "remove: nothing at /gone"),
        ({"op": "remove", "pointer": "/5"}, [1], "remove: nothing at /5"),
        ({"op": "increment", "pointer": "/s"}, {"s": "x"}, "increment: /s is not a number"),
        ({"op": "increment", "pointer": "/b"}, {"b": True}, "increment: /b is not a number"),
        ({"op": "increment", "pointer": "/gone"}, {}, "nothing at /gone"),
        ({"op": "increment", "pointer": "/n", "value": {"$arg": "/by"}}, {"n": 1},
         "increment: the amount is not a number"),
        ({"op": "increment", "pointer": "/n", "value": 1e308}, {"n": 1e308},
         "would not be a finite number"),
        ({"op": "append", "pointer": "/a"}, {"a": {}}, "append: /a is not an array"),
        ({"op": "merge", "pointer": "/a", "value": {}}, {"a": []}, "must both be objects"),
        ({"op": "merge", "pointer": "/a", "value": {"$arg": "/by"}}, {"a": {}},
         "must both be objects"),
        ({"op": "set", "pointer": "/x/y", "value": 1}, {}, "the parent of /x/y"),
        ({"op": "set", "pointer": "/7", "value": 1}, [0], "/7 is not an index"),
        ({"op": "set", "pointer": "/a", "value": {"$arg": "/missing"}}, {},
         "the call has no argument at /missing"),
    ],
)  # fmt: skip
def test_33_3_an_operation_that_fails_at_run_time_is_a_tool_error(
    effect: dict[str, Any], initial: Any, why: str
) -> None:
    if effect["op"] == "append":
        effect.setdefault("value", 1)
    rule = {"effects": [{"op": "set", "pointer": "/touched", "value": 1}, effect]}
    if isinstance(initial, list):
        rule = {"effects": [effect]}
    state = one(rule, initial)
    before = copy.deepcopy(state.state)
    code, message = failed(state.call("t", {"by": "two"}))
    assert code == WORLD_ERROR
    assert why in message
    assert state.state == before  # all effects or none


def test_33_3_a_read_of_nothing_and_a_state_reference_to_nothing_are_tool_errors() -> None:
    assert failed(one({"read": "/gone"}).call("t", {}))[0] == WORLD_ERROR
    assert failed(one({"result": {"$state": "/gone"}}).call("t", {}))[0] == WORLD_ERROR
    assert failed(one({"read": "/a/01"}, {"a": [0, 1]}).call("t", {}))[0] == WORLD_ERROR


def test_33_3_what_the_agent_is_given_is_a_copy_of_the_state() -> None:
    state = one({"read": "/a"}, {"a": {"n": [1]}})
    got = ok(state.call("t", {}))
    got["n"].append(2)
    assert state.state == {"a": {"n": [1]}}
    by_state = one({"result": {"$state": "/a"}}, {"a": {"n": [1]}})
    ok(by_state.call("t", {}))["n"].append(2)
    assert by_state.state == {"a": {"n": [1]}}


def test_33_3_arguments_written_into_the_state_are_copies() -> None:
    state = one({"effects": [{"op": "set", "pointer": "/v", "value": {"$arg": "/v"}}]})
    args = {"v": {"deep": [1]}}
    ok(state.call("t", args))
    args["v"]["deep"].append(2)
    assert state.state == {"v": {"deep": [1]}}


def test_33_3_a_state_reference_may_hold_placeholders() -> None:
    rule = {"result": {"s": {"$state": "/b/{/ref}"}}}
    assert ok(one(rule, {"b": {"k": 3}}).call("t", {"ref": "k"})) == {"s": 3}


def _task(**members: Any) -> Any:
    task = {"taskId": "t", "input": 1, "expected": {"kind": "golden",
            "match": {"strategy": "exact", "value": 1}}, **members}  # fmt: skip
    return parse_suite({"suiteId": "core.test.evals.w", "version": "1.0.0", "modes": ["golden"],
                        "tasks": [task]})  # fmt: skip


WORLD_DOC: dict[str, Any] = {"tools": {"get": [{}], "put": [{}]}}


def test_33_3_a_world_task_is_fail_closed_for_resume_unless_misses_go_live() -> None:
    assert fail_closed(_task(**{"x-wopeval-world": WORLD_DOC}).tasks[0], False)
    assert not fail_closed(_task(**{"x-wopeval-world": WORLD_DOC}).tasks[0], True)
    live = _task(**{"x-wopeval-world": WORLD_DOC, "fixtures": {"onMiss": "live"}})
    assert not fail_closed(live.tasks[0], False)
    assert not fail_closed(_task().tasks[0], False)


def test_33_3_an_agent_that_declares_its_tools_must_declare_the_world_tools() -> None:
    class Declares:
        def declared_tools(self) -> list[ToolSpec]:
            return [ToolSpec("get")]

    suite = _task(**{"x-wopeval-world": WORLD_DOC})
    assert undeclared_fixture_tools(suite, Declares()) == [
        ("tasks[0].x-wopeval-world.tools", "put")
    ]


async def test_33_3_a_forked_prefix_reapplies_the_calls_its_world_served() -> None:
    state = one({"effects": [{"op": "increment", "pointer": "/n"}], "read": "/n"}, {"n": 0})
    recorded = PrefixCall(tool="t", args={}, ok=True, outcome=1)
    gateway = PrefixGateway(ForkPrefix(calls=(recorded,), trial_index=0), None, {}, world=state)
    first = await gateway.call("t", {})
    assert (first.result.value, state.state) == (1, {"n": 1})  # the recorded answer, re-applied
    second = await gateway.call("t", {})
    assert (second.result.value, second.world_rule) == (2, 0)  # the world goes on from there


# --- edges (each pins a rule a mutant moved) -----------------------------------------------------


def test_33_3_an_error_answer_names_the_rule_that_served_the_call() -> None:
    rules = [
        {"when": {"args": {"k": 0}, "argsMatch": "exact"}, "result": 0},
        {"require": [{"pointer": "/gone", "exists": True, "error": ERROR}]},
    ]
    refused = world({"t": rules}).call("t", {"k": 1})
    assert refused is not None
    assert (refused.ok, refused.rule) == (False, 1)
    first = {"when": {"args": {"k": 0}, "argsMatch": "exact"}, "result": 0}
    faulted = world({"t": [first, {"read": "/gone"}]}).call("t", {"k": 1})
    assert faulted is not None
    assert (faulted.ok, faulted.rule, faulted.code) == (False, 1, WORLD_ERROR)


def test_33_3_a_failed_effect_leaves_nested_values_untouched() -> None:
    rule = {"effects": [{"op": "set", "pointer": "/a/b", "value": 1},
                        {"op": "remove", "pointer": "/gone"}]}  # fmt: skip
    state = one(rule, {"a": {"b": 0}})
    failed(state.call("t", {}))
    assert state.state == {"a": {"b": 0}}


def test_33_3_run_time_messages_name_the_pointer_as_written_and_as_resolved() -> None:
    assert failed(one({"read": "/b/{/k}"}, {"b": {}}).call("t", {"k": "z"})) == (
        WORLD_ERROR, "nothing at /b/z (/b/{/k})")  # fmt: skip
    by_state = one({"result": {"$state": "/b/{/k}"}}, {"b": {}})
    assert failed(by_state.call("t", {"k": "z"}))[1] == "nothing at /b/z (/b/{/k})"
    bump = one({"effects": [{"op": "increment", "pointer": "/b/{/k}"}]}, {"b": {}})
    assert failed(bump.call("t", {"k": "z"}))[1] == "nothing at /b/z (/b/{/k})"
    root = one({"effects": [{"op": "increment", "pointer": ""}]}, {"a": 1})
    assert failed(root.call("t", {}))[1] == "increment: (the whole state) is not a number"
    amount = one({"effects": [{"op": "increment", "pointer": "/n", "value": {"$arg": "/by"}}]},
                 {"n": 1})  # fmt: skip
    assert failed(amount.call("t", {"by": "2"}))[1] == "increment: the amount is not a number"
    parent = one({"effects": [{"op": "remove", "pointer": "/a/b"}]}, {"a": 1})
    assert failed(parent.call("t", {}))[1] == ("the parent of /a/b is not an object or an array")


def test_33_3_index_zero_and_array_bounds() -> None:
    assert ok(one({"read": "/rows/{/i}"}, {"rows": ["a", "b"]}).call("t", {"i": 0})) == "a"
    for pointer in ("/a/2", "/a/x", "/a/-"):
        assert failed(one({"read": pointer}, {"a": [0, 1]}).call("t", {}))[0] == WORLD_ERROR


def test_33_3_templates_inside_arrays_and_literals_are_filled_and_copied() -> None:
    rule = {"result": [{"$arg": "/x"}, {"$state": "/n"}, {"$literal": {"a": [1]}}]}
    state = one(rule, {"n": 5})
    first = ok(state.call("t", {"x": "arg"}))
    assert first == ["arg", 5, {"a": [1]}]
    first[2]["a"].append(2)  # the agent mutates what it was given
    assert ok(state.call("t", {"x": "arg"}))[2] == {"a": [1]}
    assert ok(one({"result": {"$arg": "/x"}}).call("t", {"x": [1]})) == [1]


# --- through the gateway (RFC 0244 §D) ------------------------------------------------------------


async def test_0244_D_33_3_the_gateway_serves_fixtures_then_the_world_then_fails_closed() -> None:
    live: list[Any] = []

    async def tool(args: Any) -> Any:
        live.append(args)
        return "live"

    fixtures = Fixtures.model_validate({"toolResponses": [{"tool": "t", "response": "canned"}]})
    state = one({"when": {"args": {"k": 1}, "argsMatch": "exact"}, "read": "/n"}, {"n": 3})
    gateway = ToolGateway(fixtures, {"t": tool}, world=state)
    first, second = await gateway.call("t", {"k": 1}), await gateway.call("t", {"k": 1})
    assert (first.result.value, first.index, first.world_rule) == ("canned", 0, None)
    assert (second.result.value, second.fixture, second.world_rule) == (3, "served", 0)
    missed = await gateway.call("t", {"k": 2})
    assert (missed.fixture, missed.result.error_code) == ("miss-failed", "wopeval.fixture_miss")
    assert missed.result.error_message == (
        "no unconsumed fixture and no world rule matches this call; onMiss is fail"
    )
    assert live == []


async def test_0244_D_33_3_a_world_error_is_served_and_on_miss_live_reaches_the_live_tool() -> None:
    async def tool(args: Any) -> Any:
        return "live"

    state = one({"when": {"args": {"k": 1}, "argsMatch": "exact"}, "read": "/gone"})
    live = Fixtures.model_validate({"onMiss": "live"})
    gateway = ToolGateway(live, {"t": tool}, world=state)
    error = await gateway.call("t", {"k": 1})
    assert (error.fixture, error.result.ok, error.result.error_code) == (
        "served",
        False,
        WORLD_ERROR,
    )
    assert error.result.error_message == "nothing at /gone (/gone)"
    went = await gateway.call("t", {"k": 2})
    assert (went.fixture, went.result.value) == ("miss-live", "live")


async def test_33_3_live_shadow_ignores_the_world_and_a_world_alone_is_fixtured() -> None:
    async def tool(args: Any) -> Any:
        return "live"

    shadow = ToolGateway(None, {"t": tool}, world=one({"result": 1}), ignore_fixtures=True)
    assert shadow.world is None
    assert (await shadow.call("t", {})).fixture == "live"
    alone = ToolGateway(None, {"t": tool}, world=one({"result": 1}))
    assert (await alone.call("t", {})).result.value == 1
    assert (await alone.call("other", {})).fixture == "miss-failed"
    plain = ToolGateway(None, {"t": tool})
    assert (await plain.call("t", {})).fixture == "live"
