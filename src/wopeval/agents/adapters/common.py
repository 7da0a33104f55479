"""What every framework adapter shares: the prompt from the task input, the tool result the
framework's model sees (untrusted data, RFC 0244 §H), the answer as JSON, a call whose argument
text cannot be read (recorded, never executed), and the trial's spend (priced, bounded)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from wopeval.agents.definition import Price
from wopeval.agents.openai_compat import AgentStopped, InvalidToolArguments, parse_arguments
from wopeval.engine.agent import (
    INVALID_ARGUMENTS,
    MALFORMED_ARGUMENTS,
    AgentContext,
    ToolResult,
    Usage,
)


def prompt_of(task_input: Any) -> str:
    """The task input as the user prompt: a string as is, anything else as JSON."""
    import json

    return task_input if isinstance(task_input, str) else json.dumps(task_input)


def untrusted(result: ToolResult) -> dict[str, Any]:
    """A gateway answer as the framework's tool return: data marked untrusted (§H)."""
    if result.ok:
        return {"trust": result.trust, "ok": True, "data": result.value}
    error = {"code": result.error_code, "message": result.error_message}
    return {"trust": result.trust, "ok": False, "error": error}


def jsonable_output(output: Any) -> Any:
    """A framework's structured output (a pydantic model) as plain JSON."""
    if isinstance(output, BaseModel):
        return output.model_dump(mode="json")
    return output


async def call_with_text(ctx: AgentContext, tool: str, text: str | None) -> ToolResult:
    """Call ``tool`` with the model's raw argument text. Text that is not a JSON object is
    refused as the ``--model`` agent reads it (:func:`parse_arguments`), but recorded:
    ``inputs = {MALFORMED_ARGUMENTS: text}``, never executed, the error returned to the model."""
    try:
        args = parse_arguments(tool, text)
    except InvalidToolArguments:
        return await refuse_malformed(ctx, tool, text or "")
    return await ctx.call_tool(tool, args)


async def refuse_malformed(ctx: AgentContext, tool: str, text: str) -> ToolResult:
    """Record the attempted call with its raw argument text, marked malformed; the error says
    why, as :func:`parse_arguments` words it (or that the framework could not read it)."""
    try:
        parse_arguments(tool, text)
    except InvalidToolArguments as exc:
        reason = exc
    else:
        reason = InvalidToolArguments(
            f"the framework could not read the model's arguments for tool {tool!r}: {text[:200]!r}"
        )
    message = f"{type(reason).__name__}: {reason}"
    return await ctx.refuse_call(tool, {MALFORMED_ARGUMENTS: text}, INVALID_ARGUMENTS, message)


@dataclass
class TrialSpend:
    """One trial's model calls, each a ``provider.usage`` priced with the definition's
    ``price``; :meth:`check` stops the framework's loop (:class:`AgentStopped`) once the run's
    ceilings or the agent's ``maxCostUsd`` are passed, as the ``--model`` agent stops."""

    ctx: AgentContext
    provider: str
    price: Price | None = None
    ceiling: float | None = None
    spent: float = 0.0

    async def report(self, model: str, input_tokens: int, output_tokens: int) -> None:
        price = self.price
        cost = price.cost(input_tokens, output_tokens) if price is not None else None
        self.spent += cost or 0.0
        usage = Usage(self.provider, model, input_tokens, output_tokens, cost)
        await self.ctx.report_usage(usage)

    def check(self) -> None:
        """Raise :class:`AgentStopped` when no further model call may start."""
        if self.ctx.budget_exceeded:  # the run-wide ceilings (RFC 0244 §B Cost)
            raise AgentStopped(
                f"cost ceiling: the run's spend passed its ceiling (this trial spent "
                f"${self.spent:.6f}); the {self.provider} loop stopped"
            )
        if self.ceiling is not None and self.spent > self.ceiling:
            raise AgentStopped(
                f"maxCostUsd: the trial spent ${self.spent:.6f}, over its ${self.ceiling:g}"
            )
