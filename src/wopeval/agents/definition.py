"""The agent definition file (``agent.yaml`` / ``agent.json``): the agent under test, described.

Validated like suites: strict types, unknown members refused, and every error reported at once,
each naming its field (``tools[1].parameters: …``). The API key is never in the file, only the
name of the environment variable holding it (``apiKeyEnv``). ``wopeval schema agent`` prints the
JSON Schema of this model.

Kinds: ``openai-compatible`` (the tool-loop agent of :mod:`wopeval.agents.openai_compat`),
``python`` (``agent: pkg.module:obj``: a wopeval agent or a framework's agent object, adapted),
``command`` (``command: "node my-agent.js"``: any process, its tools over MCP), and the framework
kinds ``openai-agents``, ``pydantic-ai``, ``langgraph`` (like ``python``, named for clarity).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from wopeval.engine.agent import ToolSpec
from wopeval.suite.errors import FieldError, SuiteError, from_validation_error
from wopeval.suite.load import read_document

AgentKind = Literal[
    "openai-compatible", "python", "command", "openai-agents", "pydantic-ai", "langgraph"
]
TOOL_NAME_PATTERN = r"^[A-Za-z0-9._~:/-]{1,128}$"
_IMPORTED_KINDS = ("python", "openai-agents", "pydantic-ai", "langgraph")


class DefinitionError(SuiteError):
    """An agent definition that cannot be used, with every problem found."""

    def _render(self) -> str:
        return super()._render().replace("invalid suite", "invalid agent definition", 1)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class ToolDef(_Strict):
    """An inline tool spec: the name the suite's fixtures use, and the arguments' JSON Schema."""

    name: str = Field(pattern=TOOL_NAME_PATTERN)
    description: str = ""
    parameters: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "additionalProperties": True}
    )

    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, dict(self.parameters))


class Price(_Strict):
    """USD per million tokens, so each model call's ``provider.usage`` carries a real cost."""

    inputPerMTok: float = Field(ge=0)
    outputPerMTok: float = Field(ge=0)

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.inputPerMTok + output_tokens * self.outputPerMTok) / 1e6


class AgentDefinition(_Strict):
    """One agent under test."""

    kind: AgentKind
    agentId: str | None = Field(default=None, pattern=r"^[A-Za-z0-9._:-]{1,200}$")
    model: str | None = Field(default=None, min_length=1)
    baseUrl: str | None = Field(default=None, pattern=r"^https?://")
    apiKeyEnv: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    systemPrompt: str | None = None
    tools: list[ToolDef] | None = None
    mcp: list[str] = Field(default_factory=list)
    maxTurns: int = Field(default=10, ge=1, le=1000)
    temperature: float | None = Field(default=None, ge=0, le=2)
    seed: int | None = None
    maxRetries: int = Field(default=2, ge=0, le=10)
    maxCostUsd: float | None = Field(default=None, ge=0)
    price: Price | None = None
    agent: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.]+:[A-Za-z0-9_.]+$")
    command: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _kind_needs(self) -> AgentDefinition:
        missing = [name for name in self._required() if getattr(self, name) is None]
        if missing:
            raise ValueError(f"kind {self.kind!r} needs {', '.join(missing)}")
        return self

    def _required(self) -> tuple[str, ...]:
        if self.kind == "openai-compatible":
            return ("model",)
        if self.kind == "command":
            return ("command",)
        return ("agent",)

    @property
    def imported(self) -> bool:
        return self.kind in _IMPORTED_KINDS

    def tool_specs(self) -> list[ToolSpec] | None:
        """The declared inline specs; ``None`` when the definition declares no tool list."""
        return None if self.tools is None else [tool.spec() for tool in self.tools]

    def default_agent_id(self) -> str:
        if self.agentId is not None:
            return self.agentId
        if self.kind == "openai-compatible":
            return f"openai-compatible.{self.model}"
        return f"{self.kind}.agent"


def parse_definition(data: object, source: str = "<agent>") -> AgentDefinition:
    """Validate plain data; raise :class:`DefinitionError` with every error, each naming its
    field (a rule spanning fields, such as what a ``kind`` needs, is named ``$``)."""
    try:
        definition = AgentDefinition.model_validate(data)
    except ValidationError as exc:
        errors = [error for _, error in from_validation_error(exc, AgentDefinition)]
        raise DefinitionError(_root_named(errors), source) from None
    unusable = cost_errors(definition)
    if unusable:
        raise DefinitionError(unusable, source)
    return definition


def cost_errors(definition: AgentDefinition) -> list[FieldError]:
    """A ``maxCostUsd`` no cost could ever reach: without ``price`` a model call's cost is
    unknown (counted as 0), so the ceiling would never stop anything. A ``python`` agent's own
    calls are not wopeval's to price (:func:`wopeval.agents.build.build_agent` refuses both
    when the object is not a framework agent)."""
    if definition.maxCostUsd is not None and definition.price is None:
        message = (
            f"kind {definition.kind!r} needs price to enforce maxCostUsd: without it a model "
            "call's cost is unknown and the ceiling could never be reached"
        )
        return [FieldError("maxCostUsd", message)]
    return []


def _root_named(errors: list[FieldError]) -> list[FieldError]:
    prefixes = ("Value error, ", "value error, ")
    out = []
    for error in errors:
        message = error.message
        for prefix in prefixes:
            message = message.removeprefix(prefix)
        out.append(FieldError(error.path or "$", message))
    return out


def load_definition(path: str | Path) -> AgentDefinition:
    """Read and validate an agent definition file (``.yaml``, ``.yml`` or ``.json``)."""
    try:
        data = read_document(path)
    except SuiteError as exc:
        raise DefinitionError(exc.errors, str(path)) from None
    return parse_definition(data, str(path))


def definition_json_schema() -> dict[str, Any]:
    """The JSON Schema ``wopeval schema agent`` prints."""
    schema = AgentDefinition.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "wopeval agent definition"
    return schema
