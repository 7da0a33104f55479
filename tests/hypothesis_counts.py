"""Example counts for the property tests that set their own.

``examples(400)`` is 400 in the full run, whose hypothesis profile keeps hypothesis's default of
100 examples a test, and scales with the loaded profile's default otherwise: a quarter in the
inner loop's profile (``-m "not slow"``, see tests/conftest.py). Read as a test module is
imported, after the profile is chosen.
"""

from __future__ import annotations

from hypothesis import settings

FULL_RUN_EXAMPLES = 100


def examples(count: int) -> int:
    """``count`` scaled by the loaded profile's share of the full run's examples (at least 1)."""
    return max(1, count * settings().max_examples // FULL_RUN_EXAMPLES)
