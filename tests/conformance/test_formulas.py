"""The kit's RFC 0244 §B formulas (wopeval.conformance.formulas) on a hand-worked table."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wopeval.conformance.formulas import (
    agrees,
    clustered_stderr,
    exact_mean,
    meets,
    pass_at_k,
    pass_hat_k,
    recorded,
)

# (n, c, k, pass@k, pass^k), each worked by hand:
TABLE = [
    # RFC §Examples: 1 − C(1,3)/C(5,3) = 1 − 0/10; C(4,3)/C(5,3) = 4/10.
    (5, 4, 3, Fraction(1), Fraction(2, 5)),
    # 1 − C(1,2)/C(3,2) = 1; C(2,2)/C(3,2) = 1/3.
    (3, 2, 2, Fraction(1), Fraction(1, 3)),
    # 1 − C(2,2)/C(3,2) = 2/3; C(1,2) = 0.
    (3, 1, 2, Fraction(2, 3), Fraction(0)),
    # 1 − C(2,2)/C(4,2) = 1 − 1/6 = 5/6; C(2,2)/C(4,2) = 1/6.
    (4, 2, 2, Fraction(5, 6), Fraction(1, 6)),
    # 1 − C(7,5)/C(10,5) = 1 − 21/252 = 11/12; C(3,5) = 0.
    (10, 3, 5, Fraction(11, 12), Fraction(0)),
    # k = 1: pass@1 = pass^1 = c/n = 3/10.
    (10, 3, 1, Fraction(3, 10), Fraction(3, 10)),
    # c = 0 ⇒ both 0; c = n ⇒ both 1.
    (3, 0, 2, Fraction(0), Fraction(0)),
    (1, 1, 1, Fraction(1), Fraction(1)),
    # 1 − C(3,3)/C(6,3) = 1 − 1/20 = 19/20; C(3,3)/C(6,3) = 1/20.
    (6, 3, 3, Fraction(19, 20), Fraction(1, 20)),
]


@pytest.mark.parametrize(("n", "c", "k", "at_k", "hat_k"), TABLE)
def test_0244_B_pass_at_k_and_pass_hat_k_table(
    n: int, c: int, k: int, at_k: Fraction, hat_k: Fraction
) -> None:
    assert pass_at_k(n, c, k) == at_k
    assert pass_hat_k(n, c, k) == hat_k


@pytest.mark.parametrize(("n", "c", "k"), [(0, 0, 1), (3, 4, 1), (3, 1, 4), (3, 1, 0), (3, -1, 1)])
def test_0244_B_out_of_range_counts_refused(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError, match="need n"):
        pass_at_k(n, c, k)


def test_0244_B_stderr_hand_worked() -> None:
    # Means 1, 2/3, 1/3, 0 (mean 1/2): squared deviations 1/4 + 1/36 + 1/36 + 1/4 = 5/9;
    # sample variance 5/27; stderr = sqrt(5/27 / 4) = sqrt(5/108) ≈ 0.2151657.
    got = clustered_stderr([1.0, 2 / 3, 1 / 3, 0.0])
    assert got is not None
    assert math.isclose(got, math.sqrt(5 / 108), rel_tol=1e-12)
    # Two tasks 0 and 1: variance 1/2; stderr = sqrt(1/2 / 2) = 1/2.
    assert clustered_stderr([0.0, 1.0]) == 0.5
    assert clustered_stderr([0.7]) is None
    assert clustered_stderr([]) is None


def test_0244_B_tolerance_is_relative_above_one_and_absolute_below() -> None:
    assert agrees(1 / 3, Fraction(1, 3))
    assert agrees(0.0 + 5e-10, 0)
    assert not agrees(0.0 + 2e-9, 0)
    assert agrees(1000.0 + 5e-7, 1000)  # 1e-9 · 1000 = 1e-6
    assert not agrees(1000.0 + 2e-6, 1000)
    assert not agrees(True, 1)
    assert not agrees("1", 1)
    assert not agrees(None, 0)
    assert not agrees(float("nan"), 0)


def test_0244_B_exact_mean_is_exact() -> None:
    assert exact_mean([0.1, 0.2, 0.3]) == (Fraction(0.1) + Fraction(0.2) + Fraction(0.3)) / 3
    assert exact_mean([Fraction(1, 3), Fraction(2, 3)]) == Fraction(1, 2)
    with pytest.raises(ValueError, match="mean of nothing"):
        exact_mean([])


@given(
    st.integers(1, 30).flatmap(
        lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))
    )
)
def test_0244_B_estimators_are_probabilities_ordered(nck: tuple[int, int, int]) -> None:
    """pass^k ≤ c/n ≤ pass@k, each in [0, 1] (drawing without replacement)."""
    n, c, k = nck
    at_k, hat_k = pass_at_k(n, c, k), pass_hat_k(n, c, k)
    assert 0 <= hat_k <= Fraction(c, n) <= at_k <= 1


def test_0244_B_kit_threshold_decisions_are_exact_on_the_wire_decimals() -> None:
    # Three eval.scored of 0.7 against passScore 0.7: the float mean 0.6999999999999998 misses,
    # the decimals 0.7 + 0.7 + 0.7 = 2.1, / 3 = 0.7 meet it.
    assert sum([0.7] * 3) / 3 < 0.7
    assert meets(exact_mean([recorded(0.7)] * 3), 0.7)
    # 0.1 and 0.3 average 0.2 exactly; their binary values would fall short.
    assert exact_mean([Fraction(0.1), Fraction(0.3)]) < Fraction(0.2)
    assert meets(exact_mean([recorded(0.1), recorded(0.3)]), 0.2)
    assert not meets(exact_mean([recorded(0.1), recorded(0.29)]), 0.2)
    assert recorded(Fraction(1, 3)) == Fraction(1, 3)
    with pytest.raises(ValueError, match="finite"):
        recorded(math.nan)
