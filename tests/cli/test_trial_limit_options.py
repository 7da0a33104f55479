"""``wopeval run``'s per-trial caps: ``--max-tool-calls``, ``--max-output-bytes``,
``--max-tool-result-bytes`` and ``--max-reason-chars``. Each set low fails (or clips) the trials
it bounds, in words naming the cap; each is stored with the run; left out, the defaults of
``TrialLimits`` hold; a value under the cap's bound is refused naming the option."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from typer.testing import CliRunner

from wopeval.cli.app import app
from wopeval.engine.registry import SCRIPTED_AGENT_ID
from wopeval.events.store import EventStore
from wopeval.events.tables import dumps_json
from wopeval.wire.events import RunEvent
from wopeval.wire.vocab import TRIAL_FAILED

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart" / "suite.yaml"
LONG = "z" * 5000


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def _plain_suite(folder: Path, output: str) -> Path:
    """One task, no trials, no fixtures: the scripted agent answers ``output``, "done" passes."""
    path = folder / "plain.json"
    task = {
        "taskId": "only",
        "input": {"output": output},
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "done"}},
    }
    path.write_text(json.dumps({"suiteId": "core.wopeval.evals.plain-limits", "version": "1.0.0",
                                "modes": ["golden"], "tasks": [task]}))  # fmt: skip
    return path


def _stored(store: str, run_id: str) -> tuple[dict[str, Any], list[RunEvent]]:
    """The run's stored request and its log."""

    async def read() -> tuple[dict[str, Any], list[RunEvent]]:
        opened = await EventStore.open(store)
        try:
            record = await opened.get_run(run_id)
            assert record is not None
            return record.request, await opened.events(run_id)
        finally:
            await opened.close()

    return anyio.run(read)


def _stored_request(store: str, run_id: str) -> dict[str, Any]:
    return _stored(store, run_id)[0]


def _stored_reason(store: str, run_id: str) -> str:
    """The JSON text of the run's one stored failure reason."""
    (failed,) = [e for e in _stored(store, run_id)[1] if e.type == TRIAL_FAILED]
    return dumps_json(failed.payload)


@pytest.mark.parametrize(
    ("option", "value", "named", "trials"),
    [
        # every output of the quickstart's agent (3 tasks × 5 trials) and every fixture
        # response it is served is over these caps; one trial of the intact order calls only
        # a tool no fixture serves (the example agent's stable flakiness)
        ("--max-output-bytes", "5", "over the trial limit maxOutputBytes = 5", 15),
        ("--max-tool-result-bytes", "10", "over the trial limit maxToolResultBytes = 10", 14),
        ("--max-tool-calls", "1", "maxToolCalls = 1", 5),  # the refund task's calls two
    ],
)
def test_a_cap_set_low_fails_the_trials_past_it_naming_the_cap(
    tmp_path: Path, option: str, value: str, named: str, trials: int
) -> None:
    store = str(tmp_path / "s.db")
    code, out = _run("run", str(QUICKSTART), "--store", store, "--json", option, value)
    assert code == 1, out
    doc = json.loads(out)
    naming = [f for f in doc["failures"] if any(named in r for r in f["reasons"])]
    assert len(naming) >= trials, doc["failures"]
    assert all(named in f["message"] for f in naming)
    field = named.rpartition(" = ")[0].rpartition(" ")[2]
    assert _stored_request(store, doc["runId"])["limits"] == {field: int(value)}
    code, graded = _run("grade", doc["runId"], "--store", store, "--json")
    assert code == 0
    assert json.loads(graded) == doc["summary"]


def test_max_reason_chars_clips_a_long_reason(tmp_path: Path) -> None:
    suite = str(_plain_suite(tmp_path, LONG))
    agent = ("--agent", SCRIPTED_AGENT_ID)
    store = str(tmp_path / "s.db")
    code, out = _run("run", suite, *agent, "--store", store, "--json", "--max-reason-chars", "256")
    assert code == 1, out
    doc = json.loads(out)
    (clipped,) = doc["failures"]
    clipped_text = _stored_reason(store, doc["runId"])
    code, out = _run("run", suite, *agent, "--store", store, "--json")
    assert code == 1, out
    doc = json.loads(out)
    (whole,) = doc["failures"]
    whole_text = _stored_reason(store, doc["runId"])
    assert clipped["kind"] == whole["kind"] == "output-mismatch"  # the kind is kept
    assert "[clipped]" in clipped["message"]
    assert len(clipped_text) <= 256
    assert "[clipped]" not in whole_text
    assert LONG in whole_text  # under the default cap the answer is quoted whole


def test_without_the_options_a_run_keeps_the_default_caps(tmp_path: Path) -> None:
    """Nothing is stored (a run's defaults are left out of its request), so the run was made
    with TrialLimits' defaults, under which the quickstart passes."""
    store = str(tmp_path / "s.db")
    code, out = _run("run", str(QUICKSTART), "--store", store, "--json")
    assert code == 0, out
    assert "limits" not in _stored_request(store, json.loads(out)["runId"])


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--max-tool-calls", "0"),
        ("--max-output-bytes", "0"),
        ("--max-output-bytes", "-5"),
        ("--max-tool-result-bytes", "0"),
        ("--max-tool-result-bytes", "lots"),
        ("--max-reason-chars", "255"),  # a reason needs room for its ids and kind
        ("--max-output-bytes", "9" * 5000),
    ],
)
def test_a_cap_out_of_bounds_is_refused_naming_the_option(
    tmp_path: Path, option: str, value: str
) -> None:
    code, out = _run("run", str(QUICKSTART), "--store", str(tmp_path / "s.db"), option, value)
    assert code == 2
    assert f"Invalid value for '{option}'" in " ".join(out.replace("│", "").split()), out
    assert not (tmp_path / "s.db").exists()  # refused before any run


def test_resume_refuses_a_cap_naming_it(tmp_path: Path) -> None:
    code, out = _run("run", "--resume", "acme/r0123", "--store", str(tmp_path / "s.db"),
                     "--max-output-bytes", "10")  # fmt: skip
    assert code == 2
    assert "--max-output-bytes" in out
    assert "--resume" in out
