"""The upstream v2 schemas (vendored in ``tests/data/openwop-v2``), extended by exactly the
RFC 0244 optional properties, as validators for what the host puts on the wire.

Upstream predates RFC 0244, and its objects are closed, so the RFC's optional fields are added
here by hand from the RFC text (not from wopeval's own models):

- EvalSummary task: ``trajectory`` (§A), ``trials`` (§B), ``efficiency`` (§C),
  ``fixtureMissCount`` (§D); suite: ``trialStats`` (§B); ``regression``: ``verdict``,
  ``method``, ``alpha``, ``pairedTaskCount`` (§F).
- ``eval.scored``: ``trialIndex``, ``scoreLabel``, ``evaluatorType`` (§B, §E);
  ``eval.started``: ``trialCount`` (§B).
- ``agents.evalSuite``: ``trajectory``, ``trials``, ``fixtureMatching``, ``regressionVerdict``
  (§G), plus RFC 0251's ``baselineSelection`` and RFC 0252's ``recordedFixtures``, whose
  shapes are not published (taken as booleans).
- ``eval.started``: RFC 0252's ``fixtureRuns`` echo (not published; taken as an object of
  run ids with at least one entry).

Formats are checked (``date-time``), as the conformance suite checks with Ajv.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "openwop-v2"
BASE = "https://openwop.dev/spec/v2/"
PAYLOADS_ID = BASE + "run-event-payloads.schema.json"
CAPABILITIES_ID = BASE + "capabilities.agents-evalSuite.excerpt.json"

UNIT = {"type": "number", "minimum": 0, "maximum": 1}
COUNT = {"type": "integer", "minimum": 0}
SCALAR = {"type": "number", "minimum": 0}


def _closed(required: list[str], **properties: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": required,
        "properties": properties,
    }


def _doc(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((REFERENCE / name).read_text(encoding="utf-8"))
    return loaded


def _summary() -> dict[str, Any]:
    schema = copy.deepcopy(_doc("eval-summary.schema.json"))
    task = schema["properties"]["tasks"]["items"]["properties"]
    task["trajectory"] = _closed(
        ["mode", "matched", "expectedCount", "observedCount", "matchedCount", "forbiddenCount"],
        mode={"enum": ["exact", "in-order", "any-order", "subset"]},
        matched={"type": "boolean"},
        expectedCount=COUNT,
        observedCount=COUNT,
        matchedCount=COUNT,
        forbiddenCount=COUNT,
    )
    task["trials"] = _closed(
        ["n", "passedCount", "meanScore", "passAtK", "passHatK"],
        n={"type": "integer", "minimum": 1},
        passedCount=COUNT,
        meanScore=UNIT,
        passAtK=UNIT,
        passHatK=UNIT,
    )
    task["efficiency"] = _closed(
        [], toolCallCount=SCALAR, modelCallCount=SCALAR, inputTokens=SCALAR, outputTokens=SCALAR
    )
    task["fixtureMissCount"] = COUNT
    schema["properties"]["trialStats"] = _closed(
        ["k", "passAtK", "passHatK"],
        k={"type": "integer", "minimum": 1},
        passAtK=UNIT,
        passHatK=UNIT,
        scoreStderr=SCALAR,
    )
    regression = schema["properties"]["regression"]["properties"]
    regression["verdict"] = {"enum": ["improved", "regressed", "unchanged", "inconclusive"]}
    regression["method"] = {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]{0,63}$"}
    regression["alpha"] = UNIT
    regression["pairedTaskCount"] = COUNT
    return schema


def _payloads() -> dict[str, Any]:
    schema = copy.deepcopy(_doc("run-event-payloads.eval-excerpt.json"))
    schema["$id"] = PAYLOADS_ID
    defs = schema["$defs"]
    defs["evalScored"]["properties"].update(
        trialIndex=COUNT,
        scoreLabel={"type": "string", "pattern": "^[a-z0-9][a-z0-9_-]{0,63}$"},
        evaluatorType={"enum": ["deterministic", "llm_judge", "human"]},
    )
    defs["evalStarted"]["properties"]["trialCount"] = {"type": "integer", "minimum": 1}
    defs["evalStarted"]["properties"]["fixtureRuns"] = {
        "type": "object",
        "minProperties": 1,
        "additionalProperties": {"type": "string", "minLength": 1},
    }
    return schema


def _capabilities() -> dict[str, Any]:
    schema = copy.deepcopy(_doc("capabilities.agents-evalSuite.excerpt.json"))
    schema["$id"] = CAPABILITIES_ID
    facet = schema["properties"]["agents"]["properties"]["evalSuite"]["properties"]
    facet["trajectory"] = {"type": "boolean"}
    facet["trials"] = _closed(["maxTrials"], maxTrials={"type": "integer", "minimum": 1})
    facet["fixtureMatching"] = {"type": "boolean"}
    facet["regressionVerdict"] = {"type": "boolean"}
    facet["baselineSelection"] = {"type": "boolean"}
    facet["recordedFixtures"] = {"type": "boolean"}
    # wopeval's vendor member: its own suite extensions, each with what it says of itself.
    facet["x-wopeval-extensions"] = {
        "type": "object",
        "minProperties": 1,
        "propertyNames": {"pattern": "^x-wopeval-[a-z][a-z0-9-]*$"},
        "additionalProperties": {"type": "object"},
    }
    return schema


@cache
def _registry() -> Registry[Any]:
    docs = [
        _doc("ids.schema.json"),
        _doc("subject.schema.json"),
        _doc("run-event.schema.json"),
        _doc("run-snapshot.schema.json"),
        _doc("error-envelope.schema.json"),
        _summary(),
        _payloads(),
        _capabilities(),
    ]
    resources = [(d["$id"], Resource.from_contents(d, DRAFT202012)) for d in docs]
    return Registry().with_resources(resources)


def _validator(ref: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": ref}, registry=_registry(), format_checker=FormatChecker())


def _check(ref: str, instance: Any) -> None:
    errors = sorted(_validator(ref).iter_errors(instance), key=lambda e: list(e.absolute_path))
    if errors:
        lines = [f"{list(e.absolute_path)}: {e.message}" for e in errors[:10]]
        raise AssertionError(f"{ref} rejects the instance:\n" + "\n".join(lines))


def payload_def(event_type: str) -> str | None:
    index = _payloads()["_typeIndex"]["properties"]
    entry = index.get(event_type)
    return None if entry is None else PAYLOADS_ID + entry["$ref"]


def validate_event(doc: dict[str, Any]) -> None:
    """The RunEventDoc envelope, and the payload against its def when the excerpt has one."""
    _check(BASE + "run-event.schema.json", doc)
    ref = payload_def(doc["type"])
    if ref is not None:
        _check(ref, doc["payload"])


def validate_summary(doc: dict[str, Any]) -> None:
    _check(BASE + "eval-summary.schema.json", doc)


def validate_snapshot(doc: dict[str, Any]) -> None:
    _check(BASE + "run-snapshot.schema.json", doc)


def validate_error(doc: dict[str, Any]) -> None:
    _check(BASE + "error-envelope.schema.json", doc)


def validate_agents_record(record: dict[str, Any]) -> None:
    _check(CAPABILITIES_ID + "#/properties/agents", record)
