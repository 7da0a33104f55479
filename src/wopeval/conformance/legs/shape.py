"""Legs ``0244.wire-shape`` and ``0244.content-free`` (RFC 0244 §A–§E, §H) over every run.

wire-shape: the summary and every ``eval.*`` payload validate against the shipped upstream
schemas (extended only by the RFC 0244 fields); the RFC 0081 event counts and order hold (one
``eval.started`` before every ``eval.scored``, one ``eval.completed`` after them, one
``eval.scored`` per task per trial); the summary names the suite and lists its tasks in order;
the advertised ``agents.evalSuite`` members have their §G shapes.

content-free: no ``eval.*`` payload and no summary carries suite content (tool names, arguments,
scripted outputs, fixture responses, expected values), nor any of the content keys RFC 0081's
check refuses; ``scoreLabel`` is a low-cardinality label, never prose.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from wopeval.conformance.legs.common import Checker, RunCapture
from wopeval.conformance.shapes import payload_errors, summary_errors
from wopeval.conformance.suites import content_strings, tasks_of, trial_plan

EVAL_TYPES = ("eval.started", "eval.scored", "eval.completed")
CONTENT_KEYS = frozenset(
    {
        "taskOutput",
        "output",
        "rubric",
        "completion",
        "prompt",
        "body",
        "secret",
        "credentials",
        "token",
        "apiKey",
    }
)
SCORE_LABEL = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
EVALUATOR_TYPES = frozenset({"deterministic", "llm_judge", "human"})
BOOLEAN_MEMBERS = ("trajectory", "fixtureMatching", "regressionVerdict")


def _sequence(event: Mapping[str, Any]) -> int:
    value = event.get("sequence")
    return value if isinstance(value, int) else -1


def _check_order(ck: Checker, capture: RunCapture) -> None:
    name = capture.fixture.fixture_id
    started, completed = capture.of_type("eval.started"), capture.of_type("eval.completed")
    scored = capture.of_type("eval.scored")
    ck.check(len(started) == 1, f"{name}: {len(started)} eval.started, want 1")
    ck.check(len(completed) == 1, f"{name}: {len(completed)} eval.completed, want 1")
    count, _, _ = trial_plan(capture.suite)
    want = len(tasks_of(capture.suite)) * count
    ck.check(
        len(scored) == want,
        f"{name}: {len(scored)} eval.scored, want {want} (one per task per trial)",
    )
    if len(started) == 1 and len(completed) == 1:
        low, high = _sequence(started[0]), _sequence(completed[0])
        ck.check(
            all(low < _sequence(e) < high for e in scored),
            f"{name}: an eval.scored lies outside eval.started … eval.completed",
        )


def _check_summary_identity(ck: Checker, capture: RunCapture) -> None:
    name, summary, suite = capture.fixture.fixture_id, capture.summary, capture.suite
    ck.check(
        summary.get("suiteId") == suite.get("suiteId")
        and summary.get("suiteVersion") == suite.get("version"),
        f"{name}: summary names {summary.get('suiteId')}@{summary.get('suiteVersion')}",
    )
    listed = [
        entry.get("taskId") for entry in summary.get("tasks") or [] if isinstance(entry, dict)
    ]
    want = [task.get("taskId") for task in tasks_of(suite)]
    ck.check(listed == want, f"{name}: summary tasks {listed}, want suite order {want}")


def check_wire_shape(captures: Sequence[RunCapture], eval_suite: Mapping[str, Any]) -> Checker:
    """``0244.wire-shape`` over every captured run, plus the advertised facet's shape."""
    ck = Checker()
    for member in BOOLEAN_MEMBERS:
        if member in eval_suite:
            ck.check(
                isinstance(eval_suite[member], bool),
                f"agents.evalSuite.{member} is {eval_suite[member]!r}, want a boolean",
            )
    if "trials" in eval_suite:
        trials = eval_suite["trials"]
        max_trials = trials.get("maxTrials") if isinstance(trials, dict) else None
        ck.check(
            isinstance(max_trials, int) and not isinstance(max_trials, bool) and max_trials >= 1,
            f"agents.evalSuite.trials is {trials!r}, want {{maxTrials: integer ≥ 1}}",
        )
    for capture in captures:
        name = capture.fixture.fixture_id
        for event in capture.events:
            if event.get("type") in EVAL_TYPES:
                errors = payload_errors(str(event["type"]), event.get("payload"))
                ck.check(
                    not errors,
                    f"{name}: {event['type']} (sequence "
                    f"{event.get('sequence')}) fails its schema: {'; '.join(errors)}",
                )
        errors = summary_errors(capture.summary)
        ck.check(not errors, f"{name}: the summary fails its schema: {'; '.join(errors)}")
        _check_order(ck, capture)
        _check_summary_identity(ck, capture)
    return ck


def _walk(value: Any, path: str) -> Iterator[tuple[str, str, bool]]:
    """Every ``(path, string, is_key)`` in a JSON value."""
    if isinstance(value, str):
        yield path, value, False
    elif isinstance(value, dict):
        for key, item in value.items():
            yield f"{path}.{key}", str(key), True
            yield from _walk(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, f"{path}[{index}]")


def _check_document(ck: Checker, where: str, doc: Any, content: set[str]) -> None:
    leaks = sorted({(p, c) for p, text, _ in _walk(doc, where) for c in content if c in text})
    ck.check(
        not leaks,
        f"{where} carries suite content: " + ", ".join(f"{c!r} at {p}" for p, c in leaks[:5]),
    )
    keys = sorted({p for p, text, is_key in _walk(doc, where) if is_key and text in CONTENT_KEYS})
    ck.check(not keys, f"{where} carries content keys: {', '.join(keys)}")


def check_content_free(captures: Sequence[RunCapture]) -> Checker:
    """``0244.content-free`` over every captured run."""
    ck = Checker()
    for capture in captures:
        name = capture.fixture.fixture_id
        content = content_strings(capture.suite)
        for event in capture.events:
            if event.get("type") not in EVAL_TYPES:
                continue
            where = f"{name}: {event['type']}#{event.get('sequence')}"
            payload = event.get("payload")
            _check_document(ck, where, payload, content)
            if event["type"] == "eval.scored" and isinstance(payload, dict):
                label = payload.get("scoreLabel")
                if label is not None:
                    ck.check(
                        isinstance(label, str) and SCORE_LABEL.match(label) is not None,
                        f"{where}: scoreLabel {label!r} is not a low-cardinality label",
                    )
                kind = payload.get("evaluatorType")
                if kind is not None:
                    ck.check(kind in EVALUATOR_TYPES, f"{where}: evaluatorType {kind!r}")
        _check_document(ck, f"{name}: summary", capture.summary, content)
    return ck
