"""Schema validation against the upstream v2 schemas the kit ships (RFC 0244 §Conformance).

``schemas/`` holds copies of the upstream ``agent-eval-suite``, ``eval-summary`` and
``ids`` schemas and of the ``eval.*`` payload defs of ``run-event-payloads``, each extended only
by the RFC 0244 optional fields (every copy says so in its ``$comment``). They are validated with
JSON Schema 2020-12, so ``additionalProperties: false`` refuses a trajectory block naming tools
and the ``scoreLabel`` pattern refuses prose (§H).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

SCHEMA_FILES = (
    "ids.schema.json",
    "agent-eval-suite.schema.json",
    "eval-summary.schema.json",
    "eval-payloads.schema.json",
)
PAYLOAD_DEFS = {
    "eval.started": "evalStarted",
    "eval.scored": "evalScored",
    "eval.completed": "evalCompleted",
}


@cache
def _documents() -> dict[str, dict[str, Any]]:
    folder = resources.files("wopeval.conformance").joinpath("schemas")
    return {name: json.loads(folder.joinpath(name).read_text("utf-8")) for name in SCHEMA_FILES}


@cache
def _registry() -> Registry[Any]:
    resources_ = [Resource.from_contents(doc) for doc in _documents().values()]
    return Registry().with_resources((str(doc.id()), doc) for doc in resources_)


def schema(name: str) -> dict[str, Any]:
    """One shipped schema document, by file name."""
    return _documents()[name]


@cache
def _validator(name: str, pointer: str = "") -> Any:
    doc = _documents()[name]
    target: dict[str, Any] = doc
    if pointer:
        target = {"$ref": f"{doc['$id']}#{pointer}"}
    return Draft202012Validator(target, registry=_registry())


def _errors(validator: Any, instance: object) -> list[str]:
    found = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    messages: list[str] = []
    for error in found:
        path = "".join(
            f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path
        )
        messages.append(f"{path.lstrip('.') or '(root)'}: {error.message}")
    return messages


def suite_errors(doc: object) -> list[str]:
    """Schema errors of an ``AgentEvalSuite`` document (empty when valid)."""
    return _errors(_validator("agent-eval-suite.schema.json"), doc)


def summary_errors(doc: object) -> list[str]:
    """Schema errors of an ``EvalSummary`` document (empty when valid)."""
    return _errors(_validator("eval-summary.schema.json"), doc)


def payload_errors(event_type: str, payload: object) -> list[str]:
    """Schema errors of an ``eval.*`` payload; other types are not the kit's concern."""
    name = PAYLOAD_DEFS.get(event_type)
    if name is None:
        return []
    return _errors(_validator("eval-payloads.schema.json", f"/$defs/{name}"), payload)
