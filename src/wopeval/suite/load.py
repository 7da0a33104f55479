"""Load and validate an ``AgentEvalSuite`` (RFC 0081 §A with the RFC 0244 additions).

Validation has two layers, reported in this order:

1. **Schema**: the shape the JSON Schema describes (types, enums, patterns, required and unknown
   members). The pydantic models (:mod:`wopeval.suite.models`) are its one validator, in strict
   mode, so ``"5"`` is not a count and ``true`` is not a number, as in JSON Schema; the
   generated schema (``wopeval schema suite``) is printed from them.
2. **Rules** (:mod:`wopeval.suite.rules`): the cross-field suite rules that are deliberately not
   schema conditionals (RFC 0244 acceptance criteria). They run only on a schema-valid suite.

Every error of a layer is reported at once, each named by its field path. Before either, the
file and the document must be within :mod:`wopeval.suite.bounds` (size, depth, integer digits,
YAML alias expansion, task and trial counts).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from wopeval.suite import bounds
from wopeval.suite.duplicates import duplicate_key_errors, json_object
from wopeval.suite.errors import ROOT_PATH, FieldError, SuiteError, from_validation_error
from wopeval.suite.models import AgentEvalSuite, validate_document
from wopeval.suite.rules import check_raw_rules, check_rules

SUITE_SUFFIXES: tuple[str, ...] = (".json", ".yaml", ".yml")


# --- reading files ------------------------------------------------------------------------


def _document_error(source: str, message: str) -> SuiteError:
    """A problem with the file as a whole, named ``$``."""
    return SuiteError([FieldError(ROOT_PATH, message)], source)


def _parse_json(text: str, source: str) -> object:
    try:
        data = json.loads(text, object_pairs_hook=json_object, parse_int=bounds.parse_int)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        raise _document_error(source, f"invalid JSON at {where}: {exc.msg}") from exc
    except RecursionError:
        raise bounds.too_deep(source) from None
    return _checked(data, duplicate_key_errors, source)


def _checked(data: object, duplicates_of: Any, source: str) -> object:
    """Refuse the document beyond the bounds, then one with repeated keys."""
    beyond = bounds.tree_errors(data)
    if beyond:
        raise SuiteError(beyond, source)
    duplicates: list[FieldError] = duplicates_of(data)
    if duplicates:
        raise SuiteError(duplicates, source)
    return data


def _parse_yaml(text: str, source: str) -> object:
    from wopeval.suite.yaml_doc import parse_yaml  # PyYAML, only when a YAML file is read

    data, repeated_keys = parse_yaml(text, source)
    return _checked(data, lambda d: duplicate_key_errors(d, repeated_keys), source)


def read_document(path: str | Path) -> object:
    """Read a ``.json``, ``.yaml`` or ``.yml`` file into plain data; errors name ``$``, or the
    path of each repeated key."""
    file = Path(path)
    source = str(path)
    suffix = file.suffix.lower()
    if suffix not in SUITE_SUFFIXES:
        found = repr(suffix) if suffix else "(none)"
        raise _document_error(
            source, f"unsupported file type {found} (expected .json, .yaml or .yml)"
        )
    try:
        text = bounds.read_bounded(file, source).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _document_error(source, f"not UTF-8 text: {exc.reason}") from exc
    except OSError as exc:
        raise _document_error(source, f"cannot read file: {exc.strerror or exc}") from exc
    if suffix == ".json":
        return _parse_json(text, source)
    return _parse_yaml(text, source)


# --- the schema layer ---------------------------------------------------------------------


def check_schema(data: object) -> tuple[AgentEvalSuite | None, list[FieldError]]:
    """The schema layer: the suite if ``data`` has the suite's shape, and every shape error
    (in declaration order: members as the models declare them, unknown ones after)."""
    try:
        return validate_document(data), []
    except ValidationError as exc:
        return None, [error for _, error in from_validation_error(exc, AgentEvalSuite)]


def validate_suite(data: object) -> tuple[AgentEvalSuite | None, list[FieldError]]:
    """Bounds, schema, then rules. The suite is returned whenever the schema layer passed."""
    beyond = bounds.count_errors(data) or bounds.tree_errors(data)
    if beyond:
        return None, beyond
    suite, errors = check_schema(data)
    if suite is None:
        # Rules that need no valid model are reported in the same pass, after the shape errors.
        return None, errors + check_raw_rules(data)
    return suite, check_rules(suite)


def parse_suite(data: object, source: str = "<suite>") -> AgentEvalSuite:
    """Validate plain data (parsed JSON/YAML) as a suite, raising :class:`SuiteError`."""
    suite, errors = validate_suite(data)
    if errors or suite is None:
        raise SuiteError(errors, source)
    return suite


def load_suite(path: str | Path) -> AgentEvalSuite:
    """Load a suite from a ``.json``, ``.yaml`` or ``.yml`` file, with every rule checked."""
    return parse_suite(read_document(path), str(path))


def suite_to_document(suite: AgentEvalSuite) -> dict[str, object]:
    """The suite as a JSON document holding exactly the members its author wrote."""
    return suite.model_dump(mode="json", exclude_unset=True, by_alias=True)
