"""The inner loop (``-m "not slow"``): which mark expressions leave every slow test out (their
files are then not even imported), and the hypothesis example counts in each run."""

from __future__ import annotations

import pytest
from hypothesis import settings

from tests import conftest
from tests.hypothesis_counts import examples


@pytest.mark.parametrize(
    ("markexpr", "leaves_out"),
    [
        ("not slow", True),
        ("  not   slow ", True),
        ("not slow and not postgres", True),
        ("not (slow or postgres)", True),
        ("postgres and not slow", True),
        ("", False),
        ("slow", False),
        ("not postgres", False),
        ("not slow or postgres", False),
        ("not slow or not postgres", False),
        ("not slowish", False),
    ],
)
def test_a_mark_expression_leaves_out_slow_only_if_false_for_every_slow_test(
    markexpr: str, leaves_out: bool
) -> None:
    assert conftest._leaves_out_slow(markexpr) is leaves_out


def test_the_full_run_keeps_its_example_counts_and_the_inner_loop_takes_a_quarter(
    pytestconfig: pytest.Config,
) -> None:
    assert settings.get_profile("wopeval").max_examples == 100
    assert settings.get_profile("wopeval-inner-loop").max_examples == 25
    inner = conftest._leaves_out_slow(pytestconfig.getoption("markexpr"))
    if pytestconfig.getoption("hypothesis_profile", None) is None:
        assert settings().max_examples == (25 if inner else 100)
    assert examples(400) == 4 * settings().max_examples
    assert examples(1) >= 1
