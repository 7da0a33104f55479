"""Suite files cannot take the CLI or the host down (issue 14, point 2)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from tests.host.helpers import SUITES, eval_body, host_config, running_host
from tests.robust.hostile import write_hostile
from wopeval.suite import SuiteError
from wopeval.suite.load import load_suite

FIXTURE_FIELD = "tasks[0].fixtures.toolResponses[0].response"


def _names(field: str, paths: list[str]) -> bool:
    """``field`` is named (or a member inside it, for the too-deep ones)."""
    return any(p == field or p.startswith(field + ".") for p in paths)


def test_each_hostile_file_is_refused_naming_file_and_field(tmp_path: Path) -> None:
    named = write_hostile(tmp_path)
    for name, field in named.items():
        started = time.monotonic()
        with pytest.raises(SuiteError) as caught:
            load_suite(tmp_path / name)
        assert time.monotonic() - started < 5, name  # no hang, no blow-up
        assert caught.value.source == str(tmp_path / name)
        assert _names(field, [e.path for e in caught.value.errors]), (name, caught.value.errors)


def test_the_cli_refuses_them_with_exit_2_and_no_traceback(tmp_path: Path) -> None:
    named = write_hostile(tmp_path)
    files = [str(tmp_path / name) for name in sorted(named)]
    command = [sys.executable, "-m", "wopeval", "validate", "--json", *files]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    reports = {Path(f["path"]).name: f for f in json.loads(done.stdout)["files"]}
    for name, field in named.items():
        assert not reports[name]["valid"]
        assert _names(field, [e["path"] for e in reports[name]["errors"]]), (name, reports[name])


async def test_one_bad_file_is_isolated_and_the_host_keeps_serving(
    tmp_path: Path, store_url: str
) -> None:
    suites = tmp_path / "suites"
    shutil.copytree(SUITES, suites)
    named = write_hostile(suites / "hostile")
    config = host_config(suiteDirectories=[str(suites)])
    async with running_host(store_url, config) as host:
        rejected = {path.name for path in host.state.catalog.rejected}
        # many, trials: their ids are readable, so indexed (refused at create); the FIFO is skipped
        indexed = {"many.json", "trials.json", "fixture.json", "fifo.json"}
        assert set(named) - indexed <= rejected
        ok = await host.create()
        unknown = await host.create(eval_body("suite://core.nobody.evals.none"))
        write_hostile(suites / "later")  # added while the host runs
        os.utime(suites / "plain.json")
        await anyio.sleep(1.1)
        again = await host.create(eval_body("suite://core.nobody.evals.none2"))
        many = await host.create(eval_body("suite://core.hostile.evals.x"))
    assert ok.status_code == 201, ok.text
    assert unknown.status_code == 404, unknown.text
    assert again.status_code == 404, again.text
    assert many.status_code == 400, many.text
    assert many.json()["details"]["field"] in ("tasks", "trials.count", FIXTURE_FIELD)
