"""The argument diff names each key path where the matcher says no (RFC 0244 §A argsMatch)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from wopeval.grading.argdiff import ABSENT, ArgDifference, arg_differences, shown
from wopeval.grading.jsonmatch import args_match

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["a", "1", ""]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "c.d"]), inner, max_size=3)
    ),
    max_leaves=8,
)


def _texts(mode: str, want: object, got: object) -> list[str]:
    return [d.text() for d in arg_differences(mode, want, got)]  # type: ignore[arg-type]


def test_0244_A_exact_names_numbers_sent_as_strings_nested_paths_and_extra_keys() -> None:
    want = {"amountMinor": 4200, "refund": {"lines": [{"sku": "A"}, {"sku": "B"}]}}
    got = {"amountMinor": "4200", "refund": {"lines": [{"sku": "A"}, {"sku": "C"}]}, "x": True}
    assert _texts("exact", want, got) == [
        'amountMinor: expected 4200, got "4200"',
        'refund.lines[1].sku: expected "B", got "C"',
        "x: expected nothing, got true",
    ]


def test_0244_A_subset_ignores_extra_keys_and_compares_arrays_whole() -> None:
    want = {"ids": [1, 2], "who": {"name": "ann"}}
    got = {"ids": [1, 3], "who": {"name": "ann", "age": 3}, "extra": 1}
    assert arg_differences("subset", want, got) == [ArgDifference("ids", [1, 2], [1, 3])]
    assert _texts("subset", {"a": 1}, {}) == ["a: expected 1, got nothing"]


def test_0244_A_json_equality_decides_one_equals_one_point_zero_but_not_true() -> None:
    assert arg_differences("exact", {"n": 1}, {"n": 1.0}) == []
    assert _texts("exact", {"n": 1}, {"n": True}) == ["n: expected 1, got true"]
    assert arg_differences("ignore", {"n": 1}, "anything") == []


def test_hostile_keys_are_quoted_and_values_that_are_not_json_still_differ() -> None:
    want = {"a.b": 1, 'q"<b>': {"": 2}}
    got = {"a.b": 2, 'q"<b>': {"": 3}}
    assert [d.path for d in arg_differences("exact", want, got)] == ['["a.b"]', '["q\\"<b>"][""]']
    assert _texts("exact", {"s": 1}, {"s": {1, 2}}) == ["s: expected 1, got {1, 2}"]
    assert _texts("exact", 1, [1]) == ["arguments: expected 1, got [1]"]
    long = "x" * 500
    assert len(_texts("exact", {"k": long}, {"k": 1})[0]) < 100


@given(mode=st.sampled_from(["exact", "subset"]), want=JSON, got=JSON)
def test_0244_A_the_diff_is_empty_exactly_when_the_arguments_match(
    mode: str, want: object, got: object
) -> None:
    found = arg_differences(mode, want, got)  # type: ignore[arg-type]
    assert (found == []) == args_match(mode, want, got)  # type: ignore[arg-type]
    for difference in found:
        assert difference.expected is not ABSENT or difference.observed is not ABSENT


def test_shown_cuts_a_value_longer_than_its_limit_to_the_limit() -> None:
    """A JSON text of 60 characters is shown whole; of 61, cut to 59 and an ellipsis."""
    sixty, sixty_one = "x" * 58, "x" * 59  # 58 + 2 quotes = 60 characters of JSON
    assert shown(sixty) == f'"{sixty}"'
    assert shown(sixty_one) == '"' + "x" * 58 + "…"
    assert len(shown(sixty_one)) == 60
    assert shown([1, 2, 3], limit=7) == "[1, 2,…"  # 9 characters: 6 kept
    assert shown(ABSENT) == "nothing"
    assert shown("é") == '"é"'  # not escaped to \u00e9
    assert shown({1, 2}) == "{1, 2}"  # not JSON: its repr


def test_a_difference_round_trips_through_its_json_absent_sides_left_out() -> None:
    for difference in (
        ArgDifference("a", 1, "1"),
        ArgDifference("b", ABSENT, 2),
        ArgDifference("c[0]", 3, ABSENT),
        ArgDifference("", None, 0),
    ):
        row = difference.to_json()
        assert ArgDifference.of_json(row) == difference
    assert ArgDifference("b", ABSENT, 2).to_json() == {"path": "b", "observed": 2}
    assert ArgDifference("c", 3, ABSENT).to_json() == {"path": "c", "expected": 3}
    assert ArgDifference("", None, 0).text() == "arguments: expected null, got 0"


def test_0244_A_exact_compares_arrays_of_one_length_item_by_item_else_whole() -> None:
    assert _texts("exact", {"a": [1, 2]}, {"a": [1, 3]}) == ["a[1]: expected 2, got 3"]
    assert _texts("exact", {"a": [1, 2]}, {"a": [1, 2, 3]}) == ["a: expected [1, 2], got [1, 2, 3]"]
    assert _texts("exact", [{"k": 1}], [{"k": 2}]) == ["[0].k: expected 1, got 2"]
    assert _texts("exact", {"a": {"b": 1}}, {"a": 1}) == ['a: expected {"b": 1}, got 1']
    assert _texts("exact", {"_x-1$": 1}, {"_x-1$": 2}) == ["_x-1$: expected 1, got 2"]
    assert _texts("exact", {"1a": 1}, {"1a": 2}) == ['["1a"]: expected 1, got 2']


def test_0244_A_exact_holds_inside_nested_objects_and_array_items() -> None:
    """An extra key is a difference at every depth under ``exact``, named by its full path."""
    assert _texts("exact", {"a": {"b": 1}}, {"a": {"b": 1, "c": 2}}) == [
        "a.c: expected nothing, got 2"
    ]
    assert _texts("exact", [{"k": 1}], [{"k": 1, "x": 2}]) == ["[0].x: expected nothing, got 2"]
    assert _texts("subset", [{"k": 1}], [{"k": 1, "x": 2}]) == [
        'arguments: expected [{"k": 1}], got [{"k": 1, "x": 2}]'
    ]
    assert [d.path for d in arg_differences("exact", {"é.x": 1}, {"é.x": 2})] == ['["é.x"]']
    assert repr(ABSENT) == "ABSENT"
