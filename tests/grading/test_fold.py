"""Grading folds each trial as it closes (wopeval.grading.fold): the same summary and the same
detail as the full-view path it replaced (tests/grading/reference_grading.py, main's code kept
verbatim), on varied logs — while holding only the open trials' views."""

from __future__ import annotations

import random
import weakref
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.grading import fold_logs, reference_grading
from tests.hypothesis_counts import examples
from wopeval.events.logged import LoggedEvent
from wopeval.events.tables import dumps_json
from wopeval.grading import views as views_module
from wopeval.grading.detail import run_detail
from wopeval.grading.summary import GradingOptions, build_summary, grade_run
from wopeval.grading.views import TrialCollector, TrialView
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.events import RunEvent

OPTIONS = GradingOptions(target_agent_id=fold_logs.AGENT)
STYLES = ["wopeval", "wopeval", "positional", "chained", "late"]


def _case(seed: int, style: str) -> tuple[AgentEvalSuite, list[RunEvent]]:
    rng = random.Random(seed)
    suite = AgentEvalSuite.model_validate(
        fold_logs.suite_doc(rng, tasks=rng.randint(1, 4), count=rng.randint(1, 5))
    )
    log = fold_logs.run_log(rng, suite, concurrency=rng.randint(1, 6), style=style)
    return suite, log


@settings(max_examples=examples(150), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), style=st.sampled_from(STYLES))
def test_folded_summary_is_the_full_view_summary_byte_for_byte(seed: int, style: str) -> None:
    suite, log = _case(seed, style)
    expected = reference_grading.reference_summary(suite, log, OPTIONS).to_json()
    assert build_summary(suite, log, OPTIONS).to_json() == expected
    # A one-shot iterator is read once, keeping every view: the same summary.
    assert build_summary(suite, iter(log), OPTIONS).to_json() == expected
    # The log as a re-grade reads it from the store (LoggedEvent rows): the same summary.
    assert build_summary(suite, _logged(log), OPTIONS).to_json() == expected


def _logged(log: list[RunEvent]) -> list[LoggedEvent]:
    return [
        LoggedEvent(
            e.sequence, e.eventId, e.type, dumps_json(e.payload), e.timestamp, e.causationId
        )
        for e in log
    ]


@settings(max_examples=examples(80), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), style=st.sampled_from(STYLES))
def test_folded_detail_is_the_full_view_detail(seed: int, style: str) -> None:
    suite, log = _case(seed, style)
    assert run_detail(suite, log, OPTIONS) == reference_grading.reference_run_detail(
        suite, log, OPTIONS
    )


def test_the_generated_logs_cover_every_path() -> None:
    # The fold's own paths: closed early, left open to the end, and the anomaly fallback.
    kinds: set[str] = set()
    for seed in range(60):
        for style in ("wopeval", "positional", "chained", "late"):
            suite, log = _case(seed, style)
            closed: list[TrialView] = []
            collector = TrialCollector(closed.append, {t.taskId: 5 for t in suite.tasks})
            for event in log:
                collector.feed(event)
            early = len(closed)
            collector.finish()
            kinds.add(f"{style}:anomaly" if collector.anomaly else f"{style}:clean")
            if early:
                kinds.add("closed-early")
            if len(closed) > early:
                kinds.add("open-at-end")
    assert {"wopeval:clean", "positional:clean", "chained:anomaly", "late:anomaly"} <= kinds
    assert {"closed-early", "open-at-end"} <= kinds


class _Counted(TrialView):
    """A TrialView that counts how many of its kind are alive."""

    alive: ClassVar[weakref.WeakSet[TrialView]] = weakref.WeakSet()
    __hash__ = object.__hash__  # by identity, for the weak set

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _Counted.alive.add(self)


def _long_log(
    trials: int, concurrency: int
) -> tuple[AgentEvalSuite, Iterator[RunEvent], list[int]]:
    rng = random.Random(7)
    doc = fold_logs.suite_doc(rng, tasks=1, count=trials)
    doc["tasks"][0]["expected"] = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}
    suite = AgentEvalSuite.model_validate(doc)
    log = fold_logs.run_log(rng, suite, concurrency=concurrency, shapes=fold_logs.CLEAN, reasons=1)
    most: list[int] = [0]

    def watched() -> Iterator[RunEvent]:
        for event in log:
            most[0] = max(most[0], len(_Counted.alive))
            yield event

    return suite, watched(), most


@pytest.mark.parametrize("concurrency", [1, 8])
def test_grading_a_long_log_holds_only_the_open_trials(
    monkeypatch: pytest.MonkeyPatch, concurrency: int
) -> None:
    # 2,000 interleaved trials, at most `concurrency` in flight: the full-view path held every
    # view at once (2,000); the fold holds the open ones (and the one being built).
    monkeypatch.setattr(views_module, "TrialView", _Counted)
    suite, log, most = _long_log(2000, concurrency)

    class _Once:  # re-iterable, as fold_log's paged log is, but this log is clean: read once
        def __iter__(self) -> Iterator[RunEvent]:
            return log

    graded = grade_run(suite, _Once(), OPTIONS)
    assert graded.tasks[0].result.n == 2000
    assert 0 < most[0] <= concurrency + 1


def test_the_instrument_sees_the_full_view_path_hold_every_view(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The same count over main's full-view path (the reference) reaches every trial of the run.
    monkeypatch.setattr(reference_grading, "TrialView", _Counted)
    _, log, most = _long_log(300, 8)
    held = reference_grading._collect_trials(log)
    assert len(held) > 250
    assert most[0] >= len(held) - 1


def test_a_short_clean_log_that_can_be_read_again_is_folded_as_it_goes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The fast twin of the test above: 30 trials one at a time, a re-iterable log (a list).
    # Folded as it closes, at most the open view and the one being built are alive; a fold
    # that kept every view (closing off) would hold about 30.
    monkeypatch.setattr(views_module, "TrialView", _Counted)
    suite, log, _ = _long_log(30, 1)
    events = list(log)
    most = [0]

    class _Again:  # re-iterable, as a stored log is: grade_run may read it twice
        def __iter__(self) -> Iterator[RunEvent]:
            for event in events:
                most[0] = max(most[0], len(_Counted.alive))
                yield event

    graded = grade_run(suite, _Again(), OPTIONS)
    assert graded.tasks[0].result.n == 30
    assert 0 < most[0] <= 2
