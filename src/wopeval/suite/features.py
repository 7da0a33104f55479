"""RFC 0244 §G: which optional facets a suite uses, and the refusal of unadvertised ones.

At run create, a suite that uses a feature whose facet the host does not advertise MUST be
rejected with ``400 validation_error`` naming the field; it MUST NOT be graded as if the field
were absent. The features (§G) are:

- ``trajectory``: ``expected.trajectory`` or ``kind: "trajectory"`` (§A);
- ``trials``: ``trials.count`` > 1, or a count above ``maxTrials`` (§B);
- ``fixtureMatching``: ``fixtures.onMiss`` or ``toolResponses[].args``/``argsMatch`` (§D).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from wopeval.suite.errors import FieldError
from wopeval.suite.models import AgentEvalSuite, Fixtures, Task

Facet = Literal["trajectory", "trials", "fixtureMatching"]

_NOT_ADVERTISED: dict[Facet, str] = {
    "trajectory": "trajectory grading is not advertised by this host",
    "trials": "trials are not advertised by this host",
    "fixtureMatching": "fixture matching is not advertised by this host",
}


@dataclass(frozen=True)
class FeatureUse:
    """One use of an RFC 0244 facet, at the field path that a refusal names."""

    facet: Facet
    path: str


def used_features(suite: AgentEvalSuite) -> list[FeatureUse]:
    """Every RFC 0244 §G feature use, in document order (tasks in order, then ``trials``).

    A task with a ``trajectory`` block is named by the block; a ``kind: "trajectory"`` task
    without one (which the rules reject, unless it asserts a final world state: wopeval's own
    feature, no RFC facet) by its ``kind``. A ``toolResponses`` entry is named by
    its ``args`` when it has them, else by its ``argsMatch``.
    """
    uses: list[FeatureUse] = []
    for index, task in enumerate(suite.tasks):
        uses += _task_features(f"tasks[{index}]", task)
    count = suite.trial_plan.effective_count
    if count > 1:
        uses.append(FeatureUse("trials", "trials.count"))
    return uses


def _task_features(path: str, task: Task) -> list[FeatureUse]:
    uses: list[FeatureUse] = []
    if task.expected.trajectory is not None:
        uses.append(FeatureUse("trajectory", f"{path}.expected.trajectory"))
    elif task.expected.kind == "trajectory" and task.expected.final_state is None:
        uses.append(FeatureUse("trajectory", f"{path}.expected.kind"))
    if task.fixtures is not None:
        uses += _fixture_features(f"{path}.fixtures", task.fixtures)
    return uses


def _fixture_features(path: str, fixtures: Fixtures) -> list[FeatureUse]:
    uses: list[FeatureUse] = []
    for j, entry in enumerate(fixtures.toolResponses or []):
        written = entry.model_fields_set
        if "args" in written:
            uses.append(FeatureUse("fixtureMatching", f"{path}.toolResponses[{j}].args"))
        elif "argsMatch" in written:
            uses.append(FeatureUse("fixtureMatching", f"{path}.toolResponses[{j}].argsMatch"))
    if fixtures.onMiss is not None:
        uses.append(FeatureUse("fixtureMatching", f"{path}.onMiss"))
    return uses


def check_advertised(
    suite: AgentEvalSuite,
    *,
    trajectory: bool,
    max_trials: int | None,
    fixture_matching: bool,
) -> list[FieldError]:
    """One error per feature use the host does not advertise (RFC 0244 §G refusal).

    ``max_trials`` is the advertised ``agents.evalSuite.trials.maxTrials``; ``None`` means the
    ``trials`` facet is not advertised at all.
    """
    errors: list[FieldError] = []
    count = suite.trial_plan.effective_count
    for use in used_features(suite):
        if use.facet == "trajectory" and not trajectory:
            errors.append(FieldError(use.path, _NOT_ADVERTISED["trajectory"]))
        elif use.facet == "fixtureMatching" and not fixture_matching:
            errors.append(FieldError(use.path, _NOT_ADVERTISED["fixtureMatching"]))
        elif use.facet == "trials" and max_trials is None:
            errors.append(FieldError(use.path, _NOT_ADVERTISED["trials"]))
        elif use.facet == "trials" and max_trials is not None and count > max_trials:
            errors.append(FieldError(use.path, f"{count} exceeds maxTrials {max_trials}"))
    return errors
