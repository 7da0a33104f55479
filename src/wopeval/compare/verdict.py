"""The paired regression verdict (RFC 0244 §F) over two ``EvalSummary`` objects.

:func:`compare_summaries` pairs the runs (:mod:`wopeval.compare.pairing`), runs one named method
(:mod:`wopeval.compare.methods`) and fills the ``regression`` block: ``scoreDelta`` as RFC 0081
defines it, plus ``verdict``, ``method``, ``alpha`` and ``pairedTaskCount``. The verdict rules:

- ``unchanged`` only when an equivalence margin is given and the method's equivalence check
  passes (paired-t: TOST; paired-bootstrap: the (1 − 2α) interval inside ±margin). It is checked
  first, so a difference that is significant but inside the margin is ``unchanged``. sign-test
  and mcnemar have no equivalence check and never say ``unchanged``.
- ``inconclusive`` when the method cannot distinguish the runs at alpha: no pairs, an undefined
  test (``p_value is None``), ``p ≥ alpha``, or runs identical on every paired task; and always
  when the method cannot reach alpha on this many pairs (:class:`Reach`), which is also said.
- otherwise ``improved`` when the estimate is positive, ``regressed`` when it is negative.

A method the caller does not name is chosen from the data (:func:`choose_method`). Tasks whose
definitions changed between the runs are left out of the pairs (:func:`changed_tasks`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from wopeval.compare.methods import (
    DEFAULT_RESAMPLES,
    ZERO_TOLERANCE,
    MethodResult,
    bootstrap_floor,
    mcnemar,
    paired_bootstrap,
    paired_bootstrap_equivalence_interval,
    paired_t,
    paired_t_tost,
    sign_flip_floor,
    sign_test,
)
from wopeval.compare.pairing import Digests, PairedTask, changed_tasks, pair_tasks
from wopeval.wire.summary import EvalSummary, RegressionBlock, TaskSummary, Verdict


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

# The smallest p-value each method can report on n pairs, known before it runs.
_FLOORS: dict[str, Callable[[int, _Settings], float]] = {
    "paired-bootstrap": lambda n, s: bootstrap_floor(n, s.resamples),
    "mcnemar": lambda n, s: sign_flip_floor(n),
    "sign-test": lambda n, s: sign_flip_floor(n),
    "paired-t": lambda n, s: 0.0 if n >= 2 else 1.0,
}
_MOST_TASKS = 4096  # "needs ≥ N tasks" is searched up to here; alpha below 2^-4095 needs none


@dataclass(frozen=True)
class Reach:
    """What a method can decide on the pairs at hand, known before it computes anything.

    ``min_p_value`` is the smallest p-value ``method`` can report on ``paired`` tasks; the method
    can decide at ``alpha`` only when it is below alpha (a p equal to alpha is not significant).
    ``needs`` is the fewest paired tasks with which it could (``None``: no number of tasks is
    enough, e.g. too few bootstrap resamples); ``alternatives`` are the other methods that could
    decide on these pairs.
    """

    method: str
    alpha: float
    paired: int
    min_p_value: float
    needs: int | None
    alternatives: tuple[str, ...]

    @property
    def decidable(self) -> bool:
        return self.min_p_value < self.alpha

    @property
    def deciders(self) -> tuple[str, ...]:
        """Every method that can decide on these pairs at alpha: this one first when it can."""
        return ((self.method,) if self.decidable else ()) + self.alternatives

    @property
    def message(self) -> str | None:
        """Why the gate cannot decide, in words; ``None`` when it can."""
        if self.decidable:
            return None
        tasks = f"{self.paired} paired task{'s' * (self.paired != 1)}"
        text = (
            f"{self.method} cannot reach alpha {self.alpha:g} with {tasks} "
            f"(its smallest p is {self.min_p_value:.4g})"
        )
        needs = f"needs ≥ {self.needs} paired tasks" if self.needs is not None else None
        options = [
            part
            for part in (needs, " or ".join(f"method {m}" for m in self.alternatives) or None)
            if part is not None
        ]
        return f"{text}; {', or '.join(options)}" if options else text


def reach(method: str, paired: int, *, alpha: float, resamples: int = DEFAULT_RESAMPLES) -> Reach:
    """The :class:`Reach` of ``method`` on ``paired`` tasks at ``alpha``."""
    settings = _Settings(alpha=alpha, seed=0, resamples=resamples)
    floor = _FLOORS[method]
    needs = next((n for n in range(1, _MOST_TASKS) if floor(n, settings) < alpha), None)
    others = tuple(
        name
        for name, other in _FLOORS.items()
        if name != method and other(paired, settings) < alpha
    )
    return Reach(method, alpha, paired, floor(paired, settings), needs, others)


def _binary_single_trial(task: TaskSummary) -> bool:
    single = task.trials is None or task.trials.n == 1
    return single and task.score in (0.0, 1.0) and task.passed == (task.score == 1.0)


def choose_method(baseline: EvalSummary, candidate: EvalSummary) -> tuple[str, str]:
    """The method for these runs when the caller names none, and why, in words.

    One pass/fail outcome on both sides of every task in both runs (a single trial scored 0 or 1,
    passed exactly when scored 1) is a paired binary table: ``mcnemar``, the exact test made for
    it. Anything else (scores between 0 and 1, or several trials per task, whose mean is a
    proportion) is a paired difference of means: ``paired-bootstrap``, which assumes no
    distribution for it.
    """
    base_ids = {task.taskId for task in baseline.tasks}
    cand_ids = {task.taskId for task in candidate.tasks}
    both = [t for t in baseline.tasks if t.taskId in cand_ids]
    both += [t for t in candidate.tasks if t.taskId in base_ids]
    if both and all(_binary_single_trial(task) for task in both):
        return "mcnemar", "one pass/fail outcome per task"
    return "paired-bootstrap", "scores or several trials per task"


@dataclass(frozen=True)
class Comparison:
    """The outcome of one paired comparison.

    ``pairs`` is the paired table in the candidate's suite order; ``result`` is what the method
    read from it; ``regression`` is the wire block. ``equivalent`` is ``None`` when no
    equivalence check ran (no margin, or a method without one), else its outcome. ``reach`` says
    whether the method could decide at all; ``chosen`` why the method was picked when the caller
    named none (``None`` when named). ``changed`` names the tasks in both runs left out because
    their definitions differ; ``definitions_checked`` is false when a run stored no digests.
    """

    pairs: tuple[PairedTask, ...]
    result: MethodResult
    regression: RegressionBlock
    equivalent: bool | None
    reach: Reach | None = None
    chosen: str | None = None
    changed: tuple[str, ...] = ()
    definitions_checked: bool = False


def registered_methods() -> tuple[str, ...]:
    """The method names :func:`compare_summaries` accepts: RFC 0244 §F's RECOMMENDED four."""
    return tuple(_METHODS)


def _check_arguments(
    method: str | None, alpha: float, margin: float | None, resamples: int
) -> None:
    """Refuse the caller's mistakes with a message naming the argument."""
    if method is not None and method not in _METHODS:
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
    result: MethodResult,
    *,
    alpha: float,
    equivalent: bool | None,
    identical: bool,
    decidable: bool = True,
) -> Verdict:
    """Map a method result to the RFC 0244 §F verdict (rules in the module docstring)."""
    if not decidable:
        return "inconclusive"
    if equivalent:
        return "unchanged"
    if identical or result.n_used == 0 or result.p_value is None or result.p_value >= alpha:
        return "inconclusive"
    if result.estimate > 0.0:
        return "improved"
    if result.estimate < 0.0:
        return "regressed"
    return "inconclusive"


def run_method(
    method: str,
    pairs: Sequence[PairedTask],
    *,
    alpha: float,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
) -> MethodResult:
    """What ``method`` reads from a paired table, with the settings :func:`compare_summaries`
    gives it (the interval at 1 − alpha; the bootstrap's seed and B)."""
    _check_arguments(method, alpha, None, resamples)
    return _METHODS[method](pairs, _Settings(alpha=alpha, seed=seed, resamples=resamples))


def compare_summaries(
    baseline: EvalSummary,
    candidate: EvalSummary,
    baseline_run_id: str,
    *,
    method: str | None = None,
    alpha: float = 0.05,
    seed: int = 0,
    equivalence_margin: float | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    baseline_digests: Digests | None = None,
    candidate_digests: Digests | None = None,
) -> Comparison:
    """Compare a candidate run with its baseline and build the ``regression`` block (§F).

    ``scoreDelta`` is ``candidate.aggregateScore − baseline.aggregateScore`` (RFC 0081: negative
    means a regression), over the whole runs; the verdict reads only the paired tasks, and only
    those whose definition digests agree when both runs have digests. ``method=None`` chooses
    the method from the data (:func:`choose_method`). ``seed`` and ``resamples`` matter only to
    ``paired-bootstrap``. Raises :class:`ValueError` for an unknown method, an alpha outside
    (0, 1), a non-positive margin, or a summary listing a task twice.
    """
    _check_arguments(method, alpha, equivalence_margin, resamples)
    chosen: str | None = None
    if method is None:
        method, chosen = choose_method(baseline, candidate)
    settings = _Settings(alpha=alpha, seed=seed, resamples=resamples)
    changed = changed_tasks(baseline, candidate, baseline_digests, candidate_digests)
    pairs = tuple(pair_tasks(baseline, candidate, changed))
    can = reach(method, len(pairs), alpha=alpha, resamples=resamples)
    result = _METHODS[method](pairs, settings)
    equivalent = _equivalent(method, pairs, equivalence_margin, settings)
    verdict = decide(
        result,
        alpha=alpha,
        equivalent=equivalent,
        identical=identical_on_pairs(pairs),
        decidable=can.decidable,
    )
    regression = RegressionBlock(
        baselineRunId=baseline_run_id,
        scoreDelta=candidate.aggregateScore - baseline.aggregateScore,
        verdict=verdict,
        method=method,
        alpha=alpha,
        pairedTaskCount=len(pairs),
    )
    return Comparison(
        pairs=pairs,
        result=result,
        regression=regression,
        equivalent=equivalent,
        reach=can,
        chosen=chosen,
        changed=changed,
        definitions_checked=baseline_digests is not None and candidate_digests is not None,
    )
