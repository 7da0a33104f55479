"""The linear RFC 0244 §A grader against a direct reference, and its work growing linearly.

The grader keys each expected call's arguments once (the C encoder, after normalisation where a
value needs it), looks observed calls up against that index (a pivot bucket and a guarded
``==``, the canonical key where those cannot decide) and matches classes; the reference below
compares calls pairwise with :func:`~wopeval.grading.jsonmatch.json_equal` / ``json_subset``
only and searches every assignment. The values are the JSON-equality policy's edge cases: ``1`` vs
``1.0`` vs ``true``, ``-0.0``, integral floats, nested objects and arrays, tuples, unicode
keys, and duplicates of identical calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wopeval.grading import classgraph, patterns
from wopeval.grading.class_matching import class_matching
from wopeval.grading.classgraph import build_graph
from wopeval.grading.jsonmatch import (
    _ENCODER,
    _normalized,
    canonical_json,
    json_equal,
    matches,
)
from wopeval.grading.trajectory import ObservedCall, grade_trajectory
from wopeval.suite.models import ArgsMatch, ExpectedCall, TrajectoryExpectation, TrajectoryMode

AGENT = "me"
MODES: list[TrajectoryMode] = ["exact", "in-order", "any-order", "subset"]
SCALARS: st.SearchStrategy[object] = st.sampled_from(
    [0, 1, 1.0, -0.0, 0.0, 2, 2.5, True, False, None, "1", "é", 1e16, 10**16, 10**16 + 1]
)
KEYS = st.sampled_from(["a", "b", "é", "ключ", "a b", ""])
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=2).map(tuple)
        | st.dictionaries(KEYS, inner, max_size=3)
    ),
    max_leaves=6,
)


def call_matches(expected: ExpectedCall, observed: ObservedCall) -> bool:
    """The one definition of call matching, on an observed call."""
    return matches(expected, observed.tool, observed.inputs)


@settings(max_examples=500, deadline=None)
@given(VALUES)
def test_canonical_json_fast_path_is_the_normalised_encoding(value: object) -> None:
    # The C-encoder path (plain values) and the normalising path give the same string.
    assert canonical_json(value) == _ENCODER.encode(_normalized(value))


@settings(max_examples=500, deadline=None)
@given(VALUES, VALUES)
def test_canonical_json_is_json_equality_on_edge_cases(a: object, b: object) -> None:
    assert (canonical_json(a) == canonical_json(b)) == json_equal(a, b)


def _variant(value: object) -> object:
    """A different spelling of the same JSON value: ints as floats and back, keys reversed,
    arrays as tuples and back."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return float(value) if abs(value) < 2**53 else value
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, dict):
        return {key: _variant(item) for key, item in reversed(value.items())}
    assert isinstance(value, list | tuple)
    items = [_variant(item) for item in value]
    return items if isinstance(value, tuple) else tuple(items)


@settings(max_examples=500, deadline=None)
@given(VALUES)
def test_canonical_json_is_the_same_for_every_spelling(value: object) -> None:
    assert json_equal(value, _variant(value))
    assert canonical_json(_variant(value)) == canonical_json(value)


def test_canonical_json_edge_cases() -> None:
    assert canonical_json({"b": 1.0, "a": -0.0}) == canonical_json({"a": 0, "b": 1})
    assert canonical_json(True) != canonical_json(1)
    assert canonical_json([1, (2.0, {"é": None})]) == '[1,[2,{"é":null}]]'
    assert canonical_json(1e16) == canonical_json(10**16) != canonical_json(10**16 + 1)
    assert canonical_json(2.5) == "2.5"
    with pytest.raises(TypeError, match="JSON object key"):
        canonical_json({"a": {1: 2}})  # the fast path never lets a non-string key through
    with pytest.raises(TypeError, match="JSON object key"):
        canonical_json({1: 2})
    with pytest.raises(ValueError, match="not a JSON value"):
        canonical_json({"a": [float("inf")]})


# --- the grader against the reference ----------------------------------------------------------

ARGS: st.SearchStrategy[object] = st.sampled_from(
    [
        {"x": 1},
        {"x": 1.0},
        {"x": True},
        {"x": -0.0},
        {"x": 0},
        {"x": 1, "y": "z"},
        {"y": "z"},
        {"x": {"n": 1}},
        {"x": {"n": 1.0}, "y": "z"},
        {"x": {}},
        {"é": [1, 2.0]},
        {"é": (1, 2)},
        {},
        [1, 2],
        1,
        1.0,
        True,
        None,
    ]
)
MATCH: st.SearchStrategy[ArgsMatch | None] = st.sampled_from([None, "ignore", "exact", "subset"])
TOOLS = st.sampled_from(["a", "b"])
EXPECTED = st.lists(
    st.builds(lambda t, a, m: ExpectedCall(tool=t, args=a, argsMatch=m), TOOLS, ARGS, MATCH),
    max_size=5,
)
OBSERVED = st.lists(st.builds(ObservedCall, TOOLS, ARGS, st.just(AGENT)), max_size=6)


def _matches(want: ExpectedCall, got: ObservedCall) -> bool:
    return call_matches(want, got)  # pairwise json_equal / json_subset, no keys


def _reference_matching(expected: Sequence[ExpectedCall], observed: Sequence[ObservedCall]) -> int:
    best = 0

    def search(index: int, used: frozenset[int], size: int) -> None:
        nonlocal best
        best = max(best, size)
        if index == len(expected) or size + len(expected) - index <= best:
            return
        for slot, got in enumerate(observed):
            if slot not in used and _matches(expected[index], got):
                search(index + 1, used | {slot}, size + 1)
        search(index + 1, used, size)

    search(0, frozenset(), 0)
    return best


def _reference_in_order(expected: Sequence[ExpectedCall], observed: Sequence[ObservedCall]) -> bool:
    def embeds(i: int, j: int) -> bool:
        if i == len(expected):
            return True
        if j == len(observed):
            return False
        return (_matches(expected[i], observed[j]) and embeds(i + 1, j + 1)) or embeds(i, j + 1)

    return embeds(0, 0)


def _reference(
    mode: TrajectoryMode, expected: Sequence[ExpectedCall], observed: Sequence[ObservedCall]
) -> tuple[bool, int]:
    size = _reference_matching(expected, observed)
    verdicts: dict[TrajectoryMode, Callable[[], bool]] = {
        "exact": lambda: len(expected) == len(observed) and all(map(_matches, expected, observed)),
        "in-order": lambda: _reference_in_order(expected, observed),
        "any-order": lambda: size == len(expected),
        "subset": lambda: all(any(_matches(w, g) for w in expected) for g in observed),
    }
    return verdicts[mode](), size


@settings(max_examples=400, deadline=None)
@given(EXPECTED, OBSERVED, st.sampled_from(MODES))
def test_0244_A_fast_grader_equals_the_pairwise_reference(
    expected: list[ExpectedCall], observed: list[ObservedCall], mode: TrajectoryMode
) -> None:
    block = grade_trajectory(TrajectoryExpectation(match=mode, calls=expected), observed, AGENT)
    assert (block.matched, block.matchedCount) == _reference(mode, expected, observed)


@settings(max_examples=200, deadline=None)
@given(st.lists(ARGS, min_size=1, max_size=3), st.integers(1, 4), st.sampled_from(MODES))
def test_0244_A_duplicates_of_identical_calls(
    args: list[object], copies: int, mode: TrajectoryMode
) -> None:
    # Every call repeated: classes with multiplicities, the same answers as the reference.
    expected = [ExpectedCall(tool="a", args=_variant(a), argsMatch="exact") for a in args] * copies
    observed = [ObservedCall("a", a, AGENT) for a in args] * copies
    block = grade_trajectory(TrajectoryExpectation(match=mode, calls=expected), observed, AGENT)
    assert (block.matched, block.matchedCount) == _reference(mode, expected, observed)


# --- structure: each expected call keyed once, observed calls looked up, work linear ---------


def _shapes(n: int) -> dict[str, tuple[list[ExpectedCall], list[ObservedCall]]]:
    def calls(
        inputs: Callable[[int], object], mode: ArgsMatch, pattern: Callable[[int], object]
    ) -> tuple[list[ExpectedCall], list[ObservedCall]]:
        observed = [ObservedCall("t", inputs(i), AGENT) for i in range(n)]
        expected = [ExpectedCall(tool="t", args=pattern(i), argsMatch=mode) for i in range(n)]
        return expected[::-1], observed

    def record(i: int) -> dict[str, object]:
        return {"id": i, "query": f"q-{i}", "opts": {"limit": i % 7}}

    return {
        "exact distinct": calls(record, "exact", record),
        "exact identical": calls(lambda i: {"x": 1}, "exact", lambda i: {"x": 1.0}),
        "subset shared first field": calls(
            lambda i: {"region": "eu", "orderId": i},
            "subset",
            lambda i: {"region": "eu", "orderId": i},
        ),
        "subset all-object fields": calls(
            lambda i: {"filter": {"id": i}}, "subset", lambda i: {"filter": {"id": i}}
        ),
        "subset one shared pattern": calls(record, "subset", lambda i: {"opts": {}}),
        "ignore": calls(record, "ignore", lambda i: None),
        # Greedy trap: first fit gives {} the call {"x": i} needs; Dinic must repair it.
        "subset greedy trap": (
            [ExpectedCall(tool="t", args={}, argsMatch="subset") for _ in range(n)]
            + [ExpectedCall(tool="t", args={"x": i}, argsMatch="subset") for i in range(n)],
            [ObservedCall("t", {"x": i}, AGENT) for i in range(n)]
            + [ObservedCall("t", {"y": i}, AGENT) for i in range(n)],
        ),
    }


@pytest.mark.parametrize("shape", sorted(_shapes(1)))
def test_0244_A_each_call_is_keyed_once(shape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    expected, observed = _shapes(50)[shape]
    keyed: list[object] = []
    looked_up: list[object] = []

    def counting(seen: list[object], key: Callable[[object], str]) -> Callable[[object], str]:
        def counted(value: object) -> str:
            seen.append(value)
            return key(value)

        return counted

    monkeypatch.setattr(patterns, "canonical_json", counting(keyed, canonical_json))
    monkeypatch.setattr(classgraph, "canonical_json", counting(looked_up, canonical_json))
    graph = build_graph(expected, observed)
    class_matching(graph)
    # Expected: every exact pattern at most once (a subset object pattern is keyed by its
    # terms instead, an exact object pattern alone in its pivot bucket not at all); observed:
    # none, the pivot bucket and a guarded == decide every lookup here.
    exact = [call.args for call in expected if call.args_match == "exact"]
    assert len({id(value) for value in keyed}) == len(keyed)
    assert all(any(value is args for args in exact) for value in keyed)
    assert len(keyed) == (0 if shape == "exact distinct" else len(exact))
    assert looked_up == []


@pytest.mark.parametrize("shape", sorted(_shapes(1)))
def test_0244_A_grading_work_grows_linearly(shape: str) -> None:
    # ClassGraph.work counts terms, candidates, edges and the flow's edge visits: ×8 calls
    # must cost at most ×8 work (plus a constant), where a quadratic shape costs ×64.
    def work(n: int) -> int:
        expected, observed = _shapes(n)[shape]
        graph = build_graph(expected, observed)
        size = class_matching(graph)[0]
        assert size == _expected_size(shape, n)
        return graph.work

    small, large = work(100), work(800)
    assert large <= 8 * small + 100, (small, large)


def _expected_size(shape: str, n: int) -> int:
    return 2 * n if shape == "subset greedy trap" else n
