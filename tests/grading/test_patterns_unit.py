"""RFC 0244 §A call matching, the compiled expected side piece by piece: the terms of a
``subset`` pattern, the type guards after ``==``, the guarded ``exact`` equality and the memo
that keeps an expectation's compiled form. Each rule with a boundary table, store-free."""

from __future__ import annotations

import gc
from collections.abc import Sequence

import pytest

from wopeval.grading.classgraph import build_graph
from wopeval.grading.expectation_memo import ExpectationMemo
from wopeval.grading.jsonmatch import canonical_json, json_key, matches
from wopeval.grading.pattern_terms import (
    OBJECT,
    Term,
    _terms,
    guards_hold,
    has_terms,
    leaf_key,
    uncompiled_matches,
)
from wopeval.grading.patterns import ExactPatterns, cached, compile_patterns, compiled
from wopeval.grading.trajectory import ObservedCall
from wopeval.suite.models import ExpectedCall, TrajectoryExpectation


def _terms_of(pattern: dict[str, object]) -> list[Term]:
    out: list[Term] = []
    _terms(pattern, (), out)
    return out


def test_0244_A_terms_of_a_subset_pattern() -> None:
    assert _terms_of({}) == [((), OBJECT)]
    assert _terms_of({"a": "x", "b": 2}) == [(("a",), "x"), (("b",), 2)]
    assert _terms_of({"a": {}}) == [(("a",), OBJECT)]
    assert _terms_of({"a": {"b": None}}) == [(("a", "b"), json_key(None))]
    assert _terms_of({"a": [1, True]}) == [(("a",), json_key([1, True]))]
    assert _terms_of({"a": 1.5, "b": False}) == [(("a",), 1.5), (("b",), json_key(False))]
    with pytest.raises(TypeError, match="not a JSON object key"):
        _terms_of({1: "x"})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="not a JSON object key"):
        _terms_of({"a": {None: 1}})


class _Str(str):
    pass


def test_0244_A_terms_read_subclasses_of_str_and_dict_as_json() -> None:
    class Mapping(dict[str, object]):
        pass

    assert _terms_of({_Str("a"): Mapping(b=1)}) == [(("a", "b"), 1)]


@pytest.mark.parametrize(
    ("value", "terms", "held"),
    [
        ({"a": 1}, [(("a",), 1)], True),
        ({"a": 1.0}, [(("a",), 1)], True),  # 1 and 1.0 are one JSON number
        ({"a": True}, [(("a",), 1)], False),  # a boolean is not a number
        ({"a": 2}, [(("a",), 1)], False),
        ({}, [(("a",), 1)], False),
        ({}, [(("a",), json_key(None))], False),  # a missing key is not null
        ({"a": None}, [(("a",), json_key(None))], True),
        ({"a": {}}, [(("a", "b"), json_key(None))], False),
        ({"b": 1}, [(("a",), 1)], False),
        ("a", [(("a",), 1)], False),
        ({"a": {"b": 1}}, [(("a", "b"), 1)], True),
        ({"a": [1]}, [(("a", "b"), 1)], False),  # not an object on the path
        ({"a": {"b": 1}}, [(("a",), 1)], False),  # an object where a leaf is expected
        ({"a": {}}, [(("a",), OBJECT)], True),
        ({"a": {"c": 1}}, [(("a",), OBJECT)], True),
        ({"a": []}, [(("a",), OBJECT)], False),
        ({"a": None}, [(("a",), OBJECT)], False),
        ({}, [((), OBJECT)], True),
        ([], [((), OBJECT)], False),
        ({"a": 1, "b": 2}, [(("a",), 1), (("b",), 2)], True),
        ({"a": 1, "b": 3}, [(("a",), 1), (("b",), 2)], False),
        ({"a": 1}, [], True),
    ],
)
def test_0244_A_has_terms(value: object, terms: list[Term], held: bool) -> None:
    assert has_terms(value, terms) is held


def test_leaf_key_keeps_strings_and_integers_and_keys_the_rest() -> None:
    assert leaf_key("x") == "x"
    assert leaf_key(7) == 7
    assert leaf_key(True) == json_key(True) != 1
    assert leaf_key(None) == json_key(None)
    assert leaf_key(2.0) == 2


@pytest.mark.parametrize(
    ("value", "guards", "held"),
    [
        ({"a": True}, ((("a",), True),), True),
        ({"a": 1}, ((("a",), True),), False),
        ({"a": 1}, ((("a",), False),), True),
        ({"a": 1.0}, ((("a",), False),), True),
        ({"a": True}, ((("a",), False),), False),
        ({"a": [0, 1]}, ((("a", 1), False),), True),
        ({"a": [0, True]}, ((("a", 1), False),), False),
        ({"a": [0, True]}, ((("a", 0), False),), True),
        ({"a": 1, "b": True}, ((("a",), False), (("b",), False)), False),
        ({}, (), True),
    ],
)
def test_0244_A_guards_hold(value: object, guards: tuple[object, ...], held: bool) -> None:
    assert guards_hold(value, guards) is held  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("pattern", "inputs", "equal"),
    [
        ({"a": 1}, {"a": 1}, True),
        ({"a": 1}, {"a": 1.0}, True),  # other bytes; the guard at the number holds
        ({"a": 1.0}, {"a": 1}, True),
        ({"a": 1}, {"a": True}, False),  # == says equal; the guard says no
        ({"a": True}, {"a": 1}, False),
        ({"a": False}, {"a": 0.0}, False),
        ({"a": [1, {"b": True}]}, {"a": [1, {"b": 1}]}, False),
        ({"a": [1, {"b": 2}]}, {"a": [1.0, {"b": 2.0}]}, True),
        ({"a": "x"}, {"a": "y"}, False),
        ({"a": None, "b": "s"}, {"b": "s", "a": None}, True),  # other key order, other bytes
        ({"a": "x", "b": 1}, {"a": "x", "b": True}, False),  # a guard after a string
        ({"a": None, "b": [1]}, {"a": None, "b": [True]}, False),  # and after a null
        ({"a": 1}, {"a": 1, "b": 1}, False),
        ({"a": 1.5}, {"a": 1.5}, True),
    ],
)
def test_0244_A_exact_patterns_equal_only_json_equal_values(
    pattern: dict[str, object], inputs: object, equal: bool
) -> None:
    plain = ExactPatterns()
    plain.args[0] = pattern
    assert plain.equals(0, inputs) is equal
    assert plain.equals(0, inputs) is equal  # the kept bytes and guards give the same answer
    assert matches(ExpectedCall(tool="t", args=pattern, argsMatch="exact"), "t", inputs) is equal


def test_0244_A_exact_patterns_vouch_for_the_same_types_or_held_guards_only() -> None:
    plain = ExactPatterns()
    plain.args[0] = {"a": (1, 2)}
    assert plain.equals(0, {"a": (1, 2)})  # the same bytes: the same values of the same types
    assert plain.guards == {}
    plain.args[1] = {"a": [1.0, 2]}
    assert plain.equals(1, {"a": [1, 2.0]})  # other bytes; the guards at both numbers hold
    plain.args[2] = {"a": "x"}
    # marshal refuses the subclass; a pattern of strings has no guard to fail: a JSON string.
    assert plain.equals(2, {"a": _Str("x")})
    assert plain.guards[2] == ()


def test_0244_A_exact_patterns_refuse_a_pattern_of_other_types_when_bytes_differ() -> None:
    plain = ExactPatterns()
    plain.args[0] = {"a": (1, 2)}
    assert not plain.equals(0, {"a": [1, 2]})  # == is False (a tuple is not a list)
    plain.args[1] = {"a": [(1, 2)]}
    assert not plain.equals(1, {"a": [[1, 2]]})
    assert plain.guards == {}
    plain.args[2] = {"a": [1, (1.0,)]}
    assert not plain.equals(2, {"a": [1, (1,)]})  # ==, other bytes, a tuple inside: undecided
    assert plain.guards[2] is None
    plain.args[3] = {1: 1}  # type: ignore[dict-item]
    assert not plain.equals(3, {1: 1.0})
    assert plain.guards[3] is None


def test_0244_A_exact_patterns_marshal_refusal_is_not_equality() -> None:
    from decimal import Decimal

    plain = ExactPatterns()
    plain.args[0] = {"a": Decimal(1)}  # marshal does not write a Decimal
    assert not plain.equals(0, {"a": Decimal(1)})
    assert plain.packed[0] == b""
    plain.args[1] = {"a": 1}
    assert not plain.equals(1, {"a": Decimal(1)})  # ==, but not JSON: undecided
    assert plain.equals(1, {"a": 1})


@pytest.mark.parametrize(
    ("want", "tool", "inputs"),
    [
        (ExpectedCall(tool="t", args={"a": 1}, argsMatch="exact"), "t", {"a": 1}),
        (ExpectedCall(tool="t", args={"a": 1}, argsMatch="exact"), "u", {"a": 1}),
        (ExpectedCall(tool="t", args={"a": 1}, argsMatch="exact"), "t", {"a": 1.0}),
        (ExpectedCall(tool="t", args={"a": 1}, argsMatch="exact"), "t", {"a": True}),
        (ExpectedCall(tool="t", args={"a": (1,)}, argsMatch="exact"), "t", {"a": [1]}),
        (ExpectedCall(tool="t", args=[1, 2], argsMatch="exact"), "t", [1, 2.0]),
        (ExpectedCall(tool="t", args={"a": 1}, argsMatch="subset"), "t", {"a": 1, "b": 2}),
        (ExpectedCall(tool="t", args={"a": 1}, argsMatch="subset"), "t", {"b": 2}),
        (ExpectedCall(tool="t", args=[1], argsMatch="subset"), "t", [1, 2]),
        (ExpectedCall(tool="t", args=[1], argsMatch="subset"), "t", [1.0]),
        (ExpectedCall(tool="t", args={"a": 1}, argsMatch="ignore"), "t", "anything"),
        (ExpectedCall(tool="t", args={"a": 1}), "t", "anything"),
        (ExpectedCall(tool="t", args={"a": 1}), "u", "anything"),
    ],
)
def test_0244_A_uncompiled_and_compiled_matching_is_the_one_call_matcher(
    want: ExpectedCall, tool: str, inputs: object
) -> None:
    expected = matches(want, tool, inputs)
    assert uncompiled_matches(want, tool, inputs) is expected
    patterns = compile_patterns([want])
    assert patterns.matches(0, tool, inputs) is expected


def test_0244_A_compiled_classes_group_equal_calls_per_tool() -> None:
    calls = [
        ExpectedCall(tool="t", args={"a": 1}, argsMatch="exact"),
        ExpectedCall(tool="t", args={"a": 1.0}, argsMatch="exact"),  # the same class
        ExpectedCall(tool="u", args={"a": 1}, argsMatch="exact"),  # another tool
        ExpectedCall(tool="t", args={"a": 1}, argsMatch="subset"),
        ExpectedCall(tool="t", args={"a": 1.0}, argsMatch="subset"),  # the same terms
        ExpectedCall(tool="t", args=5, argsMatch="subset"),  # not an object: exact
        ExpectedCall(tool="t", args=5.0, argsMatch="exact"),  # so the same class
        ExpectedCall(tool="t"),  # ignore
        ExpectedCall(tool="t", args={"z": 0}, argsMatch="ignore"),  # ignore: the same class
    ]
    patterns = compile_patterns(calls)
    assert patterns.left_of == [0, 0, 1, 2, 2, 3, 3, 4, 4]
    assert patterns.left_counts == [2, 1, 2, 2, 2]
    assert patterns.left_modes == ["exact", "exact", "subset", "subset", "ignore"]
    assert patterns.left_tools == ["t", "u", "t", "t", "t"]
    assert patterns.ignore_of == {"t": 4}
    assert sorted(patterns.left_terms) == [2]
    assert set(patterns.tools) == {"t", "u"}
    assert patterns.tools["t"].slots == [0, 3]
    assert patterns.tools["u"].slots == [1]
    assert patterns.tools["t"].by_canon() == {'{"a":1}': [0], "5": [3]}
    assert patterns.plain.args == {0: {"a": 1}, 1: {"a": 1}}


def test_0244_A_the_pivot_is_the_field_with_the_most_values() -> None:
    calls = [
        ExpectedCall(tool="t", args={"kind": "a", "id": i, "deep": {"x": i}}, argsMatch="exact")
        for i in range(3)
    ]
    tool = compile_patterns(calls).tools["t"]
    assert tool.pivot == "id"
    assert tool.by_field == {0: 0, 1: 1, 2: 2}
    assert not tool.rest
    shared = compile_patterns([*calls, calls[0].model_copy(update={"args": {"id": 0}})])
    assert shared.tools["t"].by_field[0] == [0, 3]
    odd = compile_patterns(
        [*calls, ExpectedCall(tool="t", args={"id": [1]}, argsMatch="exact")]
    ).tools["t"]
    assert odd.rest  # a class whose pivot value is no scalar is looked up by its key
    assert set(odd.by_field) == {0, 1, 2}
    typed = compile_patterns(
        [ExpectedCall(tool="t", args={"id": v}, argsMatch="exact") for v in (True, None, 2.5)]
    ).tools["t"]
    assert typed.by_field == {json_key(True): 0, json_key(None): 1, 2.5: 2}


def test_0244_A_subset_patterns_are_indexed_under_their_rarest_term() -> None:
    calls = [
        ExpectedCall(tool="t", args={"region": "eu", "id": i}, argsMatch="subset") for i in range(3)
    ] + [
        ExpectedCall(tool="t", args={"region": "eu", "filter": {}}, argsMatch="subset"),
        ExpectedCall(tool="t", args={}, argsMatch="subset"),
    ]
    tool = compile_patterns(calls).tools["t"]
    root = tool.index
    assert root is not None
    assert root.children["id"].buckets == {0: [0], 1: [1], 2: [2]}
    assert tool.others[0] == [(("region",), "eu")]
    # region=eu is shared by four patterns, filter={} by one: the empty object is rarer.
    assert root.children["filter"].objects == [3]
    assert tool.others[3] == [(("region",), "eu")]
    assert root.objects == [4]
    assert tool.others[4] == []
    assert "region" not in root.children


def test_0244_A_a_leaf_is_indexed_before_an_equally_rare_empty_object() -> None:
    calls = [ExpectedCall(tool="t", args={"f": {}, "id": 1}, argsMatch="subset")]
    tool = compile_patterns(calls).tools["t"]
    assert tool.index is not None
    assert tool.index.children["id"].buckets == {1: [0]}
    assert tool.others[0] == [(("f",), OBJECT)]


def test_0244_A_the_rarest_term_in_the_middle_leaves_the_terms_either_side() -> None:
    calls = [
        ExpectedCall(tool="t", args={"a": 1, "id": i, "b": 2, "c": 3}, argsMatch="subset")
        for i in range(2)
    ] + [ExpectedCall(tool="t", args={"a": 1, "b": 2, "c": 4}, argsMatch="subset")]
    tool = compile_patterns(calls).tools["t"]
    assert tool.index is not None
    assert tool.index.children["id"].buckets == {0: [0], 1: [1]}
    assert tool.others[0] == [(("a",), 1), (("b",), 2), (("c",), 3)]
    # c=4 is the rarest of the third pattern (once), the last of its terms.
    assert tool.index.children["c"].buckets == {4: [2]}
    assert tool.others[2] == [(("a",), 1), (("b",), 2)]
    # Two terms equally rare: the earlier is indexed.
    tie = compile_patterns([ExpectedCall(tool="t", args={"x": 1, "y": 2}, argsMatch="subset")])
    assert tie.tools["t"].others[0] == [(("y",), 2)]


class _Maker:
    def __init__(self) -> None:
        self.made: list[list[ExpectedCall]] = []

    def __call__(self, calls: Sequence[ExpectedCall]) -> int:
        self.made.append(list(calls))
        return len(self.made)


def test_expectation_memo_makes_once_per_calls_and_forgets_with_the_expectation(
    own_heap: None,
) -> None:
    make = _Maker()
    memo: ExpectationMemo[int] = ExpectationMemo(make)
    calls = [ExpectedCall(tool="t"), ExpectedCall(tool="u")]
    expectation = TrajectoryExpectation(match="exact", calls=calls)
    assert memo.peek(expectation) is None
    assert memo.get(expectation) == 1
    assert memo.get(expectation) == 1
    assert memo.peek(expectation) == 1
    assert make.made == [calls]
    expectation.calls[1] = ExpectedCall(tool="u")  # another call in place: made again
    assert memo.peek(expectation) is None
    assert memo.get(expectation) == 2
    expectation.calls.append(ExpectedCall(tool="v"))  # one more: made again
    assert memo.peek(expectation) is None
    assert memo.get(expectation) == 3
    expectation.calls.pop()
    assert memo.peek(expectation) is None
    other = TrajectoryExpectation(match="exact", calls=list(expectation.calls))
    assert memo.peek(other) is None  # the same calls, another expectation
    assert len(memo.entries) == 1
    del expectation
    gc.collect()
    assert memo.entries == {}
    assert memo.get(other) == 4
    assert len(memo.entries) == 1


def test_0244_A_cached_is_the_compiled_form_once_there_is_one() -> None:
    expectation = TrajectoryExpectation(match="exact", calls=[ExpectedCall(tool="t")])
    assert cached(expectation) is None
    made = compiled(expectation)
    assert cached(expectation) is made
    assert compiled(expectation) is made


def test_0244_A_a_bucket_of_three_classes_finds_each() -> None:
    # "n" holds arrays, no scalar: "id" is the pivot, and three classes share its value 1.
    calls = [ExpectedCall(tool="t", args={"id": 1, "n": [n]}, argsMatch="exact") for n in range(3)]
    tool = compile_patterns([*calls, ExpectedCall(tool="t", args={"id": 2}, argsMatch="exact")])
    assert tool.tools["t"].by_field == {1: [0, 1, 2], 2: 3}
    graph = build_graph(calls, [ObservedCall("t", {"id": 1, "n": [n]}, "a") for n in (2, 0, 5)])
    assert graph.right_neighbours == [(2,), (0,), ()]


def test_0244_A_compiling_counts_its_steps() -> None:
    calls = [
        ExpectedCall(tool="t", args={"id": 1}, argsMatch="exact"),
        ExpectedCall(tool="t", args={"id": 2}, argsMatch="exact"),
        ExpectedCall(tool="t", args={"a": 1, "b": {}}, argsMatch="subset"),
        ExpectedCall(tool="u", args={}, argsMatch="subset"),
        ExpectedCall(tool="t"),
    ]
    # Terms of the subset classes 2 + 1, two steps per exact class (2 · 2) and per indexed
    # term (2 · 2 for t, 2 · 1 for u): 3 + 4 + 4 + 2 = 13.
    assert compile_patterns(calls).work == 13
    assert compile_patterns([]).work == 0
    assert compile_patterns(calls[4:]).work == 0  # ignore: nothing to index


# --- grouping exact object patterns by pivot bucket (canonical keys only where shared) -------


def _exact(tool: str, args: object) -> ExpectedCall:
    return ExpectedCall.model_construct(tool=tool, args=args, argsMatch="exact")


def test_0244_A_an_exact_pattern_alone_in_its_bucket_has_no_key_until_asked() -> None:
    patterns = compile_patterns([_exact("t", {"id": i, "q": "x"}) for i in range(3)])
    assert patterns.left_of == [0, 1, 2]
    assert patterns.left_keys == [None, None, None]
    assert patterns.pivots == {"t": "id"}
    # by_canon (and Patterns.key) compute the keys on first use, once.
    assert patterns.tools["t"].by_canon() == {
        '{"id":0,"q":"x"}': [0],
        '{"id":1,"q":"x"}': [1],
        '{"id":2,"q":"x"}': [2],
    }
    assert patterns.left_keys == ['{"id":0,"q":"x"}', '{"id":1,"q":"x"}', '{"id":2,"q":"x"}']
    assert patterns.matches(1, "t", {"q": "x", "id": 1.0})
    assert not patterns.matches(1, "t", {"q": "x", "id": True})


def test_0244_A_json_equal_exact_patterns_share_a_bucket_and_a_class() -> None:
    calls = [
        _exact("t", {"id": 1, "q": "a"}),
        _exact("t", {"id": 2, "q": "a"}),
        _exact("t", {"q": "a", "id": 1.0}),  # JSON-equal to the first, other key order
        _exact("t", {"id": True, "q": "a"}),  # True is not 1: another bucket, another class
        _exact("t", {"id": 1, "q": "b"}),  # the first's bucket, another class
        _exact("u", {"id": 1, "q": "a"}),  # another tool
        _exact("t", {"id": 2, "q": "a"}),  # the second again: its bucket is shared now
    ]
    patterns = compile_patterns(calls)
    assert patterns.left_of == [0, 1, 0, 2, 3, 4, 1]
    assert patterns.left_counts == [2, 2, 1, 1, 1]
    assert patterns.left_keys == [
        '{"id":1,"q":"a"}',
        '{"id":2,"q":"a"}',
        None,
        '{"id":1,"q":"b"}',
        None,
    ]


def test_0244_A_exact_patterns_without_a_scalar_pivot_go_by_canonical_key() -> None:
    class Record(dict[str, object]):
        pass

    calls = [
        _exact("t", {"id": 1}),
        _exact("t", {"id": 2}),
        _exact("t", Record(id=1)),  # a dict subclass, JSON-equal: the same class
        _exact("t", {"id": [1]}),  # no scalar at the pivot: canonical key
        _exact("t", {"other": 1}),  # no pivot field: canonical key
        _exact("t", {"id": [1]}),
    ]
    patterns = compile_patterns(calls)
    assert patterns.left_of == [0, 1, 0, 2, 3, 2]
    assert patterns.left_keys[2:] == ['{"id":[1]}', '{"other":1}']


def test_0244_A_a_tool_first_seen_late_is_grouped_by_key_and_still_gets_a_lookup_field() -> None:
    early = [_exact("t", {"id": i}) for i in range(1024)]
    late = [_exact("u", {"k": "same", "v": [i], "id": i}) for i in range(3)] + [
        _exact("u", {"k": "same", "v": [0], "id": 0})
    ]
    patterns = compile_patterns([*early, *late])
    assert "u" not in patterns.pivots
    assert patterns.left_of[1024:] == [1024, 1025, 1026, 1024]
    assert patterns.left_keys[1024] == '{"id":0,"k":"same","v":[0]}'
    assert patterns.tools["u"].pivot == "id"
    graph = build_graph([*early, *late], [ObservedCall("u", {"k": "same", "v": [2], "id": 2}, "a")])
    assert graph.right_neighbours == [(1026,)]


def test_0244_A_a_non_json_exact_pattern_alone_in_its_bucket_raises_when_keyed() -> None:
    patterns = compile_patterns([_exact("t", {"id": 1, "x": {1, 2}})])
    with pytest.raises(TypeError, match="not a JSON value"):
        patterns.key(0)


def test_0244_A_keys_and_the_canonical_index_are_made_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from wopeval.grading import patterns as module

    patterns = compile_patterns([_exact("t", {"id": i}) for i in range(2)])
    keyed: list[object] = []

    def counted(value: object) -> str:
        keyed.append(value)
        return canonical_json(value)

    monkeypatch.setattr(module, "canonical_json", counted)
    tool = patterns.tools["t"]
    assert tool.by_canon() is tool.by_canon()
    assert patterns.key(0) == '{"id":0}'
    assert len(keyed) == 2  # each class once, by by_canon; Patterns.key kept them


def test_0244_A_subset_patterns_of_one_shape_share_their_key_paths() -> None:
    calls = [ExpectedCall(tool="t", args={"f": {"id": i}}, argsMatch="subset") for i in range(2)]
    terms = compile_patterns(calls).left_terms
    assert terms[0] == [(("f", "id"), 0)]
    assert terms[1] == [(("f", "id"), 1)]
    assert terms[0][0][0] is terms[1][0][0]


def test_0244_A_a_pattern_outside_every_bucket_leaves_the_others_bucketed() -> None:
    calls = [
        _exact("t", 5),
        _exact("t", {"id": [1]}),  # a canonical class while one class exists
        _exact("t", {"id": 0}),
        _exact("t", {"id": [1]}),
    ]
    patterns = compile_patterns(calls)
    assert patterns.left_of == [0, 1, 2, 1]
    tool = patterns.tools["t"]
    assert tool.rest
    assert tool.by_field == {0: 2}


def test_0244_A_an_empty_object_after_an_equally_rare_leaf_is_not_indexed() -> None:
    calls = [ExpectedCall(tool="t", args={"id": 1, "f": {}}, argsMatch="subset")]
    tool = compile_patterns(calls).tools["t"]
    assert tool.index is not None
    assert tool.index.children["id"].buckets == {1: [0]}
    assert tool.others[0] == [(("f",), OBJECT)]


def test_0244_A_a_shared_bucket_never_lends_its_key_to_another_class() -> None:
    calls = [
        _exact("t", {"id": 1, "q": ["a"]}),
        ExpectedCall(tool="t", args={"id": 1, "q": ["b"]}, argsMatch="subset"),
        _exact("t", {"id": 1, "q": ["c"]}),  # the pivot is id: its bucket 1 is shared now
        _exact("t", {"id": 1, "q": ["d"]}),
        _exact("t", {"id": 1, "q": ["b"]}),  # JSON-equal to the subset pattern: still exact
    ]
    patterns = compile_patterns(calls)
    assert patterns.left_of == [0, 1, 2, 3, 4]
    assert patterns.left_modes == ["exact", "subset", "exact", "exact", "exact"]
