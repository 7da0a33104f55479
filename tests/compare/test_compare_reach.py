"""What a compare gate can decide: each method's smallest reachable p, the method chosen from the
data, and tasks whose definitions changed between the runs (RFC 0244 §F)."""

from __future__ import annotations

import math

import pytest

from tests.compare.helpers import RUN_ID, pairs, summary, task, trial_task
from wopeval.compare import compare_summaries
from wopeval.compare.methods import paired_t, paired_t_tost
from wopeval.compare.verdict import choose_method, reach

METHODS = ("paired-bootstrap", "mcnemar", "sign-test", "paired-t")


@pytest.mark.parametrize(
    ("method", "paired", "alpha", "decidable"),
    [
        ("sign-test", 3, 0.25, False),  # smallest p 2 / 2^3 = 0.25, equal to alpha: not below
        ("sign-test", 3, math.nextafter(0.25, 1.0), True),
        ("mcnemar", 5, 0.05, False),  # 0.0625
        ("mcnemar", 6, 0.05, True),  # 0.03125
        ("paired-bootstrap", 5, 0.05, False),
        ("paired-bootstrap", 6, 0.05, True),
        ("paired-bootstrap", 1, 0.9, False),  # undefined with one task
        ("paired-t", 1, 0.9, False),
        ("paired-t", 2, 0.05, True),  # the t limit reaches any p with two tasks
        ("paired-t", 0, 0.05, False),
    ],
)
def test_0244_F_min_reachable_p_boundary_table(
    method: str, paired: int, alpha: float, decidable: bool
) -> None:
    can = reach(method, paired, alpha=alpha)
    assert can.decidable is decidable
    assert (can.message is None) is decidable


def test_0244_F_reach_says_what_would_decide() -> None:
    can = reach("paired-bootstrap", 3, alpha=0.05)
    assert can.min_p_value == 0.25
    assert can.needs == 6
    assert can.alternatives == ("paired-t",)
    assert can.message == (
        "paired-bootstrap cannot reach alpha 0.05 with 3 paired tasks (its smallest p is 0.25); "
        "needs ≥ 6 paired tasks, or method paired-t"
    )
    assert reach("sign-test", 3, alpha=0.01).needs == 8  # 2 / 2^8 ≈ 0.0078 < 0.01 ≤ 2 / 2^7
    # 1 / (19 + 1) = 0.05: no number of tasks lets 19 resamples reach alpha 0.05
    few = reach("paired-bootstrap", 50, alpha=0.05, resamples=19)
    assert few.needs is None
    assert few.message is not None
    assert "needs" not in few.message


@pytest.mark.parametrize("method", [None, *METHODS])
def test_0244_F_every_failing_candidate_regresses_or_cannot_decide(method: str | None) -> None:
    baseline = summary([trial_task("a", 5, 5), trial_task("b", 5, 4), trial_task("c", 5, 5)])
    candidate = summary([trial_task(t, 5, 0) for t in "abc"])
    comparison = compare_summaries(baseline, candidate, RUN_ID, method=method)
    assert comparison.reach is not None
    if comparison.reach.decidable:
        assert comparison.regression.verdict == "regressed"
    else:
        assert comparison.regression.verdict == "inconclusive"
        assert comparison.reach.message is not None
    # the default on this table is the bootstrap, which cannot decide on 3 tasks
    if method is None:
        assert comparison.regression.method == "paired-bootstrap"
        assert not comparison.reach.decidable


def test_0244_F_undecidable_method_is_never_unchanged() -> None:
    # identical three-task runs: the bootstrap's (1 − 2α) interval is inside any margin, but
    # three tasks cannot decide anything, so the verdict stays inconclusive
    run = summary([task("a", 0.2), task("b", 0.9), task("c", 0.4)])
    comparison = compare_summaries(
        run, run, RUN_ID, method="paired-bootstrap", equivalence_margin=0.1
    )
    assert comparison.equivalent is True
    assert comparison.regression.verdict == "inconclusive"


def test_0244_F_p_exactly_at_alpha_is_inconclusive() -> None:
    base = [0.6, 0.8, 0.9, 0.7, 1.0, 0.5]
    cand = [0.4, 0.7, 0.5, 0.6, 0.6, 0.5]
    p_value = paired_t(pairs(base, cand)).p_value
    assert p_value is not None
    assert 0.0 < p_value < 0.5
    baseline = summary([task(f"t{i}", s) for i, s in enumerate(base)])
    candidate = summary([task(f"t{i}", s) for i, s in enumerate(cand)])

    def verdict(alpha: float) -> str | None:
        block = compare_summaries(baseline, candidate, RUN_ID, method="paired-t", alpha=alpha)
        return block.regression.verdict

    assert verdict(p_value) == "inconclusive"
    assert verdict(math.nextafter(p_value, 1.0)) == "regressed"


def test_0244_F_equivalence_exactly_at_alpha_is_not_unchanged() -> None:
    base = [0.6, 0.8, 0.9, 0.7, 1.0, 0.5]
    cand = [0.62, 0.79, 0.93, 0.69, 0.98, 0.52]
    margin = 0.05
    tost = paired_t_tost(pairs(base, cand), margin)
    assert tost is not None
    assert 0.0 < tost < 0.5
    baseline = summary([task(f"t{i}", s) for i, s in enumerate(base)])
    candidate = summary([task(f"t{i}", s) for i, s in enumerate(cand)])

    def verdict(alpha: float) -> str | None:
        return compare_summaries(
            baseline, candidate, RUN_ID, method="paired-t", alpha=alpha, equivalence_margin=margin
        ).regression.verdict

    assert verdict(tost) != "unchanged"
    assert verdict(math.nextafter(tost, 1.0)) == "unchanged"


@pytest.mark.parametrize(
    ("margin", "verdict"), [(0.25, "improved"), (math.nextafter(0.25, 1.0), "unchanged")]
)
def test_0244_F_bootstrap_interval_edge_at_margin_is_not_unchanged(
    margin: float, verdict: str
) -> None:
    # every one of 8 tasks gains exactly 0.25: the (1 − 2α) interval is [0.25, 0.25]; it lies
    # inside (−margin, +margin) only when margin > 0.25
    baseline = summary([task(f"t{i}", 0.5) for i in range(8)])
    candidate = summary([task(f"t{i}", 0.75) for i in range(8)])
    comparison = compare_summaries(
        baseline, candidate, RUN_ID, method="paired-bootstrap", equivalence_margin=margin
    )
    assert comparison.regression.verdict == verdict


def test_default_method_is_chosen_from_the_data_and_said() -> None:
    binary = summary([task(f"t{i}", float(i % 2)) for i in range(8)])
    assert choose_method(binary, binary) == ("mcnemar", "one pass/fail outcome per task")
    scores = summary([task(f"t{i}", 0.3) for i in range(8)])
    assert choose_method(scores, binary)[0] == "paired-bootstrap"
    trials = summary([trial_task(f"t{i}", 5, 5) for i in range(8)])
    assert choose_method(trials, trials)[0] == "paired-bootstrap"
    # a task in one run only does not choose: the pairs are all pass/fail
    extra = summary([*binary.tasks, task("only-here", 0.3)])
    assert choose_method(extra, binary)[0] == "mcnemar"
    assert choose_method(binary, extra)[0] == "mcnemar"
    chosen = compare_summaries(binary, binary, RUN_ID)
    assert chosen.regression.method == "mcnemar"
    assert chosen.chosen == "one pass/fail outcome per task"
    named = compare_summaries(binary, binary, RUN_ID, method="sign-test")
    assert (named.regression.method, named.chosen) == ("sign-test", None)


def test_0244_F_changed_task_is_left_out_and_named() -> None:
    baseline = summary([task(f"t{i}", 1.0) for i in range(8)])
    candidate = summary([task(f"t{i}", 0.0 if i == 3 else 1.0) for i in range(8)])
    digests = {f"t{i}": f"d{i}" for i in range(8)}
    edited = {**digests, "t3": "other"}
    comparison = compare_summaries(
        baseline,
        candidate,
        RUN_ID,
        method="sign-test",
        baseline_digests=digests,
        candidate_digests=edited,
    )
    assert comparison.changed == ("t3",)
    assert comparison.definitions_checked
    assert comparison.regression.pairedTaskCount == 7
    assert "t3" not in {pair.task_id for pair in comparison.pairs}
    unchecked = compare_summaries(baseline, candidate, RUN_ID, method="sign-test")
    assert (unchecked.changed, unchecked.definitions_checked) == ((), False)
    assert unchecked.regression.pairedTaskCount == 8


def test_0244_F_task_missing_from_a_runs_digests_counts_as_changed() -> None:
    run = summary([task("a", 1.0), task("b", 1.0)])
    comparison = compare_summaries(
        run, run, RUN_ID, baseline_digests={"a": "x", "b": "y"}, candidate_digests={"a": "x"}
    )
    assert comparison.changed == ("b",)
    assert comparison.regression.pairedTaskCount == 1
