"""A failed trajectory, call by call (pure): the diff and the reasons it gives.

:func:`trajectory_diff` marks every expected call matched or missing and every observed call
matched, unexpected or forbidden, from the same maximum matching as ``matchedCount``; under
``subset``, whose calls may repeat, an observed call that some expected call matches is matched
even when the one-for-one matching left it over.
:func:`trajectory_reasons` reads the diff: each forbidden tool called; each expected call left
unmatched while a call to its tool went unmatched too — the tool matched but the arguments did
not, so the differing key paths are named (:mod:`wopeval.grading.argdiff`); then the calls still
missing (not under ``subset``, which requires none of them) or unexpected, or, when every call
is there, the order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from wopeval.grading.argdiff import arg_differences
from wopeval.grading.classgraph import build
from wopeval.grading.patterns import compiled
from wopeval.grading.trajectory import ObservedCall, class_matching, observed_trajectory
from wopeval.suite.models import TrajectoryExpectation
from wopeval.wire.events import FailureReason

__all__ = ["TrajectoryDiff", "TrajectoryReasons", "trajectory_diff", "trajectory_reasons"]

ExpectedStatus = Literal["matched", "missing"]
ObservedStatus = Literal["matched", "unexpected", "forbidden"]
MAX_LISTED = 5
_MAX_DIFFERENCES = 4


@dataclass(frozen=True)
class TrajectoryDiff:
    """Expected against observed calls, each marked from the maximum matching."""

    mode: str
    expected: list[dict[str, Any]]  # {tool, args?, argsMatch, status}
    observed: list[dict[str, Any]]  # {tool, inputs, agentId, status}

    @property
    def missing(self) -> list[dict[str, Any]]:
        return [call for call in self.expected if call["status"] == "missing"]

    @property
    def unexpected(self) -> list[dict[str, Any]]:
        return [call for call in self.observed if call["status"] == "unexpected"]

    @property
    def forbidden(self) -> list[dict[str, Any]]:
        return [call for call in self.observed if call["status"] == "forbidden"]

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "expected": self.expected, "observed": self.observed}


def trajectory_diff(
    expectation: TrajectoryExpectation, calls: Sequence[ObservedCall], target_agent_id: str
) -> TrajectoryDiff:
    """Mark each call; a forbidden tool's call is ``forbidden`` even when also expected."""
    observed = observed_trajectory(expectation, calls, target_agent_id)
    graph = build(compiled(expectation), observed)  # the index its trials' grading built
    _, used_left, used_right = class_matching(graph)
    expected_rows: list[dict[str, Any]] = []
    for want, slot in zip(expectation.calls, graph.left_of, strict=True):
        status: ExpectedStatus = "matched" if used_left[slot] > 0 else "missing"
        used_left[slot] -= 1 if used_left[slot] > 0 else 0
        row: dict[str, Any] = {"tool": want.tool, "argsMatch": want.args_match, "status": status}
        if want.args_match != "ignore":
            row["args"] = want.args
        expected_rows.append(row)
    forbidden = expectation.forbidden_tools
    repeats = expectation.match == "subset"  # a call any expected call matches may repeat
    observed_rows: list[dict[str, Any]] = []
    for call, slot in zip(observed, graph.right_of, strict=True):
        taken = used_right[slot] > 0
        used_right[slot] -= 1 if taken else 0
        taken = taken or (repeats and graph.matchable(slot))
        mark: ObservedStatus = (
            "forbidden" if call.tool in forbidden else "matched" if taken else "unexpected"
        )
        observed_rows.append(
            {"tool": call.tool, "inputs": call.inputs, "agentId": call.agent_id, "status": mark}
        )
    return TrajectoryDiff(expectation.match, expected_rows, observed_rows)


@dataclass(frozen=True)
class TrajectoryReasons:
    """A failed trajectory's reasons: the forbidden calls apart (they come first)."""

    forbidden: list[FailureReason]
    others: list[FailureReason]
    diff: TrajectoryDiff


def trajectory_reasons(diff: TrajectoryDiff) -> TrajectoryReasons:
    """The reasons a trajectory did not match, read from its diff (see the module)."""
    calls = Counter(str(row["tool"]) for row in diff.forbidden)
    forbidden = [
        FailureReason(
            kind="trajectory",
            message=f"forbidden tool {tool}" + (f" (called {count} times)" if count > 1 else ""),
            details={"forbiddenTool": tool, "calls": count},
        )
        for tool, count in list(calls.items())[:MAX_LISTED]
    ]
    if len(calls) > MAX_LISTED:
        more = list(calls)[MAX_LISTED:]
        message = f"and {len(more)} more forbidden tools: " + ", ".join(more)
        forbidden.append(FailureReason(kind="trajectory", message=message[:300]))
    pairs = _argument_pairs(diff)
    others = _counted([_wrong_arguments(want, got) for want, got in pairs])[:MAX_LISTED]
    paired_expected = {id(want) for want, _ in pairs}
    paired_observed = {id(got) for _, got in pairs}
    missing = [row for row in diff.missing if id(row) not in paired_expected]
    unexpected = [row for row in diff.unexpected if id(row) not in paired_observed]
    parts = []
    if missing and diff.mode != "subset":  # subset requires no expected call to be made
        parts.append(f"missing {_listed(missing)}")
    if unexpected and diff.mode in ("exact", "subset"):
        parts.append(f"unexpected {_listed(unexpected)}")
    if not parts and not others and not forbidden:
        parts.append("calls out of the expected order" if diff.mode != "subset" else "unmatched")
    if parts:
        message = f"trajectory ({diff.mode}): " + "; ".join(parts)
        others.append(FailureReason(kind="trajectory", message=message[:300]))
    return TrajectoryReasons(forbidden, others, diff)


def _argument_pairs(diff: TrajectoryDiff) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each unmatched observed call beside an expected call of its tool: a missing one first
    (in order), else — under ``subset``, where repeats are allowed — the tool's first."""
    free = [row for row in diff.missing if "args" in row]
    first_of: dict[str, dict[str, Any]] = {}
    for row in diff.expected:
        if "args" in row:
            first_of.setdefault(str(row["tool"]), row)
    pairs = []
    for got in diff.unexpected:
        want = next((row for row in free if row["tool"] == got["tool"]), None)
        if want is not None:
            free.remove(want)
        elif diff.mode == "subset":
            want = first_of.get(str(got["tool"]))
        if want is not None:
            pairs.append((want, got))
    return pairs


def _wrong_arguments(want: dict[str, Any], got: dict[str, Any]) -> FailureReason:
    differences = arg_differences(want["argsMatch"], want["args"], got["inputs"])
    shown = "; ".join(d.text() for d in differences[:_MAX_DIFFERENCES])
    more = len(differences) - _MAX_DIFFERENCES
    shown += f"; and {more} more" if more > 0 else ""
    message = f"called {want['tool']} with different arguments" + (f": {shown}" if shown else "")
    details = {
        "tool": want["tool"],
        "argsMatch": want["argsMatch"],
        "differences": [d.to_json() for d in differences],
    }
    return FailureReason(kind="trajectory", message=message, details=details)


def _counted(reasons: list[FailureReason]) -> list[FailureReason]:
    """Equal reasons once each, in order, with how many calls gave them."""
    counts = Counter(reason.message for reason in reasons)
    kept: dict[str, FailureReason] = {}
    for reason in reasons:
        if reason.message not in kept:
            count = counts[reason.message]
            text = f"{reason.message} ({count} calls)" if count > 1 else reason.message
            kept[reason.message] = reason.model_copy(update={"message": text[:300]})
    return list(kept.values())


def _listed(rows: Sequence[dict[str, Any]]) -> str:
    names = [str(row["tool"]) for row in rows[:MAX_LISTED]]
    more = f" and {len(rows) - MAX_LISTED} more" if len(rows) > MAX_LISTED else ""
    return ", ".join(names) + more
