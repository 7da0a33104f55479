"""A value built from a trajectory expectation's calls, kept while the expectation lives."""

from __future__ import annotations

import operator
import weakref
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from wopeval.suite.models import ExpectedCall, TrajectoryExpectation

__all__ = ["ExpectationMemo"]

_V = TypeVar("_V")


class ExpectationMemo(Generic[_V]):
    """What ``make`` builds from an expectation's calls, kept while the expectation lives.

    Suites are frozen models; their calls are checked by identity on every use, so a list
    changed in place is made again (args mutated in place inside a call are not seen).
    ``entries``: id of the expectation → (a weak reference to it, its calls then, the value).
    """

    def __init__(self, make: Callable[[Sequence[ExpectedCall]], _V]) -> None:
        self._make = make
        self.entries: dict[
            int, tuple[weakref.ref[TrajectoryExpectation], list[ExpectedCall], _V]
        ] = {}

    def peek(self, expectation: TrajectoryExpectation) -> _V | None:
        """The kept value, or None when there is none for these very calls."""
        entry = self.entries.get(id(expectation))
        if entry is None or entry[0]() is not expectation:
            return None
        kept, calls = entry[1], expectation.calls
        if len(kept) != len(calls) or not all(map(operator.is_, kept, calls)):
            return None
        return entry[2]

    def get(self, expectation: TrajectoryExpectation) -> _V:
        """The kept value, made (and kept) first when there is none."""
        found = self.peek(expectation)
        if found is not None:
            return found
        key, entries = id(expectation), self.entries
        value = self._make(expectation.calls)

        def forget(ref: weakref.ref[TrajectoryExpectation]) -> None:
            if entries.get(key, (None,))[0] is ref:
                del entries[key]

        entries[key] = (weakref.ref(expectation, forget), list(expectation.calls), value)
        return value
