"""The tool gateway: the only way an agent reaches a tool (RFC 0244 §D, §H).

One gateway per trial, so the fixture cursor resets per trial. For each call:

1. In a fixtured trial, serve the first *unconsumed* ``toolResponses`` entry whose ``tool`` and
   ``args``/``argsMatch`` match; consume it.
2. On a miss under ``onMiss: "fail"`` (or absent ``onMiss``, as the RFC advises), return a tool
   error ``wopeval.fixture_miss``. No live tool is looked up, let alone called.
3. On a miss under ``onMiss: "live"``, call the registered live tool; the miss is still counted.
4. In an unfixtured trial (no ``toolResponses``, no ``onMiss`` and no world), or in
   ``live-shadow``, call the live tool.

A task with a world (``x-wopeval-world``) is fixtured: a call no unconsumed ``toolResponses``
entry matches goes to the trial's :class:`~wopeval.engine.world.WorldState`, and a call the
world does not serve either is the miss of steps 2 and 3. A world's answer is served like a
fixture (``served``, and the rule's index).

A served entry whose ``response`` is exactly ``{"x-wopeval-toolError": {"code", "message"}}`` is
returned as that tool error (a recorded tool error, :mod:`wopeval.exports.record`).

Live results and fixture responses leave through the same :func:`_untrusted` wrapper (§H).

Every :data:`YIELD_EVERY` calls the gateway yields to the event loop (a checkpoint), so an
``async`` agent calling fixture-served tools in a loop can still be cancelled at its trial's
timeout and never starves the other trials for long; a checkpoint at every call would cost more
than the call. Past ``max_calls`` calls in the trial, a call is refused as the tool error
``wopeval.tool_call_cap`` (no fixture consumed, no live tool reached) and the gateway is
``capped``: the trial fails with a reason naming the cap.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

import anyio.lowlevel

from wopeval.engine.agent import ToolResult
from wopeval.engine.copies import JsonCopies
from wopeval.engine.world import WorldAnswer, WorldState
from wopeval.errors import InfrastructureError, describe
from wopeval.grading.jsonmatch import matches
from wopeval.suite.models import Fixtures
from wopeval.wire.events import FIXTURE_MISS_ERROR_CODE, FixtureOutcome

LiveTool = Callable[[Any], Awaitable[Any]]
TOOL_UNAVAILABLE = "wopeval.tool_unavailable"
TOOL_FAILED = "wopeval.tool_failed"
# A fixture ``response`` that is exactly ``{FIXTURE_ERROR_KEY: {"code", "message"}}`` is served
# as that tool error (a recorded tool error, :mod:`wopeval.exports.record`).
FIXTURE_ERROR_KEY = "x-wopeval-toolError"
TOOL_CALL_CAP = "wopeval.tool_call_cap"
TOOL_RESULT_CAP = "wopeval.tool_result_cap"
# How many calls a trial makes between two yields to the event loop (see the module's docstring).
YIELD_EVERY = 16


@dataclass(frozen=True)
class Served:
    """A gateway answer plus how it was served, for the ``agent.tool-returned`` event."""

    result: ToolResult
    fixture: FixtureOutcome
    duration_ms: int | None
    index: int | None = None  # the ``fixtures.toolResponses`` entry that served it
    world_rule: int | None = None  # the world rule that served it (among its tool's)


def _untrusted(value: Any) -> ToolResult:
    """Every successful tool output, live or fixture, is wrapped the same way (RFC 0244 §H)."""
    return ToolResult(ok=True, value=value, trust="untrusted")


class GatewayOptions(TypedDict, total=False):
    """How a trial's gateway is bounded (the keyword arguments of :class:`ToolGateway`)."""

    ignore_fixtures: bool
    copies: JsonCopies | None
    max_calls: int | None
    world: WorldState | None


class ToolGateway:
    """Per-trial gateway. Not shared between trials: its fixture cursor is trial state."""

    def __init__(
        self,
        fixtures: Fixtures | None,
        live_tools: Mapping[str, LiveTool],
        *,
        ignore_fixtures: bool = False,
        copies: JsonCopies | None = None,
        max_calls: int | None = None,
        world: WorldState | None = None,
    ) -> None:
        self._live_tools = live_tools
        self.max_calls = max_calls
        self.calls = 0
        self._copies = copies if copies is not None else JsonCopies()
        self.world = None if ignore_fixtures else world
        fixtured = fixtures is not None and fixtures.fixtured
        self._fixtured = (fixtured or self.world is not None) and not ignore_fixtures
        self._responses = list(fixtures.toolResponses or ()) if fixtures else []
        self._consumed = [False] * len(self._responses)
        self._on_miss = (fixtures.onMiss if fixtures else None) or "fail"
        # Awaited right before a live tool is called (the trial commits its log so far: a
        # resume must know the call may have reached the tool).
        self.before_live: Callable[[], Awaitable[None]] | None = None

    @property
    def capped(self) -> bool:
        """A call was refused: the trial made more than ``max_calls``."""
        return self.max_calls is not None and self.calls > self.max_calls

    async def admit(self) -> bool:
        """Count a call, every :data:`YIELD_EVERY` th yielding to the event loop (where a
        trial past its timeout is cancelled); False when it is over the cap: :meth:`refusal`
        answers it."""
        self.calls += 1
        if self.calls % YIELD_EVERY == 0:
            await anyio.lowlevel.checkpoint()
        return self.max_calls is None or self.calls <= self.max_calls

    def refusal(self) -> ToolResult:
        """The answer to a call over the cap."""
        message = f"this trial made more than maxToolCalls = {self.max_calls} tool calls"
        return ToolResult(ok=False, error_code=TOOL_CALL_CAP, error_message=message)

    async def call(self, tool: str, args: Any) -> Served:
        """Serve one admitted call (see :meth:`admit`)."""
        if not self._fixtured:
            return await self._live(tool, args, "live")
        index = self._select(tool, args)
        if index is not None:
            self._consumed[index] = True
            return self._serve(index)
        if self.world is not None:
            answer = self.world.call(tool, args)
            if answer is not None:
                return Served(_world_result(answer), "served", None, world_rule=answer.rule)
        if self._on_miss == "live":
            return await self._live(tool, args, "miss-live")
        error = ToolResult(
            ok=False,
            error_code=FIXTURE_MISS_ERROR_CODE,
            error_message=self._miss_message(),
        )
        return Served(error, "miss-failed", None)

    def _miss_message(self) -> str:
        if self.world is None:
            return "no unconsumed fixture matches this call; onMiss is fail"
        return "no unconsumed fixture and no world rule matches this call; onMiss is fail"

    def consume(self, index: int) -> None:
        """Mark fixture entry ``index`` consumed without serving it (a forked trial's prefix
        answered that call from the log: :mod:`wopeval.engine.fork_prefix`)."""
        if 0 <= index < len(self._consumed):
            self._consumed[index] = True

    def _serve(self, index: int) -> Served:
        """Fixture ``index``'s answer, a copy: an agent mutating what it was served must not
        change the suite (§B, §H)."""
        response = self._copies.copy(self._responses[index].response)
        return Served(_fixture_result(response), "served", None, index)

    def _select(self, tool: str, args: Any) -> int | None:
        for index, entry in enumerate(self._responses):
            if not self._consumed[index] and matches(entry, tool, args):
                return index
        return None

    async def _live(self, tool: str, args: Any, how: FixtureOutcome) -> Served:
        live = self._live_tools.get(tool)
        if live is None:
            error = ToolResult(
                ok=False, error_code=TOOL_UNAVAILABLE, error_message="no live tool is registered"
            )
            return Served(error, how, None)
        if self.before_live is not None:
            await self.before_live()
        started = time.perf_counter()
        try:
            value = await live(args)
        except InfrastructureError:  # the tool's server is gone: the trial's, not the agent's
            raise
        except Exception as exc:  # a tool error the agent sees, never a crash of the run
            message = describe(exc)  # for the agent to correct itself
            failed = ToolResult(ok=False, error_code=TOOL_FAILED, error_message=message)
            return Served(failed, how, _elapsed_ms(started))
        return Served(_untrusted(value), how, _elapsed_ms(started))


def _fixture_result(response: Any) -> ToolResult:
    """A served fixture: its response, or the recorded tool error it stands for."""
    if isinstance(response, dict) and set(response) == {FIXTURE_ERROR_KEY}:
        error = response[FIXTURE_ERROR_KEY]
        if isinstance(error, dict) and isinstance(error.get("code"), str) and error["code"]:
            message = error.get("message")
            return ToolResult(
                ok=False,
                error_code=error["code"],
                error_message=message if isinstance(message, str) else "",
            )
    return _untrusted(response)


def _world_result(answer: WorldAnswer) -> ToolResult:
    if answer.ok:
        return _untrusted(answer.value)
    return ToolResult(ok=False, error_code=answer.code, error_message=answer.message)


def _elapsed_ms(started: float) -> int:
    return max(0, round((time.perf_counter() - started) * 1000))
