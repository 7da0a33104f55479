"""RFC 0244 §B trial statistics with the RFC 0246 gating correction (wopeval.grading.stats)."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wopeval.grading.exact import exact_mean, exact_sum
from wopeval.grading.stats import (
    OutcomeTally,
    TaskTrialResult,
    TrialOutcome,
    clustered_stderr,
    mean_or_zero,
    pass_at_k,
    pass_hat_k,
    task_result,
    trial_stats,
)
from wopeval.suite.models import PassRule
from wopeval.wire.summary import TrialsBlock, TrialStats

PASS = TrialOutcome(score=1.0, passed=True, gated=False)
FAIL = TrialOutcome(score=0.0, passed=False, gated=False)


# (n, c, k, pass@k, pass^k), worked by hand: pass@k = 1 − C(n−c,k)/C(n,k), pass^k = C(c,k)/C(n,k).
TABLE = [
    # RFC example: 1 − C(1,3)/C(5,3) = 1 − 0/10 = 1; C(4,3)/C(5,3) = 4/10.
    (5, 4, 3, Fraction(1), Fraction(2, 5)),
    # 1 − C(1,2)/C(3,2) = 1 − 0/3 = 1; C(2,2)/C(3,2) = 1/3.
    (3, 2, 2, Fraction(1), Fraction(1, 3)),
    # 1 − C(2,2)/C(3,2) = 1 − 1/3 = 2/3; C(1,2) = 0 (c < k).
    (3, 1, 2, Fraction(2, 3), Fraction(0)),
    # k = 1 reduces both to c/n: 1 − 7/10 = 3/10; 3/10.
    (10, 3, 1, Fraction(3, 10), Fraction(3, 10)),
    # C(5,3) = 10, C(10,3) = 120: 1 − 10/120 = 11/12; 10/120 = 1/12.
    (10, 5, 3, Fraction(11, 12), Fraction(1, 12)),
    # C(3,2) = 3, C(6,2) = 15: 1 − 3/15 = 4/5; 3/15 = 1/5.
    (6, 3, 2, Fraction(4, 5), Fraction(1, 5)),
    # c = 0: 1 − C(4,2)/C(4,2) = 0; C(0,2) = 0.
    (4, 0, 2, Fraction(0), Fraction(0)),
    # c = n = k: 1 − C(0,4)/C(4,4) = 1; C(4,4)/C(4,4) = 1.
    (4, 4, 4, Fraction(1), Fraction(1)),
    # C(10,5) = 252, C(20,5) = 15504: 1 − 252/15504 = 1271/1292; 252/15504 = 21/1292.
    (20, 10, 5, Fraction(1271, 1292), Fraction(21, 1292)),
]


@pytest.mark.parametrize(("n", "c", "k", "at_k", "hat_k"), TABLE)
def test_0244_B_pass_at_k_and_pass_hat_k_table(
    n: int, c: int, k: int, at_k: Fraction, hat_k: Fraction
) -> None:
    assert pass_at_k(n, c, k) == at_k
    assert pass_hat_k(n, c, k) == hat_k
    assert isinstance(pass_at_k(n, c, k), Fraction)


@pytest.mark.parametrize(
    ("n", "c", "k", "argument"),
    [(0, 0, 1, "n"), (5, 2, 0, "k"), (5, 2, 6, "k"), (5, 6, 2, "c"), (5, -1, 2, "c")],
)
def test_0244_B_counts_are_validated(n: int, c: int, k: int, argument: str) -> None:
    for estimator in (pass_at_k, pass_hat_k):
        with pytest.raises(ValueError, match=rf"^{argument} must"):
            estimator(n, c, k)


def test_0244_B_worked_example() -> None:
    # Five trials, four passed with score 1, one failed with 0: count 5, k 3, passRule all.
    result = task_result([PASS, PASS, PASS, PASS, FAIL], k=3, pass_rule="all", pass_score=0.5)
    assert result == TaskTrialResult(
        n=5,
        passed_count=4,
        mean_score=0.8,
        gating_score=Fraction(4, 5),
        pass_at_k=Fraction(1),
        pass_hat_k=Fraction(2, 5),
        passed=False,
    )
    assert result.trials_block() == TrialsBlock(
        n=5, passedCount=4, meanScore=0.8, passAtK=1.0, passHatK=0.4
    )


@pytest.mark.parametrize(
    ("outcomes", "rule", "pass_score", "passed"),
    [
        ([PASS, PASS, FAIL], "all", 0.0, False),
        ([PASS, PASS, PASS], "all", 1.0, True),
        ([FAIL, FAIL, PASS], "any", 1.0, True),
        ([FAIL, FAIL, FAIL], "any", 0.0, False),
        # mean: (1 + 1 + 0) / 3 = 0.667 against 0.6 and 0.7.
        ([PASS, PASS, FAIL], "mean", 0.6, True),
        ([PASS, PASS, FAIL], "mean", 0.7, False),
        # mean compares with ≥: 0.8 ≥ 0.8.
        ([PASS, PASS, PASS, PASS, FAIL], "mean", 0.8, True),
    ],
)
def test_0244_B_pass_rules(
    outcomes: list[TrialOutcome], rule: PassRule, pass_score: float, passed: bool
) -> None:
    assert task_result(outcomes, 1, rule, pass_score).passed is passed


def test_0246_gated_trial_keeps_its_score_but_counts_zero_for_mean() -> None:
    # The output scored 1, but the trajectory did not match: score stays 1, gating score is 0.
    unmatched = TrialOutcome(score=1.0, passed=False, gated=True)
    assert unmatched.gating_score == 0.0
    alone = task_result([unmatched], k=1, pass_rule="mean", pass_score=0.5)
    assert alone.mean_score == 1.0
    assert alone.gating_score == Fraction(0)
    assert alone.passed is False
    # With one clean pass beside it: meanScore (1 + 1)/2 = 1, gating (1 + 0)/2 = 0.5.
    pair = task_result([PASS, unmatched], k=1, pass_rule="mean", pass_score=0.5)
    assert (pair.mean_score, pair.gating_score, pair.passed) == (1.0, Fraction(1, 2), True)
    assert task_result([PASS, unmatched], k=1, pass_rule="mean", pass_score=0.6).passed is False
    # all/any read trial passes, and a gated trial never passes.
    assert pair.passed_count == 1


def test_0244_B_trial_outcome_invariants() -> None:
    with pytest.raises(ValueError, match="score"):
        TrialOutcome(score=1.5, passed=True, gated=False)
    with pytest.raises(ValueError, match="score"):
        TrialOutcome(score=math.nan, passed=False, gated=False)
    with pytest.raises(ValueError, match="outcomes"):
        task_result([], k=1, pass_rule="all", pass_score=0.5)
    with pytest.raises(ValueError, match=r"^k must"):
        task_result([PASS, PASS], k=3, pass_rule="all", pass_score=0.5)


@pytest.mark.parametrize(
    ("means", "stderr"),
    [
        # mean 0.5, squared deviations 0.25 + 0.25 = 0.5, / (2 − 1) = 0.5, sd = 0.7071; / √2 = 0.5.
        ([1.0, 0.0], 0.5),
        # mean 0.8, deviations 0, −0.2, 0.2: 0.08 / 2 = 0.04, sd = 0.2; / √3 = 0.1154700538.
        ([0.8, 0.6, 1.0], 0.2 / math.sqrt(3)),
        # all equal: sd 0.
        ([0.3, 0.3, 0.3, 0.3], 0.0),
    ],
)
def test_0244_B_clustered_stderr(means: list[float], stderr: float) -> None:
    value = clustered_stderr(means)
    assert value is not None
    assert math.isclose(value, stderr, rel_tol=1e-12, abs_tol=1e-15)


def test_0244_B_clustered_stderr_omitted_below_two_tasks() -> None:
    assert clustered_stderr([]) is None
    assert clustered_stderr([0.7]) is None


def test_0244_B_trial_stats() -> None:
    # Task 1: n 5, c 4, k 3 → pass@3 = 1, pass^3 = 2/5, meanScore 0.8.
    # Task 2: n 5, c 2, k 3 → pass@3 = 1 − C(3,3)/C(5,3) = 9/10, pass^3 = C(2,3)/10 = 0,
    #         meanScore 0.4.
    # Means: pass@3 (1 + 9/10)/2 = 0.95, pass^3 (2/5 + 0)/2 = 0.2.
    # stderr: mean 0.6, deviations ±0.2, 0.08 / 1 → sd 0.28284; / √2 = 0.2.
    first = task_result([PASS, PASS, PASS, PASS, FAIL], 3, "all", 0.5)
    second = task_result([PASS, PASS, FAIL, FAIL, FAIL], 3, "all", 0.5)
    stats = trial_stats([first, second], k=3)
    assert stats.k == 3
    assert stats.passAtK == 0.95
    assert stats.passHatK == 0.2
    assert stats.scoreStderr is not None
    assert math.isclose(stats.scoreStderr, 0.2, rel_tol=1e-12)
    single = trial_stats([first], k=3)
    assert single == TrialStats(k=3, passAtK=1.0, passHatK=0.4)
    assert "scoreStderr" not in single.model_dump(exclude_none=True)
    with pytest.raises(ValueError, match="results"):
        trial_stats([], k=3)


def test_0244_B_trial_stats_means_are_exact() -> None:
    # Three tasks with pass^k 1/3, 1/3, 1/3: a float sum 1/3 + 1/3 + 1/3 then / 3 can drift;
    # the exact mean is 1/3, whose nearest float is float(Fraction(1, 3)).
    results = [task_result([PASS, PASS, FAIL], 2, "any", 0.5) for _ in range(3)]
    assert results[0].pass_hat_k == Fraction(1, 3)
    assert trial_stats(results, 2).passHatK == float(Fraction(1, 3))


COUNTS = st.integers(1, 30).flatmap(
    lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))
)


@given(COUNTS)
def test_0244_B_pass_hat_k_below_rate_below_pass_at_k(counts: tuple[int, int, int]) -> None:
    n, c, k = counts
    assert pass_hat_k(n, c, k) <= Fraction(c, n) <= pass_at_k(n, c, k)


@given(COUNTS)
def test_0244_B_pass_at_k_is_monotone_in_c(counts: tuple[int, int, int]) -> None:
    n, c, k = counts
    if c < n:
        assert pass_at_k(n, c, k) <= pass_at_k(n, c + 1, k)
        assert pass_hat_k(n, c, k) <= pass_hat_k(n, c + 1, k)


@given(COUNTS)
def test_0244_B_pass_at_k_complements_pass_hat_k(counts: tuple[int, int, int]) -> None:
    # At least one of k passes ⇔ not all k fail: pass@k(c) = 1 − pass^k(n − c) with roles swapped.
    n, c, k = counts
    assert pass_at_k(n, c, k) == 1 - pass_hat_k(n, n - c, k)


@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=12), st.data())
def test_0244_B_task_result_matches_the_formulas(
    flags: list[tuple[bool, bool]], data: st.DataObject
) -> None:
    outcomes = [
        TrialOutcome(score=1.0 if passed else 0.25, passed=passed and not gated, gated=gated)
        for passed, gated in flags
    ]
    k = data.draw(st.integers(1, len(outcomes)))
    result = task_result(outcomes, k, "all", 0.5)
    c = sum(outcome.passed for outcome in outcomes)
    assert result.passed_count == c
    assert result.pass_at_k == 1 - Fraction(
        math.comb(len(outcomes) - c, k), math.comb(len(outcomes), k)
    )
    assert result.gating_score <= exact_mean([outcome.score for outcome in outcomes])
    assert result.passed == (c == len(outcomes))


@given(
    outcomes=st.lists(
        st.tuples(
            st.one_of(st.sampled_from([0.0, 1.0, 0.5, 0.1, 0.7, 1 / 3]), st.floats(0, 1)),
            st.booleans(),
            st.booleans(),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_rfc0246_the_tallied_gating_mean_is_the_exact_mean_of_the_recorded_scores(
    outcomes: list[tuple[float, bool, bool]],
) -> None:
    # The tally counts gating scores of exactly 0 and 1 instead of parsing them to fractions;
    # the mean is still the exact mean of every recorded gating score.
    tally = OutcomeTally()
    trials = [TrialOutcome(score=s, passed=p, gated=g) for s, p, g in outcomes]
    for trial in trials:
        tally.add(trial)
    expected = exact_sum(t.gating_score for t in trials) / len(trials)
    assert tally.result(1, "mean", 0.5).gating_score == expected


def test_the_reported_mean_is_the_fsum_mean_and_zero_for_none() -> None:
    assert mean_or_zero([]) == 0.0
    assert mean_or_zero([0.25]) == 0.25
    assert mean_or_zero([0.1] * 10) == 0.1  # fsum: exactly 1.0 / 10 (a plain sum gives 0.0999…)


def test_a_tally_refuses_no_trials_and_an_unknown_pass_rule_by_name() -> None:
    with pytest.raises(ValueError, match=r"^outcomes must hold at least one trial$"):
        task_result([], 1, "all", 1.0)
    with pytest.raises(ValueError, match=r"^passRule must be all, any or mean, got 'most'$"):
        task_result([PASS], 1, "most", 1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^results must hold at least one task$"):
        trial_stats([], k=1)
