"""Suite files cannot take the CLI or the host down (issue 14, point 2)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio

from tests.host.helpers import SUITES, eval_body, host_config, running_host
from tests.robust.hostile import write_hostile

FIXTURE_FIELD = "tasks[0].fixtures.toolResponses[0].response"


def _names(field: str, paths: list[str]) -> bool:
    """``field`` is named (or a member inside it, for the too-deep ones)."""
    return any(p == field or p.startswith(field + ".") for p in paths)


_LOAD_EACH = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))  # a blow-up fails, not swaps
from wopeval.suite import SuiteError
from wopeval.suite.load import load_suite
out = {}
for path in sys.argv[1:]:
    try:
        load_suite(path)
        out[path] = None
    except SuiteError as exc:
        out[path] = {"source": exc.source, "paths": [e.path for e in exc.errors]}
print(json.dumps(out))
"""


def test_each_hostile_file_is_refused_naming_file_and_field(tmp_path: Path) -> None:
    """Each file is refused, naming itself and its field, in a process capped at 2 GiB of
    address space (a blow-up fails it) and given 120 s (a hang fails it)."""
    named = write_hostile(tmp_path)
    paths = [str(tmp_path / name) for name in named]
    command = [sys.executable, "-c", _LOAD_EACH, *paths]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    refused = json.loads(done.stdout)
    for name, field in named.items():
        path = str(tmp_path / name)
        assert refused[path] is not None, f"{name} was accepted"
        assert refused[path]["source"] == path
        assert _names(field, refused[path]["paths"]), (name, refused[path])


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
