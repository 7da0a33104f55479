"""``wopeval run --retry-infrastructure``, end to end: a real model server on a loopback socket
failing its first requests (past the SDK's own retries), the command line in the test's process
(:func:`tests.cli.in_process.wopeval_here`: its exit codes' real processes are in
test_outage_exits.py), the store on each backend. The outage is retried and the run passes; a
wrong answer is not retried."""

from __future__ import annotations

import json
from pathlib import Path

from tests.outage.model_server import ModelServer
from tests.outage.test_outage_exits import Here, _graded_here, _one_line, _suite

# The SDK sends a request and retries it twice: 3 failures fail one attempt of a trial.
ONE_ATTEMPT = 3


def test_a_model_server_outage_is_retried_and_the_run_passes(
    tmp_path: Path, store_url: str, here: Here
) -> None:
    suite, _ = _suite(tmp_path, trials=2)
    with ModelServer("answer", fail_first=ONE_ATTEMPT) as server:
        ran = here("run", suite, "--store", store_url, "--model", "m1", "--base-url",
                   server.base_url, "--concurrency", "1", "--retry-infrastructure", "2",
                   "--retry-backoff", "0", "--json")  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert server.completions == ONE_ATTEMPT + 2  # the failed attempt, its retry, trial 1
    doc = json.loads(ran.stdout)
    assert doc["retries"] == {"trials": 1, "attempts": 1, "model-server": 1}
    assert doc["infrastructureFailures"] == 0
    assert doc["summary"]["passed"] is True
    line = _one_line(ran.stderr)
    assert line.startswith("retries: 1 trial(s) of run ")
    assert "(1 attempt(s) superseded: model-server 1)" in line
    _graded_here(here, store_url, doc["runId"])


def test_a_wrong_answer_is_not_retried(tmp_path: Path, store_url: str, here: Here) -> None:
    suite, _ = _suite(tmp_path, trials=2)
    with ModelServer("answer", answer="early") as server:
        ran = here("run", suite, "--store", store_url, "--model", "m1", "--base-url",
                   server.base_url, "--retry-infrastructure", "3", "--retry-backoff", "0",
                   "--json")  # fmt: skip
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert server.completions == 2  # one request a trial: nothing ran again
    doc = json.loads(ran.stdout)
    assert doc["retries"] == {}
    assert [f["kind"] for f in doc["failures"]] == ["output-mismatch", "output-mismatch"]


def test_without_the_option_the_outage_stands_and_a_lone_budget_is_refused(
    tmp_path: Path, store_url: str, here: Here
) -> None:
    suite, _ = _suite(tmp_path)
    with ModelServer("answer", fail_first=ONE_ATTEMPT) as server:
        ran = here("run", suite, "--store", store_url, "--model", "m1", "--base-url",
                   server.base_url, "--json")  # fmt: skip
        refused = here("run", suite, "--store", store_url, "--model", "m1", "--base-url",
                       server.base_url, "--retry-budget", "3")  # fmt: skip
    assert ran.returncode == 3, ran.stdout + ran.stderr
    assert json.loads(ran.stdout)["infrastructureFailures"] == 1
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "--retry-budget needs --retry-infrastructure N" in refused.stderr


def test_merge_json_reports_the_shards_retries_as_run_json_does(
    tmp_path: Path, store_url: str, here: Here
) -> None:
    """Two shards of a group, one of whose trials is retried after an outage: ``merge --json``
    carries the ``retries`` block ``run --json`` has, counted over the merged run."""
    suite, _ = _suite(tmp_path, trials=2)
    with ModelServer("answer", fail_first=ONE_ATTEMPT) as server:
        for shard in ("0/2", "1/2"):
            ran = here("run", suite, "--store", store_url, "--model", "m1", "--base-url",
                       server.base_url, "--shard", shard, "--group", "g-retry",
                       "--retry-infrastructure", "2", "--retry-backoff", "0",
                       "--json")  # fmt: skip
            assert ran.returncode == 0, ran.stdout + ran.stderr
    merged = here("merge", "--store", store_url, "--group", "g-retry", "--json")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    doc = json.loads(merged.stdout)
    assert doc["retries"] == {"trials": 1, "attempts": 1, "model-server": 1}
    assert doc["infrastructureFailures"] == 0
    assert doc["failures"] == []
    assert "(1 attempt(s) superseded: model-server 1)" in _one_line(merged.stderr)
