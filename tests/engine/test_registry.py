"""Agents are named by registered id or by import path ``module:attr``."""

from __future__ import annotations

from pathlib import Path

import pytest

from wopeval.engine.registry import SCRIPTED_AGENT_ID, AgentNotFound, Registry


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
