"""Pure grading: JSON matching, output matching, trajectories, trial statistics, summaries."""

from __future__ import annotations

from wopeval.grading.jsonmatch import args_match, json_equal, json_subset, matches
from wopeval.grading.output import match_output
from wopeval.grading.stats import (
    TaskTrialResult,
    TrialOutcome,
    clustered_stderr,
    pass_at_k,
    pass_hat_k,
    task_result,
    trial_stats,
)
from wopeval.grading.trajectory import ObservedCall, grade_trajectory, max_matching_size

__all__ = [
    "ObservedCall",
    "TaskTrialResult",
    "TrialOutcome",
    "args_match",
    "clustered_stderr",
    "grade_trajectory",
    "json_equal",
    "json_subset",
    "match_output",
    "matches",
    "max_matching_size",
    "pass_at_k",
    "pass_hat_k",
    "task_result",
    "trial_stats",
]
