"""docs/worlds.md's complete example is a suite that loads and runs as the page says: the
reference agent passes, the one that never confirms fails with the reason the page prints, and
one that cancels twice gets the declared tool error and still leaves one refund."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from tests.engine.helpers import run_suite
from wopeval.engine.agent import AgentContext
from wopeval.engine.registry import Registry
from wopeval.events.store import EventStore
from wopeval.suite import parse_suite
from wopeval.wire.events import TRIAL_FAILED, WORLD_STATE

PAGE = Path(__file__).resolve().parents[2] / "docs" / "worlds.md"
AGENT = "docs.agent"


def example() -> dict[str, Any]:
    block = re.search(r"```yaml\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    assert block is not None
    data: dict[str, Any] = yaml.safe_load(block.group(1))
    return data


def printed_reason() -> str:
    text = PAGE.read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if x.strip().startswith("final state (subset)"))
    return line.strip()


async def reference(task_input: Any, ctx: AgentContext) -> Any:
    booking = await ctx.call_tool("get_booking", {"ref": task_input["ref"]})
    args = {"ref": task_input["ref"], "confirm": True, "notify": booking.value["customer"]}
    return (await ctx.call_tool("cancel_booking", args)).value


async def unconfirmed(task_input: Any, ctx: AgentContext) -> Any:
    return (await ctx.call_tool("cancel_booking", {"ref": task_input["ref"]})).value


async def twice(task_input: Any, ctx: AgentContext) -> Any:
    args = {"ref": task_input["ref"], "confirm": True, "notify": "ann@example.com"}
    await ctx.call_tool("cancel_booking", args)
    again = await ctx.call_tool("cancel_booking", args)
    return again.error_code


async def run(tmp_path: Path, agent: Any) -> Any:
    registry = Registry()
    registry.register_agent(AGENT, agent)
    store = await EventStore.open(str(tmp_path / "store.db"))
    try:
        return await run_suite(store, parse_suite(example()), agent_id=AGENT, registry=registry)
    finally:
        await store.close()


async def test_33_3_docs_example_reference_passes(tmp_path: Path) -> None:
    ran = await run(tmp_path, reference)
    assert ran.done.passed
    (state,) = ran.of_type(WORLD_STATE)
    assert state.payload["state"]["outbox"] == [{"to": "ann@example.com", "template": "cancelled"}]


async def test_33_3_docs_example_unconfirmed_fails_with_the_printed_reason(
    tmp_path: Path,
) -> None:
    ran = await run(tmp_path, unconfirmed)
    assert not ran.done.passed
    (reason,) = ran.of_type(TRIAL_FAILED)
    assert reason.payload["message"] == printed_reason()


async def test_33_3_docs_example_twice_gets_the_declared_error(tmp_path: Path) -> None:
    ran = await run(tmp_path, twice)
    assert ran.done.passed
    (decided,) = [e for e in ran.events if e.type == "agent.decided"]
    assert decided.payload["decision"] == "not_cancellable"
