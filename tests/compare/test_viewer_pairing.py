"""The viewer's comparison page pairs tasks as ``wopeval compare`` does: by taskId and digest."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
from typer.testing import CliRunner

from wopeval.cli.app import app
from wopeval.events.store import EventStore, RunRecord
from wopeval.viewer.compare import compare_page

GOLDEN = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}


def _run(store: str, path: Path, values: list[str]) -> str:
    tasks = [
        {"taskId": f"t{i}", "input": {"output": "ok"}, "expected": {**GOLDEN, "match": {
            "strategy": "exact", "value": value}}}
        for i, value in enumerate(values)
    ]  # fmt: skip
    doc = {"suiteId": "core.test.evals.view", "version": "1.0.0", "modes": ["golden"]}
    path.write_text(json.dumps({**doc, "tasks": tasks}))
    args = ["run", str(path), "--agent", "core.conformance.agents.scripted", "--store", store]
    ran = CliRunner().invoke(app, [*args, "--json"])
    return str(json.loads(ran.output)["runId"])


async def _records(store: str, ids: tuple[str, str]) -> list[RunRecord | None]:
    opened = await EventStore.open(store)
    try:
        return [await opened.get_run(run_id) for run_id in ids]
    finally:
        await opened.close()


def test_0244_F_viewer_compare_leaves_an_edited_task_out(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    before = _run(store, tmp_path / "a.json", ["ok"] * 8)
    after = _run(store, tmp_path / "b.json", ["ok"] * 3 + ["ok!"] + ["ok"] * 4)
    base, cand = anyio.run(_records, store, (before, after))
    assert base is not None
    assert cand is not None
    page = compare_page(base, cand, method="sign-test", alpha=0.05)
    assert page.comparison.changed == ("t3",)
    assert page.comparison.regression.pairedTaskCount == 7
