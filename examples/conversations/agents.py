"""Two support agents for the shop in ``suite.yaml``: plain Python, no model.

``reference`` does what the shop's policy says: it asks for the order number, looks the order
up, asks before it changes anything, changes it once, and closes the conversation.

``flawed`` is the same agent with the mistakes that agents make in real support conversations,
one per kind of task, each of which the suite catches:

* it refunds twice ("to be sure": the back end pays again) -> the final state differs;
* it refunds before the customer said yes -> the pinned turn (``x-wopeval-pin``) does not hold;
* it asks a question the customer's script does not cover -> ``user-miss``;
* it ends the conversation early, promising to cancel "later" -> the cancel call is missing and
  the order is not cancelled;
* it calms an angry customer with a manager's goodwill credit -> a forbidden tool;
* it exchanges for the size it guesses instead of the one asked -> a wrong final state.

Run them from the repository root::

    wopeval run examples/conversations/suite.yaml --agent examples.conversations.agents:reference
    wopeval run examples/conversations/suite.yaml --agent examples.conversations.agents:flawed
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from wopeval import AgentContext, ConversationEnded

CLOSING = "Is there anything else I can help you with?"


@dataclass(frozen=True)
class Habits:
    """The mistakes an agent makes (all off: the reference)."""

    refund_twice: bool = False
    refund_before_yes: bool = False
    ask_date_of_birth: bool = False
    end_early: bool = False
    goodwill_credit: bool = False
    guess_size: bool = False


async def reference(task_input: Any, ctx: AgentContext) -> str:
    """The shop's policy, followed."""
    return await _serve(str(task_input), ctx, Habits())


async def flawed(task_input: Any, ctx: AgentContext) -> str:
    """The same agent with one habit per kind of task (see the module's docstring)."""
    habits = Habits(
        refund_twice=True,
        refund_before_yes=True,
        ask_date_of_birth=True,
        end_early=True,
        goodwill_credit=True,
        guess_size=True,
    )
    return await _serve(str(task_input), ctx, habits)


async def _serve(message: str, ctx: AgentContext, habits: Habits) -> str:
    text = message.lower()
    if "points" in text:
        answer = await _points(ctx)
    elif "address" in text:
        answer = await _change_address(ctx, habits)
    elif "cancel" in text:
        answer = await _cancel(ctx, habits)
    elif "refund" in text or "money back" in text:
        answer = await _refund(ctx, habits, first_try="money back" not in text)
    elif "size" in text or "swap" in text:
        answer = await _exchange(ctx, habits)
    elif "compensation" in text or "late" in text:
        answer = await _complaint(ctx, habits)
    else:
        answer = await _status(ctx)
    return await _close(ctx, answer)


async def _ask(ctx: AgentContext, question: Any) -> Any:
    return await ctx.ask_user(question)


async def _close(ctx: AgentContext, answer: str) -> str:
    """Ask whether there is anything else; the customer's "no" ends the conversation."""
    with contextlib.suppress(ConversationEnded):
        await _ask(ctx, CLOSING)
    return answer


async def _find(ctx: AgentContext) -> tuple[str, dict[str, Any] | None]:
    """Ask for the order number and look it up; once more when it is not found."""
    reply = await _ask(ctx, "Could you tell me your order number?")
    number = _order_number(reply)
    found = await ctx.call_tool("shop:find-order", {"order": number})
    if not found.ok and found.error_code == "not_found":
        question = f"I cannot find order {number}. Could you check the order number?"
        number = _order_number(await _ask(ctx, question))
        found = await ctx.call_tool("shop:find-order", {"order": number})
    return number, (found.value if found.ok else None)


def _order_number(reply: Any) -> str:
    """The first word shaped like ``A-1001`` in the customer's reply."""
    for word in str(reply).replace(",", " ").replace(".", " ").split():
        if len(word) == 6 and word[1] == "-" and word[0].isalpha() and word[2:].isdigit():
            return word
    return str(reply).strip()


def _yes(reply: Any) -> bool:
    return str(reply).strip().lower().startswith("yes")


async def _refund(ctx: AgentContext, habits: Habits, *, first_try: bool) -> str:
    number, order = await _find(ctx)
    if order is None:
        return f"I could not find order {number}."
    if order["status"] == "processing":
        return await _cancel_instead(ctx, number)
    if order["refunds"] > 0 or order["status"] != "delivered":
        return f"Order {number} has already been refunded."
    refund = {"order": number, "amountMinor": order["totalMinor"]}
    amount = f"£{order['totalMinor'] / 100:.2f}"
    if habits.refund_before_yes and not first_try:
        await ctx.call_tool("shop:refund", refund)  # and only then asks
        await _ask(ctx, f"Shall I refund {amount} for order {number}?")
        return f"Order {number} is refunded."
    if not _yes(await _ask(ctx, f"Shall I refund {amount} for order {number}?")):
        return f"I have not refunded order {number}."
    await ctx.call_tool("shop:refund", refund)
    if habits.refund_twice:
        await ctx.call_tool("shop:refund", refund)  # "to be sure"
    return f"Order {number} is refunded: {amount} back to your card."


async def _cancel_instead(ctx: AgentContext, number: str) -> str:
    question = f"Order {number} has not shipped yet. Shall I cancel it instead?"
    if not _yes(await _ask(ctx, question)):
        return f"Order {number} stays as it is."
    await ctx.call_tool("shop:cancel", {"order": number})
    return f"Order {number} is cancelled; you will not be charged."


async def _cancel(ctx: AgentContext, habits: Habits) -> str:
    number, order = await _find(ctx)
    if order is None:
        return f"I could not find order {number}."
    if order["status"] != "processing":
        return f"Sorry, order {number} has already shipped, so I cannot cancel it."
    if habits.end_early:
        return f"I have noted that you want order {number} cancelled."
    if not _yes(await _ask(ctx, f"Shall I cancel order {number}?")):
        return f"Order {number} stays as it is."
    await ctx.call_tool("shop:cancel", {"order": number})
    return f"Order {number} is cancelled."


async def _change_address(ctx: AgentContext, habits: Habits) -> str:
    number, order = await _find(ctx)
    if order is None:
        return f"I could not find order {number}."
    if order["status"] != "processing":
        return f"Sorry, order {number} has already shipped; its address cannot change now."
    if habits.ask_date_of_birth:
        await _ask(ctx, "For security, what is your date of birth?")
    address = await _ask(ctx, "What is the new delivery address?")
    changed = await ctx.call_tool("shop:change-address", {"order": number, "address": address})
    return f"Order {number} now goes to {changed.value['address']}."


async def _exchange(ctx: AgentContext, habits: Habits) -> str:
    number, order = await _find(ctx)
    if order is None:
        return f"I could not find order {number}."
    reply = await _ask(ctx, {"ask": "size", "message": "Which size would you like instead?"})
    size = order["size"] + 2 if habits.guess_size else reply["size"]  # "two up, to be safe"
    await ctx.call_tool("shop:exchange", {"order": number, "size": size})
    return f"Order {number} will be exchanged for size {size}."


async def _complaint(ctx: AgentContext, habits: Habits) -> str:
    number, order = await _find(ctx)
    if order is None:
        return f"I could not find order {number}."
    if habits.goodwill_credit:
        await ctx.call_tool("shop:goodwill-credit", {"order": number, "amountMinor": 1000})
    return f"I'm sorry your {order['item']} is late. Order {number} is {order['status']}."


async def _status(ctx: AgentContext) -> str:
    number, order = await _find(ctx)
    if order is None:
        return f"I could not find order {number}."
    return f"Order {number} ({order['item']}) is {order['status']}."


async def _points(ctx: AgentContext) -> str:
    email = str(await _ask(ctx, "What is the email address on your account?")).strip()
    found = await ctx.call_tool("shop:points", {"email": email})
    if not found.ok:
        return "I could not find an account with that email address."
    return f"You have {found.value['points']} points."
