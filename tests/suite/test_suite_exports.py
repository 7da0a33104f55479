"""The public surface of ``wopeval.suite`` is pinned."""

from __future__ import annotations

import wopeval.suite


def test_exported_names_are_pinned() -> None:
    assert sorted(wopeval.suite.__all__) == [
        "AgentEvalSuite",
        "FieldError",
        "SuiteError",
        "check_advertised",
        "load_suite",
        "parse_suite",
        "suite_to_document",
        "used_features",
    ]
    for name in wopeval.suite.__all__:
        assert getattr(wopeval.suite, name).__module__.startswith("wopeval.suite.")
