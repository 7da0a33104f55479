"""The host checks a catalog suite against its configuration once per parse of the suite's file,
not once per create; a changed file is checked again, and a suite that fails is refused on
every create (a refusal is never remembered as a pass)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.host.helpers import SUITES, eval_body, host_config, running_host
from wopeval.host import create as create_module

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
