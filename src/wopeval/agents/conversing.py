"""The one rule by which a model-loop agent converses with a task's simulated user
(``x-wopeval-user``), shared by the OpenAI-compatible agent and every framework adapter; each
keeps the conversation in its own message history type.

On a task with a user (:func:`converses`):

- a model turn that ends without a final answer is said to the user (:func:`user_reply`): the
  reply becomes the next user message of the history and the loop goes on; the user's stop ends
  the conversation and the agent's last message is the output;
- the model may end the conversation itself by calling :data:`FINAL_ANSWER_TOOL`
  (``{"answer": …}``), offered on such tasks only and only when no task tool already has that
  name (:func:`offers_final_answer`): its ``answer`` is the output (:func:`final_answer_of`),
  and the calls after it are not made (:class:`FinalAnswer`);
- a user miss or ``maxTurns`` raises :class:`~wopeval.engine.agent.ConversationEnded` out of the
  loop: the trial fails there, with no further model call.

A task without a user sees none of this: no final-answer tool, no user turn.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from wopeval.engine.agent import AgentContext, ConversationEnded, ToolSpec

__all__ = [
    "FINAL_ANSWER_DESCRIPTION",
    "FINAL_ANSWER_PARAMETERS",
    "FINAL_ANSWER_SPEC",
    "FINAL_ANSWER_TOOL",
    "FinalAnswer",
    "UserReply",
    "answer_of",
    "converses",
    "final_answer_of",
    "message_text",
    "offers_final_answer",
    "user_reply",
]

FINAL_ANSWER_TOOL = "final_answer"
FINAL_ANSWER_DESCRIPTION = "End the conversation with the user and give your final answer."
FINAL_ANSWER_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"description": "Your final answer."}},
    "required": ["answer"],
}
FINAL_ANSWER_SPEC = ToolSpec(FINAL_ANSWER_TOOL, FINAL_ANSWER_DESCRIPTION, FINAL_ANSWER_PARAMETERS)


def converses(ctx: AgentContext) -> bool:
    """The task has a simulated user (a context from before conversations has none)."""
    return bool(getattr(ctx, "has_user", False))


def offers_final_answer(ctx: AgentContext, tool_names: Iterable[str]) -> bool:
    """Whether the model is offered :data:`FINAL_ANSWER_TOOL`: on a conversational task whose
    tools do not already use the name (a task tool keeps its name and its meaning)."""
    return converses(ctx) and FINAL_ANSWER_TOOL not in set(tool_names)


def answer_of(content: str | None) -> Any:
    """An answer's text as the output: JSON when it is JSON, else the text."""
    if content is None:
        return None
    try:
        return json.loads(content)
    except ValueError:
        return content.strip()


def final_answer_of(args: Any) -> Any:
    """The output a :data:`FINAL_ANSWER_TOOL` call gives: its ``answer`` (a text parsed as JSON
    when it is JSON; missing, ``None``)."""
    answer = args.get("answer") if isinstance(args, dict) else None
    return answer_of(answer) if isinstance(answer, str) else answer


def message_text(value: Any) -> str:
    """A value as the text of a message: a string as is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


@dataclass
class FinalAnswer:
    """One trial's final answer, once the model has called :data:`FINAL_ANSWER_TOOL`. A loop
    whose framework runs a message's calls itself asks :attr:`given` before each call: the
    calls after the final answer are not made."""

    given: bool = False
    value: Any = None

    def give(self, args: Any) -> None:
        """Take the answer of a :data:`FINAL_ANSWER_TOOL` call (the first one counts)."""
        if not self.given:
            self.given = True
            self.value = final_answer_of(args)


@dataclass(frozen=True)
class UserReply:
    """The user's reply to a model turn: the next user message is :attr:`reply`."""

    reply: Any

    @property
    def text(self) -> str:
        return message_text(self.reply)


async def user_reply(ctx: AgentContext, said: Any) -> UserReply | None:
    """Say the model's turn-ending message to the user. Returns the reply to go on with, or
    ``None`` when the user stopped (the agent's last message is the output). A user miss or
    ``maxTurns`` raises :class:`~wopeval.engine.agent.ConversationEnded`: the trial fails
    there, and the caller must make no further model call."""
    try:
        return UserReply(await ctx.ask_user(said))
    except ConversationEnded as ended:
        if ended.how != "stop":
            raise
        return None
