"""The model behind every framework's conversational test app (``*_conv``): what the model
says next, decided from the conversation so far in a framework-neutral form, so that the three
frameworks' real loops are driven through the same several-turn conversations.

``history`` is ``[(role, content)]`` with ``role`` one of ``user``, ``assistant`` or ``tool``;
the answer is ``("text", text)`` or ``("calls", [(tool, args), ...])``."""

from __future__ import annotations

from typing import Any

ASK_REFERENCE = "What is your booking reference?"
MOVED = "Moved ABC123 to Friday. Anything else?"
DONE = "Done: ABC123 moved to Friday."
ASK_DATE = "Which date?"
ASK_BIRTH = "What's your date of birth?"

# The task inputs that start each conversation.
CHANGE = "I want to change my flight."
PICK = "Pick a day for me."
BIRTH = "Ask me for my birthday."


def decide(history: list[tuple[str, Any]]) -> tuple[str, Any]:
    """The model's next message."""
    role, content = history[-1]
    if role == "tool":
        return ("text", MOVED)
    if content == CHANGE:
        return ("text", ASK_REFERENCE)
    if content == "ABC123":
        return ("calls", [("lookup_order", {"order_id": "ABC123"})])
    if content == "No, thanks.":
        return ("text", DONE)
    if content == PICK:
        return ("text", ASK_DATE)
    if content == "Friday":  # a call, the final answer, then a call that must not be made
        return ("calls", [("lookup_order", {"order_id": "before-final"}),
                          ("final_answer", {"answer": "Friday"}),
                          ("lookup_order", {"order_id": "after-final"})])  # fmt: skip
    if content == BIRTH:
        return ("text", ASK_BIRTH)
    return ("text", f"unexpected: {content!r}")
