"""``--gate``: which gate decides a run's pass/fail (:mod:`wopeval.grading.gate`), and the exit
code its verdict maps to (``0`` passed, ``1`` failed)."""

from __future__ import annotations

from typing import Annotated

import anyio
import typer

from wopeval.cli.common import EXIT_FAILED, EXIT_OK, fail_input, opened_store
from wopeval.events.records import RunRecord
from wopeval.grading.gate import (
    DEFAULT_GATE,
    GATES,
    Bounds,
    GateVerdict,
    UnknownGate,
    check_gate,
    stored_verdict,
    suite_bounds,
)
from wopeval.grading.intervals import DEFAULT_LEVEL
from wopeval.suite.models import AgentEvalSuite

_GATES_HELP = "; ".join(f"'{gate.name}', {gate.description}" for gate in GATES.values())

RunGateOpt = Annotated[
    str,
    typer.Option(
        "--gate",
        metavar="GATE",
        help="What decides pass/fail, stored with the run and read by every output (exit code, "
        f"verdict line, JUnit gate case, Markdown, show). {_GATES_HELP}.",
    ),
]
StoredGateOpt = Annotated[
    str | None,
    typer.Option(
        "--gate",
        metavar="GATE",
        help=f"Decide pass/fail by this gate instead of the run's own ({', '.join(GATES)}).",
    ),
]


CiLevelOpt = Annotated[
    float,
    typer.Option(
        "--ci-level",
        min=0.5,
        max=0.999,
        help="Confidence level of the intervals shown and of the lower-bound gates (stored "
        "with the run).",
    ),
]
StoredCiLevelOpt = Annotated[
    float | None,
    typer.Option(
        "--ci-level",
        min=0.5,
        max=0.999,
        help="Confidence level of the intervals shown and of the lower-bound gates instead of "
        "the run's own.",
    ),
]


def bounds(suite: AgentEvalSuite, level: float = DEFAULT_LEVEL) -> Bounds:
    """What a bound gate compares: the suite's passScore at ``level``."""
    return suite_bounds(suite, level)


def chosen_level(given: float | None, stored: float) -> float:
    """The confidence level to show and gate by: ``--ci-level`` if given, else the run's."""
    return stored if given is None else given


def chosen_gate(given: str | None, stored: str = DEFAULT_GATE) -> str:
    """The gate to decide by: ``--gate`` if given, else the run's stored one (checked)."""
    name = stored if given is None else given
    try:
        check_gate(name, field="--gate" if given is not None else "gate")
    except UnknownGate as exc:
        fail_input(str(exc))
    return name


def stored_gate(store_url: str | None, run_id: str) -> str:
    """The gate stored with ``run_id`` (the suite gate if the run is not in the store)."""

    async def read() -> str:
        async with opened_store(store_url, must_exist=True) as store:
            record = await store.get_run(run_id)
            return DEFAULT_GATE if record is None else record.run_request.gate

    return chosen_gate(None, anyio.run(read))


def run_passed(record: RunRecord) -> bool | None:
    """Whether a listed run passed its own gate (None: no summary, or a gate unknown here)."""
    verdict = stored_verdict(record.summary, record.request, record.suite_document)
    return None if verdict is None else verdict.passed


def verdict_exit(verdict: GateVerdict) -> int:
    """The exit code of a command that reports a run's verdict: 0 passed, 1 failed."""
    return EXIT_OK if verdict.passed else EXIT_FAILED


__all__ = [
    "CiLevelOpt",
    "RunGateOpt",
    "StoredCiLevelOpt",
    "StoredGateOpt",
    "bounds",
    "chosen_gate",
    "chosen_level",
    "run_passed",
    "stored_gate",
    "verdict_exit",
]
