"""Why a conversation with a scripted user (``x-wopeval-user``) failed its trial (pure).

``user-miss``: the message the script had no reply for (shortened), with the reply entries
still unconsumed then and what each waited for; ``max-turns``: the limit; ``user-error``: an
LLM user's own failure, its cause (``model-error``, ``format``, ``max-turns``, ``model-miss``,
``resume-diverged``) and what went wrong. The reasons carry content (the agent's message, the
script's patterns), so they live in the tenant's log only.
"""

from __future__ import annotations

from typing import Any

from wopeval.grading.argdiff import shown
from wopeval.grading.views import TrialView
from wopeval.suite.models import Task
from wopeval.suite.user import ScriptedUser, WhenJson, WhenLiteral
from wopeval.wire.events import FailureReason

__all__ = ["NO_DETAIL", "user_reasons"]

NO_DETAIL = "no detail in the log (an imported trace carries only the cause)"

_LISTED = 3


def user_reasons(task: Task, view: TrialView) -> list[FailureReason]:
    """The reason the conversation gives the trial, if it ended on the agent's side."""
    script = task.x_wopeval_user
    if view.user_end == "error":
        cause, detail = view.user_error or ("unknown", "")
        what = detail or NO_DETAIL
        text = f"user-error ({cause}): the simulated user failed, not the agent: {what}"
        details = {"cause": cause, "turn": view.user_turns - 1, "error": detail}
        return [FailureReason(kind="user-error", message=text[:300], details=details)]
    if not isinstance(script, ScriptedUser):
        script = None
    if view.user_end == "max-turns":
        limit = script.max_turns if script is not None else None
        text = f"max-turns: the agent sent the user more than maxTurns = {limit} messages"
        return [FailureReason(kind="max-turns", message=text, details={"maxTurns": limit})]
    if view.user_end != "miss":
        return []
    left = _left(script, view.user_replies)
    names = ", ".join(f"#{row['index']} {row['when']}" for row in left[:_LISTED])
    more = f" and {len(left) - _LISTED} more" if len(left) > _LISTED else ""
    then = f"unconsumed then: {names}{more}" if left else "every reply was consumed by then"
    text = (
        f"user miss (onMiss: fail): the user's script has no reply to {shown(view.user_missed)} "
        f"({then})"
    )
    details = {"message": view.user_missed, "repliesServed": view.user_replies, "left": left}
    return [FailureReason(kind="user-miss", message=text[:300], details=details)]


def _left(script: ScriptedUser | None, served: list[int]) -> list[dict[str, Any]]:
    if script is None:
        return []
    used = set(served)
    return [
        {"index": index, "when": _when(entry.when)}
        for index, entry in enumerate(script.replies)
        if index not in used
    ]


def _when(when: Any) -> str:
    if isinstance(when, WhenLiteral):
        return f"literal {shown(when.literal)}"
    if isinstance(when, WhenJson):
        return f"json {shown(when.json_)}"
    return f"regex {shown(when.regex)}"
