"""``x-wopeval-adaptive`` (wopeval's own): stop adding trials once a sequential test decides.

A suite (for every task) or one task (overriding the suite's) may carry::

    "x-wopeval-adaptive": {"rule": "sprt", "alpha": 0.05, "beta": 0.05,
                           "threshold": 0.8, "indifference": 0.1, "minTrials": 3}

The task then runs at most ``trials.count`` trials (RFC 0244 §B's count becomes the maximum) and
stops as soon as the rule decides whether its per-trial pass rate is above or below
``threshold``: ``rule: "sprt"`` is Wald's sequential probability ratio test of ``p0 = threshold −
indifference`` against ``p1 = threshold + indifference`` (:mod:`wopeval.grading.adaptive`).

- ``alpha`` (0 < α < 1): the chance of deciding "above" when the rate is ``p0`` or less;
- ``beta`` (absent ⇒ ``alpha``): the chance of deciding "below" when the rate is ``p1`` or more;
- ``threshold`` (absent ⇒ ``thresholds.passScore``, itself absent ⇒ 1);
- ``indifference`` (absent ⇒ 0.1): rates strictly between ``p0`` and ``p1`` carry no guarantee;
  ``0 < p0 < p1 < 1`` is required;
- ``minTrials`` (absent ⇒ ``trials.k``): no decision before this many trials, so pass@k and
  pass^k always have ``n ≥ k``; it must be below ``trials.count``, or nothing could stop early.

A task with live tools never runs adaptively (its trials must not be repeated or cut for
statistical convenience): ``fixtures.onMiss: "live"`` is refused here, and an unfixtured task in a
run with live tools is refused when the run is planned.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field

from wopeval.suite.fields import Integral, Omittable, SuiteObject

AdaptiveRule = Literal["sprt"]
ADAPTIVE_KEY = "x-wopeval-adaptive"
DEFAULT_INDIFFERENCE = 0.1

OpenUnit = Annotated[float, Field(gt=0, lt=1)]


class AdaptiveTrials(SuiteObject):
    """``x-wopeval-adaptive`` (wopeval): stop a task's trials once a sequential test decides
    whether its pass rate is above or below a threshold. ``rule: "sprt"`` is Wald's sequential
    probability ratio test of ``threshold - indifference`` against ``threshold + indifference``
    with error rates ``alpha`` and ``beta``; ``trials.count`` is the maximum, ``minTrials``
    (absent: ``trials.k``) the minimum. Not for tasks with live tools."""

    rule: Annotated[AdaptiveRule, Field(description="The sequential test: sprt (Wald).")]
    alpha: Annotated[
        OpenUnit, Field(description="The chance of deciding 'above' when the rate is p0 or less.")
    ]
    beta: Omittable[
        Annotated[
            OpenUnit,
            Field(description="The chance of deciding 'below' at p1 or more (absent: alpha)."),
        ]
    ] = None
    threshold: Omittable[
        Annotated[
            OpenUnit, Field(description="The pass rate tested (absent: thresholds.passScore).")
        ]
    ] = None
    indifference: Omittable[
        Annotated[
            OpenUnit,
            Field(
                description="p0 = threshold - indifference, p1 = threshold + indifference "
                "(absent: 0.1)."
            ),
        ]
    ] = None
    minTrials: Omittable[
        Annotated[
            int,
            Field(ge=1, description="No decision before this many trials (absent: trials.k)."),
            Integral,
        ]
    ] = None


@dataclass(frozen=True)
class AdaptivePlan:
    """One task's resolved sequential test: every default filled in from the suite."""

    rule: AdaptiveRule
    alpha: float
    beta: float
    threshold: float
    p0: float
    p1: float
    min_trials: int
    max_trials: int


def resolve(settings: AdaptiveTrials, *, pass_score: float, count: int, k: int) -> AdaptivePlan:
    """The plan ``settings`` describe in a suite with this ``passScore``, ``count`` and ``k``."""
    threshold = settings.threshold if settings.threshold is not None else pass_score
    delta = settings.indifference if settings.indifference is not None else DEFAULT_INDIFFERENCE
    return AdaptivePlan(
        rule=settings.rule,
        alpha=settings.alpha,
        beta=settings.beta if settings.beta is not None else settings.alpha,
        threshold=threshold,
        p0=threshold - delta,
        p1=threshold + delta,
        min_trials=settings.minTrials if settings.minTrials is not None else k,
        max_trials=count,
    )
