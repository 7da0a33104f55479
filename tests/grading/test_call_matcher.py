"""RFC 0244 §A/§D: one definition of call matching (``jsonmatch.matches``), and every faster
route held to it: the uncompiled and compiled trajectory paths, the fixture gateway, and
trajectory grading in each mode on an expectation's first grade and its later ones."""

from __future__ import annotations

import enum
from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.hypothesis_counts import examples
from wopeval.engine.gateway import ToolGateway
from wopeval.grading.jsonmatch import matches
from wopeval.grading.patterns import cached, compile_patterns, compiled, uncompiled_matches
from wopeval.grading.trajectory import ObservedCall, grade_trajectory
from wopeval.suite.models import ExpectedCall, Fixtures, TrajectoryExpectation

AGENT = "a.agent"
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, 1.0, -2.0, 0.5, 1e-9]),
    st.sampled_from(["", "x", "A-100", "é"]),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
    ),
    max_leaves=8,
)
MODES = st.sampled_from([None, "ignore", "exact", "subset"])


def _near(args: Any, draw: st.DrawFn) -> Any:
    """A value close to ``args``: itself, integral floats respelt, a key more or less."""
    how = draw(st.sampled_from(["same", "respelt", "extra", "fewer", "other"]))
    if how == "respelt":
        return _respelt(args)
    if how == "extra" and isinstance(args, dict):
        return {**args, draw(st.sampled_from(["z", "a"])): draw(SCALARS)}
    if how == "fewer" and isinstance(args, dict) and args:
        return dict(list(args.items())[1:])
    if how == "other":
        return draw(JSON)
    return args


def _respelt(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_respelt(item) for item in value]
    if isinstance(value, dict):
        return {key: _respelt(item) for key, item in reversed(value.items())}
    return value


@st.composite
def cases(draw: st.DrawFn) -> tuple[ExpectedCall, str, Any]:
    mode = draw(MODES)
    args = draw(st.one_of(st.dictionaries(st.sampled_from(["a", "b"]), JSON, max_size=3), JSON))
    want = ExpectedCall(tool="crm:get", args=args, argsMatch=mode)
    tool = draw(st.sampled_from(["crm:get", "crm:get", "crm:put"]))
    return want, tool, _near(args, draw)


def _served_by_the_gateway(want: ExpectedCall, tool: str, inputs: Any) -> bool:
    fixtures = Fixtures.model_validate(
        {"onMiss": "fail", "toolResponses": [
            {"tool": want.tool, "args": want.args, "argsMatch": want.argsMatch, "response": 1}
        ]}
    )  # fmt: skip

    async def call() -> bool:
        served = await ToolGateway(fixtures, {}).call(tool, inputs)
        return served.fixture == "served"

    return anyio.run(call)


@settings(max_examples=examples(300))
@given(cases())
def test_0244_A_every_route_agrees_with_the_one_call_matcher(
    case: tuple[ExpectedCall, str, Any],
) -> None:
    want, tool, inputs = case
    expected = matches(want, tool, inputs)
    assert uncompiled_matches(want, tool, inputs) is expected
    patterns = compile_patterns([want])
    assert patterns.matches(patterns.left_of[0], tool, inputs) is expected
    assert _served_by_the_gateway(want, tool, inputs) is expected
    observed = [ObservedCall(tool, inputs, AGENT)]
    for mode in ("exact", "in-order", "any-order", "subset"):
        expectation = TrajectoryExpectation(match=mode, calls=[want])
        assert cached(expectation) is None  # the first grade: nothing compiled yet
        first = grade_trajectory(expectation, observed, AGENT)
        compiled(expectation)  # as a task's earlier trials leave it
        later = grade_trajectory(expectation, observed, AGENT)
        for block in (first, later):
            assert block.matched is expected, (mode, block)
            assert block.matchedCount == int(expected)


def test_0244_A_the_plainest_calls() -> None:
    bare = ExpectedCall(tool="t")  # argsMatch absent: ignore
    assert matches(bare, "t", {"anything": [1]})
    assert not matches(bare, "u", {})
    exact = ExpectedCall(tool="t", args={"n": 1}, argsMatch="exact")
    assert matches(exact, "t", {"n": 1.0})  # the JSON number policy: 1 and 1.0 are equal
    assert not matches(exact, "t", {"n": 1, "m": 2})
    assert not matches(exact, "t", {"n": True})  # a boolean is not a number
    subset = ExpectedCall(tool="t", args={"n": {"k": "v"}}, argsMatch="subset")
    assert matches(subset, "t", {"n": {"k": "v", "extra": 1}, "o": 2})
    assert not matches(subset, "t", {"n": {"k": "w"}})


def test_0244_A_a_str_enum_input_is_the_string_it_holds() -> None:
    # An in-process agent may pass a StrEnum member; every route reads it as its string (the
    # canonical keys always did; json_equal compared exact types and said no).
    class Status(enum.StrEnum):
        OPEN = "open"

    for mode in ("exact", "subset"):
        want = ExpectedCall(tool="t", args={"status": "open", "tags": ["x"]}, argsMatch=mode)
        inputs = {"status": Status.OPEN, "tags": ["x"]}
        assert matches(want, "t", inputs)
        assert not matches(want, "t", {"status": "closed", "tags": ["x"]})
        assert uncompiled_matches(want, "t", inputs)
        patterns = compile_patterns([want])
        assert patterns.matches(0, "t", inputs)
        assert _served_by_the_gateway(want, "t", inputs)
        expectation = TrajectoryExpectation(match="exact", calls=[want])
        assert grade_trajectory(expectation, [ObservedCall("t", inputs, AGENT)], AGENT).matched
    assert matches(ExpectedCall(tool="t", args=Status.OPEN, argsMatch="exact"), "t", "open")
