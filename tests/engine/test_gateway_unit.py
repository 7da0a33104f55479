"""The RFC 0244 §D tool gateway on its own: no store, no engine, a live tool that counts calls.

Each test states one rule of the gateway's contract (its module docstring, §D and §H): which
fixture is served, when a live tool may be reached, how a miss and a failing tool are answered.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from wopeval.engine import gateway as gateway_module
from wopeval.engine.gateway import (
    FIXTURE_ERROR_KEY,
    TOOL_FAILED,
    TOOL_UNAVAILABLE,
    LiveTool,
    ToolGateway,
)
from wopeval.suite.models import Fixtures
from wopeval.wire.events import FIXTURE_MISS_ERROR_CODE

TOOL = "billing:refund"


class Live:
    """A live tool with an observable side effect: every real call is appended to ``calls``."""

    def __init__(self, value: Any = None, error: Exception | None = None) -> None:
        self.calls: list[Any] = []
        self.value = {"live": True} if value is None else value
        self.error = error

    async def __call__(self, args: Any) -> Any:
        self.calls.append(args)
        if self.error is not None:
            raise self.error
        return self.value


def _fixtures(**members: Any) -> Fixtures:
    return Fixtures.model_validate(members)


def _entry(args: Any = None, response: Any = "canned", tool: str = TOOL, **more: Any) -> Any:
    entry: dict[str, Any] = {"tool": tool, "response": response, **more}
    if args is not None:
        entry["args"] = args
        entry.setdefault("argsMatch", "exact")
    return entry


def _gateway(fixtures: Fixtures | None, live: LiveTool | None, **kwargs: Any) -> ToolGateway:
    tools: dict[str, LiveTool] = {} if live is None else {TOOL: live}
    return ToolGateway(fixtures, tools, **kwargs)


# --- which path a call takes ---------------------------------------------------------------


async def test_0244_D_unfixtured_trial_calls_the_live_tool() -> None:
    live = Live()
    served = await _gateway(None, live).call(TOOL, {"a": 1})
    assert live.calls == [{"a": 1}]
    assert served.fixture == "live"
    assert served.index is None
    assert served.result.ok
    assert served.result.value == {"live": True}
    assert served.result.trust == "untrusted"
    assert isinstance(served.duration_ms, int)


async def test_0244_D_memory_seed_alone_leaves_calls_live() -> None:
    live = Live()
    served = await _gateway(_fixtures(memorySeed=[{"k": "v"}]), live).call(TOOL, {})
    assert (served.fixture, len(live.calls)) == ("live", 1)


@pytest.mark.parametrize("on_miss", ["fail", None])
async def test_0244_D_miss_fails_closed_without_reaching_the_live_tool(on_miss: str | None) -> None:
    live = Live()
    members: dict[str, Any] = {"toolResponses": [_entry({"amount": 42})]}
    if on_miss is not None:
        members["onMiss"] = on_miss
    served = await _gateway(_fixtures(**members), live).call(TOOL, {"amount": 999})
    assert live.calls == []
    assert served.fixture == "miss-failed"
    assert served.result.ok is False
    assert served.result.error_code == FIXTURE_MISS_ERROR_CODE
    assert served.duration_ms is None
    assert served.index is None


async def test_0244_D_on_miss_fail_without_tool_responses_never_calls_live() -> None:
    """``fixtures: {onMiss: "fail"}`` alone fixtures the trial: every call misses and fails."""
    live = Live()
    gateway = _gateway(_fixtures(onMiss="fail"), live)
    before: list[str] = []

    async def note() -> None:
        before.append("before_live")

    gateway.before_live = note
    served = await gateway.call(TOOL, {})
    assert live.calls == []
    assert before == []
    assert served.fixture == "miss-failed"
    assert served.result.error_code == FIXTURE_MISS_ERROR_CODE


async def test_0244_D_on_miss_live_calls_the_live_tool_and_marks_the_miss() -> None:
    live = Live()
    fixtures = _fixtures(toolResponses=[_entry({"amount": 42})], onMiss="live")
    served = await _gateway(fixtures, live).call(TOOL, {"amount": 999})
    assert live.calls == [{"amount": 999}]
    assert served.fixture == "miss-live"
    assert served.result.ok
    assert served.result.value == {"live": True}
    assert isinstance(served.duration_ms, int)


async def test_0244_D_live_shadow_calls_live_even_when_a_fixture_matches() -> None:
    live = Live()
    fixtures = _fixtures(toolResponses=[_entry({"amount": 42})], onMiss="fail")
    gateway = _gateway(fixtures, live, ignore_fixtures=True)
    first = await gateway.call(TOOL, {"amount": 42})
    second = await gateway.call(TOOL, {"amount": 7})
    assert live.calls == [{"amount": 42}, {"amount": 7}]
    assert (first.fixture, second.fixture) == ("live", "live")
    assert first.result.value == {"live": True}


# --- which fixture is served ---------------------------------------------------------------


async def test_0244_D_first_unconsumed_match_is_served_then_consumed() -> None:
    live = Live()
    fixtures = _fixtures(
        toolResponses=[
            _entry({"amount": 1}, "other args"),
            _entry({"amount": 42}, "first", tool="billing:other"),
            _entry({"amount": 42}, "first"),
            _entry({"amount": 42}, "second"),
        ]
    )
    gateway = _gateway(fixtures, live)
    served = [await gateway.call(TOOL, {"amount": 42}) for _ in range(3)]
    assert [s.fixture for s in served] == ["served", "served", "miss-failed"]
    assert [s.index for s in served] == [2, 3, None]
    assert [s.result.value for s in served[:2]] == ["first", "second"]
    assert all(s.result.ok and s.result.trust == "untrusted" for s in served[:2])
    assert all(s.duration_ms is None for s in served)
    assert live.calls == []


async def test_0244_D_a_fixture_without_args_matches_any_args() -> None:
    gateway = _gateway(_fixtures(toolResponses=[_entry(response=[1, 2])]), Live())
    served = await gateway.call(TOOL, {"anything": True})
    assert (served.fixture, served.index, served.result.value) == ("served", 0, [1, 2])


async def test_0244_D_a_fixture_cursor_is_per_gateway() -> None:
    fixtures = _fixtures(toolResponses=[_entry({"amount": 42})])
    for _ in range(2):  # one gateway per trial: the second trial is served afresh
        served = await _gateway(fixtures, Live()).call(TOOL, {"amount": 42})
        assert served.fixture == "served"


async def test_0244_H_a_served_response_is_a_copy() -> None:
    response = {"items": [1, 2]}
    fixtures = _fixtures(toolResponses=[_entry(response=response)])
    served = await _gateway(fixtures, Live()).call(TOOL, {})
    served.result.value["items"].append(3)
    assert fixtures.toolResponses is not None
    assert fixtures.toolResponses[0].response == {"items": [1, 2]}


# --- a fixture that stands for a recorded tool error ---------------------------------------


async def _serve(response: Any) -> Any:
    gateway = _gateway(_fixtures(toolResponses=[_entry(response=response)]), Live())
    return (await gateway.call(TOOL, {})).result


async def test_error_shaped_fixture_is_served_as_that_tool_error() -> None:
    result = await _serve({FIXTURE_ERROR_KEY: {"code": "billing.denied", "message": "no"}})
    assert result.ok is False
    assert (result.error_code, result.error_message) == ("billing.denied", "no")


@pytest.mark.parametrize("message", [None, 7])
async def test_error_shaped_fixture_without_a_text_message_has_an_empty_one(message: Any) -> None:
    error: dict[str, Any] = {"code": "billing.denied"}
    if message is not None:
        error["message"] = message
    result = await _serve({FIXTURE_ERROR_KEY: error})
    assert result.ok is False
    assert (result.error_code, result.error_message) == ("billing.denied", "")


@pytest.mark.parametrize(
    "response",
    [
        {FIXTURE_ERROR_KEY: {"code": "c", "message": "m"}, "extra": 1},
        {FIXTURE_ERROR_KEY: {"code": "", "message": "m"}},
        {FIXTURE_ERROR_KEY: {"code": 5, "message": "m"}},
        {FIXTURE_ERROR_KEY: {"message": "m"}},
        {FIXTURE_ERROR_KEY: "c"},
        [{FIXTURE_ERROR_KEY: {"code": "c"}}],
    ],
    ids=["extra-key", "empty-code", "number-code", "no-code", "not-an-object", "in-a-list"],
)
async def test_a_response_not_exactly_error_shaped_is_served_as_a_value(response: Any) -> None:
    result = await _serve(response)
    assert result.ok
    assert result.value == response
    assert result.trust == "untrusted"


# --- the live call: unavailable, failing, timed, committed before -------------------------


@pytest.mark.parametrize(
    ("fixtures", "how"),
    [(None, "live"), (_fixtures(toolResponses=[], onMiss="live"), "miss-live")],
)
async def test_a_live_call_without_a_registered_tool_is_a_tool_error(
    fixtures: Fixtures | None, how: str
) -> None:
    gateway = _gateway(fixtures, None)
    committed: list[str] = []

    async def note() -> None:
        committed.append("before_live")

    gateway.before_live = note
    served = await gateway.call(TOOL, {})
    assert served.fixture == how
    assert served.result.ok is False
    assert served.result.error_code == TOOL_UNAVAILABLE
    assert served.duration_ms is None
    assert committed == []


async def test_a_live_tool_that_raises_is_a_tool_error_naming_the_exception() -> None:
    live = Live(error=ValueError("amount must be positive"))
    served = await _gateway(None, live).call(TOOL, {"amount": -1})
    assert live.calls == [{"amount": -1}]
    assert served.fixture == "live"
    assert served.result.ok is False
    assert served.result.error_code == TOOL_FAILED
    message = served.result.error_message or ""
    assert "ValueError" in message
    assert "amount must be positive" in message
    assert isinstance(served.duration_ms, int)


async def test_a_live_tool_error_message_is_bounded() -> None:
    served = await _gateway(None, Live(error=RuntimeError("x" * 10_000))).call(TOOL, {})
    message = served.result.error_message or ""
    assert message.startswith("RuntimeError: xxx")
    assert len(message) == 500


async def test_before_live_is_awaited_before_each_live_call() -> None:
    order: list[str] = []

    class Ordered(Live):
        async def __call__(self, args: Any) -> Any:
            order.append("tool")
            return await super().__call__(args)

    gateway = _gateway(_fixtures(toolResponses=[], onMiss="live"), Ordered())

    async def note() -> None:
        order.append("commit")

    gateway.before_live = note
    await gateway.call(TOOL, {})
    await gateway.call(TOOL, {})
    assert order == ["commit", "tool", "commit", "tool"]


class Clock:
    """A stand-in for the ``time`` module: the live tool moves it on by ``step`` seconds."""

    def __init__(self) -> None:
        self.now = 100.0

    def perf_counter(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("step", "expected_ms"),
    [(2.0, 2000), (0.25, 250), (0.0006, 1), (0.0004, 0), (0.0, 0), (-0.5, 0)],
)
@pytest.mark.parametrize("fails", [False, True])
async def test_a_live_call_reports_its_duration_in_whole_milliseconds(
    monkeypatch: pytest.MonkeyPatch, step: float, expected_ms: int, fails: bool
) -> None:
    clock = Clock()
    monkeypatch.setattr(gateway_module, "time", SimpleNamespace(perf_counter=clock.perf_counter))

    async def tool(args: Any) -> Any:
        clock.now += step
        if fails:
            raise RuntimeError("down")
        return "ok"

    served = await _gateway(None, tool).call(TOOL, {})
    assert served.result.ok is not fails
    assert served.duration_ms == expected_ms


# --- yielding to the event loop --------------------------------------------------------------


async def test_0244_B_the_gateway_yields_every_yield_every_calls() -> None:
    """A loop of calls that await nothing else lets the event loop run once per
    ``YIELD_EVERY`` calls: another task gets a turn exactly that often."""
    gateway = _gateway(None, None, max_calls=None)
    turns = 0

    async def other_task() -> None:
        nonlocal turns
        while True:
            await anyio.lowlevel.checkpoint()
            turns += 1

    async with anyio.create_task_group() as group:
        group.start_soon(other_task)
        await anyio.lowlevel.checkpoint()  # it starts, and waits at its first checkpoint
        started = turns
        for _ in range(3 * gateway_module.YIELD_EVERY + 1):
            assert await gateway.admit()
        group.cancel_scope.cancel()
    assert turns - started == 3
