"""RFC 0081 ``golden`` output matching: the ``exact``, ``contains`` and ``json-match`` strategies.

**Stringification** (``exact`` and ``contains``): a ``str`` stays as it is; anything else becomes
compact JSON, ``json.dumps(x, separators=(",", ":"), sort_keys=True, ensure_ascii=False)``. The
expected ``value`` and the agent's output are stringified the same way, so the string
``"42"`` and the number ``42`` both stringify to ``42``; ``1.0`` stringifies to ``1.0``, not
``1`` (``exact`` is literal; use ``json-match`` for value equality). An output that is not
JSON-serializable raises ``TypeError`` (a grader error, recorded as the trial's failure).

* ``exact``: the stringified output equals the stringified value.
* ``contains``: the stringified value is a substring of the stringified output.
* ``json-match``: the output JSON-deep-equals the value under the
  :mod:`wopeval.grading.jsonmatch` policy (key order, whitespace and ``1`` vs ``1.0`` do not
  matter; ``true`` is not ``1``). A string output is first parsed as JSON when it parses
  (strict JSON: ``NaN``/``Infinity`` do not parse); the output matches when either the parsed
  value or the string itself equals the value, so an expected string ``"42"`` still matches the
  output string ``"42"``.
"""

from __future__ import annotations

import json

from wopeval.grading.jsonmatch import json_equal
from wopeval.suite.models import OutputMatch

__all__ = ["match_output", "stringify"]

_NOT_PARSED = object()


def stringify(value: object) -> str:
    """The string a ``golden`` strategy compares: ``str`` as is, anything else compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def _reject_constant(name: str) -> object:
    raise ValueError(f"not JSON: {name}")


def _parsed(text: str) -> object:
    try:
        parsed = json.loads(text, parse_constant=_reject_constant)
        json_equal(parsed, parsed)  # "1e999" parses to inf, which is not JSON: keep the string
    except ValueError:
        return _NOT_PARSED
    return parsed


def _json_match(output: object, value: object) -> bool:
    if isinstance(output, str):
        parsed = _parsed(output)
        if parsed is not _NOT_PARSED and json_equal(parsed, value):
            return True
    return json_equal(output, value)


def match_output(expectation: OutputMatch, output: object) -> bool:
    """Grade ``output`` against a golden ``match`` (RFC 0081 §A strategies, documented above)."""
    strategy = expectation.strategy
    if strategy == "exact":
        return stringify(output) == stringify(expectation.value)
    if strategy == "contains":
        return stringify(expectation.value) in stringify(output)
    if strategy == "json-match":
        return _json_match(output, expectation.value)
    raise ValueError(f"match.strategy must be exact, contains or json-match, got {strategy!r}")
