"""The paired regression verdict (RFC 0244 §F) over two ``EvalSummary`` objects.

:func:`compare_summaries` pairs the runs (:mod:`wopeval.compare.pairing`), runs one named method
(:mod:`wopeval.compare.methods`) and fills the ``regression`` block: ``scoreDelta`` as RFC 0081
defines it, plus ``verdict``, ``method``, ``alpha`` and ``pairedTaskCount``. The verdict rules:

- ``unchanged`` only when an equivalence margin is given and the method's equivalence check
  passes (paired-t: TOST; paired-bootstrap: the (1 − 2α) interval inside ±margin). It is checked
  first, so a difference that is significant but inside the margin is ``unchanged``. sign-test
  and mcnemar have no equivalence check and never say ``unchanged``.
- ``inconclusive`` when the method cannot distinguish the runs at alpha: no pairs, an undefined
  test (``p_value is None``), ``p ≥ alpha``, or runs identical on every paired task.
- otherwise ``improved`` when the estimate is positive, ``regressed`` when it is negative.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from wopeval.compare.methods import (
    DEFAULT_RESAMPLES,
    ZERO_TOLERANCE,
    MethodResult,
    mcnemar,
    paired_bootstrap,
    paired_bootstrap_equivalence_interval,
    paired_t,
    paired_t_tost,
    sign_test,
)
from wopeval.compare.pairing import PairedTask, pair_tasks
from wopeval.wire.summary import EvalSummary, RegressionBlock, Verdict


@dataclass(frozen=True)
class _Settings:
    alpha: float
    seed: int
    resamples: int


_Method = Callable[[Sequence[PairedTask], _Settings], MethodResult]

_METHODS: dict[str, _Method] = {
    "paired-bootstrap": lambda pairs, s: paired_bootstrap(
        pairs, seed=s.seed, resamples=s.resamples, confidence=1.0 - s.alpha
    ),
    "mcnemar": lambda pairs, s: mcnemar(pairs),
    "sign-test": lambda pairs, s: sign_test(pairs, confidence=1.0 - s.alpha),
    "paired-t": lambda pairs, s: paired_t(pairs, confidence=1.0 - s.alpha),
}


@dataclass(frozen=True)
class Comparison:
    """The outcome of one paired comparison.

    ``pairs`` is the paired table in the candidate's suite order; ``result`` is what the method
    read from it; ``regression`` is the wire block. ``equivalent`` is ``None`` when no
    equivalence check ran (no margin, or a method without one), else its outcome.
    """

    pairs: tuple[PairedTask, ...]
    result: MethodResult
    regression: RegressionBlock
    equivalent: bool | None


def registered_methods() -> tuple[str, ...]:
    """The method names :func:`compare_summaries` accepts: RFC 0244 §F's RECOMMENDED four."""
    return tuple(_METHODS)


def _check_arguments(method: str, alpha: float, margin: float | None, resamples: int) -> None:
    """Refuse the caller's mistakes with a message naming the argument."""
    if method not in _METHODS:
        known = ", ".join(registered_methods())
        raise ValueError(f"unknown regression method {method!r}; registered methods: {known}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    if margin is not None and not margin > 0.0:
        raise ValueError(f"equivalence_margin must be positive, got {margin!r}")
    if margin is not None and alpha >= 0.5:
        raise ValueError(f"an equivalence check needs alpha < 0.5, got {alpha!r}")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples!r}")


def _equivalent(
    method: str, pairs: Sequence[PairedTask], margin: float | None, settings: _Settings
) -> bool | None:
    """The method's equivalence check within ±margin at alpha, or ``None`` if it has none."""
    if margin is None:
        return None
    if method == "paired-t":
        p_value = paired_t_tost(pairs, margin)
        return p_value is not None and p_value < settings.alpha
    if method == "paired-bootstrap":
        interval = paired_bootstrap_equivalence_interval(
            pairs, alpha=settings.alpha, seed=settings.seed, resamples=settings.resamples
        )
        return interval is not None and -margin < interval[0] and interval[1] < margin
    return None


def identical_on_pairs(pairs: Sequence[PairedTask]) -> bool:
    """True when every paired task has the same mean score and the same pass decision."""
    return all(
        abs(pair.difference) <= ZERO_TOLERANCE and pair.baseline_passed == pair.candidate_passed
        for pair in pairs
    )


def decide(
    result: MethodResult, *, alpha: float, equivalent: bool | None, identical: bool
) -> Verdict:
    """Map a method result to the RFC 0244 §F verdict (rules in the module docstring)."""
    if equivalent:
        return "unchanged"
    if identical or result.n_used == 0 or result.p_value is None or result.p_value >= alpha:
        return "inconclusive"
    if result.estimate > 0.0:
        return "improved"
    if result.estimate < 0.0:
        return "regressed"
    return "inconclusive"


def compare_summaries(
    baseline: EvalSummary,
    candidate: EvalSummary,
    baseline_run_id: str,
    *,
    method: str = "paired-bootstrap",
    alpha: float = 0.05,
    seed: int = 0,
    equivalence_margin: float | None = None,
    resamples: int = DEFAULT_RESAMPLES,
) -> Comparison:
    """Compare a candidate run with its baseline and build the ``regression`` block (§F).

    ``scoreDelta`` is ``candidate.aggregateScore − baseline.aggregateScore`` (RFC 0081: negative
    means a regression), over the whole runs; the verdict reads only the paired tasks.
    ``seed`` and ``resamples`` matter only to ``paired-bootstrap``. Raises :class:`ValueError` for
    an unknown method, an alpha outside (0, 1), a non-positive margin, or a summary listing a
    task twice.
    """
    _check_arguments(method, alpha, equivalence_margin, resamples)
    settings = _Settings(alpha=alpha, seed=seed, resamples=resamples)
    pairs = tuple(pair_tasks(baseline, candidate))
    result = _METHODS[method](pairs, settings)
    equivalent = _equivalent(method, pairs, equivalence_margin, settings)
    verdict = decide(
        result, alpha=alpha, equivalent=equivalent, identical=identical_on_pairs(pairs)
    )
    regression = RegressionBlock(
        baselineRunId=baseline_run_id,
        scoreDelta=candidate.aggregateScore - baseline.aggregateScore,
        verdict=verdict,
        method=method,
        alpha=alpha,
        pairedTaskCount=len(pairs),
    )
    return Comparison(pairs=pairs, result=result, regression=regression, equivalent=equivalent)
