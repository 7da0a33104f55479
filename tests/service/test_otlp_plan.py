"""The OTLP import's trial plan: the same trials, in the same order, with the same attributes
as holding every span does, while the second pass hands each trial over as soon as it is read.

The reference below is the import's earlier grouping, which held every span of the input (about
40 KB a trace): trials are root agent spans' groups or agent-less traces, ordered by start
(stable), each taking its task and index attribute from its root, then its spans in start
order, then their resources.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wopeval.service.otlp_plan import TASK_ATTR, TRIAL_ATTR, plan, trials_in_order
from wopeval.service.otlp_read import OtlpFile, OtlpSpan
from wopeval.service.otlp_trials import SpanList, classify

Trial = tuple[str, str | None, list[str], Any, Any]  # trace, root id, span ids, task, index


def _reference(spans: Sequence[OtlpSpan]) -> list[Trial]:
    by_id = {(s.trace_id, s.span_id): s for s in spans}
    traces: dict[str, list[OtlpSpan]] = defaultdict(list)
    for span in spans:
        traces[span.trace_id].append(span)

    def root_agent(span: OtlpSpan) -> OtlpSpan | None:
        found: OtlpSpan | None = None
        current: OtlpSpan | None = span
        seen: set[int] = set()
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            if classify(current) == "agent":
                found = current
            current = by_id.get((current.trace_id, current.parent_span_id or ""))
        return found

    groups: list[tuple[OtlpSpan | None, list[OtlpSpan]]] = []
    for members in traces.values():
        by_root: dict[int | None, tuple[OtlpSpan | None, list[OtlpSpan]]] = {}
        for span in members:
            root = root_agent(span)
            by_root.setdefault(id(root) if root else None, (root, []))[1].append(span)
        if len(by_root) > 1:
            by_root.pop(None, None)
        groups.extend(
            (root, sorted(group, key=lambda s: s.start_ns)) for root, group in by_root.values()
        )
    groups.sort(key=lambda g: min(s.start_ns for s in g[1]))

    def attribute(root: OtlpSpan | None, group: list[OtlpSpan], key: str) -> Any:
        for span in ([root] if root else []) + group:
            if key in span.attributes:
                return span.attributes[key]
        return next((s.resource[key] for s in group if key in s.resource), None)

    return [
        (
            group[0].trace_id,
            root.span_id if root else None,
            [s.span_id for s in group],
            attribute(root, group, TASK_ATTR),
            attribute(root, group, TRIAL_ATTR),
        )
        for root, group in groups
    ]


class _Units:
    """Spans split into units (lines), counting how many units each pass has read."""

    def __init__(self, units: list[list[OtlpSpan]]) -> None:
        self._units = units
        self.read = 0

    def units(self) -> Iterator[list[OtlpSpan]]:
        self.read = 0
        for unit in self._units:
            self.read += 1
            yield unit


def _planned(source: _Units | SpanList) -> list[Trial]:
    planned = plan(source, lambda span: classify(span) == "agent")
    trials = []
    every = list(range(len(planned.trials)))
    for trial, root, spans in trials_in_order(source, planned, every):
        root_id = root.span_id if root else None
        trials.append(
            (trial.trace_id, root_id, [s.span_id for s in spans], trial.task_attr, trial.index_attr)
        )
    return trials


@st.composite
def _inputs(draw: st.DrawFn) -> tuple[list[OtlpSpan], list[list[OtlpSpan]]]:
    """Traces of random span trees (some agents, some with attributes, a few parents outside
    the input), in a random order, cut into random lines."""
    spans: list[OtlpSpan] = []
    for trace in range(draw(st.integers(1, 5))):
        count = draw(st.integers(1, 7))
        for index in range(count):
            parent = draw(st.integers(-2, index - 1))  # -1: a root; -2: a parent not in it
            attrs: dict[str, Any] = {}
            if draw(st.booleans()):
                attrs["openinference.span.kind"] = "AGENT"
            if draw(st.integers(0, 4)) == 0:
                attrs[TASK_ATTR] = draw(st.sampled_from(["a", "b"]))
            if draw(st.integers(0, 4)) == 0:
                attrs[TRIAL_ATTR] = draw(st.integers(0, 3))
            resource = {TASK_ATTR: "r"} if draw(st.integers(0, 5)) == 0 else {}
            spans.append(
                OtlpSpan(
                    trace_id=f"{trace:032x}",
                    span_id=f"{trace:08x}{index:08x}",
                    parent_span_id=None
                    if parent == -1
                    else "ffffffffffffffff"
                    if parent == -2
                    else f"{trace:08x}{parent:08x}",
                    name="span",
                    start_ns=draw(st.integers(0, 5)),  # ties on purpose
                    end_ns=10,
                    attributes=attrs,
                    resource=resource,
                )
            )
    order = draw(st.permutations(spans))
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(order) - 1)), max_size=len(order))))
    units, last = [], 0
    for cut in [*cuts, len(order)]:
        if cut > last:
            units.append(list(order[last:cut]))
            last = cut
    return list(order), units


@settings(max_examples=300, deadline=None)
@given(_inputs())
def test_the_plan_finds_the_trials_holding_every_span_finds(
    data: tuple[list[OtlpSpan], list[list[OtlpSpan]]],
) -> None:
    spans, units = data
    expected = _reference(spans)
    assert _planned(SpanList(spans)) == expected
    assert _planned(_Units(units)) == expected


@settings(max_examples=100, deadline=None)
@given(_inputs())
def test_each_trial_is_handed_over_once_it_and_those_before_it_are_read(
    data: tuple[list[OtlpSpan], list[list[OtlpSpan]]],
) -> None:
    _, units = data
    source = _Units(units)
    planned = plan(source, lambda span: classify(span) == "agent")
    every = list(range(len(planned.trials)))
    due = 0
    for trial, _, spans in trials_in_order(source, planned, every):
        due = max(due, trial.last_unit)
        assert source.read == due + 1  # not a line more than it and those before it need
        assert len(spans) == trial.spans


def test_a_parent_chain_that_loops_ends_and_still_makes_a_trial() -> None:
    """A malformed trace whose spans are each other's parents (the earlier grouping walked
    such a chain for ever)."""

    def span(span_id: str, parent: str) -> OtlpSpan:
        attrs = {"openinference.span.kind": "AGENT"}
        return OtlpSpan("t" * 32, span_id, parent, "agent", 1, 2, attrs)

    trials = _planned(SpanList([span("a" * 16, "b" * 16), span("b" * 16, "a" * 16)]))
    assert [sorted(spans) for _, _, spans, _, _ in trials] == [["a" * 16, "b" * 16]]


def _line(spans: list[dict[str, Any]]) -> str:
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]})


def _agent(trace: int, start: int) -> dict[str, Any]:
    attrs = [{"key": "openinference.span.kind", "value": {"stringValue": "AGENT"}}]
    return {
        "traceId": f"{trace:032x}",
        "spanId": f"{trace:016x}",
        "name": "agent",
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 1),
        "attributes": attrs,
    }


def test_a_file_is_read_a_line_at_a_time_and_a_document_whole(tmp_path: Path) -> None:
    shuffled = list(range(30))
    random.Random(7).shuffle(shuffled)
    lines = tmp_path / "lines.jsonl"
    lines.write_text("".join(_line([_agent(t, start=t)]) + "\n" for t in shuffled))
    source = OtlpFile(lines)
    assert [len(unit) for unit in source.units()] == [1] * 30
    trials = _planned(source)  # type: ignore[arg-type]
    assert [trace for trace, *_ in trials] == [f"{t:032x}" for t in range(30)]  # start order
    pretty = tmp_path / "doc.json"
    pretty.write_text(json.dumps(json.loads(_line([_agent(1, 5), _agent(2, 3)])), indent=2))
    assert [len(unit) for unit in OtlpFile(pretty).units()] == [2]


def test_a_file_that_is_neither_lines_nor_a_document_names_its_first_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('\n{"resourceSpans": \n' + _line([]) + "\n")
    with pytest.raises(ValueError, match="line 2: not JSON"):
        list(OtlpFile(bad).units())


def test_short_span_ids_with_leading_zeros_are_other_spans() -> None:
    """ "0001" and "1" are two ids (only 16-digit ids are kept as numbers)."""
    agent = {"openinference.span.kind": "AGENT"}
    spans = [
        OtlpSpan("t" * 32, "0001", None, "agent", 1, 9, agent),
        OtlpSpan("t" * 32, "0002", "0001", "tool", 2, 3),
        OtlpSpan("t" * 32, "1", None, "agent", 5, 9, agent),
    ]
    assert _planned(SpanList(spans)) == _reference(spans)
    assert [ids for _, _, ids, _, _ in _planned(SpanList(spans))] == [["0001", "0002"], ["1"]]
