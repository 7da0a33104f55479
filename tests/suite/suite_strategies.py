"""Hypothesis strategies for suite documents, built by hand from the schema shapes.

- :func:`upstream_suites` follows the upstream (pre-RFC 0244) ``agent-eval-suite.schema.json``
  member by member. With ``semantic=True`` it also keeps the suite rules (a ``golden`` task
  has ``match``, a ``rubric`` task has ``rubric``, task ids are unique), so ``parse_suite``
  must accept every draw; with ``semantic=False`` only the schema is kept.
- :func:`rfc0244_suites` adds the RFC 0244 members (trajectory, ``kind: "trajectory"``,
  trials, ``onMiss``, ``toolResponses[].args``/``argsMatch``), keeping every suite rule.
- :func:`mutated` breaks (or not) a document at one random place.
- :func:`upstream_summaries` follows the upstream ``eval-summary.schema.json``.

Strings that must match a pattern are built from its grammar. Free strings avoid control
characters (line breaks among them): the ``jsonschema`` package evaluates ``pattern`` with
Python's ``re.search``, whose ``$`` also matches before a final newline (ECMA-262's and
pydantic's do not).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

JsonDoc = dict[str, Any]

MODES = ["golden", "rubric", "adversarial", "regression", "live-shadow"]
MODEL_CLASSES = ["reasoning", "writing", "coding", "research", "classification", "general"]
STRATEGIES = ["exact", "contains", "json-match"]
TRAJECTORY_MODES = ["exact", "in-order", "any-order", "subset"]

_TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=12)
_NON_EMPTY = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=12)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT
)
json_values = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=6,
)
json_objects = st.dictionaries(_TEXT, json_values, max_size=3)

_LOWER_DIGITS = "abcdefghijklmnopqrstuvwxyz0123456789"
_ID_CHARS = _LOWER_DIGITS + "ABCDEFGHIJKLMNOPQRSTUVWXYZ._~-"


def _word(alphabet: str, min_size: int = 1, max_size: int = 12) -> st.SearchStrategy[str]:
    return st.text(alphabet, min_size=min_size, max_size=max_size)


# Pattern-bound strings, built from their grammar (``st.from_regex`` is ten times slower).
suite_ids = st.builds(  # ^[a-z0-9.-]+\.evals\.[a-z0-9-]+$
    "{}.evals.{}".format, _word(_LOWER_DIGITS + ".-"), _word(_LOWER_DIGITS + "-")
)
versions = st.builds(  # ^[0-9]+\.[0-9]+\.[0-9]+$
    "{}.{}.{}".format, st.integers(0, 99), st.integers(0, 99), st.integers(0, 999)
)
agent_ids = _word(_ID_CHARS + ":", max_size=40)  # ^[A-Za-z0-9._~:-]{1,128}$
node_ids = agent_ids
task_ids = st.builds(  # ^[a-z0-9][a-z0-9-]*$
    str.__add__, _word(_LOWER_DIGITS, max_size=1), _word(_LOWER_DIGITS + "-", 0, 15)
)
run_ids = st.builds(  # ^[A-Za-z0-9._~-]{1,128}/[A-Za-z0-9._~-]{16,128}$
    "{}/{}".format, _word(_ID_CHARS, 1, 20), _word(_ID_CHARS, 16, 30)
)
unit = st.floats(min_value=0, max_value=1)
non_negative = st.floats(min_value=0, max_value=1e9)
tools = st.builds("{}:{}".format, _word("abcdefghij", 1, 8), _word("klmnop-")) | _NON_EMPTY

thresholds = st.fixed_dictionaries(
    {},
    optional={
        "passScore": unit,
        "maxCostUsd": non_negative,
        "maxP95LatencyMs": st.integers(0, 10**7),
    },
)
output_matches = st.fixed_dictionaries(
    {"strategy": st.sampled_from(STRATEGIES), "value": json_values}
)
rubrics = st.lists(
    st.fixed_dictionaries({"criterion": _NON_EMPTY, "weight": unit}), min_size=1, max_size=3
)


def _upstream_expected(semantic: bool) -> st.SearchStrategy[JsonDoc]:
    if not semantic:
        return st.fixed_dictionaries(
            {"kind": st.sampled_from(["golden", "rubric"])},
            optional={"match": output_matches, "rubric": rubrics},
        )
    golden = st.fixed_dictionaries(
        {"kind": st.just("golden"), "match": output_matches}, optional={"rubric": rubrics}
    )
    rubric = st.fixed_dictionaries(
        {"kind": st.just("rubric"), "rubric": rubrics}, optional={"match": output_matches}
    )
    return golden | rubric


def _upstream_fixtures() -> st.SearchStrategy[JsonDoc]:
    response = st.fixed_dictionaries({"tool": tools}, optional={"response": json_values})
    return st.fixed_dictionaries(
        {},
        optional={
            "toolResponses": st.lists(response, max_size=3),
            "memorySeed": st.lists(json_objects, max_size=2),
        },
    )


def _suites(tasks: st.SearchStrategy[list[JsonDoc]], **extra: Any) -> st.SearchStrategy[JsonDoc]:
    optional: dict[str, st.SearchStrategy[Any]] = {
        "targetAgentId": agent_ids,
        "allowedModels": st.lists(st.sampled_from(MODEL_CLASSES), unique=True),
        "thresholds": thresholds,
        **extra,
    }
    required = {
        "suiteId": suite_ids,
        "version": versions,
        "modes": st.lists(st.sampled_from(MODES), min_size=1, unique=True),
        "tasks": tasks,
    }
    return st.fixed_dictionaries(required, optional=optional)


def _task_id(task: JsonDoc) -> str:
    return str(task["taskId"])


def upstream_suites(*, semantic: bool) -> st.SearchStrategy[JsonDoc]:
    """Suites valid against the upstream schema (and, if ``semantic``, the suite rules)."""
    task = st.fixed_dictionaries(
        {"taskId": task_ids, "input": json_values, "expected": _upstream_expected(semantic)},
        optional={"fixtures": _upstream_fixtures()},
    )
    unique_by = _task_id if semantic else None
    return _suites(st.lists(task, min_size=1, max_size=4, unique_by=unique_by))


def _args_pair() -> st.SearchStrategy[JsonDoc]:
    """``args``/``argsMatch`` combinations the suite rules accept (RFC 0244 §A, §D)."""
    non_null = json_values.filter(lambda value: value is not None)
    return st.one_of(
        st.just({}),
        st.fixed_dictionaries({"argsMatch": st.just("ignore")}, optional={"args": json_values}),
        st.fixed_dictionaries({"args": json_values}),
        st.fixed_dictionaries({"args": non_null, "argsMatch": st.just("exact")}),
        st.fixed_dictionaries({"args": json_objects, "argsMatch": st.just("subset")}),
    )


@st.composite
def _calls(draw: st.DrawFn, *, with_response: bool) -> JsonDoc:
    call: JsonDoc = {"tool": draw(tools), **draw(_args_pair())}
    if with_response and draw(st.booleans()):
        call["response"] = draw(json_values)
    return call


trajectories = st.fixed_dictionaries(
    {
        "match": st.sampled_from(TRAJECTORY_MODES),
        "calls": st.lists(_calls(with_response=False), max_size=3),
    },
    optional={"forbidden": st.lists(tools, max_size=2), "includeDelegates": st.booleans()},
)


def _rfc0244_expected() -> st.SearchStrategy[JsonDoc]:
    golden = st.fixed_dictionaries(
        {"kind": st.just("golden"), "match": output_matches},
        optional={"rubric": rubrics, "trajectory": trajectories},
    )
    rubric = st.fixed_dictionaries(
        {"kind": st.just("rubric"), "rubric": rubrics},
        optional={"match": output_matches, "trajectory": trajectories},
    )
    path_only = st.fixed_dictionaries({"kind": st.just("trajectory"), "trajectory": trajectories})
    return golden | rubric | path_only


@st.composite
def _trials(draw: st.DrawFn) -> JsonDoc:
    trials: JsonDoc = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "count": st.integers(1, 12),
                "passRule": st.sampled_from(["all", "any", "mean"]),
            },
        )
    )
    if draw(st.booleans()):
        trials["k"] = draw(st.integers(1, trials.get("count", 1)))
    return trials


def rfc0244_suites() -> st.SearchStrategy[JsonDoc]:
    """Suites using the RFC 0244 members, keeping every suite rule."""
    fixtures = st.fixed_dictionaries(
        {},
        optional={
            "toolResponses": st.lists(_calls(with_response=True), max_size=3),
            "memorySeed": st.lists(json_objects, max_size=2),
            "onMiss": st.sampled_from(["fail", "live"]),
        },
    )
    task = st.fixed_dictionaries(
        {"taskId": task_ids, "input": json_values, "expected": _rfc0244_expected()},
        optional={"fixtures": fixtures},
    )
    tasks = st.lists(task, min_size=1, max_size=4, unique_by=_task_id)
    return _suites(tasks, trials=_trials())


# --- mutation -----------------------------------------------------------------------------

_TRICKY: list[object] = [
    None,
    True,
    False,
    "1",
    "true",
    0,
    1,
    -1,
    1.5,
    5.0,
    "",
    "superset",
    "golden",
    "in-order",
    "subset",
    "crm:lookup",
    [],
    {},
    ["golden"],
    {"tool": "x"},
    {"strategy": "exact", "value": 1},
]
_KNOWN_KEYS = [
    "bogus",
    "args",
    "argsMatch",
    "onMiss",
    "trajectory",
    "match",
    "rubric",
    "trials",
    "count",
    "k",
    "forbidden",
    "response",
]


_OPAQUE = frozenset({"input", "value", "args", "response", "memorySeed"})


def _slots(node: object, out: list[tuple[Any, Any]]) -> None:
    """Every (container, key) pair of the suite's structure, depth first.

    Opaque content (``input``, ``value``, ``args``, ``response``, ``memorySeed``) is a slot
    but is not entered: any JSON is valid inside it, so a change there tests nothing.
    """
    if isinstance(node, dict):
        for key, value in node.items():
            out.append((node, key))
            if key not in _OPAQUE:
                _slots(value, out)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out.append((node, index))
            _slots(value, out)


@st.composite
def mutated(draw: st.DrawFn, base: st.SearchStrategy[JsonDoc]) -> JsonDoc:
    """A document with one random change at a uniformly chosen place.

    The change is one of: the value becomes ``null``; it is replaced by a tricky or random JSON
    value; the member is deleted; a (possibly known) member is added to an object; an array
    entry is duplicated; an integer becomes the equal float. (``sampled_from`` would favour the
    first slots, so places are picked with a seeded ``Random``.)
    """
    doc = copy.deepcopy(draw(base))
    rnd = draw(st.randoms(use_true_random=False))
    slots: list[tuple[Any, Any]] = []
    _slots(doc, slots)
    container, key = rnd.choice(slots)
    action = rnd.choice(["null", "replace", "delete", "add", "duplicate", "float"])
    if action == "null":
        container[key] = None
    elif action == "replace":
        container[key] = rnd.choice(_TRICKY) if rnd.random() < 0.5 else draw(json_values)
    elif action == "delete":
        del container[key]
    elif action == "add":
        target = container if isinstance(container, dict) else container[key]
        if isinstance(target, dict):
            target[rnd.choice(_KNOWN_KEYS)] = rnd.choice(_TRICKY)
    elif action == "duplicate":
        lists = [(c, k) for c, k in slots if isinstance(c, list)]
        if lists:
            owner, index = rnd.choice(lists)
            owner.append(copy.deepcopy(owner[index]))
    elif isinstance(container[key], int) and not isinstance(container[key], bool):
        container[key] = float(container[key])
    return doc


def _changes_at(container: Any, key: Any) -> list[tuple[str, Any]]:
    value = container[key]
    changes: list[tuple[str, Any]] = [("delete", ...)]
    changes += [(f"replace with {choice!r}", choice) for choice in _TRICKY]
    if isinstance(value, int) and not isinstance(value, bool):
        changes.append(("integral float", float(value)))
    return changes


def single_changes(doc: JsonDoc) -> Iterator[tuple[str, JsonDoc]]:
    """Every one-place change of a document: at each structural slot, a delete and each tricky
    replacement; in each object, each known member added; each array entry duplicated."""
    count = len(_slot_list(doc))
    for index in range(count):
        container, key = _slot_list(doc)[index]
        for label, new in _changes_at(container, key):
            changed = copy.deepcopy(doc)
            owner, name = _slot_list(changed)[index]
            if new is ...:
                del owner[name]
            else:
                owner[name] = copy.deepcopy(new)
            yield f"{label} at slot {index} ({name!r})", changed
        if isinstance(container, list):
            changed = copy.deepcopy(doc)
            owner, name = _slot_list(changed)[index]
            owner.append(copy.deepcopy(owner[name]))
            yield f"duplicate slot {index}", changed
        if isinstance(container[key], dict):
            for member in _KNOWN_KEYS:
                changed = copy.deepcopy(doc)
                owner, name = _slot_list(changed)[index]
                owner[name][member] = "x"
                yield f"add {member!r} at slot {index}", changed


def _slot_list(doc: JsonDoc) -> list[tuple[Any, Any]]:
    slots: list[tuple[Any, Any]] = []
    _slots(doc, slots)
    return slots


# --- summaries ----------------------------------------------------------------------------


def upstream_summaries() -> st.SearchStrategy[JsonDoc]:
    """Summaries valid against the upstream ``eval-summary.schema.json``."""
    finding = st.fixed_dictionaries(
        {
            "kind": _NON_EMPTY,
            "severity": st.sampled_from(["low", "medium", "high", "critical"]),
        }
    )
    task = st.fixed_dictionaries(
        {"taskId": task_ids, "score": unit, "passed": st.booleans()},
        optional={
            "costUsd": non_negative,
            "latencyMs": st.integers(0, 10**7),
            "schemaValid": st.booleans(),
            "safetyFindings": st.lists(finding, max_size=2),
        },
    )
    regression = st.fixed_dictionaries(
        {"baselineRunId": run_ids, "scoreDelta": st.floats(min_value=-1, max_value=1)},
        optional={"diffRef": _TEXT},
    )
    required = {
        "suiteId": suite_ids,
        "suiteVersion": versions,
        "aggregateScore": unit,
        "passed": st.booleans(),
        "taskCount": st.integers(0, 100),
        "passedCount": st.integers(0, 100),
        "tasks": st.lists(task, max_size=3),
    }
    optional = {
        "evaluatedModelClass": st.sampled_from(MODEL_CLASSES),
        "totalCostUsd": non_negative,
        "pinnedNodeIds": st.lists(node_ids, max_size=3, unique=True),
        "regression": regression,
    }
    return st.fixed_dictionaries(required, optional=optional)
