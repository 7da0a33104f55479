"""Per-suite work on the host's create path is done once per parse of the suite's file, not once
per create: the checks against the configuration (a changed file is checked again, and a suite
that fails is refused on every create: a refusal is never remembered as a pass) and the suite
document's stored text."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from tests.host.helpers import SUITES, eval_body, host_config, running_host
from wopeval.events import records as records_module
from wopeval.events.tables import dumps_json, runs
from wopeval.host import create as create_module
from wopeval.service import prepared as prepared_module
from wopeval.suite import parse_suite, suite_to_document

PLAIN = json.loads((SUITES / "plain.json").read_text())
REF = "suite://core.wopeval.evals.plain"


def _write(target: Path, tasks: int) -> None:
    doc: dict[str, Any] = json.loads(json.dumps(PLAIN))
    doc["tasks"] = doc["tasks"][:tasks]
    target.write_text(json.dumps(doc))


def _count_checks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    made: list[int] = []
    real = create_module.check_suite

    def counting(*args: Any, **kwargs: Any) -> None:
        made.append(1)
        real(*args, **kwargs)

    monkeypatch.setattr(create_module, "check_suite", counting)
    return made


async def test_a_suite_is_checked_once_per_parse_of_its_file(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "plain.json"
    _write(target, tasks=1)
    made = _count_checks(monkeypatch)
    config = host_config({"maxTasksPerSuite": 2}, suiteDirectories=[str(tmp_path)])
    async with running_host(store_url, config) as host:
        for _ in range(3):
            await host.run_id(eval_body(REF))
        assert len(made) == 1
        _write(target, tasks=3)  # now over maxTasksPerSuite: the new parse is checked
        os.utime(target, ns=(5, 5))
        for attempt in range(2):
            response = await host.create(eval_body(REF))
            assert response.status_code == 400, response.text
            body = response.json()
            assert body["error"] == "validation_error", body
            assert "maxTasksPerSuite" in json.dumps(body), body
            assert len(made) == 2 + attempt  # refused: checked again on every create
        _write(target, tasks=2)
        os.utime(target, ns=(6, 6))
        await host.run_id(eval_body(REF))
        await host.run_id(eval_body(REF))
        assert len(made) == 4  # the passing parse: once for both creates


async def test_a_suites_stored_text_is_made_once_per_parse_and_is_the_documents(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "plain.json"
    _write(target, tasks=3)
    made: list[int] = []
    real = dumps_json

    def counting(value: Any) -> str:
        if isinstance(value, dict) and "tasks" in value:  # a suite document, not a request
            made.append(1)
        return real(value)

    for module in (prepared_module, records_module):
        monkeypatch.setattr(module, "dumps_json", counting)
    config = host_config(suiteDirectories=[str(tmp_path)])
    async with running_host(store_url, config) as host:
        run_ids = [await host.run_id(eval_body(REF)) for _ in range(3)]
        assert len(made) == 1  # when the file was parsed, not once per create
        stmt = select(runs.c.suite_document).where(runs.c.run_id.in_(run_ids))
        stored = [row[0] for row in await host.state.store.read(stmt)]
    expected = dumps_json(suite_to_document(parse_suite(json.loads(target.read_text()))))
    assert stored == [expected] * 3
