"""The RFC 0244 §F verdict: pairing count, inconclusive when indistinguishable, scoreDelta."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from tests.compare.helpers import RUN_ID, summary, task, trial_task
from tests.hypothesis_counts import examples
from wopeval.compare import compare_summaries, registered_methods
from wopeval.wire.summary import METHOD_PATTERN, EvalSummary, TaskSummary

METHODS = ("paired-bootstrap", "mcnemar", "sign-test", "paired-t")
WITH_EQUIVALENCE = ("paired-bootstrap", "paired-t")


def _clear_improvement() -> tuple[EvalSummary, EvalSummary]:
    """Twelve tasks, each failing in the baseline and passing in the candidate.

    Per-task gains vary (0.4 to 0.8), so the t-test has spread; all 12 signs are positive
    (sign test p = 2/4096) and all 12 tasks are discordant fail → pass (McNemar p = 2/4096).
    """
    base = [0.0, 0.1, 0.2, 0.3, 0.4, 0.0, 0.1, 0.2, 0.3, 0.4, 0.2, 0.1]
    gain = [0.6, 0.7, 0.8, 0.5, 0.4, 0.8, 0.6, 0.5, 0.6, 0.5, 0.7, 0.8]
    baseline = summary([task(f"t{i}", b, passed=False) for i, b in enumerate(base)])
    candidate = summary(
        [task(f"t{i}", b + g, passed=True) for i, (b, g) in enumerate(zip(base, gain, strict=True))]
    )
    return baseline, candidate


def test_0244_F_registered_methods_are_the_recommended_four() -> None:
    assert set(registered_methods()) == set(METHODS)
    assert len(registered_methods()) == 4
    for name in registered_methods():
        assert re.fullmatch(METHOD_PATTERN, name)


@pytest.mark.parametrize("method", METHODS)
def test_0244_F_clear_improvement_is_improved(method: str) -> None:
    baseline, candidate = _clear_improvement()
    comparison = compare_summaries(baseline, candidate, RUN_ID, method=method)
    block = comparison.regression
    assert block.verdict == "improved"
    assert (block.method, block.alpha, block.pairedTaskCount) == (method, 0.05, 12)
    assert comparison.result.p_value is not None
    assert comparison.result.p_value < 0.05
    assert block.scoreDelta > 0


@pytest.mark.parametrize("method", METHODS)
def test_0244_F_clear_regression_is_regressed(method: str) -> None:
    baseline, candidate = _clear_improvement()
    comparison = compare_summaries(candidate, baseline, RUN_ID, method=method)
    assert comparison.regression.verdict == "regressed"
    assert comparison.regression.scoreDelta < 0


@pytest.mark.parametrize("method", METHODS)
def test_0244_F_identical_runs_are_inconclusive(method: str) -> None:
    run = summary([task("a", 0.2), task("b", 0.9), trial_task("c", 5, 3), trial_task("d", 3, 3)])
    comparison = compare_summaries(run, run, RUN_ID, method=method)
    assert comparison.regression.verdict == "inconclusive"
    assert comparison.regression.scoreDelta == 0.0
    assert comparison.equivalent is None


@pytest.mark.parametrize("method", METHODS)
def test_0244_F_identical_runs_with_margin_unchanged_or_inconclusive(method: str) -> None:
    run = summary(
        [
            *(task("a", 0.2), task("b", 0.9), trial_task("c", 5, 3), trial_task("d", 3, 3)),
            *(task("e", 0.4), task("f", 0.7)),
        ]
    )
    comparison = compare_summaries(run, run, RUN_ID, method=method, equivalence_margin=0.05)
    if method in WITH_EQUIVALENCE:
        assert comparison.regression.verdict == "unchanged"
        assert comparison.equivalent is True
    else:  # sign-test and mcnemar have no equivalence check and never say unchanged
        assert comparison.regression.verdict == "inconclusive"
        assert comparison.equivalent is None


_SCORES = st.sampled_from([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])


@st.composite
def _runs(draw: st.DrawFn) -> EvalSummary:
    """A run of 0..10 tasks, each either single-trial or with a trials block."""
    tasks: list[TaskSummary] = []
    for i in range(draw(st.integers(0, 10))):
        if draw(st.booleans()):
            n = draw(st.integers(1, 6))
            tasks.append(trial_task(f"t{i}", n, draw(st.integers(0, n))))
        else:
            tasks.append(task(f"t{i}", draw(_SCORES), passed=draw(st.booleans())))
    return summary(tasks)


@settings(max_examples=examples(40), deadline=None)
@given(run=_runs(), method=st.sampled_from(METHODS), margin=st.none() | st.just(0.1))
def test_0244_F_identical_runs_never_improved_or_regressed(
    run: EvalSummary, method: str, margin: float | None
) -> None:
    comparison = compare_summaries(
        run, run, RUN_ID, method=method, equivalence_margin=margin, resamples=500
    )
    assert comparison.regression.verdict in {"inconclusive", "unchanged"}
    assert comparison.regression.pairedTaskCount == len(run.tasks)


@settings(max_examples=examples(40), deadline=None)
@given(baseline=_runs(), candidate=_runs(), method=st.sampled_from(METHODS))
def test_0244_F_directional_verdict_needs_p_below_alpha(
    baseline: EvalSummary, candidate: EvalSummary, method: str
) -> None:
    comparison = compare_summaries(baseline, candidate, RUN_ID, method=method, resamples=500)
    verdict, result = comparison.regression.verdict, comparison.result
    if verdict in {"improved", "regressed"}:
        assert result.p_value is not None
        assert result.p_value < 0.05
        assert (result.estimate > 0) == (verdict == "improved")
    else:
        assert verdict == "inconclusive"


@pytest.mark.parametrize("method", METHODS)
def test_0244_F_partial_overlap_pairs_only_shared_tasks(method: str) -> None:
    # Baseline has a..e, candidate has c..h: c, d, e are shared. The shared tasks are identical,
    # the unshared ones differ wildly, so the verdict (shared only) is inconclusive while
    # scoreDelta (whole runs, RFC 0081) is not zero.
    shared = [task("c", 0.4), task("d", 0.6), task("e", 0.8)]
    baseline = summary([task("a", 0.0), task("b", 0.0), *shared])
    candidate = summary([*shared, task("f", 1.0), task("g", 1.0), task("h", 1.0)])
    comparison = compare_summaries(baseline, candidate, RUN_ID, method=method)
    assert comparison.regression.pairedTaskCount == 3
    assert [p.task_id for p in comparison.pairs] == ["c", "d", "e"]
    assert comparison.regression.verdict == "inconclusive"
    assert comparison.regression.scoreDelta == pytest.approx(
        candidate.aggregateScore - baseline.aggregateScore
    )
    assert comparison.regression.scoreDelta > 0


@pytest.mark.parametrize("method", METHODS)
def test_0244_F_no_shared_tasks_is_inconclusive(method: str) -> None:
    comparison = compare_summaries(
        summary([task("a", 0.0)]), summary([task("b", 1.0)]), RUN_ID, method=method
    )
    assert comparison.regression.pairedTaskCount == 0
    assert comparison.regression.verdict == "inconclusive"


@pytest.mark.parametrize("method", METHODS)
def test_0244_F_noise_is_inconclusive(method: str) -> None:
    # Six tasks with gains and losses that cancel out: no method can tell the runs apart.
    baseline = summary([task(f"t{i}", s) for i, s in enumerate([0.2, 0.8, 0.4, 0.6, 0.4, 0.6])])
    candidate = summary([task(f"t{i}", s) for i, s in enumerate([0.6, 0.4, 0.2, 0.8, 0.6, 0.4])])
    comparison = compare_summaries(baseline, candidate, RUN_ID, method=method)
    assert comparison.regression.verdict == "inconclusive"
    assert comparison.result.p_value is not None
    assert comparison.result.p_value >= 0.05


def test_0244_F_score_delta_is_candidate_minus_baseline() -> None:
    # RFC 0081: scoreDelta = this run's aggregateScore − the baseline's; negative = regression.
    baseline = summary([task("a", 0.5)], aggregate=0.75)
    candidate = summary([task("a", 0.5)], aggregate=0.5)
    block = compare_summaries(baseline, candidate, RUN_ID).regression
    assert block.scoreDelta == -0.25
    assert block.baselineRunId == RUN_ID
    flipped = compare_summaries(candidate, baseline, RUN_ID).regression
    assert flipped.scoreDelta == 0.25


def test_0244_F_block_serializes_with_the_rfc_fields() -> None:
    baseline, candidate = _clear_improvement()
    wire = compare_summaries(baseline, candidate, RUN_ID, method="sign-test").regression
    assert wire.model_dump(mode="json", exclude_none=True) == {
        "baselineRunId": RUN_ID,
        "scoreDelta": pytest.approx(candidate.aggregateScore - baseline.aggregateScore),
        "verdict": "improved",
        "method": "sign-test",
        "alpha": 0.05,
        "pairedTaskCount": 12,
    }


def test_0244_F_bootstrap_verdict_is_reproducible_with_a_seed() -> None:
    base = [0.2, 0.4, 0.4, 0.6, 0.2, 0.8, 0.0, 0.6, 0.2, 0.4]
    cand = [0.4, 0.6, 0.4, 1.0, 0.4, 0.8, 0.2, 0.4, 0.6, 0.4]
    baseline = summary([task(f"t{i}", s) for i, s in enumerate(base)])
    candidate = summary([task(f"t{i}", s) for i, s in enumerate(cand)])
    first = compare_summaries(baseline, candidate, RUN_ID, seed=42)
    again = compare_summaries(baseline, candidate, RUN_ID, seed=42)
    other = compare_summaries(baseline, candidate, RUN_ID, seed=43)
    assert first == again
    assert (
        first.result.ci_low != other.result.ci_low or first.result.p_value != other.result.p_value
    )


@pytest.mark.parametrize("method", WITH_EQUIVALENCE)
def test_0244_F_small_shift_inside_margin_is_unchanged(method: str) -> None:
    # Every task gains 0.01 ± 0.002: the shift is real (improved without a margin) but lies
    # well inside ±0.05, so with that margin the verdict is unchanged.
    base = [0.30, 0.50, 0.70, 0.40, 0.60, 0.20, 0.80, 0.50, 0.35, 0.65]
    wiggle = [0.010, 0.012, 0.008, 0.011, 0.009, 0.010, 0.012, 0.008, 0.010, 0.010]
    baseline = summary([task(f"t{i}", b) for i, b in enumerate(base)])
    candidate = summary(
        [task(f"t{i}", b + w) for i, (b, w) in enumerate(zip(base, wiggle, strict=True))]
    )
    plain = compare_summaries(baseline, candidate, RUN_ID, method=method)
    assert plain.regression.verdict == "improved"
    within = compare_summaries(baseline, candidate, RUN_ID, method=method, equivalence_margin=0.05)
    assert within.regression.verdict == "unchanged"
    tight = compare_summaries(baseline, candidate, RUN_ID, method=method, equivalence_margin=0.005)
    assert tight.equivalent is False
    assert tight.regression.verdict == "improved"


@pytest.mark.parametrize("method", WITH_EQUIVALENCE)
def test_0244_F_noise_wider_than_margin_is_not_unchanged(method: str) -> None:
    baseline = summary([task(f"t{i}", s) for i, s in enumerate([0.2, 0.8, 0.4, 0.6, 0.4, 0.6])])
    candidate = summary([task(f"t{i}", s) for i, s in enumerate([0.6, 0.4, 0.2, 0.8, 0.6, 0.4])])
    comparison = compare_summaries(
        baseline, candidate, RUN_ID, method=method, equivalence_margin=0.05
    )
    assert comparison.equivalent is False
    assert comparison.regression.verdict == "inconclusive"


def test_unknown_method_names_itself_and_the_four() -> None:
    run = summary([task("a", 0.5)])
    with pytest.raises(ValueError, match="wilcoxon") as error:
        compare_summaries(run, run, RUN_ID, method="wilcoxon")
    for name in METHODS:
        assert name in str(error.value)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"alpha": 0.0}, "alpha"),
        ({"alpha": 1.0}, "alpha"),
        ({"equivalence_margin": 0.0}, "equivalence_margin"),
        ({"equivalence_margin": 0.1, "alpha": 0.5}, "alpha"),
        ({"resamples": 0}, "resamples"),
    ],
)
def test_bad_arguments_are_refused_by_name(kwargs: dict[str, float], field: str) -> None:
    run = summary([task("a", 0.5)])
    with pytest.raises(ValueError, match=field):
        compare_summaries(run, run, RUN_ID, **kwargs)  # type: ignore[arg-type]


def test_bad_baseline_run_id_fails_the_wire_pattern() -> None:
    run = summary([task("a", 0.5)])
    with pytest.raises(ValidationError, match="baselineRunId"):
        compare_summaries(run, run, "not a run id")
