"""The agent interface: an async callable receiving the task ``input`` and an :class:`AgentContext`.

An agent reaches the outside world only through its context: tools go through the tool gateway
(fixtures, live tools, or a fail-closed error), memory is the trial's private copy of the
``memorySeed`` snapshot, model usage is reported as ``provider.usage``, and delegation runs another
agent inside the same trial bracket.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from wopeval.errors import RunError
from wopeval.wire.events import ProviderUsage

Trust = Literal["untrusted"]

PERMISSIVE_SCHEMA: dict[str, Any] = {"type": "object", "additionalProperties": True}
# A call whose arguments could not be read (not JSON, not a JSON object) is recorded with
# ``inputs = {MALFORMED_ARGUMENTS: "<the raw text>"}`` and answered with this error code.
MALFORMED_ARGUMENTS = "x-wopeval-malformed-arguments"
INVALID_ARGUMENTS = "wopeval.invalid_arguments"


def _permissive() -> dict[str, Any]:
    return dict(PERMISSIVE_SCHEMA)


@dataclass(frozen=True)
class ToolSpec:
    """What a model is told about one tool: its OpenWOP name, what it does, and the JSON Schema
    of its arguments (a permissive object schema when nothing more is known)."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=_permissive)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


@dataclass(frozen=True)
class ToolResult:
    """What a tool call returns to the agent. Never raised: a failed call is ``ok=False``.

    ``trust`` is always ``"untrusted"``: live results and injected fixture responses are handled
    identically (RFC 0244 §H), so an agent must treat ``value`` as data, never as instructions.
    """

    ok: bool
    value: Any = None
    error_code: str | None = None
    error_message: str | None = None
    trust: Trust = "untrusted"


@dataclass(frozen=True)
class Usage:
    """One model call's usage (RFC 0026 ``provider.usage``)."""

    provider: str
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None = None


def usage_payload(usage: Usage) -> ProviderUsage:
    """The ``provider.usage`` payload (RFC 0026); ``costEstimateUsd`` only when known."""
    return ProviderUsage(
        provider=usage.provider,
        model=usage.model,
        inputTokens=usage.input_tokens,
        outputTokens=usage.output_tokens,
        costEstimateUsd=usage.cost_usd,
    )


class ConversationEnded(RunError):
    """Raised by ``ctx.ask_user`` once the conversation with a simulated user is over: the user
    stopped (``how == "stop"``; ``reply`` is its last reply, for the agent to read), or it
    ended on the agent's side: a message the script does not cover (:class:`UserMiss`) or one
    too many (:class:`TurnsExceeded`). An agent may catch it and return its final answer;
    after a miss or too many turns the trial fails whatever it returns."""

    def __init__(self, how: str, message: str, reply: Any = None) -> None:
        super().__init__(message)
        self.how = how
        self.reply = reply


class UserMiss(ConversationEnded):
    """The agent sent the scripted user a message no unconsumed reply matches (fails closed)."""


class TurnsExceeded(ConversationEnded):
    """The agent sent the user more messages than the script's ``maxTurns``."""


class UserFailed(ConversationEnded):
    """The simulated (LLM) user itself failed: its model's server, its reply's format, its
    ``maxTurns`` (``user-error``, the user side's failure, not the agent's)."""


_ENDED: dict[str, tuple[type[ConversationEnded], str]] = {
    "stop": (ConversationEnded, "the user ended the conversation"),
    "miss": (UserMiss, "the user's script has no reply to this message (user-miss)"),
    "max-turns": (TurnsExceeded, "more messages than the user's maxTurns (max-turns)"),
    "error": (UserFailed, "the simulated user failed (user-error)"),
}


def conversation_ended(how: str, reply: Any) -> ConversationEnded:
    """What ``ask_user`` raises once the conversation ended ``how``."""
    kind, message = _ENDED[how]
    return kind(how, message, reply)


class Memory(Protocol):
    """The trial's private memory: seeded from ``memorySeed``, invisible to every other trial."""

    def entries(self) -> list[dict[str, Any]]: ...

    def write(self, entry: dict[str, Any]) -> None: ...

    def get(self, key: str) -> Any: ...


class AgentContext(Protocol):
    """Everything an agent may touch during one trial."""

    @property
    def task_id(self) -> str: ...

    @property
    def trial_index(self) -> int: ...

    @property
    def agent_id(self) -> str: ...

    @property
    def memory(self) -> Memory: ...

    @property
    def budget_exceeded(self) -> bool:
        """True once the run's spend passed a cost ceiling (``--max-cost``, the suite's
        ``thresholds.maxCostUsd``, the host's): a model-backed agent stops its loop then."""
        ...

    @property
    def has_user(self) -> bool:
        """The task has a simulated user (``x-wopeval-user``) to converse with (``ask_user``)."""
        ...

    def tools(self) -> list[ToolSpec]:
        """The tools this trial offers: live tools with their specs, then the task's fixtured
        tools (a permissive schema unless a spec is known)."""
        ...

    async def call_tool(self, tool: str, args: Any = None) -> ToolResult: ...

    async def refuse_call(self, tool: str, inputs: Any, code: str, message: str) -> ToolResult:
        """Record a call no tool may receive (its arguments could not be read): the call with
        ``inputs`` and its error, so the trajectory and ``forbidden`` see the attempt; the
        gateway is never reached. Returns the error result."""
        ...

    async def report_usage(self, usage: Usage) -> None: ...

    async def ask_user(self, message: Any) -> Any:
        """Send the task's simulated user (``x-wopeval-user``) a message (a text, or JSON for a
        structured question); returns its reply. Raises :class:`ConversationEnded` once the
        conversation is over (see there), and :class:`RuntimeError` on a task without a user."""
        ...

    async def delegate(self, agent_id: str, task_input: Any) -> Any: ...


AgentFn = Callable[[Any, AgentContext], Awaitable[Any]]


@dataclass
class TrialMemory:
    """A deep copy of the seed; ``get`` finds the newest entry whose ``key`` equals ``key``."""

    _entries: list[dict[str, Any]] = field(default_factory=list)

    def entries(self) -> list[dict[str, Any]]:
        return [dict(entry) for entry in self._entries]

    def write(self, entry: dict[str, Any]) -> None:
        self._entries.append(dict(entry))

    def get(self, key: str) -> Any:
        for entry in reversed(self._entries):
            if entry.get("key") == key:
                return entry.get("value")
        return None
