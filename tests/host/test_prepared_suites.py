"""The host's create path makes a catalog suite's stored document and digests once per parse of
its file, and a plan takes them only for that very suite object: a cached plan never serves
another suite's document or digests, down to a one-byte difference."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.host.helpers import SUITES, eval_body, host_config, running_host
from wopeval.engine.registry import SCRIPTED_AGENT_ID
from wopeval.engine.run import RunSettings
from wopeval.events.store import RunRecord
from wopeval.service import prepared as prepared_module
from wopeval.service import runs as runs_module
from wopeval.service.prepared import prepare_suite
from wopeval.service.runs import RunPlan
from wopeval.suite import parse_suite, suite_to_document
from wopeval.suite.digest import definition_digests

PLAIN = json.loads((SUITES / "plain.json").read_text())


def _suite_text(suite_id: str = "core.wopeval.evals.plain", value: str = "hello") -> str:
    """The plain test suite as text; ``value`` is the first task's expected output."""
    doc: dict[str, Any] = json.loads(json.dumps(PLAIN))
    doc["suiteId"] = suite_id
    doc["tasks"][0]["expected"]["match"]["value"] = value
    return json.dumps(doc)


def _expected(text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The document and digests a run of the suite ``text`` must store, made from scratch."""
    suite = parse_suite(json.loads(text))
    document = suite_to_document(suite)
    return document, definition_digests(suite, document).model_dump()


def _stored(record: RunRecord | None) -> tuple[dict[str, Any], dict[str, Any]]:
    assert record is not None
    digests = record.run_request.digests
    assert digests is not None
    return record.suite_document, digests.model_dump()


def test_a_plan_takes_prepared_parts_only_of_its_own_suite_object() -> None:
    one = parse_suite(json.loads(_suite_text(value="hello")))
    other = parse_suite(json.loads(_suite_text(value="hellp")))  # one byte apart
    twin = parse_suite(json.loads(_suite_text(value="hello")))  # equal, another object
    prepared = prepare_suite(one)
    own = RunPlan(one, SCRIPTED_AGENT_ID, RunSettings(), prepared=prepared)
    assert own.document is prepared.document
    assert own.digests is prepared.digests
    for suite in (other, twin):
        plan = RunPlan(suite, SCRIPTED_AGENT_ID, RunSettings(), prepared=prepared)
        assert plan.document is not prepared.document
        assert plan.document == suite_to_document(suite)
        assert plan.digests == definition_digests(suite)
    assert RunPlan(other, SCRIPTED_AGENT_ID, RunSettings()).digests != own.digests


async def test_two_suites_one_byte_apart_each_store_their_own_document_and_digests(
    store_url: str, tmp_path: Path
) -> None:
    texts = {
        "core.wopeval.evals.plain": _suite_text("core.wopeval.evals.plain"),
        "core.wopeval.evals.plaim": _suite_text("core.wopeval.evals.plaim"),
    }
    for name, text in texts.items():
        (tmp_path / f"{name}.json").write_text(text)
    config = host_config(suiteDirectories=[str(tmp_path)])
    async with running_host(store_url, config) as host:
        created: list[tuple[str, str]] = []
        for _ in range(2):  # alternating: each suite's second run comes after the other's
            for name in texts:
                response = await host.create(eval_body(f"suite://{name}"))
                assert response.status_code == 201, response.text
                created.append((name, response.json()["runId"]))
        stored = [(n, _stored(await host.state.store.get_run(r))) for n, r in created]
    for name, got in stored:
        assert got == _expected(texts[name]), name
    assert (
        _expected(texts["core.wopeval.evals.plain"])[1]
        != _expected(texts["core.wopeval.evals.plaim"])[1]
    )


async def test_a_file_changed_by_one_byte_is_planned_from_its_new_text(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "plain.json"
    before, after = _suite_text(value="hello"), _suite_text(value="hellO")
    assert len(before) == len(after)  # same size: only the file's identity tells them apart
    target.write_text(before)
    made: list[int] = []
    real = definition_digests

    def counting(*args: Any, **kwargs: Any) -> Any:
        made.append(1)
        return real(*args, **kwargs)

    for module in (prepared_module, runs_module):  # prepared, or made by a plan
        monkeypatch.setattr(module, "definition_digests", counting)
    config = host_config(suiteDirectories=[str(tmp_path)])
    body = eval_body("suite://core.wopeval.evals.plain")
    async with running_host(store_url, config) as host:
        first = await host.run_id(body)
        second = await host.run_id(body)
        assert len(made) == 1  # made when the file was parsed, not once per create
        target.write_text(after)
        os.utime(target, ns=(5, 5))
        changed = await host.run_id(body)
        assert len(made) == 2
        records = [await host.state.store.get_run(r) for r in (first, second, changed)]
    got = [_stored(r) for r in records]
    assert got[0] == got[1] == _expected(before)
    assert got[2] == _expected(after)
    assert got[2] != got[0]
