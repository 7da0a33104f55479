"""The trajectory diff and its reasons over hand-built calls (store-free): each call's status
from the maximum matching, repeats counted, the diff's JSON, and every bounded list."""

from __future__ import annotations

from typing import Any

import pytest

from wopeval.grading.trajectory import ObservedCall
from wopeval.grading.trajectory_diff import TrajectoryDiff, trajectory_diff, trajectory_reasons
from wopeval.suite.models import TrajectoryExpectation

AGENT = "core.acme.agent"


def _diff(match: str, expected: list[dict[str, Any]], tools: list[Any], **more: Any) -> Any:
    expectation = TrajectoryExpectation.model_validate({"match": match, "calls": expected, **more})
    calls = [
        ObservedCall(t, {}, AGENT) if isinstance(t, str) else ObservedCall(t[0], t[1], AGENT)
        for t in tools
    ]
    return trajectory_diff(expectation, calls, AGENT)


def _texts(diff: Any) -> list[str]:
    reasons = trajectory_reasons(diff)
    return [r.message for r in [*reasons.forbidden, *reasons.others]]


def test_0244_A_repeated_calls_are_matched_one_for_one_and_the_json_names_each() -> None:
    """Two expected ``a`` and one observed: one matched, one missing; two observed ``b`` and one
    expected: one matched, one unexpected (the counts of one slot are used up in order)."""
    diff = _diff(
        "any-order",
        [{"tool": "a"}, {"tool": "a"}, {"tool": "b", "args": {"n": 1}, "argsMatch": "subset"}],
        ["a", ("b", {"n": 1}), ("b", {"n": 1})],
    )
    assert diff.to_json() == {
        "mode": "any-order",
        "expected": [
            {"tool": "a", "argsMatch": "ignore", "status": "matched"},
            {"tool": "a", "argsMatch": "ignore", "status": "missing"},
            {"tool": "b", "argsMatch": "subset", "status": "matched", "args": {"n": 1}},
        ],
        "observed": [
            {"tool": "a", "inputs": {}, "agentId": AGENT, "status": "matched"},
            {"tool": "b", "inputs": {"n": 1}, "agentId": AGENT, "status": "matched"},
            {"tool": "b", "inputs": {"n": 1}, "agentId": AGENT, "status": "unexpected"},
        ],
    }
    three = _diff("any-order", [{"tool": "a"}] * 3, ["a", "a", "a"])
    assert [row["status"] for row in three.expected] == ["matched"] * 3
    assert [row["status"] for row in three.observed] == ["matched"] * 3


@pytest.mark.parametrize(
    ("mode", "text"),
    [
        ("exact", "trajectory (exact): missing a; unexpected c"),
        ("subset", "trajectory (subset): unexpected c"),
        ("in-order", "trajectory (in-order): missing a"),
        ("any-order", "trajectory (any-order): missing a"),
    ],
)
def test_0244_A_unexpected_calls_are_named_only_where_they_fail_the_mode(
    mode: str, text: str
) -> None:
    assert _texts(_diff(mode, [{"tool": "a"}, {"tool": "b"}], ["b", "c"])) == [text]


@pytest.mark.parametrize(
    ("count", "listed"),
    [(5, "t0, t1, t2, t3, t4"), (6, "t0, t1, t2, t3, t4 and 1 more")],
)
def test_0244_A_five_missing_calls_are_named_then_counted(count: int, listed: str) -> None:
    expected = [{"tool": f"t{i}"} for i in range(count)]
    assert _texts(_diff("any-order", expected, [])) == [f"trajectory (any-order): missing {listed}"]


def test_0244_A_five_forbidden_tools_are_each_a_reason_the_sixth_is_counted() -> None:
    five = [f"f{i}" for i in range(5)]
    assert _texts(_diff("subset", [], five, forbidden=five)) == [
        f"forbidden tool {t}" for t in five
    ]
    six = [*five, "f5"]
    texts = _texts(_diff("subset", [], six, forbidden=six))
    assert texts[-1] == "and 1 more forbidden tools: f5"
    assert len(texts) == 6


@pytest.mark.parametrize(
    ("keys", "tail"),
    [(4, 'k3: expected 1, got "1"'), (5, 'k3: expected 1, got "1"; and 1 more')],
)
def test_0244_A_wrong_arguments_show_four_differences_then_count(keys: int, tail: str) -> None:
    want = {f"k{i}": 1 for i in range(keys)}
    got = {f"k{i}": "1" for i in range(keys)}
    diff = _diff("exact", [{"tool": "a", "args": want, "argsMatch": "exact"}], [("a", got)])
    reasons = trajectory_reasons(diff)
    (reason,) = reasons.others
    assert reason.message.startswith("called a with different arguments: k0: expected 1")
    assert reason.message.endswith(tail)
    assert reason.details["tool"] == "a"
    assert reason.details["argsMatch"] == "exact"
    assert len(reason.details["differences"]) == keys


@pytest.mark.parametrize("mode", ["exact", "in-order"])
def test_0244_A_every_call_there_in_another_order_is_named_as_the_order(mode: str) -> None:
    diff = _diff(mode, [{"tool": "a"}, {"tool": "b"}], ["b", "a"])
    assert _texts(diff) == [f"trajectory ({mode}): calls out of the expected order"]


def _exact_a(n: int) -> dict[str, Any]:
    return {"tool": "a", "args": {"n": n}, "argsMatch": "exact"}


@pytest.mark.parametrize(
    ("mode", "statuses", "texts"),
    [
        (
            "subset",
            ["matched"] * 4 + ["unexpected"],
            ["called a with different arguments: n: expected 1, got 4"],
        ),
        (
            "exact",
            ["matched"] * 3 + ["unexpected"] * 2,
            ["trajectory (exact): unexpected a, a"],
        ),
    ],
)
def test_0244_A_subset_pairs_a_repeated_call_with_the_first_expected_call_of_its_tool(
    mode: str, statuses: list[str], texts: list[str]
) -> None:
    """Every expected call is matched, so the extra ``a`` calls have no missing call beside them.
    Under ``subset`` (repeats allowed) the repeat of ``n: 1`` is matched and ``n: 4`` is compared
    with the tool's first expected call, not the last; elsewhere both are only unexpected."""
    expected = [{"tool": "b"}, _exact_a(1), _exact_a(2)]
    observed: list[Any] = ["b", ("a", {"n": 1}), ("a", {"n": 2}), ("a", {"n": 1}), ("a", {"n": 4})]
    diff = _diff(mode, expected, observed)
    assert [row["status"] for row in diff.observed] == statuses
    assert _texts(diff) == texts


def test_0244_A_subset_names_neither_repeats_nor_expected_calls_not_made() -> None:
    """Under ``subset`` a call that an expected call matches may repeat, and no expected call
    must be made: only the call no expected call matches is a reason (with nothing of its tool
    comparing arguments, there is nothing to pair it with)."""
    diff = _diff("subset", [{"tool": "a"}, _exact_a(1) | {"tool": "c"}], ["a", "a", "d"])
    assert [row["status"] for row in diff.observed] == ["matched", "matched", "unexpected"]
    assert [row["status"] for row in diff.expected] == ["matched", "missing"]
    assert _texts(diff) == ["trajectory (subset): unexpected d"]


def _row(status: str, **more: Any) -> dict[str, Any]:
    return {"tool": "a", "status": status, **more}


def test_0244_A_a_stored_failure_with_every_call_matched_names_the_mode_s_rule() -> None:
    """A recorded verdict can say the trajectory failed while its diff matches every call: the
    order for the ordered modes, plain "unmatched" under ``subset`` (it has no order)."""
    expected = [_row("matched", argsMatch="ignore")]
    observed = [_row("matched", inputs={}, agentId=AGENT)]
    texts = {
        mode: _texts(TrajectoryDiff(mode, expected, observed))
        for mode in ("subset", "exact", "in-order", "any-order")
    }
    assert texts == {
        "subset": ["trajectory (subset): unmatched"],
        "exact": ["trajectory (exact): calls out of the expected order"],
        "in-order": ["trajectory (in-order): calls out of the expected order"],
        "any-order": ["trajectory (any-order): calls out of the expected order"],
    }


def test_0244_A_a_pair_whose_arguments_show_no_difference_says_only_the_tool() -> None:
    """A stored diff can pair a missing call with an unexpected one of equal arguments (a repeat
    under ``subset``): no difference is invented and no dangling colon is left."""
    expected = [_row("missing", args={"n": 1}, argsMatch="exact")]
    observed = [_row("unexpected", inputs={"n": 1}, agentId=AGENT)]
    (reason,) = trajectory_reasons(TrajectoryDiff("exact", expected, observed)).others
    assert reason.message == "called a with different arguments"
    assert reason.details["differences"] == []


def test_0244_A_a_trajectory_reason_is_cut_at_300_characters() -> None:
    """Tool names have no length limit; each reason built from them stops at 300 characters."""
    long = "x" * 400
    five = [f"f{i}" for i in range(5)]
    forbidden = _texts(_diff("subset", [], [*five, long], forbidden=[*five, long]))
    assert forbidden[-1] == ("and 1 more forbidden tools: " + long)[:300]
    (missing,) = _texts(_diff("any-order", [{"tool": long}], []))
    assert missing == ("trajectory (any-order): missing " + long)[:300]
    wrong = {"tool": long, "args": {"n": 1}, "argsMatch": "exact"}
    (arguments,) = _texts(_diff("exact", [wrong], [(long, {"n": 2})]))
    assert arguments == ("called " + long)[:300]
    assert {len(forbidden[-1]), len(missing), len(arguments)} == {300}
