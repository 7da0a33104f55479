"""RFC 0244 §A trajectory matching: the compiled expected side and the observed lookups.

The expected calls are compiled once per expectation (:mod:`wopeval.grading.patterns`); an
observed call is looked up by a pivot-field bucket and a guarded ``==`` (``==`` alone says
``True == 1``), through the subset index, or by its canonical key where those cannot decide.
Each lookup is compared with the brute force (:func:`~wopeval.grading.jsonmatch.matches`,
pairwise ``json_equal`` / ``json_subset``), and the ``exact``-mode pairwise path with the
reference grader, on records that share their pivot values and differ deeper, in number
spellings (``1``, ``1.0``, ``true``), key order and arrays as tuples.
"""

from __future__ import annotations

import gc

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.hypothesis_counts import examples
from wopeval.grading import patterns
from wopeval.grading.classgraph import build_graph
from wopeval.grading.jsonmatch import matches
from wopeval.grading.trajectory import ObservedCall, grade_trajectory
from wopeval.suite.models import ArgsMatch, ExpectedCall, TrajectoryExpectation, TrajectoryMode

from .test_trajectory_fast_path import _reference, _variant


def call_matches(expected: ExpectedCall, observed: ObservedCall) -> bool:
    """The one definition of call matching, on an observed call."""
    return matches(expected, observed.tool, observed.inputs)


AGENT = "me"
MODES: list[TrajectoryMode] = ["exact", "in-order", "any-order", "subset"]
NUMBERS: st.SearchStrategy[object] = st.sampled_from([0, 1, 1.0, -0.0, True, False, 2, 2.5])
LEAVES = NUMBERS | st.sampled_from([None, "a", "1"]) | st.lists(NUMBERS, max_size=2)
DEEP = st.dictionaries(st.sampled_from(["n", "m"]), LEAVES, max_size=2)
# Records sharing a few pivot values ("id") and differing deeper: bucket hits that ``==`` and the
# guards must decide, and misses that only the canonical key can explain (tuples, 1.0 vs 1).
RECORDS = st.fixed_dictionaries(
    {"id": st.sampled_from([1, 2, "1", True])},
    optional={"opts": DEEP | LEAVES, "q": LEAVES},
)
SPELLINGS = st.sampled_from(["same", "variant", "reversed"])
MATCHES: st.SearchStrategy[ArgsMatch] = st.sampled_from(["exact", "exact", "subset", "ignore"])


def _spell(value: object, how: str) -> object:
    if how == "variant":
        return _variant(value)
    if how == "reversed" and isinstance(value, dict):
        return dict(reversed(value.items()))
    return value


def _calls(
    records: list[dict[str, object]], matches: list[ArgsMatch], spellings: list[str]
) -> list[ExpectedCall]:
    return [
        ExpectedCall(tool="t", args=_spell(record, how), argsMatch=match)
        for record, match, how in zip(records, matches, spellings, strict=False)
    ]


@settings(max_examples=examples(400), deadline=None)
@given(
    st.lists(RECORDS, max_size=5),
    st.lists(MATCHES, min_size=5, max_size=5),
    st.lists(SPELLINGS, min_size=6, max_size=6),
    st.lists(RECORDS, max_size=6),
)
def test_0244_A_trajectory_matching_lookups_equal_the_brute_force(
    records: list[dict[str, object]],
    matches: list[ArgsMatch],
    spellings: list[str],
    inputs: list[dict[str, object]],
) -> None:
    expected = _calls(records, matches, spellings)
    observed = [
        ObservedCall("t", _spell(value, how), AGENT)
        for value, how in zip(inputs + records, spellings * 2, strict=False)
    ]
    graph = build_graph(expected, observed)
    for slot, call in enumerate(graph.left):
        if call.args_match == "ignore":
            assert graph.neighbours(slot) == []
            continue
        brute = {
            right
            for right, got in enumerate(graph.right_inputs)
            if call_matches(call, ObservedCall("t", got, AGENT))
        }
        assert set(graph.neighbours(slot)) == brute
    # Every observed call's class lists exactly the expected classes it matches (not ignore).
    for got, right in zip(observed, graph.right_of, strict=True):
        found = {
            slot
            for slot, want in enumerate(graph.left)
            if want.args_match != "ignore" and call_matches(want, got)
        }
        assert found == set(graph.right_neighbours[right])


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(RECORDS, min_size=1, max_size=5),
    st.lists(SPELLINGS, min_size=5, max_size=5),
    st.integers(-1, 4),
    st.sampled_from(MODES),
    st.booleans(),
)
def test_0244_A_trajectory_matching_exact_mode_pairwise_equals_the_reference(
    records: list[dict[str, object]],
    spellings: list[str],
    broken: int,
    mode: TrajectoryMode,
    compile_first: bool,
) -> None:
    # Observed calls spell the expected ones differently (mostly a full pairwise match, so the
    # graph-free path answers, call by call or through the compiled classes); ``broken``
    # changes one position, so the graph answers.
    expected = _calls(records, ["exact"] * len(records), spellings)
    values = [
        _spell(record, how) for record, how in zip(records, reversed(spellings), strict=False)
    ]
    if 0 <= broken < len(values):
        values[broken] = {"id": 3}
    observed = [ObservedCall("t", value, AGENT) for value in values]
    expectation = TrajectoryExpectation(match=mode, calls=expected)
    if compile_first:
        patterns.compiled(expectation)
    block = grade_trajectory(expectation, observed, AGENT)
    assert (block.matched, block.matchedCount) == _reference(mode, expected, observed)


def test_0244_A_trajectory_matching_guards_keep_booleans_apart_from_numbers() -> None:
    # Python == says True == 1 == 1.0 and False == 0 == -0.0; JSON equality does not.
    cases = [
        ({"id": 1, "x": True}, {"id": 1, "x": 1}, False),
        ({"id": 1, "x": 1}, {"id": 1, "x": True}, False),
        ({"id": 1, "x": [0]}, {"id": 1, "x": [False]}, False),
        ({"id": True}, {"id": 1}, False),
        ({"id": 1, "x": -0.0}, {"id": 1.0, "x": 0}, True),
        ({"id": 1, "x": [1, 2]}, {"id": 1, "x": (1, 2.0)}, True),  # a tuple: canonical key
        ({"id": 1, "x": {"n": 1}}, {"x": {"n": 1.0}, "id": 1}, True),
    ]
    for args, inputs, expected_match in cases:
        call = ExpectedCall(tool="t", args=args, argsMatch="exact")
        observed = [ObservedCall("t", inputs, AGENT)]
        graph = build_graph([call], observed)
        assert (graph.neighbours(0) == [0]) is expected_match, (args, inputs)
        assert call_matches(call, observed[0]) is expected_match
        block = grade_trajectory(
            TrajectoryExpectation(match="exact", calls=[call]), observed, AGENT
        )
        assert (block.matched, block.matchedCount) == (expected_match, int(expected_match))


def test_0244_A_trajectory_matching_compiles_an_expectation_once(own_heap: None) -> None:
    calls = [ExpectedCall(tool="t", args={"id": i}, argsMatch="exact") for i in range(3)]
    expectation = TrajectoryExpectation(match="any-order", calls=calls)
    first = patterns.compiled(expectation)
    assert patterns.compiled(expectation) is first
    # Another expectation with equal calls is compiled on its own.
    twin = expectation.model_copy(deep=True)
    assert patterns.compiled(twin) is not first
    # A list changed in place is compiled again, and graded on what it now holds.
    expectation.calls.append(ExpectedCall(tool="t", args={"id": 9}, argsMatch="exact"))
    again = patterns.compiled(expectation)
    assert again is not first
    assert len(again.left_of) == 4
    observed = [ObservedCall("t", {"id": i}, AGENT) for i in (0, 1, 2, 9)]
    assert grade_trajectory(expectation, observed, AGENT).matched
    assert grade_trajectory(twin, observed[:3], AGENT).matched
    # The entry goes with the expectation.
    key = id(expectation)
    del expectation, first, again
    gc.collect()
    assert key not in patterns._CACHE


def test_0244_A_exact_mode_keeps_the_expected_bytes_for_as_long_as_the_calls_are_the_same(
    own_heap: None,
) -> None:
    from wopeval.grading import trajectory

    calls = [ExpectedCall(tool="t", args={"id": i}, argsMatch="exact") for i in range(3)]
    expectation = TrajectoryExpectation(match="exact", calls=calls)
    observed = [ObservedCall("t", {"id": i}, AGENT) for i in range(3)]
    assert grade_trajectory(expectation, observed, AGENT).matched
    kept = trajectory._BYTES[id(expectation)][2]
    assert grade_trajectory(expectation, observed, AGENT).matched
    assert trajectory._BYTES[id(expectation)][2] is kept  # packed once
    # An expected call replaced in place is packed again, and graded on what it now holds.
    expectation.calls[1] = ExpectedCall(tool="t", args={"id": 7}, argsMatch="exact")
    assert not grade_trajectory(expectation, observed, AGENT).matched
    observed[1] = ObservedCall("t", {"id": 7}, AGENT)
    assert grade_trajectory(expectation, observed, AGENT).matched
    # Types still decide: true is not 1 (equal in Python, not in JSON).
    typed = TrajectoryExpectation(
        match="exact", calls=[ExpectedCall(tool="t", args={"on": True, "n": 1}, argsMatch="exact")]
    )
    assert grade_trajectory(typed, [ObservedCall("t", {"on": True, "n": 1}, AGENT)], AGENT).matched
    assert not grade_trajectory(typed, [ObservedCall("t", {"on": 1, "n": 1}, AGENT)], AGENT).matched
    key = id(expectation)
    del expectation, kept
    gc.collect()
    assert key not in trajectory._BYTES


def test_0244_A_trajectory_matching_pivot_buckets_fall_back_to_canonical_keys() -> None:
    # Many exact patterns sharing the pivot value: the bucket is too large for == and the
    # canonical key decides; patterns without the pivot field are found by canonical key too.
    expected = [
        ExpectedCall(tool="t", args={"id": 1, "n": i}, argsMatch="exact") for i in range(10)
    ] + [ExpectedCall(tool="t", args={"other": 1}, argsMatch="exact")]
    observed = [ObservedCall("t", {"n": i, "id": 1.0}, AGENT) for i in range(10)]
    observed.append(ObservedCall("t", {"other": 1.0}, AGENT))
    block = grade_trajectory(
        TrajectoryExpectation(match="any-order", calls=expected), observed, AGENT
    )
    assert (block.matched, block.matchedCount) == (True, 11)
    graph = build_graph(expected, observed)
    assert [graph.neighbours(slot) for slot in range(11)] == [[slot] for slot in range(11)]
