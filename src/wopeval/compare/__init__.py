"""The paired regression verdict of RFC 0244 §F: pair two runs, run a named method, decide.

Pure functions over :class:`~wopeval.wire.summary.EvalSummary` objects; no I/O.
"""

from __future__ import annotations

from wopeval.compare.methods import (
    MethodResult,
    mcnemar,
    paired_bootstrap,
    paired_t,
    sign_test,
)
from wopeval.compare.pairing import PairedTask, pair_tasks
from wopeval.compare.verdict import Comparison, compare_summaries, registered_methods

__all__ = [
    "Comparison",
    "MethodResult",
    "PairedTask",
    "compare_summaries",
    "mcnemar",
    "pair_tasks",
    "paired_bootstrap",
    "paired_t",
    "registered_methods",
    "sign_test",
]
