"""A trial's copy of its task's world, and what a tool call does to it (docs/worlds.md).

:class:`WorldState` holds one trial's state, copied from the world's ``initial`` when the trial
starts (RFC 0244 §B: no trial sees another's writes). :meth:`WorldState.call` serves a call by
the first rule of its tool whose ``when`` matches the arguments (RFC 0244 §A ``argsMatch``, the
one matcher of :mod:`wopeval.grading.jsonmatch`), or answers None: no rule serves it, a miss
that the gateway fails closed (RFC 0244 §D).

A served call is one of three answers, never an exception:

- a failed ``require`` precondition: the tool error that precondition declares;
- an operation that cannot be done on the state as it is (a pointer that does not resolve, an
  ``increment`` of a non-number, an ``append`` to a non-array, a ``merge`` into a non-object, an
  ``$arg`` the call did not pass): the tool error :data:`WORLD_ERROR` saying which;
- else the rule's effects, all applied (on a copy, swapped in only when every one succeeded),
  and its result: the value ``read`` or the ``result`` template.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any

from wopeval.errors import WopevalError
from wopeval.grading.jsonmatch import args_match, json_equal
from wopeval.suite.pointers import (
    ARG_KEY,
    LITERAL_KEY,
    STATE_KEY,
    Placeholder,
    Token,
    parse_pointer,
    plain_pointer,
    pointer_text,
)
from wopeval.suite.world import Effect, Requirement, World, WorldRule

__all__ = ["WORLD_ERROR", "WorldAnswer", "WorldFault", "WorldState"]

WORLD_ERROR = "wopeval.world_error"
_MISSING = object()


class WorldFault(WopevalError):
    """An operation the state (or the call's arguments) does not allow; caught in this module
    and answered as a tool error, never raised past it."""


@dataclass(frozen=True)
class WorldAnswer:
    """A served call: ``value`` when ``ok``, else the tool error ``code``/``message``;
    ``rule`` is the index of the rule that served it among its tool's rules."""

    ok: bool
    rule: int
    value: Any = None
    code: str = ""
    message: str = ""


class WorldState:
    """One trial's world: its own state, changed only by the calls it serves."""

    def __init__(self, world: World, initial: Any) -> None:
        self._world = world
        self.state: Any = initial  # the caller hands a copy: this object is changed in place

    def call(self, tool: str, args: Any) -> WorldAnswer | None:
        """Serve one call, or None when no rule of ``tool`` matches ``args`` (a miss)."""
        for index, rule in enumerate(self._world.tools.get(tool, ())):
            if _applies(rule, args):
                return self._serve(index, rule, args)
        return None

    def _serve(self, index: int, rule: WorldRule, args: Any) -> WorldAnswer:
        try:
            for requirement in rule.require or ():
                if not _holds(requirement, self.state, args):
                    error = requirement.error
                    return WorldAnswer(False, index, code=error.code, message=error.message)
            state = self.state
            if rule.effects:
                state = copy.deepcopy(state)
                for effect in rule.effects:
                    state = _apply(effect, state, args)
            if rule.read is not None:
                value = copy.deepcopy(_get(state, _resolve(rule.read, args), rule.read))
            else:
                value = _fill(rule.result, args, state)
        except WorldFault as fault:
            return WorldAnswer(False, index, code=WORLD_ERROR, message=str(fault))
        self.state = state
        return WorldAnswer(True, index, value=value)


def _applies(rule: WorldRule, args: Any) -> bool:
    when = rule.when
    if when is None:
        return True
    try:
        return args_match(when.argsMatch, when.args, args)
    except (TypeError, ValueError):  # arguments that are not JSON match no pattern
        return False


def _holds(requirement: Requirement, state: Any, args: Any) -> bool:
    tokens = _resolve(requirement.pointer, args)
    found = _lookup(state, tokens)
    if requirement.exists:
        return found is not _MISSING
    if requirement.absent:
        return found is _MISSING
    return found is not _MISSING and json_equal(_fill(requirement.equals, args, None), found)


def _resolve(pointer: str, args: Any) -> tuple[str, ...]:
    """The pointer's tokens, its placeholders filled from the call's arguments."""
    return tuple(_token(token, args) for token in parse_pointer(pointer, placeholders=True))


def _token(token: Token, args: Any) -> str:
    if not isinstance(token, Placeholder):
        return token
    value = _lookup(args, token.tokens)
    if value is _MISSING:
        raise WorldFault(f"the call has no argument at {token.text or '(the whole arguments)'}")
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return str(value)
    raise WorldFault(f"the argument at {token.text} is not a string or an index")


def _lookup(document: Any, tokens: tuple[str, ...]) -> Any:
    """The value at ``tokens`` in ``document``, or :data:`_MISSING`."""
    current = document
    for token in tokens:
        if isinstance(current, dict):
            if token not in current:
                return _MISSING
            current = current[token]
        elif isinstance(current, list):
            index = _index(token, len(current))
            if index is None:
                return _MISSING
            current = current[index]
        else:
            return _MISSING
    return current


def _index(token: str, length: int) -> int | None:
    """An array index token (RFC 6901: digits, no leading zero) below ``length``, else None."""
    if not token.isdigit() or not token.isascii() or (token != "0" and token.startswith("0")):
        return None
    index = int(token)
    return index if index < length else None


def _get(state: Any, tokens: tuple[str, ...], written: str) -> Any:
    value = _lookup(state, tokens)
    if value is _MISSING:
        raise WorldFault(f"nothing at {pointer_text(tokens) or '(the whole state)'} ({written})")
    return value


def _fill(template: Any, args: Any, state: Any) -> Any:
    """The template's value: ``$arg``/``$state`` references read, ``$literal`` unwrapped."""
    if isinstance(template, list):
        return [_fill(item, args, state) for item in template]
    if not isinstance(template, dict):
        return template
    if len(template) == 1:
        ((key, inner),) = template.items()
        if key == LITERAL_KEY:
            return copy.deepcopy(inner)
        if key == ARG_KEY:
            value = _lookup(args, plain_pointer(inner))
            if value is _MISSING:
                raise WorldFault(f"the call has no argument at {inner or '(the whole arguments)'}")
            return copy.deepcopy(value)
        if key == STATE_KEY:
            return copy.deepcopy(_get(state, _resolve(inner, args), inner))
    return {key: _fill(value, args, state) for key, value in template.items()}


def _apply(effect: Effect, state: Any, args: Any) -> Any:
    """``state`` after ``effect`` (changed in place, except a ``set`` of the whole state)."""
    tokens = _resolve(effect.pointer, args)
    where = pointer_text(tokens) or "(the whole state)"
    op = effect.op
    if op == "set":
        value = _fill(effect.value, args, None)
        if not tokens:
            return value
        _put(state, tokens, value, where)
        return state
    if op == "remove":
        _remove(state, tokens, where)
        return state
    target = _get(state, tokens, effect.pointer)
    if op == "increment":
        total = _increment(target, effect, args, where)
        if not tokens:
            return total
        _put(state, tokens, total, where)
    elif op == "append":
        if not isinstance(target, list):
            raise WorldFault(f"append: {where} is not an array")
        target.append(_fill(effect.value, args, None))
    else:  # merge
        patch = _fill(effect.value, args, None)
        if not isinstance(target, dict) or not isinstance(patch, dict):
            raise WorldFault(f"merge: {where} and the value must both be objects")
        target.update(patch)
    return state


def _increment(target: Any, effect: Effect, args: Any, where: str) -> Any:
    by = 1 if "value" not in effect.model_fields_set else _fill(effect.value, args, None)
    if not _is_number(target):
        raise WorldFault(f"increment: {where} is not a number")
    if not _is_number(by):
        raise WorldFault("increment: the amount is not a number")
    total = target + by
    if not math.isfinite(total):
        raise WorldFault(f"increment: {where} would not be a finite number")
    return total


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _parent(state: Any, tokens: tuple[str, ...], where: str) -> Any:
    parent = _lookup(state, tokens[:-1])
    if not isinstance(parent, dict | list):
        raise WorldFault(f"the parent of {where} is not an object or an array")
    return parent


def _put(state: Any, tokens: tuple[str, ...], value: Any, where: str) -> None:
    parent = _parent(state, tokens, where)
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
        return
    if last == "-":
        parent.append(value)
        return
    index = _index(last, len(parent))
    if index is None:
        raise WorldFault(f"{where} is not an index of the array")
    parent[index] = value


def _remove(state: Any, tokens: tuple[str, ...], where: str) -> None:
    parent = _parent(state, tokens, where)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise WorldFault(f"remove: nothing at {where}")
        del parent[last]
        return
    index = _index(last, len(parent))
    if index is None:
        raise WorldFault(f"remove: nothing at {where}")
    del parent[index]
