"""``wopeval run --shard i/N --group G`` and ``wopeval merge``: the command-line edges.

Exit codes as for ``run``: 0 the merged suite passes, 1 it fails, 2 bad input (a bad
``--shard``, a missing or mismatched shard). A shard exits 0 once its slice is recorded.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import anyio
import pytest
from typer.testing import CliRunner

from wopeval.cli.app import app
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunSettings
from wopeval.events.store import EventStore
from wopeval.service.runs import RunService
from wopeval.service.shards import plan_shard
from wopeval.suite import load_suite

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart" / "suite.yaml"
FROZEN = "2026-01-01T00:00:00.000Z"


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commit timestamps frozen, so latencies (and so whole summaries) compare exactly."""
    monkeypatch.setattr("wopeval.events.log.utc_now", lambda: FROZEN)


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_three_shards_in_three_stores_merge_to_the_unsharded_run(tmp_path: Path) -> None:
    full = str(tmp_path / "full.db")
    code, out = _run("run", str(QUICKSTART), "--store", full, "--json")
    unsharded = json.loads(out)["summary"]
    assert code == (0 if unsharded["passed"] else 1)
    stores = [str(tmp_path / f"shard-{i}.db") for i in range(3)]
    for index, store in enumerate(stores):
        code, out = _run(
            "run", str(QUICKSTART), "--shard", f"{index}/3", "--group", "ci-42",
            "--store", store, "--json",
        )  # fmt: skip
        assert code == 0, out  # a shard's slice recorded, whatever its trials scored
        doc = json.loads(out)
        assert doc["group"] == "ci-42"
        assert doc["shard"] == {"index": index, "count": 3}
        assert doc["trials"] == 5  # 3 tasks × 5 trials over 3 shards
    args = [arg for store in stores for arg in ("--store", store)]
    code, out = _run("merge", "--group", "ci-42", *args, "--json")
    doc = json.loads(out)
    assert doc["summary"] == unsharded
    assert code == (0 if unsharded["passed"] else 1)
    assert [s["index"] for s in doc["shards"]] == [0, 1, 2]
    assert doc["missingShards"] == []
    assert doc["partial"] is False
    code, out = _run("grade", doc["runId"], "--store", stores[0])
    assert code == 0
    assert "reproduces the stored summary exactly" in out
    code, out = _run("merge", "--group", "ci-42", "--store", stores[0], "--store", stores[2])
    assert code == 2
    assert "shard 1 of group 'ci-42' (of 3) is in none" in out
    code, out = _run(
        "merge", "--group", "ci-42", "--store", stores[0], "--store", stores[2],
        "--allow-partial", "--json",
    )  # fmt: skip
    doc = json.loads(out)
    assert code == 1  # five trials missing count as failed: the suite cannot pass
    assert doc["missingShards"] == [1]
    assert doc["missingTrials"] == 5


def test_the_derived_group_is_the_same_for_every_shard(tmp_path: Path) -> None:
    stores = [str(tmp_path / f"s{i}.db") for i in range(2)]
    groups = set()
    for index, store in enumerate(stores):
        code, out = _run(
            "run", str(QUICKSTART), "--shard", f"{index}/2", "--store", store, "--json"
        )
        assert code == 0
        groups.add(json.loads(out)["group"])
    (group,) = groups
    code, out = _run("merge", "--group", group, "--store", stores[0], "--store", stores[1])
    assert code in (0, 1)
    assert "merged 2 of 2 shard(s)" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--shard", "2/2"], "--shard: '2/2': i is 0-based"),
        (["--shard", "x"], "--shard: 'x' is not i/N"),
        (["--shard", "0/0"], "--shard: '0/0': N must be at least 1"),
        (["--group", "g"], "--group needs --shard i/N"),
        (["--shard", "0/2", "--group", "bad group!"], "--group: 'bad group!'"),
        (["--shard", "0/2", "--resume", "local/r0123456789abcdef"], "cannot be combined"),
    ],
)
def test_bad_shard_options_exit_2_naming_the_option(
    tmp_path: Path, args: list[str], message: str
) -> None:
    code, out = _run("run", str(QUICKSTART), *args, "--store", str(tmp_path / "s.db"))
    assert code == 2
    assert message in out


def test_merge_refuses_mismatched_shards_naming_shard_and_field(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    base = ["run", str(QUICKSTART), "--group", "mix", "--store", store, "--json"]
    assert _run(*base, "--shard", "0/2")[0] == 0
    code, out = _run(*base, "--shard", "1/2", "--trial-timeout", "30")
    assert code == 0
    odd = json.loads(out)["runId"]
    code, out = _run("merge", "--group", "mix", "--store", store)
    assert code == 2
    assert f"shard 1 (run {odd}): trialTimeoutS is 30.0" in " ".join(out.split())


async def _unfinished_shard(store_url: str, group: str) -> str:
    async with await EventStore.open(store_url) as store:
        suite = load_suite(QUICKSTART)
        service = RunService(store, Registry())
        plan = await service.plan(suite, suite.targetAgentId or "", RunSettings())
        record = await service.create(plan_shard(plan, 1, 2, group))
        await store.set_status(record.run_id, "running")  # a process killed right then
        return record.run_id


def test_resume_of_a_shard_runs_its_slice_and_reports_as_a_shard(tmp_path: Path) -> None:
    store, group = str(tmp_path / "s.db"), "g-" + secrets.token_hex(4)
    run_id = anyio.run(_unfinished_shard, store, group)
    code, out = _run("run", str(QUICKSTART), "--shard", "0/2", "--group", group, "--store", store)
    assert code == 0
    code, out = _run("merge", "--group", group, "--store", store)
    assert code == 2
    assert f"(run {run_id}) is running" in " ".join(out.split())
    code, out = _run("run", "--resume", run_id, "--store", store, "--json")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["shard"] == {"index": 1, "count": 2}
    assert doc["trials"] == 7  # 15 pairs: shard 1 of 2 has the odd positions
    code, out = _run("merge", "--group", group, "--store", store, "--json")
    assert code in (0, 1)
    assert json.loads(out)["missingTrials"] == 0


def test_merge_refuses_an_exclude_that_is_no_shard_of_the_group(tmp_path: Path) -> None:
    """A mistyped ``--exclude`` left nothing out without a word; it is bad input now."""
    store = str(tmp_path / "s.db")
    base = ["run", str(QUICKSTART), "--group", "ex", "--store", store, "--json"]
    for shard in ("0/2", "1/2"):
        assert _run(*base, "--shard", shard)[0] == 0
    code, out = _run("merge", "--group", "ex", "--store", store, "--exclude", "local/bogus")
    assert code == 2
    assert "exclude: local/bogus is no shard run of group 'ex'" in " ".join(out.split())


def test_a_shard_with_no_trial_warns(tmp_path: Path) -> None:
    """More shards than planned trials (15 here): the empty ones say so, and still exit 0."""
    store = str(tmp_path / "s.db")
    result = CliRunner().invoke(app, ["run", str(QUICKSTART), "--shard", "20/30", "--group",
                                      "wide", "--store", store, "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "--shard 20/30 holds no trial (the suite plans 15" in " ".join(result.output.split())


def test_a_suite_mismatch_names_both_suites(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    changed = tmp_path / "changed.json"
    suite = load_suite(QUICKSTART)
    doc = suite.model_dump(mode="json", exclude_unset=True)
    changed.write_text(json.dumps({**doc, "version": "9.9.9"}))
    assert _run("run", str(QUICKSTART), "--group", "mm", "--shard", "0/2", "--store", store)[0] == 0
    assert _run("run", str(changed), "--group", "mm", "--shard", "1/2", "--store", store)[0] == 0
    code, out = _run("merge", "--group", "mm", "--store", store)
    assert code == 2
    said = " ".join(out.split())
    assert f"{suite.suiteId}@9.9.9 vs {suite.suiteId}@{suite.version}" in said
