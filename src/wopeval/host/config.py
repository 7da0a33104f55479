"""Host configuration: API keys → tenants, suites, advertised facets, limits, the store.

A deployment describes itself in one YAML or JSON file (``wopeval serve --config FILE``)::

    apiKeys:
      - {key: "s3cret-key-for-acme", tenant: acme, subjectId: ci-bot, kind: workload}
    suiteDirectories: [./suites]        # relative to the config file
    builtinSuites: true                 # also serve wopeval's packaged suites
    evalSuite:                          # the advertised agents.evalSuite facet
      modes: [golden, live-shadow]      # default: golden, live-shadow, regression (+ rubric
                                        # with a judge)
      maxTasksPerSuite: 1000
      maxCostUsdPerSuite: 25.0
      trajectory: true                  # RFC 0244 §G facets; false switches one off
      trials: {maxTrials: 10}           # false switches trials off
      fixtureMatching: true
      regressionVerdict: true           # RFC 0244 §F verdicts on regression runs
      baselineSelection: true           # RFC 0251 evalModes / baselineRunId on POST /runs
      recordedFixtures: true            # RFC 0252 fixtureRuns on POST /runs
      extensions: [x-wopeval-adaptive]  # wopeval's own suite members (default: all; [] none)
    otlpTraces: loopback                # POST /v1/traces from loopback only (any | off)
    otlpMaxBodyBytes: 16777216          # a larger POST /v1/traces body gets 413 (16 MiB)
    concurrency: 4                      # eval runs executing at once
    trialConcurrency: 8                 # trials at once inside one run
    store: postgresql://wopeval@db/wopeval
    judge: mypkg.judges:rubric_judge    # enables rubric tasks
    conformanceSeed: true               # seed the OpenWOP workflow fixtures (host/workflows.py)
    trustedProxies: [10.0.0.5]          # whose X-Forwarded-For/-Proto are believed (none)
    viewerSessions: {idleSeconds: 1800, absoluteSeconds: 43200}   # the viewer's sign-in
    trialLimits: {maxToolCalls: 10000, maxOutputBytes: 1000000}   # each trial of its runs

A facet switched off is not advertised, and a suite using it is refused at create (RFC 0244
§G), never graded as if the field were absent. Every member is optional; without a file the
host runs :func:`default_config` (one dev key of tenant ``local``, all implemented facets on).
"""

from __future__ import annotations

import ipaddress
import json
import secrets
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from wopeval.errors import UserError
from wopeval.events.ids import TENANT_PATTERN
from wopeval.suite.bounds import MAX_INTEGER_DIGITS, TooManyDigits, parse_int, tree_errors
from wopeval.suite.extensions import extension_names
from wopeval.suite.models import AGENT_ID_PATTERN, EvalMode
from wopeval.wire.request import TrialLimits

DEV_TENANT = "local"
DEFAULT_UNTIL = "2027-12-31"
# Modes the engine implements; "adversarial" (safety probes) is not implemented.
IMPLEMENTED_MODES: tuple[EvalMode, ...] = ("golden", "rubric", "live-shadow", "regression")
SUBJECT_ID_PATTERN = r"^[^\s/]{1,256}$"
UNTIL_PATTERN = r"^((0|[1-9][0-9]*)\.(0|[1-9][0-9]*)|\d{4}-\d{2}-\d{2})$"


class ConfigError(UserError):
    """The configuration file cannot be used; the message names the member."""


class _Closed(BaseModel):
    # No NaN or infinities: a ceiling of .inf would be advertised in discovery, which JSON cannot
    # carry, and a timeout of .inf is no timeout.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


# The weakest key a host accepts: this many characters, this many of them distinct (a
# one-character or "aaaa…" key is refused at start-up, not merely warned about).
WEAK_KEY_LENGTH = 16
MIN_DISTINCT_CHARACTERS = 8


def key_weakness(key: str) -> str | None:
    """Why ``key`` is too weak to serve, or None."""
    if len(key) < WEAK_KEY_LENGTH:
        return f"is {len(key)} characters; an API key needs at least {WEAK_KEY_LENGTH}"
    if len(set(key)) < MIN_DISTINCT_CHARACTERS:
        return f"needs at least {MIN_DISTINCT_CHARACTERS} distinct characters"
    return None


class ApiKey(_Closed):
    """One bearer key. ``subjectId`` names the caller on the wire (never the key itself)."""

    key: Annotated[str, Field(min_length=1, max_length=512, pattern=r"^[\x21-\x7e]+$")]
    tenant: Annotated[str, Field(pattern=TENANT_PATTERN)]
    subjectId: Annotated[str, Field(pattern=SUBJECT_ID_PATTERN)] | None = None
    kind: Literal["user", "workload"] = "user"

    @field_validator("key")
    @classmethod
    def _strong(cls, value: str) -> str:
        weakness = key_weakness(value)
        if weakness is not None:
            raise ValueError(weakness)
        return value


class TrialsFacet(_Closed):
    maxTrials: Annotated[int, Field(ge=1)]


class EvalSuiteConfig(_Closed):
    """The ``agents.evalSuite`` facet. ``enabled: false`` removes eval from the host."""

    enabled: bool = True
    modes: Annotated[list[EvalMode], Field(min_length=1)] | None = None
    maxTasksPerSuite: Annotated[int, Field(ge=1)] | None = 1000
    maxCostUsdPerSuite: Annotated[float, Field(ge=0)] | None = None
    trajectory: bool = True
    trials: TrialsFacet | None = TrialsFacet(maxTrials=10)
    fixtureMatching: bool = True
    regressionVerdict: bool = True
    baselineSelection: bool = True
    recordedFixtures: bool = True
    # wopeval's own suite members this host advertises and accepts (absent: every one).
    extensions: list[str] | None = None

    @field_validator("trials", mode="before")
    @classmethod
    def _trials_off(cls, value: Any) -> Any:
        return None if value is False else value

    @field_validator("modes")
    @classmethod
    def _implemented(cls, value: list[EvalMode] | None) -> list[EvalMode] | None:
        for mode in value or ():
            if mode not in IMPLEMENTED_MODES:
                raise ValueError(f"mode {mode!r} is not implemented by wopeval")
        if value is not None and len(set(value)) != len(value):
            raise ValueError("modes must be unique")
        return value

    @field_validator("extensions")
    @classmethod
    def _known_extensions(cls, value: list[str] | None) -> list[str] | None:
        known = extension_names()
        for name in value or ():
            if name not in known:
                raise ValueError(f"{name!r} is not a wopeval extension ({', '.join(known)})")
        if value is not None and len(set(value)) != len(value):
            raise ValueError("extensions must be unique")
        return value

    def advertised_extensions(self) -> tuple[str, ...]:
        """The ``x-wopeval-`` members this host accepts, in registry order."""
        chosen = self.extensions
        return tuple(n for n in extension_names() if chosen is None or n in chosen)

    @model_validator(mode="after")
    def _regression_needs_baseline(self) -> EvalSuiteConfig:
        if self.modes and "regression" in self.modes and not self.baselineSelection:
            raise ValueError("mode 'regression' needs baselineSelection: true")
        return self


class TenantLimits(_Closed):
    """What one tenant may hold at once on one host process (host/limits.py)."""

    activeRunsPerTenant: Annotated[int, Field(ge=1)] = 16
    streamsPerTenant: Annotated[int, Field(ge=1)] = 64


class ViewerSessions(_Closed):
    """How long a viewer sign-in lasts (host/sessions.py): unused, and at most."""

    idleSeconds: Annotated[float, Field(gt=0)] = 1800.0
    absoluteSeconds: Annotated[float, Field(gt=0)] = 43200.0


def _proxy(value: str) -> str:
    """An address or network (``10.0.0.5``, ``10.0.0.0/8``, ``::1``) or ``*`` (any peer)."""
    if value != "*":
        try:
            ipaddress.ip_network(value)  # strict, as uvicorn reads it: 10.0.0.0/8, not 10.0.0.5/8
        except ValueError:
            raise ValueError(f"{value!r} is not an IP address, a network or '*'") from None
    return value


class HostConfig(_Closed):
    apiKeys: list[ApiKey] = Field(default_factory=list)
    suiteDirectories: list[Path] = Field(default_factory=list)
    builtinSuites: bool = True
    evalSuite: EvalSuiteConfig = EvalSuiteConfig()
    # POST /v1/traces (OTLP import, host/otlp_api.py): loopback clients only, any, or off
    otlpTraces: Literal["loopback", "any", "off"] = "loopback"
    otlpMaxBodyBytes: Annotated[int, Field(ge=1024)] = 16 * 1024 * 1024
    concurrency: Annotated[int, Field(ge=1)] = 4
    resumeInterrupted: bool = True  # at start-up, resume runs a crashed host left
    trialConcurrency: Annotated[int, Field(ge=1)] = 8
    trialTimeoutSeconds: Annotated[float, Field(gt=0)] = 300.0
    store: str | None = None
    judge: str | None = None
    agents: dict[Annotated[str, Field(pattern=AGENT_ID_PATTERN)], str] = Field(default_factory=dict)
    # Where the configured agents' trials run: a worker process each (killed when its trial
    # ends early) or a worker thread of the host's (engine/agent_process.py, engine/syncagent.py)
    agentIsolation: Literal["process", "thread"] = "process"
    tools: dict[str, str] = Field(default_factory=dict)
    allowTargetOverride: bool = False
    familyUntil: Annotated[str, Field(pattern=UNTIL_PATTERN)] = DEFAULT_UNTIL
    publicBaseUrl: str | None = None
    maxBodyBytes: Annotated[int, Field(ge=1024)] = 1_048_576
    # Seed the workflow fixtures of the OpenWOP fixture contract (conformance-noop, …) so the
    # official suite's core scenarios can create runs (host/workflows.py). Off by default.
    conformanceSeed: bool = False
    # Several hosts may share one store: each claims the runs it executes for leaseSeconds,
    # renewed while it runs them; a run whose owner stopped renewing is failed by another host.
    leaseSeconds: Annotated[float, Field(ge=1, le=3600)] = 30.0
    # On SIGTERM: stop taking runs, let streams end, interrupt what is still running after this.
    shutdownGraceSeconds: Annotated[float, Field(ge=0, le=3600)] = 10.0
    limits: TenantLimits = TenantLimits()
    # The peers (reverse proxies) whose X-Forwarded-For and X-Forwarded-Proto are believed:
    # the client address that failed authentications are counted against, and https (the
    # viewer's Secure cookie). Anyone else's forwarded headers are ignored.
    trustedProxies: list[Annotated[str, AfterValidator(_proxy)]] = Field(default_factory=list)
    viewerSessions: ViewerSessions = ViewerSessions()
    # What each trial of the runs this host creates may produce (stored with each run): tool
    # calls, output and tool-result bytes, a reason's characters (wire.request.TrialLimits).
    trialLimits: TrialLimits = TrialLimits()

    @field_validator("trialLimits", mode="before")
    @classmethod
    def _caps_are_numbers(cls, value: Any) -> Any:
        """``maxToolCalls: true`` is a typo, not a cap of one call."""
        for name, cap in value.items() if isinstance(value, dict) else ():
            if isinstance(cap, bool):
                raise ValueError(f"{name}: {str(cap).lower()} is not a number")
        return value

    @field_validator("trustedProxies")
    @classmethod
    def _any_alone(cls, value: list[str]) -> list[str]:
        if "*" in value and len(value) > 1:
            raise ValueError("'*' trusts every peer: give it alone")
        return value

    @model_validator(mode="after")
    def _unique_keys(self) -> HostConfig:
        keys = [k.key for k in self.apiKeys]
        if len(set(keys)) != len(keys):
            raise ValueError("apiKeys: the same key is listed twice")
        return self

    def advertised_modes(self) -> list[EvalMode]:
        """Configured modes, or the default: golden, live-shadow, regression (with baseline
        selection on), and rubric with a judge."""
        if self.evalSuite.modes is not None:
            return list(self.evalSuite.modes)
        modes: list[EvalMode] = ["golden"]
        if self.judge is not None:
            modes.append("rubric")
        modes.append("live-shadow")
        if self.evalSuite.baselineSelection:
            modes.append("regression")
        return modes

    def with_key(self, key: str, tenant: str = DEV_TENANT) -> HostConfig:
        """A copy that also accepts ``key`` (``--api-key``) for ``tenant``."""
        kept = [k for k in self.apiKeys if k.key != key]
        return self.model_copy(update={"apiKeys": [*kept, ApiKey(key=key, tenant=tenant)]})


def new_dev_key() -> str:
    return "wopeval-dev-" + secrets.token_urlsafe(24)


def default_config(api_key: str | None = None) -> HostConfig:
    """No file: one dev key of tenant ``local``, the built-in suites, every implemented facet."""
    return HostConfig(apiKeys=[ApiKey(key=api_key or new_dev_key(), tenant=DEV_TENANT)])


class _ConfigYamlLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that never converts an integer longer than MAX_INTEGER_DIGITS (Python
    refuses one of more than 4,300 digits with a ValueError): it is left for ``tree_errors``
    to refuse by its key."""

    def construct_bounded_int(self, node: yaml.ScalarNode) -> int | TooManyDigits:
        text = str(self.construct_scalar(node)).replace("_", "").lstrip("+")
        if len(text.lstrip("-")) > MAX_INTEGER_DIGITS:
            return TooManyDigits(text)
        return int(self.construct_yaml_int(node))


_ConfigYamlLoader.add_constructor("tag:yaml.org,2002:int", _ConfigYamlLoader.construct_bounded_int)


def _read(path: Path) -> object:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    try:
        if path.suffix.lower() == ".json":
            data: object = json.loads(text, parse_int=parse_int)
        else:
            data = yaml.load(text, Loader=_ConfigYamlLoader)  # a SafeLoader
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot parse: {exc}") from exc
    except RecursionError:
        raise ConfigError(f"{path}: cannot parse: nested too deeply") from None
    beyond = tree_errors(data)
    if beyond:
        raise ConfigError("; ".join(str(error) for error in beyond))
    return data


def _describe(exc: ValidationError) -> str:
    lines = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "$"
        lines.append(f"{where}: {error['msg']}")
    return "; ".join(lines)


def parse_config(data: object, base_dir: Path | None = None) -> HostConfig:
    """Validate plain data as a config; relative suite directories resolve against ``base_dir``."""
    if data is None:
        data = {}
    try:
        config = HostConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc)) from exc
    if base_dir is not None:
        dirs = [d if d.is_absolute() else base_dir / d for d in config.suiteDirectories]
        config = config.model_copy(update={"suiteDirectories": dirs})
    return config


def load_config(path: str | Path) -> HostConfig:
    """Load a YAML or JSON config file (see the module docstring)."""
    file = Path(path)
    return parse_config(_read(file), file.resolve().parent)
