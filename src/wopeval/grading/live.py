"""The summary fold of a run fed as it is recorded: no end-of-run re-read (invariant 1 kept).

:class:`LiveFold` is given each event of the run the moment the store has committed it, in
sequence order, and folds it with the very :class:`~wopeval.grading.fold.RunFold` that
:func:`~wopeval.grading.summary.build_summary` runs over the stored log. So the summary it
gives is ``build_summary(suite, log, options)`` of the same log, computed as the log was
written instead of by reading it back; with ``detail``, :attr:`LiveFold.detail` is
``run_detail(suite, log, options)`` of it too (the same hook on the same fold).

It gives no summary (the caller reads the log back, the one path for every other case) when it
cannot vouch for having seen the whole log, exactly once, in order: it was attached after the
first event (a resume), an event's sequence is not the next one (another writer), the log has
events it was not given (``last_sequence``), the fold flagged the log as anomalous (which needs
a second read), or folding raised.
"""

from __future__ import annotations

from wopeval.grading.detail import CellKeeper, RunDetail, detail_of
from wopeval.grading.fold import RunFold
from wopeval.grading.summary import GradingOptions, graded_of, pass_score_of, summary_of
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.events import RunEvent
from wopeval.wire.summary import EvalSummary

__all__ = ["LiveFold"]


class LiveFold:
    """Folds a run's events as they are committed; :meth:`summary` once every trial is in."""

    def __init__(
        self, suite: AgentEvalSuite, options: GradingOptions, *, detail: bool = False
    ) -> None:
        self._suite = suite
        self._options = options
        target = options.target_agent_id
        # With ``detail``, the trial cells run_detail keeps, kept by the same hook.
        self._cells = CellKeeper(suite, options) if detail else None
        pass_score = pass_score_of(suite, options)
        self._fold = RunFold(suite, target, pass_score, on_trial=self._cells)
        self.next_sequence = 0
        self.unusable: str | None = None  # why :meth:`summary` gives None
        self.detail: RunDetail | None = None  # run_detail of the log, once summarised

    def __call__(self, event: RunEvent) -> None:
        """The store has committed ``event`` (called in commit order). Never raises."""
        if self.unusable is not None:
            return
        if event.sequence != self.next_sequence:
            self.unusable = f"event {event.sequence} came when {self.next_sequence} was next"
            return
        self.next_sequence += 1
        try:
            self._fold.feed_one(event)
        except Exception as exc:  # the re-read meets (and reports) the same failure
            self.unusable = f"folding event {event.sequence} raised {type(exc).__name__}"

    def summary(self, last_sequence: int) -> EvalSummary | None:
        """The summary of the log whose last sequence is ``last_sequence``, or None when this
        fold did not see exactly that log (the caller then reads it back). Call it once."""
        if self.unusable is None and last_sequence + 1 != self.next_sequence:
            seen = self.next_sequence - 1
            self.unusable = f"the log ends at {last_sequence}, this fold at {seen}"
        if self.unusable is None and self._fold.anomaly is not None:
            self.unusable = f"an anomalous log ({self._fold.anomaly}) is read twice"
        if self.unusable is not None:
            return None
        self.unusable = "its summary was taken"
        self._fold.close()
        graded = graded_of(self._suite, self._options, self._fold)
        if self._cells is not None:
            self.detail = detail_of(self._suite, graded, self._cells)
        return summary_of(self._suite, graded)
