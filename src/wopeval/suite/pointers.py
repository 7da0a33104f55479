"""JSON Pointers (RFC 6901) as a world writes them, and the value templates of its rules (pure).

A world's pointer is a JSON Pointer whose reference tokens may each be a **placeholder**
``{ARGPOINTER}``: the whole token ``{/ref}`` stands for the string (or non-negative integer)
found at ``/ref`` in the call's arguments. So ``/bookings/{/ref}/status`` reads the status of the
booking the call names, and ``/customers/{/customer/id}`` reads a nested argument (the
placeholder runs from a token opening with ``{`` to the first one closing with ``}``). Only
whole tokens are placeholders; ``~0``/``~1`` escape ``~`` and ``/`` in the others, as RFC 6901
says, and a placeholder's value is used as the key itself (no escape).

A **template** is any JSON value in which an object that is exactly ``{"$arg": POINTER}`` stands
for the value at that pointer in the call's arguments, ``{"$state": POINTER}`` for the value at
that pointer (placeholders allowed) in the world's state after the rule's effects, and
``{"$literal": VALUE}`` for ``VALUE`` as written (so a literal object with a ``$arg`` key can
still be said).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from wopeval.errors import UserError

__all__ = [
    "TEMPLATE_KEYS",
    "Placeholder",
    "PointerSyntaxError",
    "Token",
    "parse_pointer",
    "plain_pointer",
    "pointer_text",
    "template_problems",
]

ARG_KEY: Final = "$arg"
STATE_KEY: Final = "$state"
LITERAL_KEY: Final = "$literal"
TEMPLATE_KEYS: Final = (ARG_KEY, STATE_KEY, LITERAL_KEY)


class PointerSyntaxError(UserError):
    """Not a JSON Pointer (the message says why)."""


@dataclass(frozen=True)
class Placeholder:
    """A reference token taken from the call's arguments at ``tokens`` (a plain pointer)."""

    tokens: tuple[str, ...]
    text: str


Token = str | Placeholder


def _unescape(token: str, text: str) -> str:
    index = token.find("~")
    while index != -1:
        if token[index + 1 : index + 2] not in ("0", "1"):
            raise PointerSyntaxError(f"{text!r}: '~' must be followed by 0 or 1 (RFC 6901)")
        index = token.find("~", index + 2)
    return token.replace("~1", "/").replace("~0", "~")


@lru_cache(maxsize=4096)  # a world's few pointers, parsed again at every call otherwise
def parse_pointer(text: str, *, placeholders: bool = False) -> tuple[Token, ...]:
    """The reference tokens of ``text``; ``""`` is the whole document. With ``placeholders``,
    a token written ``{POINTER}`` is a :class:`Placeholder` (whose own pointer is plain).
    Cached: the tokens are immutable."""
    if text == "":
        return ()
    if not text.startswith("/"):
        raise PointerSyntaxError(f"{text!r} must be empty or start with '/'")
    tokens: list[Token] = []
    parts = text[1:].split("/")
    index = 0
    while index < len(parts):
        raw = parts[index]
        end = _closing(parts, index) if placeholders and raw.startswith("{") else None
        if end is None:
            tokens.append(_unescape(raw, text))
            index += 1
            continue
        inner = "/".join(parts[index : end + 1])[1:-1]
        tokens.append(Placeholder(plain_pointer(inner), inner))
        index = end + 1
    return tuple(tokens)


def _closing(parts: list[str], start: int) -> int | None:
    """The part that closes the placeholder opened at ``parts[start]`` (a placeholder's own
    pointer has slashes: ``{/customer/id}``), or None: a plain token."""
    for end in range(start, len(parts)):
        if parts[end].endswith("}") and (end > start or len(parts[end]) >= 2):
            return end
    return None


@lru_cache(maxsize=4096)
def plain_pointer(text: str) -> tuple[str, ...]:
    """The reference tokens of ``text``, a pointer without placeholders."""
    return tuple(t for t in parse_pointer(text) if isinstance(t, str))


def pointer_text(tokens: tuple[str, ...]) -> str:
    """The JSON Pointer of plain ``tokens`` (``~`` and ``/`` escaped)."""
    return "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in tokens)


def template_problems(value: Any, *, state: bool = True) -> list[tuple[tuple[str | int, ...], str]]:
    """Where ``value`` misuses a template key, as ``(location, message)``: a ``$arg`` or
    ``$state`` object with other keys, or whose pointer is not a string or not a pointer;
    ``$state`` where the state cannot be read (``state=False``). ``$literal`` contents are
    not looked into."""
    problems: list[tuple[tuple[str | int, ...], str]] = []
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, loc = stack.pop()
        if isinstance(item, list):
            stack.extend((member, (*loc, i)) for i, member in enumerate(item))
            continue
        if not isinstance(item, dict):
            continue
        keys = [k for k in TEMPLATE_KEYS if k in item]
        if not keys:
            stack.extend((member, (*loc, key)) for key, member in item.items())
            continue
        key = keys[0]
        if len(item) != 1:
            others = ", ".join(sorted(repr(k) for k in item if k != key))
            problems.append((loc, f"a {key} reference has no other keys (found {others})"))
        elif key == STATE_KEY and not state:
            problems.append((loc, "$state cannot be read here (only in a rule's result)"))
        elif key != LITERAL_KEY:
            problems += _pointer_problem((*loc, key), item[key], placeholders=key == STATE_KEY)
    return problems


def _pointer_problem(
    loc: tuple[str | int, ...], pointer: Any, *, placeholders: bool
) -> list[tuple[tuple[str | int, ...], str]]:
    if not isinstance(pointer, str):
        return [(loc, "must be a JSON Pointer string")]
    try:
        parse_pointer(pointer, placeholders=placeholders)
    except PointerSyntaxError as exc:
        return [(loc, f"not a JSON Pointer: {exc}")]
    return []
