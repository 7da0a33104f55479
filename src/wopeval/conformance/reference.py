"""The kit's own reference trajectory grader (RFC 0244 §A), independent of the host's grader.

This module deliberately shares no code with :mod:`wopeval.grading`: a conformance kit that
graded with the host's own code would only ever agree with itself (RFC 0244 §Conformance, "the
host legs compare the host's grade with this one, never with itself"). It works on plain JSON
values as read from the wire.

JSON equality (``argsMatch: exact``): numbers compare by value (``1 == 1.0``), booleans are not
numbers, objects compare by key set and values, arrays are ordered. ``argsMatch: subset``: every
key path of ``args`` is present in ``inputs`` with a deep-equal value, recursing through objects
only (a non-object ``args`` must deep-equal ``inputs``).

The four modes, exactly as the §A table states them:

* ``exact``: same length, the i-th observed call matches the i-th expected call;
* ``in-order``: the expected calls match a subsequence of the observed calls;
* ``any-order``: each expected call is matched by a distinct observed call;
* ``subset``: every observed call matches some expected call (repeats allowed).

A call to a ``forbidden`` tool makes the trajectory unmatched whatever the mode.
``matchedCount`` is the size of a maximum one-to-one matching between expected and observed
calls, ignoring order (Kuhn's augmenting paths, small inputs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

ArgsMatch = Literal["ignore", "exact", "subset"]
Mode = Literal["exact", "in-order", "any-order", "subset"]
MODES: tuple[Mode, ...] = ("exact", "in-order", "any-order", "subset")
ARGS_MATCHES: tuple[ArgsMatch, ...] = ("ignore", "exact", "subset")


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def json_equal(a: object, b: object) -> bool:
    """JSON deep equality: numbers by value, booleans apart from numbers, unordered keys."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) or _is_number(b):
        return _is_number(a) and _is_number(b) and a == b
    if isinstance(a, dict):
        if not isinstance(b, dict) or set(a) != set(b):
            return False
        return all(json_equal(value, b[key]) for key, value in a.items())
    if isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            return False
        return all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def json_subset(args: object, inputs: object) -> bool:
    """``argsMatch: subset``: every key path of ``args`` is in ``inputs`` with an equal value."""
    if not isinstance(args, dict):
        return json_equal(args, inputs)
    if not isinstance(inputs, dict):
        return False
    return all(key in inputs and json_subset(value, inputs[key]) for key, value in args.items())


def args_match(mode: ArgsMatch, args: object, inputs: object) -> bool:
    """RFC 0244 §A call matching on arguments."""
    if mode == "exact":
        return json_equal(args, inputs)
    if mode == "subset":
        return json_subset(args, inputs)
    return True


@dataclass(frozen=True)
class ExpectedCall:
    """One ``expected.trajectory.calls[]`` entry."""

    tool: str
    args: Any = None
    args_match: ArgsMatch = "ignore"

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> ExpectedCall:
        mode = doc.get("argsMatch") or "ignore"
        if mode not in ARGS_MATCHES:
            raise ValueError(f"unknown argsMatch {mode!r}")
        return cls(tool=str(doc["tool"]), args=doc.get("args"), args_match=mode)


@dataclass(frozen=True)
class ObservedCall:
    """One ``agent.tool-called`` event: ``toolName``, ``inputs`` and the calling ``agentId``."""

    tool: str
    inputs: Any
    agent_id: str


@dataclass(frozen=True)
class Expectation:
    """A task's ``expected.trajectory`` block."""

    mode: Mode
    calls: tuple[ExpectedCall, ...]
    forbidden: frozenset[str] = frozenset()
    include_delegates: bool = False

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Expectation:
        mode = doc["match"]
        if mode not in MODES:
            raise ValueError(f"unknown trajectory match mode {mode!r}")
        return cls(
            mode=mode,
            calls=tuple(ExpectedCall.from_json(call) for call in doc["calls"]),
            forbidden=frozenset(str(tool) for tool in doc.get("forbidden") or ()),
            include_delegates=bool(doc.get("includeDelegates", False)),
        )


@dataclass(frozen=True)
class TrajectoryGrade:
    """The reference grade, in the shape of the summary's content-free ``trajectory`` block."""

    mode: Mode
    matched: bool
    expected_count: int
    observed_count: int
    matched_count: int
    forbidden_count: int

    def to_block(self) -> dict[str, Any]:
        """The RFC 0244 §A reporting block as the wire carries it."""
        return {
            "mode": self.mode,
            "matched": self.matched,
            "expectedCount": self.expected_count,
            "observedCount": self.observed_count,
            "matchedCount": self.matched_count,
            "forbiddenCount": self.forbidden_count,
        }


def call_matches(expected: ExpectedCall, observed: ObservedCall) -> bool:
    """An expected call matches an observed one: same tool, arguments match under argsMatch."""
    return expected.tool == observed.tool and args_match(
        expected.args_match, expected.args, observed.inputs
    )


def observed_trajectory(
    expectation: Expectation, calls: Sequence[ObservedCall], target_agent_id: str
) -> list[ObservedCall]:
    """The target agent's own calls, or every call in the bracket with ``includeDelegates``."""
    if expectation.include_delegates:
        return list(calls)
    return [call for call in calls if call.agent_id == target_agent_id]


def exact_matches(expected: Sequence[ExpectedCall], observed: Sequence[ObservedCall]) -> bool:
    """``exact``: same length and position-wise matching."""
    return len(expected) == len(observed) and all(
        call_matches(e, o) for e, o in zip(expected, observed, strict=True)
    )


def in_order_matches(expected: Sequence[ExpectedCall], observed: Sequence[ObservedCall]) -> bool:
    """``in-order``: ``expected`` matches a subsequence of ``observed``.

    Taking the earliest matching observed call for each expected call is optimal: it leaves
    the longest possible suffix for the remaining expected calls.
    """
    position = 0
    for call in expected:
        while position < len(observed) and not call_matches(call, observed[position]):
            position += 1
        if position == len(observed):
            return False
        position += 1
    return True


def subset_matches(expected: Sequence[ExpectedCall], observed: Sequence[ObservedCall]) -> bool:
    """``subset``: every observed call matches some expected call (repeats allowed)."""
    return all(any(call_matches(e, o) for e in expected) for o in observed)


def max_matching(expected: Sequence[ExpectedCall], observed: Sequence[ObservedCall]) -> int:
    """Size of a maximum one-to-one matching between expected and observed calls (Kuhn)."""
    edges = [[j for j, o in enumerate(observed) if call_matches(e, o)] for e in expected]
    owner: list[int | None] = [None] * len(observed)

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j in seen:
                continue
            seen.add(j)
            current = owner[j]
            if current is None or augment(current, seen):
                owner[j] = i
                return True
        return False

    return sum(1 for i in range(len(expected)) if augment(i, set()))


def mode_matches(
    mode: Mode, expected: Sequence[ExpectedCall], observed: Sequence[ObservedCall]
) -> bool:
    """Whether ``observed`` satisfies ``mode`` (the §A table), before ``forbidden``."""
    if mode == "exact":
        return exact_matches(expected, observed)
    if mode == "in-order":
        return in_order_matches(expected, observed)
    if mode == "any-order":
        return max_matching(expected, observed) == len(expected)
    return subset_matches(expected, observed)


def grade(
    expectation: Expectation, calls: Sequence[ObservedCall], target_agent_id: str
) -> TrajectoryGrade:
    """Grade one trial's calls (log order) against a trajectory expectation (RFC 0244 §A)."""
    observed = observed_trajectory(expectation, calls, target_agent_id)
    forbidden = sum(1 for call in observed if call.tool in expectation.forbidden)
    matched = forbidden == 0 and mode_matches(expectation.mode, expectation.calls, observed)
    return TrajectoryGrade(
        mode=expectation.mode,
        matched=matched,
        expected_count=len(expectation.calls),
        observed_count=len(observed),
        matched_count=max_matching(expectation.calls, observed),
        forbidden_count=forbidden,
    )
