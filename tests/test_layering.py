"""The layering of docs/design.md, checked on the source: wire is the ground floor, every layer
imports only layers below it (or its own), and no module imports itself back through others."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
# Lowest first. A package may import its own layer and every layer before it.
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"wopeval.wire", "wopeval.errors", "wopeval.data"}),
    frozenset({"wopeval.suite"}),
    frozenset({"wopeval.events"}),
    frozenset({"wopeval.grading"}),
    frozenset({"wopeval.compare"}),
    frozenset({"wopeval.engine", "wopeval.agents"}),
    frozenset({"wopeval.service"}),
    frozenset({"wopeval.exports", "wopeval.viewer"}),
    frozenset({"wopeval.host", "wopeval.conformance"}),
    frozenset({"wopeval.cli"}),
)


def _package(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def _layer(module: str) -> int:
    package = _package(module)
    for index, members in enumerate(LAYERS):
        if package in members:
            return index
    raise AssertionError(f"{module}: its package {package} is in no layer of LAYERS")


def _module_name(path: Path) -> str:
    relative = path.relative_to(SRC).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Every wopeval module ``path`` imports, at any depth (type-checking imports included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # ``from pkg import sub`` imports the module ``pkg.sub`` when there is one.
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name == "wopeval" or name.startswith("wopeval.")}


MODULES = {
    _module_name(path): path
    for path in sorted(SRC.rglob("*.py"))
    if path.name != "__main__.py"  # entry points sit above every layer
}


def _resolve(name: str) -> str | None:
    """The module an import names (``from wopeval.x import y`` names module ``wopeval.x``)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


# module → the wopeval modules it imports (the lazy root package ``wopeval`` left out).
GRAPH = {
    name: {r for i in _imports(path) if (r := _resolve(i)) not in (None, "wopeval", name)}
    for name, path in MODULES.items()
}


def test_the_wire_is_the_ground_floor() -> None:
    for name, imported in GRAPH.items():
        if name.startswith("wopeval.wire"):
            assert all(i.startswith("wopeval.wire.") for i in imported), (name, imported)
    assert GRAPH["wopeval.errors"] == set()


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n != "wopeval"))
def test_no_module_imports_a_layer_above_its_own(name: str) -> None:
    upward = {i for i in GRAPH[name] if _layer(i) > _layer(name)}
    assert not upward, f"{name} imports {sorted(upward)} from above its layer"


def test_no_import_cycle_between_modules() -> None:
    edges = {name: set(imported) for name, imported in GRAPH.items() if name != "wopeval"}
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for target in sorted(edges.get(node, ())):
            if state.get(target) == 1:
                cycle = [*trail[trail.index(target) :], target] if target in trail else [target]
                raise AssertionError("import cycle: " + " → ".join(cycle))
            if target not in state:
                visit(target, [*trail, target])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])


# Issue 13 §3: ``wopeval run`` imports per sub-command. A whole run (to its exit, the --json
# report included) of a plain agent never loads the host, numpy, the exports, the conformance
# kit, the viewer, rich, or what only --model/--agent-file/--agent-cmd/--mcp/--executor ray use.
NOT_IMPORTED_BY_RUN = (
    "wopeval.host", "wopeval.exports", "wopeval.conformance", "wopeval.viewer",
    "wopeval.service.api", "wopeval.agents.build", "wopeval.agents.definition",
    "wopeval.agents.openai_compat", "wopeval.agents.judge_llm", "wopeval.engine.mcp_tools",
    "wopeval.engine.cmd_agent", "wopeval.cli.render", "wopeval.cli.merge_cmd",
    "numpy", "scipy", "fastapi", "starlette", "uvicorn", "jinja2", "rich", "httpx", "openai",
    "mcp", "ray", "opentelemetry",
)  # fmt: skip
_WHOLE_RUN = (
    "import atexit, json, runpy, sys\n"
    "out = sys.argv.pop()\n"  # the file the loaded modules are written to, at exit (the
    # command leaves by os._exit once its atexit callbacks ran: wopeval.cli.exiting)
    "atexit.register(lambda: open(out, 'w').write(json.dumps(sorted(sys.modules))))\n"
    "runpy.run_module('wopeval', run_name='__main__', alter_sys=True)\n"
)


def test_wopeval_run_imports_no_other_sub_commands_stack(tmp_path: Path) -> None:
    suite = {
        "suiteId": "core.test.evals.imports", "version": "1.0.0", "modes": ["golden"],
        "targetAgentId": "core.conformance.agents.scripted",
        "tasks": [{"taskId": "t", "input": {"output": "ok"},
                   "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}}],
    }  # fmt: skip
    (tmp_path / "suite.json").write_text(json.dumps(suite), encoding="utf-8")
    modules = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", _WHOLE_RUN, "run", "suite.json", "--store", "s.db", "--json",
         str(modules)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["summary"]["passed"] is True
    loaded = set(json.loads(modules.read_text(encoding="utf-8")))
    assert {"wopeval.engine.trial", "wopeval.events.store"} <= loaded  # it saw a real run
    heavy = sorted(m for m in loaded for h in NOT_IMPORTED_BY_RUN if (m + ".").startswith(h + "."))
    assert heavy == []
