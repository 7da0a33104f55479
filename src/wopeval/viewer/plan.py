"""The viewer's plan page (``/plan?run=RUN``): ``wopeval plan`` from a completed run's rates,
re-graded from its log (:mod:`wopeval.service.plan`), with the mde, alpha and power in the query.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import anyio

from wopeval.compare.power import EXACT_METHODS
from wopeval.events.store import EventStore, RunRecord
from wopeval.service.plan import (
    METHODS,
    PlanInputError,
    PlanSettings,
    SuitePlan,
    baseline_rates,
    plan_suite,
)
from wopeval.suite import parse_suite

VIEW_SIMULATIONS = 1000
"""Draws per simulated power on the page (the CLI's default is 5,000): the page answers in
seconds; ``wopeval plan`` gives the finer figure."""


@dataclass(frozen=True)
class PlanView:
    """What the page shows: the run, the settings read from the query, the plan."""

    record: RunRecord
    settings: PlanSettings
    plan: SuitePlan


def _number(query: Mapping[str, str], name: str, default: float) -> float:
    text = query.get(name)
    if text is None or text == "":
        return default
    try:
        value = float(text)
    except ValueError:
        raise PlanInputError(f"{name}: {text!r} is not a number") from None
    if not math.isfinite(value):
        raise PlanInputError(f"{name}: {text!r} is not a finite number")
    return value


def settings_of(query: Mapping[str, str]) -> PlanSettings:
    """The plan's settings from ``mde``, ``alpha`` and ``power`` (the CLI's defaults), checked
    (a :class:`PlanInputError` names the field: ``--mde`` here is the ``mde`` field). The exact
    methods only, unless ``simulated=1`` asks for the simulated ones too (they take longer)."""
    settings = PlanSettings(
        mde=_number(query, "mde", 0.10),
        alpha=_number(query, "alpha", 0.05),
        power=_number(query, "power", 0.80),
        methods=METHODS if query.get("simulated") == "1" else EXACT_METHODS,
        simulations=VIEW_SIMULATIONS,
    )
    try:
        settings.check()
    except PlanInputError as exc:
        raise PlanInputError(str(exc).removeprefix("--")) from None
    return settings


async def plan_view(store: EventStore, record: RunRecord, query: Mapping[str, str]) -> PlanView:
    """The plan of ``record``'s suite at its own per-task rates; the computation runs in a worker
    thread (it is CPU-bound: the exact laws and the simulations)."""
    settings = settings_of(query)
    suite = parse_suite(record.suite_document, source=f"run {record.run_id}")
    rates = await baseline_rates(store, suite, record.run_id)
    plan = await anyio.to_thread.run_sync(plan_suite, suite, rates, settings)
    return PlanView(record, settings, plan)


__all__ = ["VIEW_SIMULATIONS", "PlanView", "plan_view", "settings_of"]
