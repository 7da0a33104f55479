"""Reading a suite's YAML: the loaders and the alias-expansion bound.

PyYAML is imported here only, so a run of a JSON suite, or of a suite built in Python
(``wopeval.evaluate``), never loads it; :func:`wopeval.suite.load.read_document` imports this
module when it reads a ``.yaml`` or ``.yml`` file.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import yaml

from wopeval.suite import bounds
from wopeval.suite.duplicates import duplicate_key_errors
from wopeval.suite.errors import ROOT_PATH, FieldError, SuiteError

__all__ = ["DuplicateKeyMarking", "check_yaml_expansion", "load_yaml", "parse_yaml"]

_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


class DuplicateKeyMarking(yaml.SafeLoader):
    """A YAML loader that records the repeated keys of each mapping (``repeated_keys``, by the
    mapping's ``id``). A ``<<`` merge may still be overridden: only keys written in the mapping
    itself count."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.repeated_keys: dict[int, list[tuple[Any, int | None]]] = {}

    def construct_yaml_map(self, node: yaml.MappingNode) -> Generator[dict[Any, Any], None, None]:
        data: dict[Any, Any] = {}
        yield data
        # Read before construct_mapping flattens the node, which puts the ``<<`` merged pairs
        # into it: a key the mapping writes over a merged one is not a repeat.
        duplicates = self._repeated(node)
        data.update(self.construct_mapping(node))
        if duplicates:
            self.repeated_keys[id(data)] = duplicates

    def _repeated(self, node: yaml.MappingNode) -> list[tuple[Any, int | None]]:
        seen: set[Any] = set()
        duplicates: list[tuple[Any, int | None]] = []
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node)  # built once: construct_mapping reuses it
            try:
                repeated = key in seen
                seen.add(key)
            except TypeError:  # an unhashable key: the constructor has reported it
                continue
            if repeated:
                duplicates.append((key, key_node.start_mark.line + 1))
        return duplicates


DuplicateKeyMarking.add_constructor(
    "tag:yaml.org,2002:map",
    DuplicateKeyMarking.construct_yaml_map,
)


def load_yaml(text: str, loader: type[DuplicateKeyMarking]) -> tuple[object, list[FieldError]]:
    """Parse YAML with ``loader``; the data and an error per repeated key."""
    parser = loader(text)
    try:
        data = parser.get_single_data()
    finally:
        parser.dispose()
    return data, duplicate_key_errors(data, parser.repeated_keys)


def check_yaml_expansion(node: yaml.Node | None, source: str) -> None:
    """Refuse a YAML node graph whose aliases expand beyond MAX_YAML_NODES or MAX_DEPTH."""
    count = 0
    stack: list[tuple[Any, int]] = [(node, 0)] if node is not None else []
    while stack:
        current, depth = stack.pop()
        count += 1
        if count > bounds.MAX_YAML_NODES:
            beyond = f"YAML aliases expand beyond {bounds.MAX_YAML_NODES} nodes"
            raise _document_error(source, beyond)
        if depth > bounds.MAX_DEPTH:
            raise bounds.too_deep(source)
        if isinstance(current, yaml.SequenceNode):
            stack.extend((child, depth + 1) for child in current.value)
        elif isinstance(current, yaml.MappingNode):
            for key, value in current.value:
                stack.append((key, depth + 1))
                stack.append((value, depth + 1))


class _SuiteYamlLoader(DuplicateKeyMarking):
    """``yaml.SafeLoader`` minus implicit timestamps: ``2026-10-14`` stays a string, as in JSON;
    repeated keys are marked (:class:`DuplicateKeyMarking`); an integer longer than
    :data:`~wopeval.suite.bounds.MAX_INTEGER_DIGITS` is never converted (Python refuses to
    convert one of more than 4,300 digits, and converting is quadratic), but left for
    :func:`~wopeval.suite.bounds.tree_errors` to refuse by its field."""

    def construct_bounded_int(self, node: yaml.ScalarNode) -> int | bounds.TooManyDigits:
        text = str(self.construct_scalar(node)).replace("_", "").lstrip("+")
        if len(text.lstrip("-")) > bounds.MAX_INTEGER_DIGITS:
            return bounds.TooManyDigits(text)
        return self.construct_yaml_int(node)


_SuiteYamlLoader.add_constructor("tag:yaml.org,2002:int", _SuiteYamlLoader.construct_bounded_int)


_SuiteYamlLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _document_error(source: str, message: str) -> SuiteError:
    """A problem with the file as a whole, named ``$``."""
    return SuiteError([FieldError(ROOT_PATH, message)], source)


def _load(text: str, source: str) -> tuple[object, DuplicateKeyMarking]:
    """Compose, bound the node graph (alias expansion, depth), then construct."""
    parser = _SuiteYamlLoader(text)
    try:
        node = parser.get_single_node()
        check_yaml_expansion(node, source)
        data = parser.construct_document(node) if node is not None else None
    finally:
        parser.dispose()
    return data, parser


def parse_yaml(text: str, source: str) -> tuple[object, dict[int, list[tuple[Any, int | None]]]]:
    """The data of a suite's YAML text and its repeated keys (the loader's ``repeated_keys``);
    a file that is not YAML, or nests too deep, is a :class:`SuiteError` naming ``$``."""
    try:
        data, parser = _load(text, source)
    except RecursionError:
        raise bounds.too_deep(source) from None
    except yaml.MarkedYAMLError as exc:
        problem = exc.problem or "cannot parse"
        if exc.context:
            problem = f"{problem} ({exc.context})"
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise _document_error(source, f"invalid YAML{where}: {problem}") from exc
    except yaml.YAMLError as exc:
        raise _document_error(source, f"invalid YAML: {exc}") from exc
    return data, parser.repeated_keys
