"""``POST /runs`` with ``mode: "eval"``: validate the body and the suite, refuse what this host
does not advertise, and plan the run.

Every refusal names its field (``details.field``). The order of checks, first refusal wins:

1. the body is a JSON object the store can hold (finite numbers, valid Unicode, at most
   :data:`~wopeval.host.jsonbody.MAX_DEPTH` levels) with only the create-run keys (closed body,
   runs.md §Create);
2. each member's type; members this host cannot honour are refused, never ignored
   (``residency``, ``callbackUrl``, non-empty ``inputs``);
3. ``mode``: absent with the ``workflowId`` of a seeded workflow fixture starts a fixture run
   (:mod:`wopeval.host.workflows`; its inputs are checked there); absent with any other
   ``workflowId`` is ``404 not_found`` naming it; ``mode: "eval"`` without ``agents.evalSuite``
   advertised is ``422 capability_not_provided`` (runs.md §Refusals);
4. ``baselineRunId`` (RFC 0251), the suite reference (unknown → ``404 not_found``), the suite
   itself, the agent, the modes, ``maxTasksPerSuite``, the RFC 0244 §G facets, the judge,
   ``fixtureRuns`` (RFC 0252, :mod:`wopeval.host.fixture_runs`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Container
from typing import Any

import anyio

from wopeval.engine.adaptive import AdaptiveRefused
from wopeval.engine.registry import AgentNotFound, Registry
from wopeval.engine.run import RunSettings
from wopeval.events.ids import RUN_ID_PATTERN
from wopeval.host.auth import Principal
from wopeval.host.config import HostConfig
from wopeval.host.configurable import check_configurable
from wopeval.host.errors import HostError, invalid, invalid_suite
from wopeval.host.fixture_runs import check_fixture_runs, with_recorded_fixtures
from wopeval.host.jsonbody import loads_strict
from wopeval.host.state import HostState
from wopeval.host.suites import BadSuiteRef, SuiteGone, SuiteRef, parse_ref
from wopeval.service.runs import BaselineUnusable, RunPlan
from wopeval.suite import FieldError, SuiteError, check_advertised
from wopeval.suite.extensions import check_extensions
from wopeval.suite.models import AGENT_ID_PATTERN, AgentEvalSuite, EvalMode
from wopeval.wire.request import HostRequest
from wopeval.wire.vocab import SCOPE_ID_PATTERN, WORKFLOW_ID_PATTERN

ALLOWED_KEYS: tuple[str, ...] = (
    "workflowId", "inputs", "residency", "tenantId", "scopeId", "callbackUrl", "mode",
    "evalSuiteRef", "agentId", "configurable", "tags", "metadata", "evalModes",
    "baselineRunId", "fixtureRuns",
)  # fmt: skip
EVAL_MODES: tuple[EvalMode, ...] = ("golden", "rubric", "adversarial", "regression", "live-shadow")
_AGENT_ID_RE = re.compile(AGENT_ID_PATTERN)
_WORKFLOW_ID_RE = re.compile(WORKFLOW_ID_PATTERN)
_RUN_ID_RE = re.compile(RUN_ID_PATTERN)
_SCOPE_ID_RE = re.compile(SCOPE_ID_PATTERN)
UNUSABLE_BASELINE = "is not a usable baseline (a completed eval run of this suite you can read)"


def parse_body(raw: bytes) -> dict[str, Any]:
    """A JSON object the store can hold (:func:`~wopeval.host.jsonbody.loads_strict`)."""
    body = loads_strict(raw)
    if not isinstance(body, dict):
        raise invalid("$", "the body must be a JSON object")
    return body


def body_digest(body: dict[str, Any]) -> str:
    """The identity of a create body for ``Idempotency-Key`` replay (canonical JSON, SHA-256)."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _check_keys(body: dict[str, Any]) -> None:
    unknown = [key for key in body if key not in ALLOWED_KEYS]
    if unknown:
        raise invalid(
            unknown[0],
            "unknown member of the create-run body (allowed: " + ", ".join(ALLOWED_KEYS) + ")",
            unknown=unknown,
        )


def _string(body: dict[str, Any], key: str, pattern: re.Pattern[str] | None = None) -> str | None:
    value = body.get(key)
    if value is None and key not in body:
        return None
    if not isinstance(value, str) or not value:
        raise invalid(key, "must be a non-empty string")
    if pattern is not None and not pattern.fullmatch(value):
        raise invalid(key, f"{value!r} does not match {pattern.pattern}")
    return value


def _object(body: dict[str, Any], key: str) -> dict[str, Any] | None:
    value = body.get(key)
    if value is None and key not in body:
        return None
    if not isinstance(value, dict):
        raise invalid(key, "must be an object")
    return value


def _check_tags(body: dict[str, Any]) -> list[str]:
    tags = body.get("tags", [])
    if not isinstance(tags, list) or len(tags) > 100:
        raise invalid("tags", "must be an array of at most 100 strings")
    for index, tag in enumerate(tags):
        if not isinstance(tag, str) or len(tag) > 256:
            raise invalid(f"tags[{index}]", "must be a string of at most 256 characters")
    return tags


def _eval_modes(body: dict[str, Any]) -> list[EvalMode] | None:
    if "evalModes" not in body:
        return None
    value = body["evalModes"]
    if not isinstance(value, list) or not value:
        raise invalid("evalModes", "must be a non-empty array of eval modes")
    modes: list[EvalMode] = []
    for index, mode in enumerate(value):
        if mode not in EVAL_MODES:
            raise invalid(f"evalModes[{index}]", f"{mode!r} is not one of {', '.join(EVAL_MODES)}")
        if mode in modes:
            raise invalid(f"evalModes[{index}]", f"{mode!r} is listed twice")
        modes.append(mode)
    return modes


def _check_unhonoured(body: dict[str, Any], principal: Principal, workflow: bool) -> None:
    """Members this host cannot honour: refused, never silently ignored."""
    inputs = _object(body, "inputs")
    if inputs and not workflow:
        raise invalid("inputs", "an eval run takes its inputs from the suite; send none")
    if _object(body, "residency") is not None:
        raise invalid("residency", "data residency is not offered by this host")
    if _string(body, "callbackUrl") is not None:
        raise invalid("callbackUrl", "run callbacks are not offered by this host")
    tenant = _string(body, "tenantId")
    if tenant is not None and tenant != principal.tenant:
        raise invalid("tenantId", "must be the tenant of the API key (or omitted)")


def check_body(
    body: dict[str, Any],
    principal: Principal,
    config: HostConfig,
    workflows: Container[str] = (),
) -> str | None:
    """Steps 1–3 of the module docstring. Returns the workflowId when the body starts a run of a
    seeded workflow fixture (no ``mode``; :mod:`wopeval.host.workflows`), None for an eval run."""
    _check_keys(body)
    named = body.get("workflowId")
    seeded = "mode" not in body and isinstance(named, str) and named in workflows
    _check_unhonoured(body, principal, workflow=seeded)
    workflow_id = _string(body, "workflowId", _WORKFLOW_ID_RE)
    _string(body, "scopeId", _SCOPE_ID_RE)
    if (configurable := _object(body, "configurable")) is not None:
        check_configurable(configurable)
    _object(body, "metadata")
    _check_tags(body)
    if seeded:
        for key in ("evalSuiteRef", "agentId", "evalModes", "baselineRunId", "fixtureRuns"):
            if key in body:
                raise invalid(key, 'only with mode: "eval"; a workflow run takes inputs')
        return workflow_id
    if "mode" not in body:
        if workflow_id is not None:
            raise HostError(
                "not_found",
                f"workflowId: no workflow {workflow_id!r} is seeded on this host",
                {"field": "workflowId"},
            )
        raise invalid("mode", 'required: mode: "eval", or the workflowId of a seeded fixture')
    if body["mode"] != "eval":
        raise invalid("mode", 'the only mode is "eval"')
    if not config.evalSuite.enabled:
        raise HostError(
            "capability_not_provided",
            "mode: eval runs need agents.evalSuite, which this host does not advertise",
            {"capability": "agents.evalSuite"},
        )
    if _string(body, "evalSuiteRef") is None:
        raise invalid("evalSuiteRef", 'required with mode: "eval"')
    if _string(body, "agentId", _AGENT_ID_RE) is None:
        raise invalid("agentId", 'required with mode: "eval"')
    return None


def resolve_agent(registry: Registry, agent_id: str) -> None:
    """Registered agents only: an HTTP caller may not name an import path to load."""
    try:
        if not registry.knows(agent_id):
            raise AgentNotFound(agent_id)
        registry.resolve(agent_id)
    except AgentNotFound as exc:
        raise invalid("agentId", f"no agent {agent_id!r} is registered on this host") from exc


def _parse_ref(ref: str) -> SuiteRef:
    try:
        return parse_ref(ref)
    except BadSuiteRef as exc:
        raise invalid("evalSuiteRef", str(exc)) from exc


async def suite_of_ref(state: HostState, ref: str) -> AgentEvalSuite:
    """The suite ``ref`` names: a suite already parsed from an unchanged file on the loop,
    else read and validated in a worker thread (a big suite must not stall the event loop)."""
    suite = state.catalog.cached(_parse_ref(ref))
    if suite is not None:
        return suite
    return await anyio.to_thread.run_sync(load_suite_ref, state, ref)


def load_suite_ref(state: HostState, ref: str) -> AgentEvalSuite:
    parsed = _parse_ref(ref)
    entry = state.catalog.find(parsed)
    try:
        if entry is not None:
            return state.catalog.load(entry)
    except SuiteGone:
        pass
    except SuiteError as exc:
        raise invalid_suite(exc.errors, evalSuiteRef=ref) from exc
    raise HostError(
        "not_found", f"evalSuiteRef: no suite {ref!r} on this host", {"field": "evalSuiteRef"}
    )


def check_modes(
    suite: AgentEvalSuite, requested: list[EvalMode] | None, config: HostConfig
) -> list[EvalMode]:
    """RFC 0081 §D / RFC 0251 §B: modes ⊆ the suite's, and ⊆ the host's advertised modes."""
    field = "evalModes" if requested is not None else "modes"
    modes = requested if requested is not None else list(suite.modes)
    advertised = config.advertised_modes()
    for mode in modes:
        if mode not in suite.modes:
            raise invalid(field, f"mode {mode!r} is not declared by the suite")
        if mode not in advertised:
            raise invalid(
                field, f"mode {mode!r} is not advertised by this host ({', '.join(advertised)})"
            )
    return modes


def check_suite(suite: AgentEvalSuite, config: HostConfig, has_judge: bool) -> None:
    """``maxTasksPerSuite``, the RFC 0244 §G facets, wopeval's own advertised members, and the
    judge for rubric tasks."""
    limit = config.evalSuite.maxTasksPerSuite
    if limit is not None and len(suite.tasks) > limit:
        raise invalid("tasks", f"{len(suite.tasks)} tasks exceed maxTasksPerSuite {limit}")
    facets = config.evalSuite
    errors = check_advertised(
        suite,
        trajectory=facets.trajectory,
        max_trials=facets.trials.maxTrials if facets.trials is not None else None,
        fixture_matching=facets.fixtureMatching,
    )
    errors += check_extensions(suite, facets.advertised_extensions())
    if not has_judge:
        errors += [
            FieldError(f"tasks[{i}].expected.kind", "rubric tasks need a judge; none is configured")
            for i, task in enumerate(suite.tasks)
            if task.expected.kind == "rubric"
        ]
    if errors:
        raise invalid_suite(errors)


def check_baseline(value: object) -> str:
    """RFC 0251 §C: a baseline that is not even a run id; the run service checks the rest."""
    if not isinstance(value, str) or not _RUN_ID_RE.fullmatch(value):
        raise invalid("baselineRunId", UNUSABLE_BASELINE)
    return value


async def plan_create(state: HostState, principal: Principal, body: dict[str, Any]) -> RunPlan:
    """Everything after :func:`check_body`; raises the first refusal."""
    config = state.config
    requested = _eval_modes(body)
    if "baselineRunId" in body and not config.evalSuite.baselineSelection:
        raise invalid(
            "baselineRunId", "baseline selection (RFC 0251) is not advertised by this host"
        )
    if "fixtureRuns" in body and not config.evalSuite.recordedFixtures:
        raise invalid("fixtureRuns", "recorded fixtures (RFC 0252) are not advertised by this host")
    suite = await suite_of_ref(state, str(body["evalSuiteRef"]))
    workflow_id = body.get("workflowId")
    if workflow_id is not None and workflow_id != suite.suiteId:
        raise invalid("workflowId", "an eval run's workflowId is its suiteId; omit it")
    agent_id = str(body["agentId"])
    resolve_agent(state.registry, agent_id)
    if suite.targetAgentId and suite.targetAgentId != agent_id and not config.allowTargetOverride:
        raise invalid("agentId", f"the suite targets {suite.targetAgentId!r}, not {agent_id!r}")
    modes = check_modes(suite, requested, config)
    if not state.catalog.checked(suite):  # the configuration and judge are the host's own
        check_suite(suite, config, state.judge is not None)
        state.catalog.mark_checked(suite)
    baseline = None
    if "baselineRunId" in body:
        if "regression" not in modes:
            raise invalid("baselineRunId", 'needs "regression" in evalModes')
        baseline = check_baseline(body["baselineRunId"])
    fixture_runs = None
    if "fixtureRuns" in body:
        fixture_runs = check_fixture_runs(body["fixtureRuns"], suite)
        suite = await with_recorded_fixtures(state.store, principal.tenant, suite, fixture_runs)
    settings = RunSettings(
        concurrency=config.trialConcurrency,
        trial_timeout_s=config.trialTimeoutSeconds,
        host_max_cost_usd=config.evalSuite.maxCostUsdPerSuite,
        modes=modes,
        baseline_run_id=baseline,
        fixture_runs=fixture_runs,
        regression_verdict=config.evalSuite.regressionVerdict,
        owner=principal.owner(),
        tags=_check_tags(body),
        metadata=dict(body.get("metadata") or {}),
        limits=config.trialLimits,
    )
    try:
        return await state.service.plan(
            suite, agent_id, settings, tenant=principal.tenant, host=host_request(body),
            prepared=state.catalog.prepared(suite),
        )  # fmt: skip
    except BaselineUnusable as exc:  # one refusal whatever the reason (no existence oracle)
        raise invalid("baselineRunId", UNUSABLE_BASELINE) from exc
    except AdaptiveRefused as exc:  # the host's live tools could be reached
        raise invalid(exc.field, exc.why) from exc


def host_request(body: dict[str, Any]) -> HostRequest:
    """The host's data stored with a created run: the body digest, scopeId, configurable."""
    return HostRequest(
        bodySha256=body_digest(body),
        scopeId=body.get("scopeId"),
        configurable=body.get("configurable"),
    )
