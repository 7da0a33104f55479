"""The live summary fold (wopeval.grading.live): fed a log event by event as it is committed, it
gives build_summary's summary of that log byte for byte (invariant 1), and it gives none —
so the caller reads the log back — whenever it cannot vouch for having seen exactly that log."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.grading import fold_logs
from tests.hypothesis_counts import examples
from wopeval.grading.detail import run_detail
from wopeval.grading.live import LiveFold
from wopeval.grading.summary import GradingOptions, build_summary
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.events import RunEvent

OPTIONS = GradingOptions(target_agent_id=fold_logs.AGENT)
STYLES = ["wopeval", "wopeval", "positional", "chained", "late"]


def _case(seed: int, style: str = "wopeval") -> tuple[AgentEvalSuite, list[RunEvent]]:
    rng = random.Random(seed)
    suite = AgentEvalSuite.model_validate(
        fold_logs.suite_doc(rng, tasks=rng.randint(1, 4), count=rng.randint(1, 5))
    )
    return suite, fold_logs.run_log(rng, suite, concurrency=rng.randint(1, 6), style=style)


def _fed(suite: AgentEvalSuite, log: list[RunEvent], detail: bool = False) -> LiveFold:
    live = LiveFold(suite, OPTIONS, detail=detail)
    for event in log:
        live(event)
    return live


@settings(max_examples=examples(120), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), style=st.sampled_from(STYLES))
def test_rfc0244_live_summary_is_the_stored_logs_summary(seed: int, style: str) -> None:
    suite, log = _case(seed, style)
    live = _fed(suite, log)
    expected = build_summary(suite, log, OPTIONS)
    summary = live.summary(len(log) - 1)
    if summary is None:  # only an anomalous log (read twice by build_summary) is declined
        assert live.unusable is not None
        assert "anomalous" in live.unusable
    else:
        assert summary.to_json() == expected.to_json()


@settings(max_examples=examples(80), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), style=st.sampled_from(STYLES))
def test_live_detail_is_the_stored_logs_detail(seed: int, style: str) -> None:
    suite, log = _case(seed, style)
    live = _fed(suite, log, detail=True)
    summary = live.summary(len(log) - 1)
    if summary is None:
        assert live.detail is None
    else:
        assert live.detail == run_detail(suite, log, OPTIONS)
        assert summary.to_json() == build_summary(suite, log, OPTIONS).to_json()


def test_without_detail_asked_none_is_kept() -> None:
    suite, log = _case(12)
    live = _fed(suite, log)
    assert live.summary(len(log) - 1) is not None
    assert live.detail is None


def test_the_generated_logs_give_live_summaries_and_anomalous_fallbacks() -> None:
    # The property above is not vacuous: most logs are summarised live, some are declined.
    outcomes = {_fed(*_case(s, style)).summary(len(_case(s, style)[1]) - 1) is None
                for s in range(40) for style in STYLES}  # fmt: skip
    assert outcomes == {True, False}


def test_a_fold_attached_after_the_first_event_gives_no_summary() -> None:
    suite, log = _case(7)
    live = _fed(suite, log[1:])  # a resume: the log began before the fold was attached
    assert live.summary(len(log) - 1) is None
    assert live.unusable is not None
    assert "came when 0 was next" in live.unusable


def test_a_gap_in_the_sequence_gives_no_summary() -> None:
    suite, log = _case(8)
    assert len(log) > 3
    live = _fed(suite, log[:2] + log[3:])  # another process took sequence 2
    assert live.summary(len(log) - 1) is None
    assert live.unusable is not None
    assert "event 3 came when 2 was next" in live.unusable


def test_a_log_longer_than_the_fold_saw_gives_no_summary() -> None:
    suite, log = _case(9)
    live = _fed(suite, log[:-1])  # the last event was appended by another process
    assert live.summary(len(log) - 1) is None
    assert live.unusable is not None
    assert "the log ends at" in live.unusable


def test_the_summary_is_taken_once() -> None:
    suite, log = _case(10)
    live = _fed(suite, log)
    first = live.summary(len(log) - 1)
    assert first is not None
    assert live.summary(len(log) - 1) is None  # the fold is closed: read back instead


def test_a_fold_that_raises_gives_no_summary_and_does_not_raise() -> None:
    suite, log = _case(11)
    live = LiveFold(suite, OPTIONS)
    broken = log[0].model_copy(update={"type": "agent.invocation-started", "payload": {}})
    live(broken.model_copy(update={"payload": {"x-wopeval-task-id": "t"}}))  # no typed model
    for event in log[1:]:
        live(event)
    assert live.summary(len(log) - 1) is None
    assert live.unusable is not None
    assert "raised" in live.unusable


@settings(max_examples=examples(40), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), default=st.sampled_from([0.0, 0.5, 1.0]))
def test_the_live_fold_reads_the_runs_default_pass_score_where_the_suite_sets_none(
    seed: int, default: float
) -> None:
    suite, log = _case(seed)
    doc = suite.model_dump(mode="json", exclude_none=True)
    doc.pop("thresholds", None)
    plain = AgentEvalSuite.model_validate(doc)
    options = GradingOptions(target_agent_id=fold_logs.AGENT, default_pass_score=default)
    live = LiveFold(plain, options)
    for event in log:
        live(event)
    summary = live.summary(len(log) - 1)
    if summary is not None:
        assert summary.to_json() == build_summary(plain, log, options).to_json()


def test_the_live_fold_keeps_no_detail_unless_asked() -> None:
    suite, log = _case(7)
    live = LiveFold(suite, OPTIONS)
    for event in log:
        live(event)
    assert live.summary(len(log) - 1) is not None
    assert live.detail is None
