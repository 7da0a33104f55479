"""Named peers that ``bench/engine.py`` runs the same workloads through, in the same run.

Each peer module exposes the same two functions, both synchronous (call them outside any
running event loop) and both returning plain ``dict[str, float]`` figures:

- ``run_overhead(trials)``: an instant scripted agent making 3 fixtured (canned) tool calls
  per trial, results recorded the way the peer normally records them.
- ``run_concurrency(trials=2000, sleep_s=0.05, concurrency=200)``: an agent that only sleeps,
  run ``concurrency`` at a time; ``measuredOverIdeal`` is measured wall time over the ideal
  ``trials * sleep_s / concurrency``.

Peers: ``inspect_peer`` (UK AISI Inspect AI, in process), ``promptfoo_peer`` (promptfoo, a
Node CLI run as a subprocess) and ``pydantic_evals_peer`` (pydantic-evals, in process; persists
nothing). ``oneshot`` runs one workload of one peer as its own process, for the whole-process
figures of ``bench/scale.py``. The grading peer (LangChain ``agentevals``) lives in
``bench/grading.py``.
See ``bench/README.md`` for installation and what each figure includes.
"""

from __future__ import annotations

__all__ = ["ideal_seconds"]


def ideal_seconds(trials: int, sleep_s: float, concurrency: int) -> float:
    """Wall time of a perfect scheduler with no overhead: ``trials * sleep_s / concurrency``."""
    return trials * sleep_s / concurrency
