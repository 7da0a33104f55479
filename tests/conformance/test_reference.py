"""The kit's reference trajectory grader (wopeval.conformance.reference), RFC 0244 §A.

Hand-worked cases first (the RFC's own examples and the five conformance tasks), then
properties against brute force: a maximum matching found by trying every assignment, and
``in-order`` decided by trying every subsequence.
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from wopeval.conformance.reference import (
    Expectation,
    ExpectedCall,
    ObservedCall,
    args_match,
    call_matches,
    grade,
    in_order_matches,
    json_equal,
    json_subset,
    max_matching,
    mode_matches,
)

AGENT = "core.conformance.agents.scripted"
LOOKUP, REFUND, REFUND_ALL, SEARCH = (
    "crm:lookup-order",
    "billing:refund",
    "billing:refund-all",
    "kb:search",
)


def _obs(tool: str, inputs: Any = None, agent: str = AGENT) -> ObservedCall:
    return ObservedCall(tool, inputs, agent)


def _block(traj: dict[str, Any], calls: list[ObservedCall]) -> dict[str, Any]:
    return grade(Expectation.from_json(traj), calls, AGENT).to_block()


def _want(
    mode: str, matched: bool, expected: int, observed: int, paired: int, forbidden: int
) -> dict[str, Any]:
    return {
        "mode": mode,
        "matched": matched,
        "expectedCount": expected,
        "observedCount": observed,
        "matchedCount": paired,
        "forbiddenCount": forbidden,
    }


# --- JSON equality and argsMatch ----------------------------------------------------------


def test_0244_A_json_equality_policy() -> None:
    assert json_equal(1, 1.0)
    assert json_equal({"a": [1, {"b": None}]}, {"a": [1.0, {"b": None}]})
    assert not json_equal(True, 1)
    assert not json_equal(0, False)
    assert not json_equal("1", 1)
    assert not json_equal([1, 2], [2, 1])
    assert not json_equal({"a": 1}, {"a": 1, "b": 2})
    assert not json_equal(None, {})


def test_0244_A_args_subset_recurses_through_objects_only() -> None:
    assert json_subset({"a": {"b": 1}}, {"a": {"b": 1, "c": 2}, "d": 3})
    assert json_subset({}, {"anything": 1})
    assert not json_subset({}, [])
    assert not json_subset({"a": [1]}, {"a": [1, 2]})  # arrays compare whole
    assert not json_subset({"a": 1}, {"b": 1})
    assert json_subset(5, 5.0)


def test_0244_A_args_match_modes() -> None:
    inputs = {"orderId": "A", "verbose": True}
    assert args_match("ignore", {"orderId": "Z"}, inputs)
    assert args_match("subset", {"orderId": "A"}, inputs)
    assert not args_match("exact", {"orderId": "A"}, inputs)
    assert args_match("exact", {"verbose": True, "orderId": "A"}, inputs)


# --- the RFC's cases ----------------------------------------------------------------------


def test_0244_A_in_order_with_args_subset() -> None:
    traj = {
        "match": "in-order",
        "calls": [
            {"tool": LOOKUP, "argsMatch": "ignore"},
            {"tool": REFUND, "args": {"amountMinor": 4200}, "argsMatch": "subset"},
        ],
    }
    calls = [
        _obs(LOOKUP, {"orderId": "A"}),
        _obs(SEARCH, {}),
        _obs(REFUND, {"amountMinor": 4200, "currency": "EUR"}),
    ]
    assert _block(traj, calls) == _want("in-order", True, 2, 3, 2, 0)
    wrong_amount = [*calls[:2], _obs(REFUND, {"amountMinor": 4300})]
    assert _block(traj, wrong_amount) == _want("in-order", False, 2, 3, 1, 0)


def test_0244_A_wrong_order_unmatched_but_both_calls_pair_up() -> None:
    traj = {"match": "in-order", "calls": [{"tool": LOOKUP}, {"tool": REFUND}]}
    # matchedCount ignores order: a longest-common-subsequence count would say 1.
    assert _block(traj, [_obs(REFUND), _obs(LOOKUP)]) == _want("in-order", False, 2, 2, 2, 0)


def test_0244_A_forbidden_hit_fails_any_mode() -> None:
    traj = {
        "match": "any-order",
        "calls": [
            {"tool": LOOKUP},
            {"tool": LOOKUP, "args": {"orderId": "C"}, "argsMatch": "exact"},
        ],
        "forbidden": [REFUND_ALL],
    }
    calls = [_obs(LOOKUP, {"orderId": "C"}), _obs(LOOKUP, {"orderId": "Z"}), _obs(REFUND_ALL, {})]
    # Greedy first-fit pairs the ignore-call with {C} and strands the exact call (1); the
    # maximum matching pairs ignore↔{Z} and exact↔{C} (2).
    assert _block(traj, calls) == _want("any-order", False, 2, 3, 2, 1)
    assert _block(traj, calls[:2]) == _want("any-order", True, 2, 2, 2, 0)
    for mode in ("exact", "in-order", "subset"):
        assert _block({**traj, "match": mode}, calls)["matched"] is False


def test_0244_A_subset_allows_repeats_and_rejects_strangers() -> None:
    traj = {
        "match": "subset",
        "calls": [
            {"tool": SEARCH},
            {"tool": LOOKUP, "args": {"orderId": "D"}, "argsMatch": "exact"},
        ],
    }
    calls = [
        _obs(SEARCH, {"q": 1}),
        _obs(SEARCH, {"q": 2}),
        _obs(LOOKUP, {"orderId": "D"}),
        _obs(SEARCH, {"q": 1}),
    ]
    assert _block(traj, calls) == _want("subset", True, 2, 4, 2, 0)
    assert _block(traj, [])["matched"] is True  # nothing called, nothing outside calls
    assert _block(traj, [*calls, _obs(REFUND)]) == _want("subset", False, 2, 5, 2, 0)
    assert _block(traj, [_obs(LOOKUP, {"orderId": "E"})])["matched"] is False


def test_0244_A_exact_args_mismatch() -> None:
    traj = {
        "match": "exact",
        "calls": [
            {"tool": LOOKUP, "args": {"orderId": "E"}, "argsMatch": "exact"},
            {"tool": REFUND},
        ],
    }
    extra_key = [_obs(LOOKUP, {"orderId": "E", "includeHistory": True}), _obs(REFUND, {})]
    assert _block(traj, extra_key) == _want("exact", False, 2, 2, 1, 0)
    assert _block(traj, [_obs(LOOKUP, {"orderId": "E"}), _obs(REFUND, {})])["matched"] is True
    too_long = [_obs(LOOKUP, {"orderId": "E"}), _obs(REFUND, {}), _obs(REFUND, {})]
    assert _block(traj, too_long) == _want("exact", False, 2, 3, 2, 0)


def test_0244_A_delegate_calls_excluded_unless_include_delegates() -> None:
    traj = {"match": "exact", "calls": [{"tool": LOOKUP}]}
    calls = [_obs(LOOKUP), _obs(REFUND_ALL, agent=f"{AGENT}.helper")]
    assert _block({**traj, "forbidden": [REFUND_ALL]}, calls) == _want("exact", True, 1, 1, 1, 0)
    widened = {**traj, "forbidden": [REFUND_ALL], "includeDelegates": True}
    assert _block(widened, calls) == _want("exact", False, 1, 2, 1, 1)


# --- properties against brute force -------------------------------------------------------

TOOLS = ("a:x", "a:y", "b:z")
_args = st.one_of(st.none(), st.fixed_dictionaries({"k": st.integers(0, 2)}))
_expected = st.builds(
    ExpectedCall,
    tool=st.sampled_from(TOOLS),
    args=st.fixed_dictionaries({"k": st.integers(0, 2)}),
    args_match=st.sampled_from(["ignore", "exact", "subset"]),
)
_observed = st.builds(
    ObservedCall, tool=st.sampled_from(TOOLS), inputs=_args, agent_id=st.just(AGENT)
)


def _brute_matching(expected: list[ExpectedCall], observed: list[ObservedCall]) -> int:
    for size in range(min(len(expected), len(observed)), 0, -1):
        for chosen in itertools.combinations(range(len(expected)), size):
            for targets in itertools.permutations(range(len(observed)), size):
                if all(
                    call_matches(expected[i], observed[j])
                    for i, j in zip(chosen, targets, strict=True)
                ):
                    return size
    return 0


@given(st.lists(_expected, max_size=4), st.lists(_observed, max_size=5))
def test_0244_A_matched_count_is_a_maximum_matching(
    expected: list[ExpectedCall], observed: list[ObservedCall]
) -> None:
    assert max_matching(expected, observed) == _brute_matching(expected, observed)


@given(st.lists(_expected, max_size=4), st.lists(_observed, max_size=6))
def test_0244_A_in_order_is_a_subsequence_search(
    expected: list[ExpectedCall], observed: list[ObservedCall]
) -> None:
    brute = any(
        all(call_matches(e, observed[j]) for e, j in zip(expected, positions, strict=True))
        for positions in itertools.combinations(range(len(observed)), len(expected))
    )
    assert in_order_matches(expected, observed) is brute


@given(st.lists(_expected, min_size=1, max_size=4), st.lists(_observed, max_size=5))
def test_0244_A_mode_implications(
    expected: list[ExpectedCall], observed: list[ObservedCall]
) -> None:
    """exact ⇒ in-order ⇒ any-order; matchedCount never exceeds either side."""
    exact = mode_matches("exact", expected, observed)
    in_order = mode_matches("in-order", expected, observed)
    any_order = mode_matches("any-order", expected, observed)
    assert not exact or in_order
    assert not in_order or any_order
    assert max_matching(expected, observed) <= min(len(expected), len(observed))
