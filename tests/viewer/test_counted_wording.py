"""Counts read as English on the run page and in the CLI: ``1 task × 1 trial``, ``3 tasks``."""

from __future__ import annotations

import re
import secrets
from pathlib import Path

import httpx
import pytest

from wopeval.engine.registry import Registry
from wopeval.engine.run import RunSettings
from wopeval.events.store import EventStore
from wopeval.exports.textsafe import counted
from wopeval.service.runs import RunService
from wopeval.suite import load_suite
from wopeval.viewer import create_viewer_app

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(("count", "expected"), [(0, "0 tasks"), (1, "1 task"), (2, "2 tasks")])
def test_a_count_takes_its_noun_in_the_singular_only_for_one(count: int, expected: str) -> None:
    assert counted(count, "task") == expected


@pytest.mark.parametrize(("name", "grid"), [("plain.yaml", "1 task × 1 trial"),
                                            ("suite.yaml", "3 tasks × 3 trials")])  # fmt: skip
async def test_the_run_page_counts_tasks_and_trials_in_words(
    store: EventStore, name: str, grid: str
) -> None:
    service = RunService(store, Registry(), None)
    plan = await service.plan(load_suite(DATA / name), "core.conformance.agents.scripted",
                              RunSettings(), tenant=f"t-{secrets.token_hex(6)}")  # fmt: skip
    record, _ = await service.run(plan)
    app = create_viewer_app(store=store)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://v") as c:
        page = (await c.get("/run", params={"id": record.run_id})).text
    assert f"({grid};" in page
    assert not re.search(r"\b1 (tasks|trials)\b", page)
