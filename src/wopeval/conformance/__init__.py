"""wopeval.conformance: check any OpenWOP host against RFC 0244 over the wire.

The kit reads only the wire (discovery, ``POST /runs``, the event poll, the eval summary) and
grades with its own reference (:mod:`wopeval.conformance.reference`), never with the host's
grading code. Entry point: :func:`run_conformance`.
"""

from wopeval.conformance.report import ConformanceReport, RequirementResult, Status
from wopeval.conformance.runner import ConformanceInputError, run_conformance

__all__ = [
    "ConformanceInputError",
    "ConformanceReport",
    "RequirementResult",
    "Status",
    "run_conformance",
]
