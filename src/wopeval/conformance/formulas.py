"""The RFC 0244 §B formulas, as the kit computes them: exact rationals, floats only at the end.

* pass@k, the unbiased estimator of Chen et al. 2021: ``1 − C(n−c, k) / C(n, k)``;
* pass^k, τ-bench (Yao et al. 2024): ``C(c, k) / C(n, k)``;
* ``scoreStderr``, the clustered standard error (Miller 2024): the sample standard deviation of
  the per-task ``meanScore`` values over √(taskCount), omitted below two tasks.

A host agrees with a formula when ``|host − formula| ≤ 1e-9 · max(1, |formula|)`` (§B).
Independent of :mod:`wopeval.grading.stats` by design.

A pass decision against a threshold (``passRule: "mean"``, the suite's ``passScore``) is taken
exactly on the values as the wire writes them: each JSON number is the decimal it is spelled as
(a float's shortest round-tripping spelling, :func:`recorded`), so three scores of 0.7 meet
``passScore: 0.7``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

RELATIVE_TOLERANCE = 1e-9


def _check(n: int, c: int, k: int) -> None:
    if not (n >= 1 and 1 <= k <= n and 0 <= c <= n):
        raise ValueError(f"need n ≥ 1, 1 ≤ k ≤ n and 0 ≤ c ≤ n, got n={n}, c={c}, k={k}")


def pass_at_k(n: int, c: int, k: int) -> Fraction:
    """pass@k = 1 − C(n−c, k) / C(n, k) (0 when c = 0)."""
    _check(n, c, k)
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def pass_hat_k(n: int, c: int, k: int) -> Fraction:
    """pass^k = C(c, k) / C(n, k) (0 when c < k)."""
    _check(n, c, k)
    return Fraction(math.comb(c, k), math.comb(n, k))


def exact_mean(values: Sequence[float | Fraction]) -> Fraction:
    """The arithmetic mean, exact over the rationals (every float is a rational)."""
    if not values:
        raise ValueError("the mean of nothing is undefined")
    return sum((Fraction(value) for value in values), Fraction(0)) / len(values)


def recorded(value: float | Fraction) -> Fraction:
    """A wire number as the decimal it is written as (shortest round-trip spelling), exactly."""
    if isinstance(value, Fraction):
        return value
    if not math.isfinite(value):
        raise ValueError(f"not a finite number: {value!r}")
    return Fraction(repr(float(value)))


def meets(value: float | Fraction, threshold: float | Fraction) -> bool:
    """``value ≥ threshold``, both read exactly (:func:`recorded`); a tie meets it."""
    return recorded(value) >= recorded(threshold)


def clustered_stderr(task_means: Sequence[float | Fraction]) -> float | None:
    """Sample standard deviation (n − 1) of the per-task means over √(taskCount); None below 2.

    The variance is exact; one square root at the end: ``sqrt(var / count)``.
    """
    count = len(task_means)
    if count < 2:
        return None
    mean = exact_mean(task_means)
    variance = sum(((Fraction(x) - mean) ** 2 for x in task_means), Fraction(0)) / (count - 1)
    return math.sqrt(variance / count)


def agrees(host: object, formula: float | Fraction) -> bool:
    """§B tolerance: ``|host − formula| ≤ 1e-9 · max(1, |formula|)``; a non-number never agrees."""
    if isinstance(host, bool) or not isinstance(host, int | float):
        return False
    if not math.isfinite(host):
        return False
    expected = float(formula)
    return abs(host - expected) <= RELATIVE_TOLERANCE * max(1.0, abs(expected))
