"""The cost/accuracy frontier (wopeval.grading.frontier): dominance and its ties, exactly."""

from __future__ import annotations

from fractions import Fraction

from wopeval.grading.frontier import Point, dominates, on_frontier


def p(rate: str, cost: str | None) -> Point:
    return Point(Fraction(rate), None if cost is None else Fraction(cost))


def test_one_run_with_a_success_is_the_frontier() -> None:
    assert on_frontier([p("1/2", "0.2")]) == [True]
    assert on_frontier([p("0", None)]) == [False]  # no success: never on it


def test_dominance_needs_one_strict_side() -> None:
    assert dominates(p("3/4", "0.2"), p("1/2", "0.2"))  # more successful, as cheap
    assert dominates(p("1/2", "0.1"), p("1/2", "0.2"))  # as successful, cheaper
    assert not dominates(p("1/2", "0.2"), p("1/2", "0.2"))  # equal: neither
    assert not dominates(p("3/4", "0.3"), p("1/2", "0.2"))  # a trade-off: neither
    assert not dominates(p("1/2", "0.3"), p("3/4", "0.2"))
    assert dominates(p("1/4", "9"), p("0", None))  # any success beats none
    assert not dominates(p("0", None), p("1/4", "9"))


def test_frontier_with_ties_and_trade_offs() -> None:
    points = [p("1/2", "0.2"), p("3/4", "0.4"), p("1/4", "0.4"), p("0", None),
              p("1/2", "0.2"), p("1/2", "0.4"), p("3/4", "0.4")]  # fmt: skip
    # equal runs both stay; same rate and dearer is off; same cost and less successful is off
    assert on_frontier(points) == [True, True, False, False, True, False, True]


def test_exact_comparison_does_not_round() -> None:
    # 0.1 + 0.2 as floats is 0.30000000000000004: exactly dearer than 0.3
    dear = Point(Fraction(1, 2), Fraction(0.1) + Fraction(0.2))
    cheap = Point(Fraction(1, 2), Fraction(0.3))
    assert on_frontier([dear, cheap]) == [False, True]
