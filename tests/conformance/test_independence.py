"""The kit's grader is independent of the host's grading code path (RFC 0244 §Conformance).

"The host legs compare the host's grade with this one, never with itself": no module of
``wopeval.conformance`` may import ``wopeval.grading``, ``wopeval.engine`` or ``wopeval.host``,
directly or through anything it imports.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

FORBIDDEN = ("wopeval.grading", "wopeval.engine", "wopeval.host")
ROOT = Path(str(resources.files("wopeval.conformance")))


def _modules() -> list[Path]:
    return sorted(ROOT.rglob("*.py"))


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            raise AssertionError(f"{path.name}: relative import; use absolute imports")
    return names


def _forbidden(name: str) -> bool:
    return any(name == bad or name.startswith(bad + ".") for bad in FORBIDDEN)


def test_conformance_modules_never_import_the_host_grading_path() -> None:
    modules = _modules()
    assert len(modules) >= 10  # every module of the kit is inspected, legs included
    offending = {
        path.name: sorted(name for name in _imports(path) if _forbidden(name)) for path in modules
    }
    assert {name: bad for name, bad in offending.items() if bad} == {}


def test_conformance_only_imports_itself_from_wopeval() -> None:
    for path in _modules():
        ours = {name for name in _imports(path) if name.split(".")[0] == "wopeval"}
        # wopeval.errors is the leaf exception tree (no logic): every layer may raise from it.
        allowed = ("wopeval.conformance", "wopeval.errors")
        assert all(name.startswith(allowed) for name in ours), (path.name, ours)


def test_importing_the_kit_loads_no_host_grading_module() -> None:
    """Transitively too: a fresh interpreter imports every kit module and lists what loaded."""
    names = [
        "wopeval.conformance." + ".".join(p.relative_to(ROOT).with_suffix("").parts)
        for p in _modules()
        if p.name != "__init__.py"
    ]
    code = (
        "import importlib, json, sys\n"
        f"for name in {names!r}: importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('wopeval'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(out.stdout)
    assert "wopeval.conformance.reference" in loaded
    assert [name for name in loaded if _forbidden(name)] == []
