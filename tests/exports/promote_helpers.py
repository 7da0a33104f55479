"""Stored runs to promote trials from: a deterministic Python agent whose path depends on what its
live tools answer, run once against live tools, and replayed with no tool registered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio.to_thread
from typer.testing import CliRunner

from tests.engine.helpers import Ran, make_suite, run_suite
from wopeval.cli.app import app
from wopeval.engine.agent import AgentContext
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunSettings
from wopeval.events.store import EventStore
from wopeval.suite import parse_suite
from wopeval.wire.events import RunEvent, TrialFailed

AGENT = "core.test.agents.refunder"
LOOKUP, REFUND = "crm:lookup-order", "billing:refund"
ONE = RunSettings(concurrency=1)

# A hostile note: newlines, YAML-significant characters, a tag, unicode and controls.
HOSTILE = "line 1\nline 2: &anchor *alias !!python/object # not a comment\n- \"q\" 's' {x: [y]}"
HOSTILE += " ü 中文 🎉 \u2028 \x85 \x1b[31m \t%"
ORDERS: dict[str, dict[str, Any]] = {
    "A-1": {"status": "damaged", "totalMinor": 4200, "note": "box crushed"},
    "A-2": {"status": "late", "totalMinor": 1500, "note": "in transit"},
    "A-3": {"status": "damaged", "totalMinor": "4200", "note": "price as text"},
    "A-4": {"status": "damaged", "totalMinor": 99, "note": HOSTILE},
}


class Tools:
    """The live tools, counting every call that reaches one."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def lookup(self, args: Any) -> Any:
        self.calls.append(LOOKUP)
        return ORDERS[args["orderId"]]

    async def refund(self, args: Any) -> Any:
        self.calls.append(REFUND)
        return {"refundId": f"R-{args['orderId']}", "echo": args.get("memo")}


async def refunder(task_input: Any, ctx: AgentContext) -> Any:
    """Refunds damaged orders, and (its bug) late ones too; the amount as the tool said it."""
    order_id = task_input["orderId"]
    order = await ctx.call_tool(LOOKUP, {"orderId": order_id})
    if order.value["status"] in ("damaged", "late"):
        args = {"orderId": order_id, "amountMinor": order.value["totalMinor"]}
        if "memo" in task_input:
            args["memo"] = task_input["memo"]
        refund = await ctx.call_tool(REFUND, args)
        return {"refunded": refund.value["refundId"], "note": order.value["note"]}
    return {"refunded": None, "note": order.value["note"]}


def _task(task_id: str, order: str, expected: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"taskId": task_id, "input": {"orderId": order, **extra}, "expected": expected}


def _refund_path(amount: Any) -> dict[str, Any]:
    return {
        "match": "in-order",
        "calls": [
            {"tool": LOOKUP},
            {"tool": REFUND, "args": {"amountMinor": amount}, "argsMatch": "subset"},
        ],
    }


TASKS = [
    _task(
        "damaged",
        "A-1",
        {
            "kind": "golden",
            "match": {"strategy": "exact", "value": {"refunded": "R-A-1", "note": "box crushed"}},
            "trajectory": _refund_path(4200),
        },
    ),
    _task(
        "late",
        "A-2",
        {
            "kind": "trajectory",
            "trajectory": {"match": "in-order", "calls": [{"tool": LOOKUP}], "forbidden": [REFUND]},
        },
    ),
    _task("text-price", "A-3", {"kind": "trajectory", "trajectory": _refund_path(4200)}),
    _task(
        "hostile",
        "A-4",
        {"kind": "golden", "match": {"strategy": "contains", "value": "R-A-4"}},
        memo=HOSTILE,
    ),
]


def registry(tools: Tools | None = None) -> Registry:
    """The agent, and the live tools when given (a replay gets none: every miss fails)."""
    reg = Registry()
    reg.register_agent(AGENT, refunder)
    if tools is not None:
        reg.register_tool(LOOKUP, tools.lookup)
        reg.register_tool(REFUND, tools.refund)
    return reg


async def stored_run(store: EventStore, trials: int = 1) -> Ran:
    """The four tasks run against the live tools: damaged passes; late (a forbidden refund),
    text-price (the amount as text) fail; hostile passes."""
    suite = make_suite(TASKS, trials={"count": trials}) if trials > 1 else make_suite(TASKS)
    return await run_suite(store, suite, agent_id=AGENT, registry=registry(Tools()), settings=ONE)


async def replay(store: EventStore, document: dict[str, Any]) -> Ran:
    """The promoted suite run with the agent and no live tool."""
    suite = parse_suite(json.loads(json.dumps(document)))
    return await run_suite(store, suite, agent_id=AGENT, registry=registry(), settings=ONE)


def reasons(ran: Ran) -> list[TrialFailed]:
    failed = [e.typed for e in ran.events if e.type == "wopeval.trial-failed"]
    return [r for r in failed if isinstance(r, TrialFailed)]


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


async def acli(*args: str) -> tuple[int, str]:
    """The command line from an async test (it runs its own event loop, so in a thread)."""
    return await anyio.to_thread.run_sync(lambda: cli(*args))


def promoted(path: Path) -> dict[str, Any]:
    from wopeval.suite.load import read_document

    doc = read_document(path)
    assert isinstance(doc, dict)
    return doc


def events_of(ran: Ran) -> list[RunEvent]:
    return ran.events
