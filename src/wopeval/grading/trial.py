"""Grade one trial (pure): RFC 0081 output grading, RFC 0244 §A trajectory gate, §D fail-closed.

The per-trial pass rule:

* ``golden``: the output matches ``expected.match`` (score 1 or 0).
* ``rubric``: the judge's score (a recorded fact) is at least ``passScore``.
* ``trajectory``: the trajectory matched (score 1 or 0).
* With a ``trajectory`` on a golden/rubric task, the trial cannot pass unless it matched; its
  ``score`` stays the output score, and it is *gated* (counts 0 for the pass decisions, RFC 0246).
* A trial that failed closed on a fixture miss reports ``passed: false`` and ``score: 0`` (§D).
* So does a trial whose conversation with a scripted user (``x-wopeval-user``) ended on a
  message the script does not cover (``user-miss``) or past its ``maxTurns`` (``max-turns``),
  whatever the agent returned after (:mod:`wopeval.engine.user`).
* A trial whose agent failed (error, timeout, cancellation) scores 0 and does not pass.
* With wopeval's ``x-wopeval-finalState``, the trial cannot pass unless its recorded final
  world state holds it (:mod:`wopeval.grading.world_state`): gated like a trajectory on a
  golden/rubric task; on a ``trajectory`` task (which may assert the state alone) every
  declared expectation must hold for its score of 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from wopeval.grading.output import match_output
from wopeval.grading.stats import TrialOutcome
from wopeval.grading.trajectory import grade_trajectory
from wopeval.grading.views import TrialView
from wopeval.grading.world_state import final_state_matched
from wopeval.suite.models import Task
from wopeval.wire.summary import TrajectoryBlock

EvaluatorType = Literal["deterministic", "llm_judge", "human"]

LABEL_PASS = "pass"
LABEL_FAIL = "fail"
LABEL_TRAJECTORY = "trajectory-unmatched"
LABEL_FIXTURE_MISS = "fixture-miss"
LABEL_STATE = "state-mismatch"
LABEL_SKIPPED = "skipped-budget"
LABEL_UNSCORED = "unscored"
# A conversation that ended on the agent's side: a message the user's script does not cover
# (the user side's failure, counted apart from the agent's), or too many messages (the agent's).
LABEL_USER_MISS = "user-miss"
LABEL_MAX_TURNS = "max-turns"
# A simulated (LLM) user that itself failed: the user side's failure, never the agent's.
LABEL_USER_ERROR = "user-error"
# Labels that force the gating score to 0 (RFC 0246) besides a recomputed trajectory/miss.
GATING_LABELS = frozenset(
    {LABEL_TRAJECTORY, LABEL_FIXTURE_MISS, LABEL_SKIPPED, LABEL_UNSCORED, LABEL_STATE,
     LABEL_USER_MISS, LABEL_USER_ERROR}
)  # fmt: skip
# How a conversation's end (a ``wopeval.user-turn`` kind) fails its trial.
_USER_END_LABELS = {
    "miss": LABEL_USER_MISS, "max-turns": LABEL_MAX_TURNS, "error": LABEL_USER_ERROR
}  # fmt: skip


class Unset:
    """The type of :data:`UNSET`: an argument not given (``None`` is a value here)."""


UNSET = Unset()


@dataclass(frozen=True)
class TrialGrade:
    score: float
    passed: bool
    gated: bool
    label: str
    evaluator_type: EvaluatorType
    trajectory: TrajectoryBlock | None

    @property
    def outcome(self) -> TrialOutcome:
        return TrialOutcome(score=self.score, passed=self.passed, gated=self.gated)


def trajectory_of(task: Task, view: TrialView, target_agent_id: str) -> TrajectoryBlock | None:
    expectation = task.expected.trajectory
    if expectation is None:
        return None
    return grade_trajectory(expectation, view.calls, target_agent_id)


def grade_trial(
    task: Task,
    view: TrialView,
    *,
    target_agent_id: str,
    pass_score: float,
    judge_score: float | None = None,
    rubric_evaluator: EvaluatorType = "llm_judge",
    trajectory: TrajectoryBlock | Unset | None = UNSET,
) -> TrialGrade:
    """Grade a trial from its view. ``judge_score`` is required for ``rubric`` tasks.

    ``trajectory``: :func:`trajectory_of` the view, when the caller has it already.
    """
    if isinstance(trajectory, Unset):
        trajectory = trajectory_of(task, view, target_agent_id)
    kind = task.expected.kind
    evaluator: EvaluatorType = rubric_evaluator if kind == "rubric" else "deterministic"
    traj_ok = trajectory is None or trajectory.matched
    state_ok = final_state_matched(task, view) is not False
    if view.failed_closed:
        return TrialGrade(0.0, False, True, LABEL_FIXTURE_MISS, evaluator, trajectory)
    if (user_label := _USER_END_LABELS.get(view.user_end or "")) is not None:
        return TrialGrade(0.0, False, True, user_label, evaluator, trajectory)
    if view.error_label is not None or view.outcome == "failed":
        label = view.error_label or "error"
        gated = not (traj_ok and state_ok)
        return TrialGrade(0.0, False, gated, label, evaluator, trajectory)
    if kind == "trajectory":
        ok = traj_ok and state_ok
        label = LABEL_STATE if traj_ok and not state_ok else _label(traj_ok, True)
        return TrialGrade(1.0 if ok else 0.0, ok, not ok, label, evaluator, trajectory)
    if kind == "golden":
        assert task.expected.match is not None  # guaranteed by the suite rules
        output_ok = view.has_output and match_output(task.expected.match, view.output)
        score = 1.0 if output_ok else 0.0
    else:
        if judge_score is None:
            return TrialGrade(0.0, False, True, LABEL_UNSCORED, evaluator, trajectory)
        score = min(1.0, max(0.0, judge_score))
        output_ok = score >= pass_score
    passed = output_ok and traj_ok and state_ok
    gated = not (traj_ok and state_ok)
    label = _label(output_ok, traj_ok, state_ok)
    return TrialGrade(score, passed, gated, label, evaluator, trajectory)


def _label(output_ok: bool, traj_ok: bool, state_ok: bool = True) -> str:
    if not traj_ok:
        return LABEL_TRAJECTORY
    if not state_ok:
        return LABEL_STATE
    return LABEL_PASS if output_ok else LABEL_FAIL


def recorded_outcome(
    task: Task,
    view: TrialView,
    target_agent_id: str,
    trajectory: TrajectoryBlock | Unset | None = UNSET,
) -> TrialOutcome | None:
    """The trial's outcome from its recorded ``eval.scored`` fact, or None when unscored.

    Scores are facts (RFC 0244 §H Replay): score and passed are re-read, never re-judged. The
    gate is re-derived from the log (trajectory, fail-closed) and from the recorded label.
    ``trajectory``: :func:`trajectory_of` the view, when the caller has it already.
    """
    scored = view.scored
    if scored is None:
        return None
    if isinstance(trajectory, Unset):
        trajectory = trajectory_of(task, view, target_agent_id)
    gated = (
        view.failed_closed
        or view.user_end in _USER_END_LABELS
        or (trajectory is not None and not trajectory.matched)
        or (scored.scoreLabel in GATING_LABELS)
        or final_state_matched(task, view) is False
    )
    # A recorded pass that the log itself contradicts (an inconsistent import) fails closed.
    return TrialOutcome(score=scored.score, passed=scored.passed and not gated, gated=gated)
