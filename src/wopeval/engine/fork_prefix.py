"""A forked trial's prefix: its first N tool calls served from the log, in order, strictly.

``wopeval fork RUN --task T --trial I --at N`` re-runs one stored trial with the first N calls
that reached its tool gateway answered as they were recorded (:class:`ForkPrefix`), and every
call after them served as usual (the suite's fixtures, the live tools). The prefix is an ordered
fixture list under ``onMiss: "fail"``: call ``i`` (0-based) must be recorded call ``i``'s tool
with exactly its arguments (:func:`divergence`, the ``exact`` rule of
:func:`wopeval.grading.argdiff.arg_differences`); a call that is not is a fail-closed miss
(``wopeval.fixture_miss``, no tool reached) whose message names the call index and the first
differing field, and so is every call after it, since a trial that left its recorded path can no
longer be the forked one. :attr:`PrefixGateway.divergence` is then the trial's failure.

A prefix call is answered with the recorded result or tool error. A recorded fail-closed miss is
served as that same miss (the trial fails closed again, as it did). A call a suite fixture
answered consumes that fixture entry again, so the calls after the prefix find the fixture
cursor where the original trial left it; a call the task's world answered is applied to the
trial's copy of the world again (a world is deterministic), so they find its state too.

Under the original run's model cassette (``wopeval fork --cassette``, prefix mode of
:mod:`wopeval.agents.cassette`), the trial's model turns are served from its recordings until
the gateway has answered the last recorded call (:func:`~wopeval.agents.cassette.leave_prefix`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Unpack

from wopeval.agents.cassette import leave_prefix
from wopeval.engine.agent import ToolResult
from wopeval.engine.gateway import GatewayOptions, LiveTool, Served, ToolGateway
from wopeval.grading.argdiff import arg_differences, shown
from wopeval.suite.models import Fixtures
from wopeval.wire.events import FIXTURE_MISS_ERROR_CODE, Failure
from wopeval.wire.vocab import FORK_DIVERGED

__all__ = ["ForkPrefix", "PrefixCall", "PrefixGateway", "divergence"]


@dataclass(frozen=True)
class PrefixCall:
    """One recorded call of the prefix and its recorded answer."""

    tool: str
    args: Any
    ok: bool
    outcome: Any = None
    error_code: str | None = None
    error_message: str | None = None
    missed: bool = False  # a fail-closed miss in the original: served as one again
    fixture_index: int | None = None  # the suite fixture entry that answered it


@dataclass(frozen=True)
class ForkPrefix:
    """The calls served from the log, and the forked trial's index (the agent sees it as its
    ``trial_index``, so the trial is the one it was)."""

    calls: tuple[PrefixCall, ...]
    trial_index: int


def divergence(index: int, recorded: PrefixCall, tool: str, args: Any) -> str | None:
    """Where call ``index`` of the prefix differs from the recorded one (its tool first, then
    its first differing argument, as a key path), or None when it is the recorded call."""
    if tool != recorded.tool:
        return (
            f"call {index} of the prefix differs from the recorded call at tool: "
            f"recorded {shown(recorded.tool)}, got {shown(tool)}"
        )
    differences = arg_differences("exact", recorded.args, args)
    if not differences:
        return None
    first = differences[0]
    where = "args" + (f".{first.path}" if first.path else "")
    return (
        f"call {index} of the prefix ({tool}) differs from the recorded call at {where}: "
        f"recorded {shown(first.expected)}, got {shown(first.observed)}"
    )


def _miss(message: str) -> Served:
    return Served(
        ToolResult(ok=False, error_code=FIXTURE_MISS_ERROR_CODE, error_message=message),
        "miss-failed",
        None,
    )


class PrefixGateway(ToolGateway):
    """A trial's gateway that serves the fork's prefix first (see the module's docstring)."""

    def __init__(
        self,
        prefix: ForkPrefix,
        fixtures: Fixtures | None,
        live_tools: Mapping[str, LiveTool],
        **options: Unpack[GatewayOptions],
    ) -> None:
        super().__init__(fixtures, live_tools, **options)
        self._prefix = prefix.calls
        self._next = 0
        if not self._prefix:
            leave_prefix()  # no recorded call: every model call is live too
        # Why the trial left the prefix (the first divergence), or None.
        self.divergence: Failure | None = None

    async def call(self, tool: str, args: Any) -> Served:
        if self.divergence is not None:
            return _miss(f"the trial already left its forked prefix: {self.divergence.message}")
        index = self._next
        if index >= len(self._prefix):
            return await super().call(tool, args)
        self._next = index + 1
        recorded = self._prefix[index]
        why = divergence(index, recorded, tool, args)
        if why is not None:
            self.divergence = Failure(exceptionType=FORK_DIVERGED, message=why)
            return _miss(why)
        if self._next == len(self._prefix):
            leave_prefix()  # the model turns after the last recorded answer are live
        return self._replay(recorded)

    def _replay(self, recorded: PrefixCall) -> Served:
        """The recorded answer, a copy (the agent may mutate what it is served)."""
        if recorded.missed:
            return _miss(recorded.error_message or "no unconsumed fixture matches this call")
        if recorded.fixture_index is not None:
            self.consume(recorded.fixture_index)
        elif self.world is not None:  # the world served it: its effects again, so the calls
            self.world.call(recorded.tool, recorded.args)  # after the prefix see its state
        if not recorded.ok:
            error = ToolResult(
                ok=False,
                error_code=recorded.error_code or "error",
                error_message=recorded.error_message or "",
            )
            return Served(error, "served", None, recorded.fixture_index)
        value = self._copies.copy(recorded.outcome)
        result = ToolResult(ok=True, value=value, trust="untrusted")  # as every result (§H)
        return Served(result, "served", None, recorded.fixture_index)
