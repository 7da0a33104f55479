"""Agents are named by registered id or by import path ``module:attr``."""

from __future__ import annotations

from importlib.metadata import distribution
from pathlib import Path

import pytest

from wopeval.engine import registry as registry_module
from wopeval.engine.registry import (
    AGENT_ENTRY_POINTS,
    BUILTIN_AGENTS,
    SCRIPTED_AGENT_ID,
    AgentNotFound,
    Registry,
)


def test_import_paths_resolve_top_level_and_dotted_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "toplevel_agent.py").write_text("async def agent(i, ctx):\n    return i\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = Registry()
    assert registry.resolve("toplevel_agent:agent").__name__ == "agent"
    assert registry.resolve("wopeval.agents.example:support_agent").__name__ == "support_agent"
    assert registry.resolve(SCRIPTED_AGENT_ID + ".helper") is registry.resolve(SCRIPTED_AGENT_ID)


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("nobody", "is not registered"),
        ("no_such_module_xyz:agent", "cannot import module 'no_such_module_xyz'"),
        ("wopeval.agents.example:nothing", "has no attribute 'nothing'"),
        ("wopeval.agents.example:FLAKY_PERCENT", "is not callable"),
        ("bad ref:x", "not a valid agentId"),
    ],
)
def test_unresolvable_agents_name_the_problem(ref: str, message: str) -> None:
    with pytest.raises(AgentNotFound, match=message):
        Registry().resolve(ref)


def test_the_built_in_table_is_wopevals_own_entry_points() -> None:
    """The table the registry reads first says what the installed package's entry points say."""
    own = distribution("wopeval").entry_points.select(group=AGENT_ENTRY_POINTS)
    assert {entry.name: entry.value for entry in own} == dict(BUILTIN_AGENTS)


def test_built_in_agents_resolve_without_reading_every_distribution(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def scan() -> None:
        raise AssertionError("the entry points were read")

    monkeypatch.setattr(registry_module, "_entry_point_agents", scan)
    registry = Registry()
    for agent_id, ref in BUILTIN_AGENTS.items():
        assert registry.knows(agent_id)
        module_name, _, attr = ref.partition(":")
        assert registry.agent_object(agent_id) is getattr(
            __import__(module_name, fromlist=[attr]), attr
        )
    assert registry.resolve(SCRIPTED_AGENT_ID) is registry.resolve(SCRIPTED_AGENT_ID)


def test_an_agent_registered_under_a_built_in_id_takes_its_place() -> None:
    async def mine(task_input: object, ctx: object) -> str:
        return "mine"

    registry = Registry()
    registry.register_agent(SCRIPTED_AGENT_ID, mine)
    assert registry.agent_object(SCRIPTED_AGENT_ID) is mine
