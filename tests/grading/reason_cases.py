"""One suite whose trials fail in the ways a reason must name, and the reasons each must show
(most decisive first), shared by the grading tests and the tests of every output."""

from __future__ import annotations

from typing import Any

SCRIPTED = "core.conformance.agents.scripted"
OK = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}
REFUND_ARGS = {"amountMinor": 4200, "refund": {"reason": {"code": "dup"}}}


def _task(task_id: str, script: dict[str, Any], expected: dict[str, Any],
          fixtures: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    task: dict[str, Any] = {"taskId": task_id, "input": script, "expected": expected}
    if fixtures is not None:
        task["fixtures"] = fixtures
    return task


FORBIDDEN_MISS = _task(
    "forbidden-miss",
    {"calls": [{"tool": "crm:lookup"}, {"tool": "billing:refund-all"}], "output": "ok"},
    {
        **OK,
        "trajectory": {
            "match": "any-order",
            "calls": [{"tool": "crm:lookup"}],
            "forbidden": ["billing:refund-all"],
        },
    },
    {"onMiss": "fail", "toolResponses": [{"tool": "crm:lookup", "response": {"id": 1}}]},
)
WRONG_ARGS = _task(
    "wrong-args",
    {
        "calls": [
            {
                "tool": "billing:refund",
                "args": {
                    "amountMinor": "4200",
                    "refund": {"reason": {"code": "dupe"}},
                    "note": "x",
                },
            }
        ],
        "output": "ok",
    },
    {
        **OK,
        "trajectory": {
            "match": "exact",
            "calls": [{"tool": "billing:refund", "args": REFUND_ARGS, "argsMatch": "exact"}],
        },
    },
)
BOTH = _task(
    "both",
    {"output": "nope"},
    {**OK, "trajectory": {"match": "in-order", "calls": [{"tool": "crm:lookup"}]}},
)
MID_MISS = _task(
    "mid-miss",
    {
        "calls": [{"tool": "crm:lookup", "args": {"id": "B"}}, {"tool": "billing:refund"}],
        "output": "ok",
    },
    OK,
    {
        "onMiss": "fail",
        "toolResponses": [
            {
                "tool": "crm:lookup",
                "args": {"id": "A"},
                "argsMatch": "exact",
                "response": {"id": 1},
            },
            {"tool": "billing:refund", "response": {"refundId": "r"}},
        ],
    },
)
PLAIN = _task("plain", {"output": "nope"}, OK)  # one task's plainest form: no trials, fixtures

SUITE: dict[str, Any] = {
    "suiteId": "core.test.evals.reasons",
    "version": "1.0.0",
    "targetAgentId": SCRIPTED,
    "modes": ["golden"],
    # forbidden-miss: a forbidden tool with no fixture, so the call misses and fails closed;
    # wrong-args: the right tool, a number sent as a string, a nested value off, a key extra;
    # both: neither the path nor the answer; mid-miss: a miss on the first call while both
    # entries are still there (the second is served next).
    "tasks": [FORBIDDEN_MISS, WRONG_ARGS, BOTH, MID_MISS, PLAIN],
}

# taskId → (status, the reasons in order)
EXPECTED: dict[str, tuple[str, list[str]]] = {
    "forbidden-miss": ("fail-closed", [
        "forbidden tool billing:refund-all",
        "fixture miss (onMiss: fail): no unconsumed fixture matched the call to "
        "billing:refund-all (every entry was consumed by then)",
    ]),
    "wrong-args": ("fail", [
        'called billing:refund with different arguments: amountMinor: expected 4200, got "4200"; '
        'refund.reason.code: expected "dup", got "dupe"; note: expected nothing, got "x"',
    ]),
    "both": ("fail", [
        "trajectory (in-order): missing crm:lookup",
        'output does not match (exact): expected "ok", got "nope"',
    ]),
    "mid-miss": ("fail-closed", [
        "fixture miss (onMiss: fail): no unconsumed fixture matched the call to crm:lookup "
        "(unconsumed then: #0 crm:lookup (id: expected \"A\", got \"B\"), #1 billing:refund)",
    ]),
    "plain": ("fail", ['output does not match (exact): expected "ok", got "nope"']),
}  # fmt: skip


def in_order(text: str, parts: list[str]) -> bool:
    """Every part is in ``text``, each after the one before."""
    at = 0
    for part in parts:
        found = text.find(part, at)
        if found < 0:
            return False
        at = found + len(part)
    return True
