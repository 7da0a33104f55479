"""The simulated methods' power, row by row (``wopeval.compare.power.regressed_rows``): the
row-wise p-values are the methods' own (``paired_t_p_values``, ``bootstrap_p_values`` over the
resample counts the bootstrap draws), hand-worked and checked against the verdict on every draw."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from wopeval.compare.methods import (
    bootstrap_counts,
    bootstrap_floor,
    bootstrap_p_values,
    bootstrap_resamples,
    paired_bootstrap,
    paired_t,
    paired_t_p_values,
)
from wopeval.compare.pairing import PairedTask
from wopeval.compare.power import (
    SIMULATION_ROWS,
    Design,
    regressed_rows,
    simulated_counts,
    verdict_of,
)


def _design(rates: tuple[float, ...], trials: int, mde: float = 0.3) -> Design:
    return Design(rates=rates, trials=trials, pass_rule="mean", pass_score=Fraction(7, 10),
                  mde=mde, alpha=0.05, power=0.8, resamples=200)  # fmt: skip


def _pairs(base: list[int], cand: list[int], n: int, minimum: int) -> list[PairedTask]:
    return [
        PairedTask(str(j), b / n, c / n, b >= minimum, c >= minimum, b / n, c / n)
        for j, (b, c) in enumerate(zip(base, cand, strict=True))
    ]


def test_0244_F_paired_t_p_values_hand_worked() -> None:
    # differences 1, 0: mean 0.5, sd √0.5, se √0.5/√2 = 0.5, t = 1 on 1 df:
    # p = 2·(1/2 − atan(1)/π) = 0.5. A constant non-zero difference is t = ±∞ (p 0), a zero one
    # has no p (NaN), and so has a table of one task.
    candidate = np.array([[1.0, 0.0], [0.5, 0.5], [0.25, 0.25]])
    baseline = np.array([[0.0, 0.0], [0.0, 0.0], [0.25, 0.25]])
    p = paired_t_p_values(candidate, baseline)
    assert p[0] == pytest.approx(0.5, rel=1e-12)
    assert p[1] == 0.0
    assert math.isnan(p[2])
    assert math.isnan(float(paired_t_p_values(np.array([1.0]), np.array([0.0]))))


def test_paired_t_p_values_of_many_tables_are_paired_t_on_each() -> None:
    rng = np.random.default_rng(2)
    base = rng.binomial(3, 0.7, size=(40, 6)) / 3
    cand = rng.binomial(3, 0.5, size=(40, 6)) / 3
    p = paired_t_p_values(cand, base)
    for row in range(40):
        pairs = [
            PairedTask("t", b, c, True, True, b, c)
            for b, c in zip(base[row], cand[row], strict=True)
        ]
        expected = paired_t(pairs).p_value
        assert math.isnan(p[row]) if expected is None else p[row] == expected, row


def test_bootstrap_counts_are_the_resamples_the_bootstrap_draws() -> None:
    diffs = np.array([0.5, -1.0, 0.0, 0.25, 1.0])
    counts = bootstrap_counts(5, seed=0, resamples=300)
    assert counts.shape == (300, 5)
    assert (counts.sum(axis=1) == 5).all()
    assert (counts == np.round(counts)).all()
    means, sds = bootstrap_resamples(diffs, seed=0, resamples=300)
    assert counts @ diffs / 5 == pytest.approx(means, rel=1e-12, abs=1e-15)
    squares = counts @ diffs**2
    spread = (squares - 5 * (counts @ diffs / 5) ** 2) / 4
    assert np.sqrt(np.maximum(spread, 0.0)) == pytest.approx(sds, abs=1e-12)


def test_0244_F_bootstrap_p_values_of_constant_tables() -> None:
    # one non-zero difference on every task: the floor max(2/2^6, 1/201) = 1/32; zero: no p
    diffs = np.array([[0.5] * 6, [0.0] * 6])
    means = np.zeros((2, 200))
    sds = np.zeros((2, 200))
    p = bootstrap_p_values(diffs, means, sds)
    assert p[0] == bootstrap_floor(6, 200) == 1 / 32
    assert math.isnan(p[1])


def test_bootstrap_p_values_of_many_tables_are_the_bootstrap_on_each() -> None:
    rng = np.random.default_rng(5)
    base = rng.binomial(3, 0.7, size=(30, 7)) / 3
    cand = rng.binomial(3, 0.5, size=(30, 7)) / 3
    for row in range(30):
        diffs = cand[row] - base[row]
        means, sds = bootstrap_resamples(diffs, seed=0, resamples=200)
        pairs = [
            PairedTask("t", b, c, True, True, b, c)
            for b, c in zip(base[row], cand[row], strict=True)
        ]
        expected = paired_bootstrap(pairs, resamples=200).p_value
        got = float(bootstrap_p_values(diffs, means, sds))
        assert math.isnan(got) if expected is None else got == expected, row


@pytest.mark.parametrize("method", ["paired-t", "paired-bootstrap"])
@pytest.mark.parametrize(("trials", "m"), [(1, 9), (3, 7), (5, 6)])
def test_0244_F_regressed_rows_is_the_verdict_on_every_draw(
    method: str, trials: int, m: int
) -> None:
    design = _design((0.6, 0.9, 0.75), trials)
    for shifted in (True, False):
        base, cand = simulated_counts(design, m, shifted=shifted, simulations=24, seed=11)
        rows = regressed_rows(method, base, cand, design)
        verdicts = [
            verdict_of(method, _pairs(b, c, trials, design.minimum), design) == "regressed"
            for b, c in zip(base.tolist(), cand.tolist(), strict=True)
        ]
        assert rows.tolist() == verdicts
    assert rows.dtype == np.bool_


def test_regressed_rows_below_the_methods_reach_decide_nothing() -> None:
    # two tasks: the bootstrap's floor is 2/2² = 0.5, nothing decides at 0.05, even with every
    # task falling from all passes to none
    design = _design((1.0,), 1, mde=0.9)
    base = np.ones((3, 2), dtype=np.int64)
    cand = np.zeros((3, 2), dtype=np.int64)
    below = regressed_rows("paired-bootstrap", base, cand, design)
    assert below.tolist() == [False] * 3
    assert below.dtype == np.bool_
    # and with six tasks (floor 1/32) the same fall is a regression on every row
    base, cand = np.ones((3, 6), dtype=np.int64), np.zeros((3, 6), dtype=np.int64)
    assert regressed_rows("paired-bootstrap", base, cand, design).tolist() == [True] * 3
    assert regressed_rows("paired-t", base, cand, design).tolist() == [True] * 3


def test_simulated_counts_share_draws_across_sizes() -> None:
    # common random numbers: the draw of 4 tasks is the first 4 tasks of the draw of 7
    design = _design((0.6, 0.9), 3)
    small = simulated_counts(design, 4, shifted=True, simulations=25, seed=3)
    large = simulated_counts(design, 7, shifted=True, simulations=25, seed=3)
    for few, many in zip(small, large, strict=True):
        assert (many[:, :4] == few).all()
    base, cand = small
    assert base.shape == cand.shape == (25, 4)
    assert base.dtype == cand.dtype == np.int64  # whole counts, as the exact path reads them
    assert base.min() >= 0
    assert base.max() <= 3
    # the candidate is drawn at the lowered rates: on average below the baseline
    more = simulated_counts(design, 2, shifted=True, simulations=2000, seed=3)
    assert more[1].mean() < more[0].mean() - 0.5


@pytest.mark.parametrize("method", ["paired-t", "paired-bootstrap"])
def test_0244_F_only_a_significant_fall_is_regressed_row_by_row(method: str) -> None:
    # six tasks on two trials: a fall of every task from 2 to 0 (mean −1), and a rise from 0 to
    # 2 on five tasks and 0 to 1 on one (mean +11/12): both significant, only the fall regressed,
    # whatever the other rows' mean
    design = Design(rates=(0.5,), trials=2, pass_rule="mean", pass_score=Fraction(1, 2),
                    mde=0.3, alpha=0.05, power=0.8, resamples=200)  # fmt: skip
    base = np.array([[2] * 6, [0] * 6, [2] * 6])
    cand = np.array([[0] * 6, [2] * 5 + [1], [0] * 6])
    assert regressed_rows(method, base, cand, design).tolist() == [True, False, True]


def test_0244_F_a_bootstrap_p_of_exactly_alpha_is_not_a_regression() -> None:
    # one trial, seven tasks, differences −1, 0, −1, 0, 0, 0, −1 (mean −3/7): with B = 199 the
    # bootstrap's p is 10/200 = 0.05 exactly, not below alpha 0.05: inconclusive, as the verdict
    # says; just above (alpha 0.051) it is a regression
    base, cand = [1, 1, 1, 0, 0, 1, 1], [0, 1, 0, 0, 0, 1, 0]
    for alpha, regressed in ((0.05, False), (0.051, True)):
        design = Design(rates=(0.5,), trials=1, pass_rule="all", pass_score=Fraction(1),
                        mde=0.3, alpha=alpha, power=0.8, resamples=199)  # fmt: skip
        assert paired_bootstrap(_pairs(base, cand, 1, 1), resamples=199).p_value == 0.05
        rows = regressed_rows("paired-bootstrap", np.array([base]), np.array([cand]), design)
        assert rows.tolist() == [regressed]
        assert (verdict_of("paired-bootstrap", _pairs(base, cand, 1, 1), design) == "regressed"
                ) is regressed  # fmt: skip


def test_regressed_rows_reads_every_row_past_a_slice() -> None:
    # the bootstrap's resample sums are taken SIMULATION_ROWS draws at a time: 1,001 draws of a
    # fall on six tasks are all regressed, the last one too
    design = _design((1.0,), 1, mde=0.9)
    base = np.ones((SIMULATION_ROWS + 1, 6), dtype=np.int64)
    cand = np.zeros((SIMULATION_ROWS + 1, 6), dtype=np.int64)
    rows = regressed_rows("paired-bootstrap", base, cand, design)
    assert rows.shape == (SIMULATION_ROWS + 1,)
    assert rows.all()
