"""The four RECOMMENDED regression methods of RFC 0244 §F, each a pure function of the paired table.

Every method reads only the list of :class:`~wopeval.compare.pairing.PairedTask` built by
:func:`~wopeval.compare.pairing.pair_tasks` and returns a :class:`MethodResult`. The sign of
``estimate`` is the direction: positive means the candidate did better than the baseline.
``p_value`` is two-sided; ``None`` means the test is undefined on this table (too few pairs, or
nothing to compare), which the verdict reads as "cannot distinguish".

numpy and scipy are imported inside the functions that need them, so importing this module (and
``wopeval run``, which lists the method names) stays cheap.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wopeval.compare.pairing import PairedTask

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float64]
    IntArray = npt.NDArray[np.int64]

ZERO_TOLERANCE = 1e-12
"""Two per-task means closer than this are equal (guards float noise in host-computed means)."""

DEFAULT_RESAMPLES = 10_000
"""Bootstrap resamples B used unless the caller asks for another number."""

_CHUNK_ELEMENTS = 1 << 20  # bootstrap index matrices are drawn in slices of about this size


@dataclass(frozen=True)
class MethodResult:
    """What one method concluded from the paired table.

    ``statistic_name`` names the quantity ``estimate`` measures; ``ci_low``/``ci_high`` bound it
    when the method yields an interval; ``n_used`` counts the pairs the test actually read.
    """

    statistic_name: str
    estimate: float
    p_value: float | None
    ci_low: float | None
    ci_high: float | None
    n_used: int


def differences(pairs: Sequence[PairedTask]) -> FloatArray:
    """Per-task mean differences, candidate minus baseline, in pairing order."""
    import numpy as np

    return np.array([pair.difference for pair in pairs], dtype=np.float64)


def _constant(diffs: FloatArray) -> bool:
    """True when every difference is the same number (the spread is zero up to float noise)."""
    import numpy as np

    return diffs.size > 0 and float(np.ptp(diffs)) <= ZERO_TOLERANCE


def paired_t_p_values(candidate: FloatArray, baseline: FloatArray) -> FloatArray:
    """The two-sided p-value of :func:`paired_t` for every table at once: the last axis holds a
    table's tasks, any axes before it index tables (the planner's simulated runs).

    ``scipy.stats.ttest_rel`` along the last axis, with :func:`paired_t`'s limits: NaN (undefined)
    with fewer than two tasks or when every difference is zero; 0.0 when every difference is the
    same non-zero number (t = ±∞). Such tables are handed to scipy as a stand-in table with a
    spread (and their answer replaced), so it never divides by a zero spread.
    """
    import numpy as np
    from scipy import stats

    diffs = candidate - baseline
    if diffs.shape[-1] < 2:
        return np.full(diffs.shape[:-1], np.nan)
    constant = np.ptp(diffs, axis=-1) <= ZERO_TOLERANCE
    if not constant.any():
        return np.asarray(stats.ttest_rel(candidate, baseline, axis=-1).pvalue, dtype=np.float64)
    stand_in = np.zeros(diffs.shape[-1])
    stand_in[0] = 1.0
    spread = np.where(constant[..., None], stand_in, candidate)
    p_values = np.asarray(stats.ttest_rel(spread, np.where(constant[..., None], 0.0, baseline),
                                          axis=-1).pvalue, dtype=np.float64)  # fmt: skip
    zero = np.abs(diffs.mean(axis=-1)) <= ZERO_TOLERANCE
    return np.where(constant, np.where(zero, np.nan, 0.0), p_values)


def paired_t(pairs: Sequence[PairedTask], *, confidence: float = 0.95) -> MethodResult:
    """Paired t-test on per-task mean scores (Student 1908; ``scipy.stats.ttest_rel``).

    Reads the per-task mean difference d = candidate − baseline over all n pairs. ``estimate`` is
    mean(d); the test is t = mean(d) / (sd(d)/√n) on n − 1 degrees of freedom, two-sided
    (:func:`paired_t_p_values`); the interval is the Student-t interval for mean(d) at
    ``confidence``.

    Undefined (``p_value=None``) with fewer than two pairs, or when every difference is zero.
    When every difference is the same non-zero number, sd(d) = 0 and t = ±∞: the limit is taken,
    as scipy does, so ``p_value=0.0`` and the interval is that single number.
    """
    import numpy as np

    diffs = differences(pairs)
    name = "mean-task-score-difference"
    estimate = float(diffs.mean()) if diffs.size else 0.0
    if diffs.size < 2:
        return MethodResult(name, estimate, None, None, None, int(diffs.size))
    if _constant(diffs):
        p_value = None if abs(estimate) <= ZERO_TOLERANCE else 0.0
        return MethodResult(name, estimate, p_value, estimate, estimate, int(diffs.size))
    from scipy import stats

    candidate = np.array([pair.candidate_mean for pair in pairs], dtype=np.float64)
    baseline = np.array([pair.baseline_mean for pair in pairs], dtype=np.float64)
    p_value = float(paired_t_p_values(candidate, baseline))
    interval = stats.ttest_rel(candidate, baseline).confidence_interval(confidence_level=confidence)
    return MethodResult(
        name, estimate, p_value, float(interval.low), float(interval.high), int(diffs.size)
    )


def paired_t_tost(pairs: Sequence[PairedTask], margin: float) -> float | None:
    """Two one-sided paired t-tests for equivalence within ±``margin`` (Schuirmann 1987).

    H0⁻: mean(d) ≤ −margin and H0⁺: mean(d) ≥ +margin are tested one-sided with
    ``scipy.stats.ttest_1samp``; the TOST p-value is the larger of the two. The runs are
    equivalent at alpha when it is below alpha. ``None`` with fewer than two pairs. With zero
    spread the t limits are taken: 0.0 when |mean(d)| < margin, else 1.0.
    """
    diffs = differences(pairs)
    if diffs.size < 2:
        return None
    if _constant(diffs):
        return 0.0 if abs(float(diffs.mean())) < margin else 1.0
    from scipy import stats

    above_lower = stats.ttest_1samp(diffs, -margin, alternative="greater")
    below_upper = stats.ttest_1samp(diffs, margin, alternative="less")
    return float(max(above_lower.pvalue, below_upper.pvalue))


def sign_test(pairs: Sequence[PairedTask], *, confidence: float = 0.95) -> MethodResult:
    """Sign test on per-task mean differences (Dixon & Mood 1946; ``scipy.stats.binomtest``).

    Reads only the signs of the non-zero differences (zeros are dropped, ``n_used`` counts the
    rest). With ``pos`` positive among ``n_used``, the test is the exact two-sided binomial test
    of ``pos`` against p = 0.5. ``estimate`` is the net sign fraction (pos − neg) / n_used in
    [−1, 1]; the interval is the Clopper–Pearson interval for pos / n_used mapped onto that
    scale (2·p − 1). Undefined when no difference is non-zero.
    """
    import numpy as np

    diffs = differences(pairs)
    nonzero = diffs[np.abs(diffs) > ZERO_TOLERANCE]
    n_used = int(nonzero.size)
    name = "net-sign-fraction"
    if n_used == 0:
        return MethodResult(name, 0.0, None, None, None, 0)
    from scipy import stats

    positive = int(np.count_nonzero(nonzero > 0))
    result = stats.binomtest(positive, n_used, 0.5, alternative="two-sided")
    interval = result.proportion_ci(confidence_level=confidence, method="exact")
    return MethodResult(
        name,
        (2 * positive - n_used) / n_used,
        float(result.pvalue),
        2.0 * float(interval.low) - 1.0,
        2.0 * float(interval.high) - 1.0,
        n_used,
    )


def mcnemar(pairs: Sequence[PairedTask]) -> MethodResult:
    """Exact McNemar test on the task pass decisions (McNemar 1947, exact conditional form).

    Reads only ``passed``. Of the discordant tasks, ``b`` passed in the baseline and failed in the
    candidate, ``c`` failed in the baseline and passed in the candidate. Under H0 each discordant
    task is equally likely to go either way, so the test is ``scipy.stats.binomtest(c, b + c,
    0.5)``, two-sided; ``n_used`` = b + c. ``estimate`` is the paired pass-rate difference
    (c − b) / n over all n pairs. No interval is reported. Undefined when no task is discordant.
    """
    b = sum(1 for pair in pairs if pair.baseline_passed and not pair.candidate_passed)
    c = sum(1 for pair in pairs if pair.candidate_passed and not pair.baseline_passed)
    estimate = (c - b) / len(pairs) if pairs else 0.0
    name = "pass-rate-difference"
    if b + c == 0:
        return MethodResult(name, estimate, None, None, None, 0)
    from scipy import stats

    result = stats.binomtest(c, b + c, 0.5, alternative="two-sided")
    return MethodResult(name, estimate, float(result.pvalue), None, None, b + c)


def _bootstrap_indices(n: int, *, seed: int, resamples: int) -> Iterator[IntArray]:
    """The resamples' task indices, in slices of about ``_CHUNK_ELEMENTS``: each row draws n
    indices from ``np.random.default_rng(seed)``."""
    import numpy as np

    rng = np.random.default_rng(seed)
    rows = max(1, _CHUNK_ELEMENTS // max(n, 1))
    for start in range(0, resamples, rows):
        yield rng.integers(0, n, size=(min(rows, resamples - start), n))


def bootstrap_resamples(
    diffs: FloatArray, *, seed: int, resamples: int
) -> tuple[FloatArray, FloatArray]:
    """Resample the paired tasks with replacement ``resamples`` times.

    Each resample draws n task indices from ``np.random.default_rng(seed)`` (a task's baseline
    and candidate stay together, so resampling tasks is resampling their differences) and returns
    its mean and its sample standard deviation (ddof = 1; 0.0 when n = 1). The same seed, inputs
    and B always give the same arrays.
    """
    import numpy as np

    n = int(diffs.size)
    means: list[FloatArray] = []
    sds: list[FloatArray] = []
    for indices in _bootstrap_indices(n, seed=seed, resamples=resamples):
        sample = diffs[indices]
        means.append(sample.mean(axis=1))
        sds.append(sample.std(axis=1, ddof=1) if n > 1 else np.zeros(sample.shape[0]))
    return np.concatenate(means), np.concatenate(sds)


def bootstrap_counts(n: int, *, seed: int, resamples: int) -> FloatArray:
    """How often each of n tasks is drawn in each of the ``resamples`` resamples
    :func:`bootstrap_resamples` draws with ``seed`` (a B × n matrix of whole numbers): the same
    resamples for every table of n tasks, so many tables' resample sums are one matrix product."""
    import numpy as np

    chunks = []
    for indices in _bootstrap_indices(n, seed=seed, resamples=resamples):
        offsets = indices + n * np.arange(indices.shape[0])[:, None]
        drawn = np.bincount(offsets.ravel(), minlength=indices.size)
        chunks.append(drawn.reshape(indices.shape).astype(np.float64))
    return np.concatenate(chunks)


def sign_flip_floor(n: int) -> float:
    """The smallest two-sided p-value an exact test on ``n`` paired tasks can give: 2 / 2^n.

    Under "no change" each task's difference is as likely to point either way, so the most
    extreme table (every task the same way) has probability 2·(1/2)^n, two-sided. This is the
    exact sign test's and McNemar's floor (``n`` discordant tasks at best) and, in wopeval, the
    paired bootstrap's too: a resampling of n tasks is not let claim more than an exact test on
    the same n tasks could. 1.0 when there is no task.
    """
    return 1.0 if n < 1 else min(1.0, 2.0 ** (1 - n))


def bootstrap_floor(n: int, resamples: int) -> float:
    """The smallest p-value :func:`paired_bootstrap` reports on ``n`` paired tasks.

    The larger of the exact floor :func:`sign_flip_floor` and the Monte Carlo's own resolution
    1 / (B + 1); 1.0 with fewer than two tasks (the test is undefined).
    """
    return 1.0 if n < 2 else max(sign_flip_floor(n), 1.0 / (resamples + 1))


def _studentized_p(diffs: FloatArray, means: FloatArray, sds: FloatArray) -> FloatArray:
    """Symmetric bootstrap-t p-value for H0: mean(d) = 0 (Hall & Wilson 1991), for every table
    along the leading axes (the last axis of ``diffs`` holds its tasks, of ``means`` and ``sds``
    its resamples).

    With t = mean(d)/se and t*_b = (mean*_b − mean(d))/se*_b (the resamples centred on the
    observed mean, i.e. drawn under H0), p = (1 + #{|t*_b| ≥ |t|}) / (1 + B') (Davison & Hinkley
    1997, §4.2), where B' counts the resamples whose t*_b is defined. A resample with zero spread
    (se*_b = 0: it drew one task, or only tasks with equal differences) has no t*_b; it is no
    evidence either way, so it is left out of both counts rather than counted as extreme.
    """
    import numpy as np

    se = diffs.std(axis=-1, ddof=1)[..., None]
    mean = diffs.mean(axis=-1)[..., None]
    defined = sds > ZERO_TOLERANCE
    observed = np.abs(mean) * sds
    deviation = np.abs(means - mean) * se
    extreme = np.count_nonzero(defined & (deviation >= observed * (1.0 - 1e-9)), axis=-1)
    return np.asarray((1 + extreme) / (1 + np.count_nonzero(defined, axis=-1)), dtype=np.float64)


def _centred_p(diffs: FloatArray, means: FloatArray) -> FloatArray:
    """Centred bootstrap p-value for H0: mean(d) = 0 (Efron & Tibshirani 1993, §16.4), for every
    table along the leading axes as in :func:`_studentized_p`.

    The resample means shifted by the observed mean are drawn under H0; p = (1 + #{|mean*_b −
    mean(d)| ≥ |mean(d)|}) / (B + 1). It reads no resample's spread.
    """
    import numpy as np

    mean = diffs.mean(axis=-1)[..., None]
    extreme = np.count_nonzero(np.abs(means - mean) >= np.abs(mean) * (1.0 - 1e-9), axis=-1)
    return np.asarray((1 + extreme) / (means.shape[-1] + 1), dtype=np.float64)


def bootstrap_p_values(diffs: FloatArray, means: FloatArray, sds: FloatArray) -> FloatArray:
    """The two-sided p-value of :func:`paired_bootstrap` for every table along the leading axes
    (the last axis of ``diffs`` holds a table's tasks, of ``means`` and ``sds`` its resamples'
    means and spreads): the larger of :func:`bootstrap_floor`, :func:`_studentized_p` and
    :func:`_centred_p`; with one difference on every task, NaN (undefined) when it is zero, else
    the floor. Needs at least two tasks."""
    import numpy as np

    floor = bootstrap_floor(diffs.shape[-1], means.shape[-1])
    constant = np.ptp(diffs, axis=-1) <= ZERO_TOLERANCE
    zero = np.abs(diffs.mean(axis=-1)) <= ZERO_TOLERANCE
    tested = np.maximum(_studentized_p(diffs, means, sds), _centred_p(diffs, means))
    return np.where(constant, np.where(zero, np.nan, floor), np.maximum(floor, tested))


def paired_bootstrap(
    pairs: Sequence[PairedTask],
    *,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
) -> MethodResult:
    """Paired bootstrap over tasks (Efron & Tibshirani 1993, ch. 13 and §16.4).

    Reads the per-task mean differences d. Tasks are resampled with replacement B = ``resamples``
    times from ``np.random.default_rng(seed)`` (:func:`bootstrap_resamples`). ``estimate`` is
    mean(d); the interval is the percentile interval of the B resample means at ``confidence``
    (``numpy.quantile``, linear interpolation).

    The two-sided p-value is the larger of the symmetric bootstrap-t p-value
    (:func:`_studentized_p`) and the centred bootstrap p-value (:func:`_centred_p`), from the same
    resamples: the verdict needs both tests to reject. Either alone rejects a true null more often
    than alpha somewhere: the centred (like the percentile-interval inversion) with 10 tasks of
    five trials, the studentized with 10 single-trial pass/fail tasks, where most resamples have
    a tiny spread (``bench/compare_sim.py``). It is never below
    :func:`bootstrap_floor` (with n ≤ 5 tasks that floor is above 0.05: the bootstrap cannot
    decide there). Undefined with fewer than two
    pairs or when every difference is zero; with one non-zero constant difference on every task
    (no resample has a spread) it is the floor, the most extreme p it can report.
    """
    import numpy as np

    diffs = differences(pairs)
    name = "mean-task-score-difference"
    estimate = float(diffs.mean()) if diffs.size else 0.0
    if diffs.size < 2:
        return MethodResult(name, estimate, None, None, None, int(diffs.size))
    means, sds = bootstrap_resamples(diffs, seed=seed, resamples=resamples)
    low, high = np.quantile(means, [(1.0 - confidence) / 2.0, (1.0 + confidence) / 2.0])
    p = float(bootstrap_p_values(diffs, means, sds))
    p_value = None if math.isnan(p) else p
    return MethodResult(name, estimate, p_value, float(low), float(high), int(diffs.size))


def paired_bootstrap_equivalence_interval(
    pairs: Sequence[PairedTask], *, alpha: float, seed: int = 0, resamples: int = DEFAULT_RESAMPLES
) -> tuple[float, float] | None:
    """The (1 − 2·alpha) percentile interval of the bootstrap mean difference, for equivalence.

    The interval-inclusion form of TOST (Schuirmann 1987): the runs are equivalent within
    ±margin when this interval lies strictly inside (−margin, +margin). Uses the same resamples
    as :func:`paired_bootstrap` with the same seed. ``None`` with fewer than two pairs.
    """
    import numpy as np

    diffs = differences(pairs)
    if diffs.size < 2:
        return None
    means, _ = bootstrap_resamples(diffs, seed=seed, resamples=resamples)
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(low), float(high)
