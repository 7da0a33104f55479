"""Every Eval Ever (schema 0.3.0): an aggregate record and one instance line per trial.

Content-free, like the summary it is built from (RFC 0244 §H): the aggregate holds ids, scores,
counts and the clustered standard error; an instance line names its task and trial, its score,
pass decision, tool-call count and token usage, and, for a trial that did not pass, the
failure *kind* (``fixture-miss``, ``trajectory``, …) — never an input, output, argument or
message. ``input.raw`` is the task id (the schema requires a string), ``messages`` and
``answer_attribution`` are empty.

Uncertainty: ``standard_error`` is the standard error of the aggregate clustered by task
(Miller 2024, :func:`wopeval.grading.stats.clustered_stderr`) with its method named in
``method`` (omitted below two tasks); ``confidence_interval`` is the aggregate's interval at
95 %, the task as the unit (:func:`wopeval.grading.intervals.task_clopper_pearson`), its level
and method named.

Layout: the datastore's, under the directory given — ``data/<suite>/<developer>/<model>/`` holds
``<uuid>.json`` and ``<uuid>_samples.jsonl``; the aggregate's
``detailed_evaluation_results.file_path`` names the samples file so, with its SHA-256 and row
count. The uuid is derived from the run id, so exporting a run again rewrites the same files.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wopeval import __version__
from wopeval.grading.detail import RunDetail
from wopeval.grading.intervals import task_clopper_pearson
from wopeval.grading.stats import clustered_stderr
from wopeval.grading.views import TrialView
from wopeval.wire.summary import EvalSummary

SCHEMA_VERSION = "0.3.0"
STDERR_METHOD = "clustered by task: stdev of per-task mean scores / sqrt(taskCount) (Miller 2024)"
CI_METHOD = (
    "task-clopper-pearson: Clopper-Pearson on the sum of per-task mean scores over taskCount"
)
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")

__all__ = ["CI_METHOD", "STDERR_METHOD", "EeeExport", "TrialUsage", "eee_export", "write_eee"]


@dataclass(frozen=True)
class EeeExport:
    evaluation_uuid: str
    aggregate: dict[str, Any]
    instances: list[dict[str, Any]]

    @property
    def aggregate_name(self) -> str:
        return f"{self.evaluation_uuid}.json"

    @property
    def samples_name(self) -> str:
        return f"{self.evaluation_uuid}_samples.jsonl"

    def samples_text(self) -> str:
        return "".join(json.dumps(line, sort_keys=True) + "\n" for line in self.instances)


def _model(agent_id: str) -> tuple[str, str]:
    """A HuggingFace-style ``developer/name`` id for the agent under test."""
    head, _, tail = agent_id.partition(".")
    return _SAFE.sub("-", head) or "wopeval", _SAFE.sub("-", tail or agent_id)


@dataclass(frozen=True)
class TrialUsage:
    """What an instance line reads of a trial's view: kept per trial instead of the view."""

    input_tokens: int
    output_tokens: int
    tool_calls: int
    latency_ms: int | None

    @classmethod
    def of(cls, view: TrialView) -> TrialUsage:
        return cls(view.input_tokens, view.output_tokens, len(view.calls), view.latency_ms)


def _instance(
    base: dict[str, Any], task_id: str, cell: Any, view: TrialUsage | None
) -> dict[str, Any]:
    tokens = None
    if view is not None and (view.input_tokens or view.output_tokens):
        total = view.input_tokens + view.output_tokens
        tokens = {"input_tokens": view.input_tokens, "output_tokens": view.output_tokens,
                  "total_tokens": total}  # fmt: skip
    return {
        **base,
        "sample_id": f"{task_id}#{cell.trial_index}",
        "interaction_type": "agentic",
        "input": {"raw": task_id, "reference": []},
        "output": None,
        "messages": [],
        "answer_attribution": [],
        "evaluation": {
            "score": cell.score if cell.score is not None else 0.0,
            "is_correct": cell.status == "pass",
            "tool_calls_count": view.tool_calls if view is not None else 0,
        },
        "token_usage": tokens,
        "performance": {"latency_ms": view.latency_ms} if view and view.latency_ms else None,
        "error": cell.reason.kind if cell.reason is not None else None,
        "metadata": {"taskId": task_id, "trialIndex": str(cell.trial_index), "status": cell.status},
    }


def _result(summary: EvalSummary, result_id: str, suite_name: str) -> dict[str, Any]:
    means = [t.trials.meanScore if t.trials is not None else t.score for t in summary.tasks]
    stderr = clustered_stderr(means)
    uncertainty: dict[str, Any] = {"num_samples": summary.taskCount}
    if stderr is not None:
        uncertainty["standard_error"] = {"value": stderr, "method": STDERR_METHOD}
    interval = task_clopper_pearson(means)
    if interval is not None:
        uncertainty["confidence_interval"] = {"lower": interval.low, "upper": interval.high,
                                              "confidence_level": interval.level,
                                              "method": CI_METHOD}  # fmt: skip
    return {
        "evaluation_result_id": result_id,
        "evaluation_name": suite_name,
        "source_data": {"dataset_name": suite_name, "source_type": "other"},
        "metric_config": {
            "evaluation_description": "wopeval aggregate score (RFC 0244 gating mean)",
            "metric_id": "wopeval.aggregate_score",
            "metric_name": "aggregateScore",
            "metric_kind": "pass_rate",
            "metric_unit": "proportion",
            "lower_is_better": False,
            "score_type": "continuous",
            "min_score": 0,
            "max_score": 1,
        },
        "score_details": {
            "score": summary.aggregateScore,
            "details": {
                "passed": str(summary.passed).lower(),
                "passedCount": str(summary.passedCount),
            },
            "uncertainty": uncertainty,
        },
    }


def _aggregate(
    summary: EvalSummary, run_id: str, agent_id: str, retrieved: str, base: dict[str, Any]
) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": base["evaluation_id"],
        "retrieved_timestamp": retrieved,
        "source_metadata": {
            "source_name": "wopeval",
            "source_type": "evaluation_run",
            "source_organization_name": "wopeval",
            "evaluator_relationship": "first_party",
            "additional_details": {"runId": run_id},
        },
        "model_info": {
            "name": agent_id,
            "id": base["model_id"],
            "additional_details": {"deployment_type": "unknown", "model_availability": "unknown"},
        },
        "eval_library": {"name": "wopeval", "version": __version__},
        "evaluation_results": [
            _result(summary, base["evaluation_result_id"], base["evaluation_name"])
        ],
    }


def eee_export(
    summary: EvalSummary,
    detail: RunDetail,
    usage: Mapping[tuple[str, int], TrialUsage],
    *,
    run_id: str,
    agent_id: str,
    retrieved_timestamp: str,
) -> EeeExport:
    """The aggregate and instance records of one completed run (pure). ``usage``: each trial's
    :class:`TrialUsage`, collected while its detail is graded (``run_detail(on_trial=…)``)."""
    # the datastore pins a version-4 shaped uuid; derived from the run id, so exports are stable
    digest = hashlib.sha256(run_id.encode()).digest()[:16]
    evaluation_uuid = str(uuid.UUID(bytes=digest, version=4))
    developer, name = _model(agent_id)
    suite_name = f"{summary.suiteId}@{summary.suiteVersion}"
    evaluation_id = f"{suite_name}/{developer}/{name}/{retrieved_timestamp}"
    result_id = f"{summary.suiteId}.aggregate"
    base = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "model_id": f"{developer}/{name}",
        "evaluation_name": suite_name,
        "evaluation_result_id": result_id,
    }
    instances = [
        _instance(base, task.task_id, cell, usage.get((task.task_id, cell.trial_index)))
        for task in detail.tasks
        for cell in task.cells
    ]
    samples = EeeExport(evaluation_uuid, {}, instances).samples_text()
    path = f"data/{_SAFE.sub('-', summary.suiteId)}/{developer}/{name}/{evaluation_uuid}"
    aggregate = _aggregate(summary, run_id, agent_id, retrieved_timestamp, base)
    aggregate["detailed_evaluation_results"] = {
        "format": "jsonl",
        "file_path": f"{path}_samples.jsonl",
        "hash_algorithm": "sha256",
        "checksum": hashlib.sha256(samples.encode()).hexdigest(),
        "total_rows": len(instances),
    }
    return EeeExport(evaluation_uuid, aggregate, instances)


def write_eee(export: EeeExport, root: Path) -> list[Path]:
    """Write both files at their datastore paths under ``root`` (``root/data/…``)."""
    samples = root / export.aggregate["detailed_evaluation_results"]["file_path"]
    aggregate = samples.with_name(export.aggregate_name)
    samples.parent.mkdir(parents=True, exist_ok=True)
    aggregate.write_text(json.dumps(export.aggregate, indent=2) + "\n", encoding="utf-8")
    samples.write_text(export.samples_text(), encoding="utf-8")
    return [aggregate, samples]
