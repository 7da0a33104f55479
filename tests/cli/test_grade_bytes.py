"""``wopeval grade RUN --json`` prints the stored summary byte for byte, for a stored run of
every kind the CLI makes (``bench/grade_kinds.py``: the plainest suite, the quickstart, every
trajectory mode with trials and fixtures, a cost ceiling, a model agent with an LLM judge, a
resumed run, a regression run, merged shards, ``--max-tool-calls``, a gate) on both stores, and
for an OTLP export posted to ``POST /v1/traces``. The stored text is read from the ``runs`` table
with the database's own driver, not through wopeval. ``import-otlp --json`` and ``grade-log`` of
the log it converted print the same bytes.

``grade`` only reads: the module makes every kind's runs once per store, in one store
(:func:`made`), and the tests grade and read them; the test that edits a stored summary makes a
run of its own."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio
import pytest
from bench.grade_kinds import KINDS, Kind, Made
from opentelemetry.exporter.otlp.json.common.trace_encoder import encode_spans
from typer.testing import CliRunner

from bench import grade_kinds
from tests.host.helpers import KEY_A, auth, running_host
from tests.host.test_otlp_traces import _spans
from wopeval.cli.app import app


def _cli(argv: Sequence[str]) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(argv), env={"COLUMNS": "100"})
    return result.exit_code, result.stdout


def _unfinished(store: str, suite: str) -> str:
    return anyio.run(grade_kinds.unfinished_run, store, suite)


@pytest.fixture(scope="module")
def made(module_store_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Made]:
    """Every kind's runs, in one store (each kind's suites in a directory of its own)."""
    kinds: dict[str, Made] = {}
    with grade_kinds.servers() as urls:
        for kind in KINDS:
            directory = tmp_path_factory.mktemp(kind.name)
            grade_kinds.write_suites(kind, directory, urls["agent_url"])
            kinds[kind.name] = grade_kinds.make(
                kind, _cli, module_store_url, directory, unfinished=_unfinished, urls=urls
            )
    return kinds


@pytest.mark.parametrize("kind", KINDS, ids=[k.name for k in KINDS])
def test_grade_prints_the_stored_summary_byte_for_byte(
    kind: Kind, made: Mapping[str, Made], module_store_url: str
) -> None:
    runs = made[kind.name]
    assert runs.runs, runs
    assert all(code in (0, 1) for code in runs.exits), runs  # each step ran: passed or failed
    for run_id in runs.runs:
        graded = grade_kinds.grade_bytes(_cli, module_store_url, run_id)
        assert graded["storedBytes"], graded  # the run has a stored summary
        assert graded["same"], graded
        assert graded["exit"] == 0


def test_the_kinds_cover_what_a_summary_can_hold(
    made: Mapping[str, Made], module_store_url: str
) -> None:
    """The runs are not all alike: between them they pass and fail tasks, skip a trial for
    budget, fail one for a fixture miss and one for a forbidden call, count pass@k over
    several trials, carry a judge's cost and a regression verdict."""
    seen: dict[str, object] = {}
    for kind in KINDS:
        text = grade_kinds.stored_summary(module_store_url, made[kind.name].runs[-1])
        seen[kind.name] = json.loads(text or "null")
    trajectories = seen["trajectories"]
    assert isinstance(trajectories, dict)
    tasks = {t["taskId"]: t for t in trajectories["tasks"]}
    assert tasks["exact"]["passed"] is True
    assert tasks["fixture-miss"]["passed"] is False
    assert tasks["subset-forbidden"]["trials"]["n"] == 3
    assert tasks["in-order-flaky"]["trials"]["passedCount"] == 2  # one took the wrong order
    costly = seen["cost-ceiling"]
    assert isinstance(costly, dict)
    assert costly["tasks"][0]["trials"]["passedCount"] == 3  # $0.03 > $0.025: two never ran
    assert costly["passed"] is False
    judged = seen["model-and-judge"]
    assert isinstance(judged, dict)
    assert {t["taskId"]: t["score"] for t in judged["tasks"]}["apology"] == 0.875
    regression = seen["regression"]
    assert isinstance(regression, dict)
    assert regression["regression"]["pairedTaskCount"] == len(trajectories["tasks"])


@pytest.mark.parametrize(
    ("old", "new", "parts_at"),
    [('"passed":true', '"passed":false', len('"passed":')),
     ('"taskCount":1', '"taskCount": 1', len('"taskCount":'))],
    ids=["a-value", "a-space"],
)  # fmt: skip
def test_a_stored_summary_changed_by_a_byte_is_not_reproduced(
    tmp_path: Path, old: str, new: str, parts_at: int
) -> None:
    """The check reads bytes: a changed value, and a space the JSON parser would not notice."""
    kind = KINDS[0]
    store = str(tmp_path / "s.db")
    grade_kinds.write_suites(kind, tmp_path)
    (run_id,) = grade_kinds.make(kind, _cli, store, tmp_path, unfinished=_unfinished).runs
    with sqlite3.connect(store) as db:
        db.execute("UPDATE runs SET summary = replace(summary, ?, ?)", (old, new))
    stored = grade_kinds.stored_summary(store, run_id)
    assert stored is not None
    assert new in stored
    graded = grade_kinds.grade_bytes(_cli, store, run_id)
    assert graded["same"] is False
    assert graded["difference"]["at"] == stored.index(new) + parts_at


def test_otlp_posted_to_the_host_is_graded_to_its_stored_bytes(store_url: str) -> None:
    body = json.dumps(encode_spans(_spans()).to_dict()).encode()

    async def post() -> str:
        async with running_host(store_url) as host:
            headers = {"Content-Type": "application/json", **auth(KEY_A)}
            answer = await host.client.post("/v1/traces", content=body, headers=headers)
            assert answer.status_code == 200, answer.text
            return answer.headers["OpenWOP-Run-Id"]

    run_id = anyio.run(post)
    graded = grade_kinds.grade_bytes(_cli, store_url, run_id)
    assert graded["storedBytes"], graded
    assert graded["same"], graded


def test_import_otlp_and_grade_log_of_its_converted_log_print_the_same_bytes(
    made: Mapping[str, Made],
) -> None:
    kind = next(k for k in KINDS if k.log_check is not None)
    logs = made[kind.name].logs
    assert logs is not None
    imported, regraded = logs
    assert grade_kinds.last_json(imported)["tasks"], imported
    assert imported == regraded


def test_33_2_the_conversation_kind_holds_a_user_side(
    made: Mapping[str, Made], module_store_url: str
) -> None:
    """A scripted user's run: one conversation to its stop, one user miss, one max-turns; the
    summary counts the user side apart and ``grade`` reproduces it byte for byte."""
    store = module_store_url
    (run_id,) = made["conversation"].runs
    stored = grade_kinds.stored_summary(store, run_id)
    assert stored is not None
    summary = json.loads(stored)
    assert {t["taskId"]: t["passed"] for t in summary["tasks"]} == {
        "talks": True, "off-script": False, "too-long": False}  # fmt: skip
    assert summary["x-wopeval-userSide"] == {
        "trials": 3, "passedTrials": 1, "userMiss": 1, "userError": 0,
        "passRate": 1 / 3, "passRateExcludingUserSide": 0.5}  # fmt: skip
    assert grade_kinds.grade_bytes(_cli, store, run_id)["same"] is True
