"""``x-wopeval-user`` with ``kind: "llm"``: a simulated user played by a model (wopeval's own).

A task may carry::

    "x-wopeval-user": {"kind": "llm", "model": "gpt-4o-mini", "baseUrl": "http://127.0.0.1:8000/v1",
                       "persona": "A traveller in a hurry.",
                       "instructions": "Move your flight to 11 December.",
                       "facts": ["Your booking reference is ABC123."],
                       "stopPhrase": "###STOP###", "maxTurns": 8}

The model answers each message the agent sends, over the same OpenAI-compatible client as the
agent under test (:mod:`wopeval.engine.user_llm`). It ends the conversation by writing
``stopPhrase`` in its reply. Whatever goes wrong on its side (its server errors or times out,
its reply is not a short text, it has not stopped after ``maxTurns`` messages) ends the trial
``user-error``: the user side's failure, never the agent's. The rules here are checked before
any trial runs, every error at once, each naming its field.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)
from pydantic_core import InitErrorDetails

from wopeval.suite.errors import FieldError
from wopeval.suite.fields import Integral, Omittable, SuiteObject
from wopeval.suite.user import DEFAULT_MAX_TURNS, MAX_TURNS_LIMIT, ScriptedUser

__all__ = [
    "DEFAULT_MAX_REPLY_CHARS",
    "DEFAULT_STOP_PHRASE",
    "LlmUser",
    "SimulatedUser",
    "UserPrice",
    "llm_user_rules_of",
]

DEFAULT_STOP_PHRASE = "###STOP###"
DEFAULT_MAX_REPLY_CHARS = 4000
MAX_REPLY_CHARS_LIMIT = 100_000
MAX_TEXT_CHARS = 20_000
MAX_FACTS = 100


class UserPrice(SuiteObject):
    """USD per million tokens of the user's model, so its calls carry a cost."""

    inputPerMTok: Annotated[float, Field(ge=0)]
    outputPerMTok: Annotated[float, Field(ge=0)]

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.inputPerMTok + output_tokens * self.outputPerMTok) / 1e6


def _text(description: str) -> Any:
    return Field(min_length=1, max_length=MAX_TEXT_CHARS, description=description)


class LlmUser(SuiteObject):
    """``x-wopeval-user`` (wopeval), ``kind: "llm"``: a simulated user played by a model over an
    OpenAI-compatible server, with a persona and a plan (instructions, the facts it may reveal,
    the phrase it writes to stop). Its own failures (server error, a reply that is not a short
    text, no stop within ``maxTurns``) fail the trial ``user-error``, counted apart from the
    agent's; its model calls count towards the run's cost, never the agent's efficiency."""

    kind: Annotated[Literal["llm"], Field(description="The user: played by a model.")]
    model: Annotated[str, Field(min_length=1, max_length=200, description="The user's model.")]
    persona: Annotated[str, _text("Who the user is (the model's role).")]
    instructions: Annotated[str, _text("What the user wants, and how to behave.")]
    facts: Omittable[
        Annotated[
            list[Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS)]],
            Field(max_length=MAX_FACTS, description="What the user may reveal when asked."),
        ]
    ] = None
    stopPhrase: Omittable[
        Annotated[
            str,
            Field(
                min_length=1,
                max_length=200,
                description="The user ends the conversation by writing it (absent: ###STOP###).",
            ),
        ]
    ] = None
    maxTurns: Omittable[
        Annotated[
            int,
            Field(
                ge=1,
                le=MAX_TURNS_LIMIT,
                description="The most messages the user answers; the next one is a user-error "
                "(absent: 10).",
            ),
            Integral,
        ]
    ] = None
    maxReplyChars: Omittable[
        Annotated[
            int,
            Field(
                ge=1,
                le=MAX_REPLY_CHARS_LIMIT,
                description="A longer reply is a user-error (absent: 4000).",
            ),
            Integral,
        ]
    ] = None
    baseUrl: Omittable[
        Annotated[
            str,
            Field(pattern=r"^https?://", max_length=2000, description="The user's model server."),
        ]
    ] = None
    apiKeyEnv: Omittable[
        Annotated[
            str,
            Field(
                pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$",
                description="The environment variable holding its API key (never the key).",
            ),
        ]
    ] = None
    timeoutS: Omittable[
        Annotated[
            float,
            Field(
                gt=0,
                le=3600,
                description="Seconds the user's model has for one answer (absent: 60); past "
                "it, after the SDK's retries, a user-error.",
            ),
        ]
    ] = None
    temperature: Omittable[Annotated[float, Field(ge=0, le=2)]] = None
    seed: Omittable[Annotated[int, Integral]] = None
    price: Omittable[UserPrice] = None

    @property
    def max_turns(self) -> int:
        return self.maxTurns if self.maxTurns is not None else DEFAULT_MAX_TURNS

    @property
    def stop_phrase(self) -> str:
        return self.stopPhrase if self.stopPhrase is not None else DEFAULT_STOP_PHRASE

    @property
    def max_reply_chars(self) -> int:
        return self.maxReplyChars if self.maxReplyChars is not None else DEFAULT_MAX_REPLY_CHARS


def _by_kind(value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> Any:
    """Validate as the model ``kind`` names, so an error's path is the member's own
    (``x-wopeval-user.model``, not a union's ``x-wopeval-user.llm.model``)."""
    if isinstance(value, ScriptedUser | LlmUser):
        return handler(value)
    if not isinstance(value, dict):  # not an object: said as of any member
        return ScriptedUser.model_validate(value, strict=True, context=info.context)
    kind = value.get("kind")
    if kind not in _KINDS:
        allowed = " or ".join(repr(name) for name in _KINDS)
        problem = InitErrorDetails(
            type="missing" if "kind" not in value else "literal_error",
            loc=("kind",),
            input=kind,
            ctx={"expected": allowed},
        )
        raise ValidationError.from_exception_data("SimulatedUser", [problem])
    return _KINDS[kind].model_validate(value, strict=True, context=info.context)


_KINDS: dict[str, type[SuiteObject]] = {"scripted": ScriptedUser, "llm": LlmUser}
# A task's ``x-wopeval-user``: scripted, or played by a model (``kind``).
SimulatedUser = Annotated[
    ScriptedUser | LlmUser, Field(discriminator="kind"), WrapValidator(_by_kind)
]


def llm_user_rules_of(path: str, user: LlmUser) -> list[FieldError]:
    """An LLM user's rule violations beyond its fields' types: every error at once."""
    errors: list[FieldError] = []
    if user.stopPhrase is not None and not user.stopPhrase.strip():
        errors.append(FieldError(f"{path}.stopPhrase", "the stop phrase is blank"))
    for name in ("persona", "instructions"):
        if not getattr(user, name).strip():
            errors.append(FieldError(f"{path}.{name}", f"the {name} is blank"))
    for index, fact in enumerate(user.facts or []):
        if not fact.strip():
            errors.append(FieldError(f"{path}.facts[{index}]", "the fact is blank"))
    phrase = user.stop_phrase
    if phrase.strip() and any(phrase in fact for fact in user.facts or []):
        message = "a fact holds the stop phrase: revealing it would end the conversation"
        errors.append(FieldError(f"{path}.stopPhrase", message))
    return errors
