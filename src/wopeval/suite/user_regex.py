"""The regular expressions a user script may use: a subset of Python's syntax whose matching
time is bounded, so a hostile ``when.regex`` cannot hang a run (Python's ``re`` backtracks, and
holds the interpreter while it does: ``(a+)+b`` takes seconds on 22 characters).

A ``when.regex`` is refused before any trial runs unless:

- it compiles, in at most :data:`MAX_PATTERN_CHARS` characters, without the verbose flag;
- it has no back-reference (``\\1``, ``(?P=name)``), look-around (``(?=``, ``(?!``, ``(?<=``,
  ``(?<!``) or conditional group (``(?(``), and no repeated group (``(ab)*``): these are what
  makes backtracking exponential;
- its *choices* stay within :data:`BUDGET`: each ``*``, ``+`` or ``{m,}`` may stop at any of
  :data:`MAX_SUBJECT_CHARS` places, ``?`` at 2, ``{m,n}`` at ``n - m + 1``; choices in sequence
  multiply, the branches of an alternation add, and a search tries every start position. In
  practice: one unbounded repetition per pattern, and at most one optional part beside it.

The engine matches a regex only against a message of at most :data:`MAX_SUBJECT_CHARS`
characters; a longer message matches no ``regex`` (it may still match a ``literal`` or ``json``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from wopeval.errors import UserError

__all__ = ["BUDGET", "MAX_PATTERN_CHARS", "MAX_SUBJECT_CHARS", "regex_problem"]

MAX_PATTERN_CHARS = 500
MAX_SUBJECT_CHARS = 4000
# Two ways times one unbounded repetition, searched over MAX_SUBJECT_CHARS (``a?b*``).
BUDGET = 2 * MAX_SUBJECT_CHARS * MAX_SUBJECT_CHARS
_REFUSED_GROUPS = (
    ("(?P=", "a back-reference"),
    ("(?=", "a look-ahead"),
    ("(?!", "a look-ahead"),
    ("(?<=", "a look-behind"),
    ("(?<!", "a look-behind"),
    ("(?(", "a conditional group"),
)
_BOUNDED = re.compile(r"\{(\d*)(,?)(\d*)\}")
_FLAGS = re.compile(r"\(\?([aiLmsux]+)\)")
_GROUP_PREFIX = re.compile(r"\(\?(?:P<\w+>|[aiLmsux-]*[:>])")


class Refused(UserError, ValueError):
    """A pattern outside the safe subset (the message says why)."""


@dataclass
class _Frame:
    """One group (or the whole pattern) being read: its finished branches' choices, the
    current branch's, and whether the last thing read was a group."""

    total: int = 0
    branch: int = 1


def regex_problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot be a ``when.regex``, or None when it can."""
    if len(pattern) > MAX_PATTERN_CHARS:
        return f"a pattern may have at most {MAX_PATTERN_CHARS} characters (got {len(pattern)})"
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        return f"not a regular expression: {exc}"
    if compiled.flags & re.VERBOSE:
        return "the verbose flag (?x) is not supported"
    try:
        choices = _choices(pattern)
    except Refused as exc:
        return str(exc)
    if choices * MAX_SUBJECT_CHARS > BUDGET:
        return (
            f"too many ways to match (at most {BUDGET // MAX_SUBJECT_CHARS:,}; *, + and {{m,}} "
            f"count {MAX_SUBJECT_CHARS:,} each, ? 2, {{m,n}} n-m+1, a|b 2, and they multiply)"
        )
    return None


def _choices(pattern: str) -> int:
    """How many ways the pattern may match at one start position (see the module)."""
    stack = [_Frame()]
    after_group = False
    at = 0
    while at < len(pattern):
        char = pattern[at]
        quantifier = _quantifier(pattern, at)
        if quantifier is not None:
            factor, length = quantifier
            if after_group:
                raise Refused("a group may not be repeated (repeat a character or a class)")
            stack[-1].branch *= factor
            at += length
            after_group = False
            continue
        after_group = False
        if char == "\\":
            if pattern[at + 1 : at + 2].isdigit() and pattern[at + 1] != "0":
                raise Refused("a back-reference (\\1 …) is not allowed")
            at += 2
        elif char == "[":
            at = _class_end(pattern, at)
        elif char == "(":
            at = _open(pattern, at, stack)
        elif char == ")":
            frame = stack.pop()
            stack[-1].branch *= frame.total + frame.branch
            after_group = True
            at += 1
        elif char == "|":
            frame = stack[-1]
            frame.total += frame.branch
            frame.branch = 1
            at += 1
        else:
            at += 1
    return stack[0].total + stack[0].branch


def _quantifier(pattern: str, at: int) -> tuple[int, int] | None:
    """The choices of the quantifier at ``at`` and its length (with a lazy ``?`` or possessive
    ``+`` after it), or None when none starts there."""
    char = pattern[at]
    if char in "*+":
        factor, length = MAX_SUBJECT_CHARS, 1
    elif char == "?":
        factor, length = 2, 1
    elif char == "{" and (bounded := _BOUNDED.match(pattern, at)) is not None:
        low, comma, high = bounded.groups()
        if not low and not high:
            return None  # "{}" and "{,}" are literal text in Python's syntax
        if not comma:
            factor = 1
        elif not high:
            factor = MAX_SUBJECT_CHARS
        else:
            factor = max(1, int(high) - int(low or 0) + 1)
        length = bounded.end() - at
    else:
        return None
    if pattern[at + length : at + length + 1] in ("?", "+"):
        length += 1
    return factor, length


def _class_end(pattern: str, at: int) -> int:
    """The index after the character class starting at ``at``."""
    at += 1
    if pattern[at : at + 1] == "^":
        at += 1
    if pattern[at : at + 1] == "]":
        at += 1
    while pattern[at] != "]":
        at += 2 if pattern[at] == "\\" else 1
    return at + 1


def _open(pattern: str, at: int, stack: list[_Frame]) -> int:
    """Read the group opening at ``at``: refuse the unsafe kinds, skip inline flags."""
    for prefix, what in _REFUSED_GROUPS:
        if pattern.startswith(prefix, at):
            raise Refused(f"{what} is not allowed: {prefix}…")
    flags = _FLAGS.match(pattern, at)
    if flags is not None:  # global flags such as (?i): no group
        return flags.end()
    if pattern.startswith("(?#", at):
        return pattern.index(")", at) + 1
    stack.append(_Frame())
    opening = _GROUP_PREFIX.match(pattern, at)  # (?:, (?P<name>, (?i:, (?>
    return opening.end() if opening is not None else at + 1
