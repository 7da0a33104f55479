"""``x-wopeval-pin`` in a suite: registered, described by the schema, refused where it cannot
hold (no user: no turns; a turn above ``maxTurns``; a negative turn), each error naming its
field, every error at once; refused naming the field where a host does not advertise it."""

from __future__ import annotations

from typing import Any

from wopeval.suite.extensions import EXTENSIONS, check_extensions, used_extensions
from wopeval.suite.json_schemas import suite_json_schema
from wopeval.suite.load import validate_suite
from wopeval.suite.models import ExpectedCall
from wopeval.suite.pins import PIN_KEY, TurnPin

USER: dict[str, Any] = {
    "kind": "scripted",
    "replies": [{"when": {"literal": "ref?"}, "reply": "A"}],
}


def suite(*calls: dict[str, Any], user: dict[str, Any] | None = USER) -> dict[str, Any]:
    task: dict[str, Any] = {
        "taskId": "t",
        "input": {},
        "expected": {
            "kind": "trajectory",
            "trajectory": {"match": "in-order", "calls": list(calls)},
        },
    }
    if user is not None:
        task["x-wopeval-user"] = user
    return {"suiteId": "core.test.evals.pins", "version": "1.0.0", "modes": ["golden"],
            "tasks": [task]}  # fmt: skip


def pinned(turn: Any, tool: str = "a") -> dict[str, Any]:
    return {"tool": tool, PIN_KEY: {"turn": turn}}


def errors_of(data: dict[str, Any]) -> list[str]:
    return [str(error) for error in validate_suite(data)[1]]


FIELD = "tasks[0].expected.trajectory.calls"


def test_33_5_a_pin_within_the_turns_is_accepted_and_read() -> None:
    data = suite({"tool": "a"}, pinned(0), pinned(10, "b"))  # 10: the default maxTurns
    loaded, errors = validate_suite(data)
    assert errors == []
    assert loaded is not None
    calls = loaded.tasks[0].expected.trajectory.calls  # type: ignore[union-attr]
    assert [c.pin.turn if c.pin else None for c in calls] == [None, 0, 10]
    dumped = calls[1].model_dump(exclude_none=True)
    assert dumped == {"tool": "a", PIN_KEY: {"turn": 0}}


def test_33_5_a_pin_needs_the_task_s_user() -> None:
    errors = errors_of(suite({"tool": "a"}, pinned(1), user=None))
    assert errors == [f"{FIELD}[1].{PIN_KEY}: needs the task's x-wopeval-user (there are no turns)"]


def test_33_5_a_turn_above_max_turns_is_refused_at_the_boundary() -> None:
    user = {**USER, "maxTurns": 3}
    assert errors_of(suite(pinned(3), user=user)) == []
    errors = errors_of(suite(pinned(4), pinned(2), pinned(9), user=user))
    assert errors == [
        f"{FIELD}[0].{PIN_KEY}.turn: turn 4 is above maxTurns = 3 (the agent's turns are 0 to 3)",
        f"{FIELD}[2].{PIN_KEY}.turn: turn 9 is above maxTurns = 3 (the agent's turns are 0 to 3)",
    ]
    assert len(errors_of(suite(pinned(11)))) == 1  # above the default maxTurns, 10


def test_33_5_negative_or_malformed_turns_are_refused_naming_the_field() -> None:
    for bad in (-1, "1", 1.5, None, True):
        errors = errors_of(suite(pinned(bad)))
        assert len(errors) == 1, (bad, errors)
        assert errors[0].startswith(f"{FIELD}[0].{PIN_KEY}.turn"), errors
    assert errors_of(suite(pinned(2.0))) == []  # an integral number is an integer
    extra = suite({"tool": "a", PIN_KEY: {"turn": 1, "after": 0}})
    assert [e.split(":")[0] for e in errors_of(extra)] == [f"{FIELD}[0].{PIN_KEY}.after"]


def test_33_5_every_error_at_once() -> None:
    data = suite(pinned(-1), pinned(99), user=None)
    data["tasks"].append({**data["tasks"][0], "taskId": "u"})
    errors = errors_of(data)
    assert [e.split(":")[0] for e in errors] == [
        f"{FIELD}[0].{PIN_KEY}.turn",
        f"tasks[1].expected.trajectory.calls[0].{PIN_KEY}.turn",
    ]  # the shape first; the rules run once it holds
    errors = errors_of(suite(pinned(99), pinned(1), user=None))
    assert [e.split(":")[0] for e in errors] == [f"{FIELD}[0].{PIN_KEY}", f"{FIELD}[1].{PIN_KEY}"]


def test_33_1_the_pin_is_registered_and_described_on_the_expected_call() -> None:
    [ext] = [ext for ext in EXTENSIONS if ext.name == PIN_KEY]
    assert ext.scopes == ("call",)
    assert ext.model is TurnPin
    schema: dict[str, Any] = suite_json_schema()
    entry = schema["$defs"]["ExpectedCall"]["properties"][PIN_KEY]
    assert entry["description"] == ext.summary
    assert schema["$defs"]["TurnPin"]["properties"]["turn"]["minimum"] == 0
    assert PIN_KEY in ExpectedCall.model_json_schema(by_alias=True)["properties"]


def test_33_1_0244_G_unadvertised_pin_is_refused_naming_its_path() -> None:
    loaded, errors = validate_suite(suite({"tool": "a"}, pinned(1)))
    assert loaded is not None
    assert errors == []
    assert [(u.name, u.path) for u in used_extensions(loaded)] == [
        ("x-wopeval-user", "tasks[0].x-wopeval-user"),
        (PIN_KEY, f"{FIELD}[1].{PIN_KEY}"),
    ]
    refused = check_extensions(loaded, ["x-wopeval-user"])
    assert [(e.path, e.message) for e in refused] == [
        (f"{FIELD}[1].{PIN_KEY}", f"{PIN_KEY} is not advertised by this host")
    ]
    assert check_extensions(loaded, ["x-wopeval-user", PIN_KEY]) == []


def test_33_1_a_plain_suite_uses_no_pin() -> None:
    loaded, _ = validate_suite(suite({"tool": "a"}, user=None))
    assert loaded is not None
    assert used_extensions(loaded) == []
