"""The suite rules of ``x-wopeval-adaptive`` and each task's resolved plan.

A task's setting is its own ``x-wopeval-adaptive`` when it has one, else the suite's. The rules
(every error at once, each naming its field):

- the maximum is ``trials.count``, so it must be at least 2, and ``minTrials`` (absent ⇒ ``k``)
  must be below it, or no trial could be saved;
- ``minTrials`` ≥ ``trials.k``: pass@k and pass^k need ``n ≥ k`` trials (RFC 0244 §B);
- ``0 < threshold − indifference`` and ``threshold + indifference < 1``;
- no task with ``fixtures.onMiss: "live"`` (its trials must not be cut for convenience).
"""

from __future__ import annotations

from wopeval.suite.adaptive import ADAPTIVE_KEY, AdaptivePlan, AdaptiveTrials, resolve
from wopeval.suite.errors import FieldError
from wopeval.suite.models import AgentEvalSuite, Task

# The pass threshold of a suite without ``thresholds.passScore`` (the grader's default).
PASS_SCORE_ABSENT = 1.0


def task_setting(task: Task, suite: AgentEvalSuite) -> AdaptiveTrials | None:
    """The ``x-wopeval-adaptive`` that governs ``task``: its own, else the suite's."""
    if task.x_wopeval_adaptive is not None:
        return task.x_wopeval_adaptive
    return suite.x_wopeval_adaptive


def adaptive_plan(suite: AgentEvalSuite, task: Task) -> AdaptivePlan | None:
    """The task's resolved sequential test, or ``None`` when it runs every trial."""
    settings = task_setting(task, suite)
    return None if settings is None else _resolve(suite, settings)


def _resolve(suite: AgentEvalSuite, settings: AdaptiveTrials) -> AdaptivePlan:
    thresholds = suite.thresholds
    pass_score = thresholds.passScore if thresholds is not None else None
    plan = suite.trial_plan
    return resolve(
        settings,
        pass_score=PASS_SCORE_ABSENT if pass_score is None else pass_score,
        count=plan.effective_count,
        k=plan.effective_k,
    )


def adaptive_rules(suite: AgentEvalSuite) -> list[FieldError]:
    """Every ``x-wopeval-adaptive`` rule violation, in document order (tasks, then the suite)."""
    errors: list[FieldError] = []
    for index, task in enumerate(suite.tasks):
        if task.x_wopeval_adaptive is not None:
            path = f"tasks[{index}].{ADAPTIVE_KEY}"
            errors += _setting_rules(suite, path, task.x_wopeval_adaptive)
        elif suite.x_wopeval_adaptive is None:
            continue
        if task.fixtures is not None and task.fixtures.onMiss == "live":
            message = (
                f"'live' cannot be used with {ADAPTIVE_KEY} (a task with live tools runs every "
                "trial; drop the adaptive setting or serve every call from fixtures)"
            )
            errors.append(FieldError(f"tasks[{index}].fixtures.onMiss", message))
    if suite.x_wopeval_adaptive is not None:
        errors += _setting_rules(suite, ADAPTIVE_KEY, suite.x_wopeval_adaptive)
    return errors


def _setting_rules(suite: AgentEvalSuite, path: str, settings: AdaptiveTrials) -> list[FieldError]:
    plan = _resolve(suite, settings)
    errors: list[FieldError] = []
    written = settings.model_fields_set
    min_path = f"{path}.minTrials" if "minTrials" in written else path
    min_source = "minTrials" if "minTrials" in written else "minTrials (absent, so trials.k)"
    if plan.max_trials < 2:
        message = (
            f"needs trials.count of at least 2, the most trials a task runs (got {plan.max_trials})"
        )
        errors.append(FieldError(path, message))
    elif plan.min_trials >= plan.max_trials:
        message = (
            f"{min_source} {plan.min_trials} must be below trials.count {plan.max_trials}, "
            "or no trial could be saved"
        )
        errors.append(FieldError(min_path, message))
    k = suite.trial_plan.effective_k
    if plan.min_trials < k:
        message = f"{plan.min_trials} is below trials.k {k} (pass@k needs at least k trials)"
        errors.append(FieldError(min_path, message))
    if not 0 < plan.p0 < plan.p1 < 1:
        field = "indifference" if "indifference" in written else "threshold"
        source = "" if "threshold" in written else " (thresholds.passScore, absent means 1)"
        message = (
            f"threshold {plan.threshold:g}{source} ± indifference {plan.threshold - plan.p0:g} "
            f"must stay inside (0, 1) (got {plan.p0:g} to {plan.p1:g})"
        )
        errors.append(FieldError(f"{path}.{field}", message))
    return errors
