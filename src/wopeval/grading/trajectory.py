"""RFC 0244 §A trajectory grading: the four match modes, ``forbidden`` and ``matchedCount``.

The observed trajectory is the trial's ``agent.tool-called`` events in log order, kept only
when their ``agentId`` is the task's target agent, or all of them with ``includeDelegates``.
An expected call matches an observed call when the tool names are equal and the arguments
match under the expected call's ``argsMatch`` (:func:`wopeval.grading.jsonmatch.matches`, the
one definition; the paths below reach its answer faster).

Modes (RFC 0244 §A table):

* ``exact``: same length, and the i-th observed call matches the i-th expected call.
* ``in-order``: the expected calls match a subsequence of the observed list, in order. Greedy
  earliest matching is optimal for a subsequence, so one left-to-right pass decides it.
* ``any-order``: each expected call is matched by a distinct observed call. That holds exactly
  when the maximum matching saturates the expected side, so it reuses ``matchedCount``.
* ``subset``: every observed call matches some expected call (repeats allowed).

Any observed call to a ``forbidden`` tool makes the trajectory unmatched whatever the mode;
``forbiddenCount`` counts those calls. An expected call pinned to an agent turn (wopeval's
``x-wopeval-pin``) must also be made in that turn (:mod:`wopeval.grading.turn_pins`); a plain
expectation is graded as above and nothing more.

``matchedCount`` is mode-independent: the size of a maximum one-to-one matching between
expected and observed calls, ignoring order. Calls are grouped into classes with multiplicities
and matched as a flow on the class graph. The expected side is grouped and indexed once per
expectation (:func:`wopeval.grading.patterns.compiled`); :mod:`wopeval.grading.classgraph` looks
each observed call up in linear time (``exact`` by a hash bucket and a guarded ``==``, ``subset``
through an index of (key path, leaf value) under each pattern's rarest term, ``ignore`` with no
edges); :mod:`wopeval.grading.class_matching` runs the augmenting paths only among the classes
that still compete. In ``exact`` mode, when every observed call matches the expected call at its
position, that pairing is a matching of the largest possible size, so no graph is built (and an
expectation not compiled yet is compared call by call, compiling nothing).
"""

from __future__ import annotations

import marshal
from collections.abc import Sequence
from dataclasses import dataclass

from wopeval.grading.class_matching import class_matching
from wopeval.grading.classgraph import ClassGraph, build, build_graph
from wopeval.grading.patterns import ExpectationMemo, Patterns, cached, compiled, uncompiled_matches
from wopeval.grading.turn_pins import pins_hold
from wopeval.suite.models import ExpectedCall, TrajectoryExpectation
from wopeval.wire.summary import TrajectoryBlock

__all__ = [
    "ObservedCall",
    "class_matching",
    "grade_trajectory",
    "max_matching_size",
    "observed_trajectory",
]


@dataclass(frozen=True)
class ObservedCall:
    """One ``agent.tool-called`` event: ``toolName``, ``inputs`` and the calling ``agentId``;
    ``turn``: the agent turn it was made in (the messages to a scripted user answered before it,
    :mod:`wopeval.suite.pins`; 0 without a user)."""

    tool: str
    inputs: object
    agent_id: str
    turn: int = 0


def observed_trajectory(
    expectation: TrajectoryExpectation, observed: Sequence[ObservedCall], target_agent_id: str
) -> list[ObservedCall]:
    """The calls §A grades: the target agent's own, or every call with ``includeDelegates``."""
    if expectation.include_delegates:
        return list(observed)
    return [call for call in observed if call.agent_id == target_agent_id]


# --- the class graph and its matching (grading.patterns, .classgraph, .class_matching) ---------


def _build_graph(expected: Sequence[ExpectedCall], observed: Sequence[ObservedCall]) -> ClassGraph:
    return build_graph(expected, observed)


def max_matching_size(expected: Sequence[ExpectedCall], observed: Sequence[ObservedCall]) -> int:
    """RFC 0244 §A ``matchedCount``: a maximum one-to-one matching of calls, ignoring order."""
    return class_matching(_build_graph(expected, observed))[0]


def _pairwise(
    expectation: TrajectoryExpectation, patterns: Patterns | None, calls: Sequence[ObservedCall]
) -> bool:
    """``exact`` mode without the graph: the i-th observed call matches the i-th expected
    (through the compiled classes when there are some, else call by call)."""
    expected = expectation.calls
    if len(calls) != len(expected):
        return False
    if patterns is None:
        return _call_by_call(expected, _expected_bytes(expectation), calls)
    matches = patterns.matches
    return all(
        matches(slot, call.tool, call.inputs)
        for slot, call in zip(patterns.left_of, calls, strict=True)
    )


def _call_by_call(
    expected: Sequence[ExpectedCall], packed: Sequence[bytes | None], calls: Sequence[ObservedCall]
) -> bool:
    """:func:`_pairwise` without classes; equal ``exact`` objects of the same types in the same
    key order (equal ``marshal`` bytes; ``packed``: the expected ones') are decided inline,
    the rest by ``uncompiled_matches``."""
    dumps = marshal.dumps
    for want, want_bytes, call in zip(expected, packed, calls, strict=True):
        inputs = call.inputs
        if want_bytes is not None and type(inputs) is dict and want.args == inputs:
            try:
                if dumps(inputs, 2) == want_bytes and want.tool == call.tool:
                    continue
            except ValueError:  # a type marshal does not write: uncompiled_matches decides
                pass
        if not uncompiled_matches(want, call.tool, inputs):
            return False
    return True


def _packed(call: ExpectedCall) -> bytes | None:
    """An ``exact`` object pattern's args as ``marshal`` bytes (None: another pattern, or one
    marshal does not write: ``uncompiled_matches`` decides)."""
    args = call.args
    if call.argsMatch != "exact" or type(args) is not dict:
        return None
    try:
        return marshal.dumps(args, 2)
    except ValueError:
        return None


# Each graded expectation's expected args as ``marshal`` bytes, kept while it lives: a task's
# trials grade it again and again, and packing those args was half of grading a 1,000-call
# ``exact`` trajectory.
_BYTES_MEMO: ExpectationMemo[list[bytes | None]] = ExpectationMemo(
    lambda calls: [_packed(call) for call in calls]
)
_BYTES = _BYTES_MEMO.entries
_expected_bytes = _BYTES_MEMO.get


# --- the modes -------------------------------------------------------------------------------


def _in_order(graph: ClassGraph) -> bool:
    """Greedy earliest matching, :meth:`ClassGraph.pair_matches` inline: an ``ignore`` class
    (no edges) takes any call of its tool, another class the calls it has an edge to."""
    expected = graph.left_of
    if not expected:
        return True
    position, last = 0, len(expected)
    found_of, first, observed = graph.right_found, graph.right_first, graph.observed
    modes, tools = graph.patterns.left_modes, graph.patterns.left_tools
    left = expected[0]
    loose = modes[left] == "ignore"
    for got in graph.right_of:
        if loose:
            if tools[left] != observed[first[got]].tool:
                continue
        else:
            found = found_of[got]
            if found != left and not (isinstance(found, tuple) and left in found):
                continue
        position += 1
        if position == last:
            return True
        left = expected[position]
        loose = modes[left] == "ignore"
    return False


def _every_observed_matchable(graph: ClassGraph) -> bool:
    return graph.matchable_right() == len(graph.right_counts)


def grade_trajectory(
    expectation: TrajectoryExpectation,
    observed: Sequence[ObservedCall],
    target_agent_id: str,
    *,
    pins: bool = True,
) -> TrajectoryBlock:
    """Grade one trial's observed calls against ``expected.trajectory`` (RFC 0244 §A).

    Returns the content-free reporting block: mode, verdict and counts, never tool names.
    ``pins=False``: §A alone, the expected calls' turn pins ignored.
    """
    calls = observed_trajectory(expectation, observed, target_agent_id)
    expected = expectation.calls
    forbidden = expectation.forbidden_tools
    forbidden_count = sum(1 for call in calls if call.tool in forbidden) if forbidden else 0
    mode = expectation.match
    if mode == "exact" and _pairwise(expectation, cached(expectation), calls):
        held = not pins or pins_hold(expectation, calls)
        return _block(expectation, len(calls), held, len(calls), forbidden_count)
    graph = build(compiled(expectation), calls)
    matched_count = class_matching(graph)[0]
    if mode == "exact":
        matched = False  # _pairwise decided: some position does not match
    elif mode == "in-order":
        matched = _in_order(graph)
    elif mode == "any-order":
        matched = matched_count == len(expected)
    else:
        matched = _every_observed_matchable(graph)
    matched = matched and (not pins or pins_hold(expectation, calls))
    return _block(expectation, len(calls), matched, matched_count, forbidden_count)


def _block(
    expectation: TrajectoryExpectation, observed: int, matched: bool, size: int, forbidden: int
) -> TrajectoryBlock:
    return TrajectoryBlock(
        mode=expectation.match,
        matched=matched and forbidden == 0,
        expectedCount=len(expectation.calls),
        observedCount=observed,
        matchedCount=size,
        forbiddenCount=forbidden,
    )
