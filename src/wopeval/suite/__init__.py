"""wopeval.suite: load, validate and inspect an ``AgentEvalSuite`` (RFC 0081 §A, RFC 0244)."""

from wopeval.suite.errors import FieldError, SuiteError
from wopeval.suite.features import check_advertised, used_features
from wopeval.suite.load import load_suite, parse_suite, suite_to_document
from wopeval.suite.models import AgentEvalSuite

__all__ = [
    "AgentEvalSuite",
    "FieldError",
    "SuiteError",
    "check_advertised",
    "load_suite",
    "parse_suite",
    "suite_to_document",
    "used_features",
]
