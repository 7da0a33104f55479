"""Which trials an OTLP input holds, and in what order, from one pass over its spans.

The rules (``wopeval.service.otlp_trials`` states them): one trial is one root agent span's
spans (an agent span with no agent ancestor in its trace), or a whole trace with no agent span;
a tool or model span outside every agent joins its trace's one root agent's trial (several:
refused), other spans outside every agent are no trial. Trials are ordered by their first
span's start (ties: the file's order of their traces, then of their first spans), and each
takes its task id and trial index from its root's attributes, then its spans' (in start order),
then their resources'.

:func:`plan` reads the spans once and keeps a few integers per span (its trace, parent, start,
line), never the spans: a trace's shape is only known once its last span is read (a span is
exported when it ends, before its parent), so the plan is made when the pass ends. It says,
for each trial, the last unit (line) holding one of its spans, so a second pass
(:func:`trials_in_order`) can hand each trial over as soon as it and every trial before it are
complete, holding only the trials that are read but not yet due.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from wopeval.service.otlp_read import OtlpError, OtlpSpan

TASK_ATTR, TRIAL_ATTR = "openwop.eval.task_id", "openwop.eval.trial_index"
_UNSET: Any = object()
_HEX = re.compile(r"[0-9a-f]+")
# An attribute's rank (root 0, span 1, resource 2) above its span's start, as one number.
_START_OFFSET, _RANK_STEP = 1 << 65, 1 << 67
_NEVER = 3 * _RANK_STEP

# A span's role in the plan (what ``role(span)`` answers; a bool is OTHER or AGENT).
OTHER, AGENT, SET_ASIDE, GRADED = 0, 1, 2, 3
_NO_TRIAL = -(2**31)

__all__ = [
    "AGENT",
    "GRADED",
    "OTHER",
    "SET_ASIDE",
    "TASK_ATTR",
    "TRIAL_ATTR",
    "Plan",
    "SpanSource",
    "TrialPlan",
    "merged",
    "plan",
]


class SpanSource(Protocol):
    """Spans in units (a line of an OTLP/JSON lines file, or one document); every call of
    :meth:`units` yields the same units in the same order."""

    def units(self) -> Iterable[list[OtlpSpan]]: ...


@dataclass(slots=True)
class TrialPlan:
    """One trial: where its spans are, and (from :func:`_assign`) its task and index."""

    trace_id: str
    root: int  # the root agent span's position in the input; -1: the whole trace
    first: int  # its first span's position (ties of ``start``)
    trace_first: int  # its trace's first span's position
    start_ns: int
    last_unit: int
    spans: int
    task_attr: Any = None
    index_attr: Any = None
    task_rank: int = _NEVER  # the rank of the span ``task_attr`` came from (_attributes)
    index_rank: int = _NEVER
    task_id: str | None = None
    trial_index: int | None = None

    @property
    def order(self) -> tuple[int, int, int]:
        return self.start_ns, self.trace_first, self.first


@dataclass(slots=True)
class Plan:
    trials: list[TrialPlan]  # in trial order
    group_of: array[int]  # span position → index into ``trials`` (-1: in no trial)
    span_count: int


class _Reader:
    """The first pass: per span its trace, parent, start, unit and whether it is an agent."""

    def __init__(self) -> None:
        self.trace = array("i")
        self.key = array("i")  # the span's id, as a number unique per (trace, span id)
        self.parent_key = array("i")  # -1: no parent
        self.start: array[int] | list[int] = array("q")
        self.unit = array("i")
        self.agent = bytearray()  # each span's role
        # (trace, span id) → key: a 16-digit hex span id as a number with the trace above its
        # bits (36 bytes, not a 98-byte string); any other id as text.
        self.keys: dict[int | str, int] = {}
        self.traces: dict[str, int] = {}  # trace id → its index (first appearance)
        self.trace_ids: list[str] = []
        self.trace_first: list[int] = []
        self.last = array("i")  # per key, its last span (:meth:`parents`)
        # Only the spans that carry a task or index attribute, on the span or its resource:
        # their positions, and four values each (span task, index, resource task, index).
        self.attr_at = array("i")
        self.attr_values: list[Any] = []
        self._same: dict[Any, Any] = {}  # one object for equal values ("t" on every trial)

    def _key(self, trace: int, span_id: str) -> int:
        name: int | str
        if len(span_id) == 16 and _HEX.fullmatch(span_id):  # "0001" and "1" stay apart
            name = int(span_id, 16) | trace << 64
        else:
            name = f"{trace}/{span_id}"
        key = self.keys.get(name)
        if key is None:
            key = self.keys[name] = len(self.keys)
        return key

    def add(self, span: OtlpSpan, unit: int, role: int) -> None:
        position = len(self.start)
        trace = self.traces.get(span.trace_id)
        if trace is None:
            trace = self.traces[span.trace_id] = len(self.trace_ids)
            self.trace_ids.append(span.trace_id)
            self.trace_first.append(position)
        self.trace.append(trace)
        self.key.append(self._key(trace, span.span_id))
        parent = span.parent_span_id
        self.parent_key.append(self._key(trace, parent) if parent else -1)
        try:
            self.start.append(span.start_ns)
        except OverflowError:  # an unsigned 64-bit time past 2**63 (or a malformed one)
            self.start = list(self.start)
            self.start.append(span.start_ns)
        self.unit.append(unit)
        self.agent.append(role)
        found = [
            values.get(name, _UNSET)
            for values in (span.attributes, span.resource)
            for name in (TASK_ATTR, TRIAL_ATTR)
        ]
        if any(value is not _UNSET for value in found):
            self.attr_at.append(position)
            self.attr_values.extend(self._one(value) for value in found)

    def _one(self, value: Any) -> Any:
        try:
            return self._same.setdefault((type(value), value), value)
        except TypeError:  # an array or kvlist value: unhashable, kept as it is
            return value

    def attrs(self) -> Iterator[tuple[int, list[Any]]]:
        values = self.attr_values
        for index, position in enumerate(self.attr_at):
            yield position, values[4 * index : 4 * index + 4]

    def parents(self) -> array[int]:
        """Each span's parent position: the last span with that id in the trace (-1: none).
        Keeps :attr:`last`, each key's last span: the copy that stands for a repeated id."""
        last = self.last = array("i", [-1]) * len(self.keys)
        for position, key in enumerate(self.key):
            last[key] = position
        return array("i", (last[key] if key >= 0 else -1 for key in self.parent_key))

    def roots(self, parent: array[int]) -> array[int]:
        """Each span's outermost agent ancestor, itself included (-1: none). A parent chain
        that loops ends where it meets itself."""
        pending, walking = -2, -3
        top = array("i", [pending]) * len(parent)
        for position in range(len(parent)):
            chain: list[int] = []
            current = position
            while current >= 0 and top[current] == pending:
                top[current] = walking
                chain.append(current)
                current = parent[current]
            above = top[current] if current >= 0 and top[current] != walking else -1
            for member in reversed(chain):
                if above == -1 and self.agent[member] in (AGENT, SET_ASIDE):
                    above = member
                top[member] = above
        return top


def plan(source: SpanSource, role: Callable[[OtlpSpan], int]) -> Plan:
    """The trials of ``source`` in order, with the task and index attributes each would take
    (:func:`_assign` in ``otlp_trials`` decides). ``role(span)``: ``AGENT``; ``SET_ASIDE``, an
    attempt whose spans are in no trial; ``GRADED``, a tool or model span, which is never left
    out: outside every agent span, it belongs to its trace's one root agent span's trial (a
    trace with several is refused: which trial made the call is not said); else ``OTHER``."""
    reader = _Reader()
    for unit, spans in enumerate(source.units()):
        for span in spans:
            reader.add(span, unit, int(role(span)))
    parent = reader.parents()
    del reader.keys
    top = reader.roots(parent)
    del parent
    trials: dict[int, TrialPlan] = {}  # group key → trial: a root's position, or -1 - trace
    member_group = array("i", [0]) * len(top)
    has_agent = bytearray(len(reader.trace_ids))
    last, key = reader.last, reader.key
    roots: dict[int, set[int]] = {}  # trace → its root agent spans' groups
    outside: list[int] = []  # graded spans outside every agent span
    for position, root in enumerate(top):
        trace = reader.trace[position]
        if root >= 0:  # a repeated root (a batch exported twice): its copies are one trial
            root = last[key[root]]
        if root >= 0 and reader.agent[root] == SET_ASIDE:
            member_group[position] = _NO_TRIAL
            continue
        group = root if root >= 0 else -1 - trace
        member_group[position] = group
        if root >= 0:
            has_agent[trace] = 1
            roots.setdefault(trace, set()).add(root)
        elif reader.agent[position] == GRADED:
            outside.append(position)
        _join(trials, group, reader, position, root)
    for group in list(trials):
        if group < 0 and has_agent[-1 - group]:  # spans outside every agent: no trial
            del trials[group]
    for position in outside:
        trace = reader.trace[position]
        if not has_agent[trace]:
            continue
        if len(roots[trace]) > 1:
            raise OtlpError(
                f"trace {reader.trace_ids[trace]}: a tool or model span outside its "
                f"{len(roots[trace])} root agent spans is of no trial (which one made the "
                "call is not said); put it under its agent's span"
            )
        (group,) = roots[trace]
        member_group[position] = group
        _join(trials, group, reader, position, group)
    _attributes(reader, member_group, trials)
    ordered = sorted(trials.items(), key=lambda item: item[1].order)
    number = {group: index for index, (group, _) in enumerate(ordered)}
    group_of = array("i", (number.get(group, -1) for group in member_group))
    return Plan([trial for _, trial in ordered], group_of, len(group_of))


def merged(planned: Plan, parts: list[tuple[TrialPlan, TrialPlan]]) -> Plan:
    """``planned`` with each pair's second trial merged into its first (the same trial in
    several traces: ``_assign`` in ``otlp_trials`` decides), trials in order again."""
    if not parts:
        return planned
    number = {id(trial): index for index, trial in enumerate(planned.trials)}
    into: dict[int, TrialPlan] = {}
    for keep, part in parts:
        into[number[id(part)]] = keep
        keep.start_ns = min(keep.start_ns, part.start_ns)
        keep.last_unit = max(keep.last_unit, part.last_unit)
        keep.trace_first = min(keep.trace_first, part.trace_first)
        keep.first = min(keep.first, part.first)
        keep.spans += part.spans
    kept = sorted(
        (trial for index, trial in enumerate(planned.trials) if index not in into),
        key=lambda trial: trial.order,
    )
    renumber = {id(trial): index for index, trial in enumerate(kept)}
    new = [renumber[id(into.get(index, trial))] for index, trial in enumerate(planned.trials)]
    group_of = array("i", (new[group] if group >= 0 else -1 for group in planned.group_of))
    return Plan(kept, group_of, planned.span_count)


def _join(
    trials: dict[int, TrialPlan], group: int, reader: _Reader, position: int, root: int
) -> None:
    """Count the span at ``position`` into the trial ``group`` (made on its first span)."""
    found = trials.get(group)
    if found is None:
        trace = reader.trace[position]
        trials[group] = TrialPlan(
            trace_id=reader.trace_ids[trace],
            root=root,
            first=position,
            trace_first=reader.trace_first[trace],
            start_ns=reader.start[position],
            last_unit=reader.unit[position],
            spans=1,
        )
    else:
        found.start_ns = min(found.start_ns, reader.start[position])
        found.last_unit = max(found.last_unit, reader.unit[position])
        found.spans += 1


def _attributes(reader: _Reader, member_group: array[int], trials: dict[int, TrialPlan]) -> None:
    """Each trial's task and index attribute: its root's, else its first span's in start
    order (the file's order on a tie), else the first such span's resource's.

    The spans come in the file's order, so a later one takes a value only when it ranks
    strictly first by (root, span, resource; start): one number a trial and attribute."""
    for position, values in reader.attrs():
        group = member_group[position]
        trial = trials.get(group)
        if trial is None:
            continue
        offset = reader.start[position] + _START_OFFSET
        for slot, value in enumerate(values):
            if value is _UNSET:
                continue
            on_span = slot < 2
            rank = 0 if on_span and position == trial.root else 1 if on_span else 2
            order = rank * _RANK_STEP + offset
            if slot % 2 == 0:
                if order < trial.task_rank:
                    trial.task_rank, trial.task_attr = order, value
            elif order < trial.index_rank:
                trial.index_rank, trial.index_attr = order, value


def trials_in_order(
    source: SpanSource, planned: Plan, wanted: list[int]
) -> Iterator[tuple[TrialPlan, OtlpSpan | None, list[OtlpSpan]]]:
    """The second pass: each wanted trial (indices into ``planned.trials``, in order) with its
    root span and its spans in start order, as soon as it and every wanted trial before it
    are read."""
    wanted_set = set(wanted)
    held: dict[int, list[OtlpSpan]] = {}
    roots: dict[int, OtlpSpan] = {}
    due = 0
    position = 0

    def hand_over() -> tuple[TrialPlan, OtlpSpan | None, list[OtlpSpan]]:
        index = wanted[due]
        spans = sorted(held.pop(index, []), key=_start)
        trial = planned.trials[index]
        if len(spans) != trial.spans:
            raise OtlpError("the input changed while it was read (it is read twice)")
        return trial, roots.pop(index, None), spans

    for unit, spans in enumerate(source.units()):
        for span in spans:
            if position >= planned.span_count:
                raise OtlpError("the input changed while it was read (it is read twice)")
            group = planned.group_of[position]
            if group in wanted_set:
                held.setdefault(group, []).append(span)
                if position == planned.trials[group].root:
                    roots[group] = span
            position += 1
        while due < len(wanted) and planned.trials[wanted[due]].last_unit <= unit:
            yield hand_over()
            due += 1
    if due < len(wanted):  # the input shrank since the first pass
        raise OtlpError("the input changed while it was read (it is read twice)")


def _start(span: OtlpSpan) -> int:
    """Spans in start order; a tie (the same clock tick) keeps the file's order (a stable
    sort), never a random one such as the span id's."""
    return span.start_ns
