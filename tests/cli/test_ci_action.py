"""The GitHub Action's script (``ci/action.sh``, what ``action.yml`` runs) end to end on a local
git repository with two commits, no network: the main branch records the baseline, a pull
request's commit that breaks the agent is reported as a regression in the job summary, a quick
subset runs on the pull request, and the main branch's store keeps only the main branch's runs."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import yaml

from tests.cli.ci_fixtures import suite_doc

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "ci" / "action.sh"
GOOD = 'async def agent(task_input, ctx):\n    return "ok"\n'
BAD = 'async def agent(task_input, ctx):\n    return "ok" if ctx.task_id == "t0" else "no"\n'
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
}  # fmt: skip
CI_VARIABLES = ("GITHUB_STEP_SUMMARY", "GITHUB_HEAD_REF", "GITHUB_REF_NAME", "CI_COMMIT_BRANCH",
                "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "WOPEVAL_STORE")  # fmt: skip


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env={**os.environ, **GIT_ENV}, check=True,
                   capture_output=True, timeout=60)  # fmt: skip


def _action(repo: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in CI_VARIABLES}
    paths = [str(repo), *filter(None, [os.environ.get("PYTHONPATH")])]
    full = {**base, "PYTHONPATH": os.pathsep.join(paths), "WOPEVAL": f"{sys.executable} -m wopeval",
            "WOPEVAL_SUITE": "suite.yaml", "WOPEVAL_ARGS": "--agent shop_agent:agent",
            "RUNNER_TEMP": str(repo.parent), **env}  # fmt: skip
    return subprocess.run(["bash", str(SCRIPT)], cwd=repo, env=full, capture_output=True,
                          text=True, timeout=300)  # fmt: skip


def _runs(store: Path) -> list[str]:
    with sqlite3.connect(store) as db:
        return sorted(row[0] for row in db.execute("select run_id from runs"))


def test_action_script_on_a_git_repository_with_two_commits(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "suite.yaml").write_text(yaml.safe_dump(suite_doc(8)))
    (repo / "shop_agent.py").write_text(GOOD)
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "a good agent")

    first = _action(repo)  # the main branch, no baseline yet: this run becomes the first
    assert first.returncode == 0, first.stderr
    assert "branch main" in first.stderr
    assert "no baseline store yet" in first.stderr
    report = (repo / "wopeval-ci.md").read_text()
    assert report.startswith("## wopeval ci: ✅ pass\n")
    assert "No baseline" in report
    baseline_store = repo / ".wopeval" / "baseline.db"
    main_runs = _runs(baseline_store)
    assert len(main_runs) == 1

    _git(repo, "checkout", "-q", "-b", "feature")
    (repo / "shop_agent.py").write_text(BAD)
    _git(repo, "commit", "-q", "-am", "break the agent")
    summary = tmp_path / "step-summary.md"
    pr = _action(repo, GITHUB_STEP_SUMMARY=str(summary), GITHUB_HEAD_REF="feature")
    assert pr.returncode == 1, pr.stderr
    text = summary.read_text()
    assert text.startswith("## wopeval ci: ❌ fail\n")
    assert f"### Changes vs baseline `{main_runs[0]}`: regressed" in text
    assert len(re.findall(r"\*\*broke\*\*", text)) == 7
    assert "Whole suite: all 8 task(s)." in text

    quick = _action(repo, WOPEVAL_PR_SUBSET="3", WOPEVAL_REPORT=str(tmp_path / "quick.md"))
    assert quick.returncode == 4, quick.stderr  # 3 pairs: mcnemar cannot reach alpha 0.05
    assert "branch feature" in quick.stderr
    quick_text = (tmp_path / "quick.md").read_text()
    assert "**Quick subset**: the first 3 of 8 tasks" in quick_text
    assert re.findall(r"^\| `(t\d)` \| (?:pass|\*\*FAIL\*\*)", quick_text, re.M) == [
        "t0", "t1", "t2"]  # fmt: skip
    assert _runs(baseline_store) == main_runs  # a pull request never writes the baseline

    _git(repo, "checkout", "-q", "main")  # the first commit again: same agent as its baseline
    again = _action(repo)
    assert again.returncode == 0, again.stderr
    assert f"Changes vs baseline `{main_runs[0]}`" in (repo / "wopeval-ci.md").read_text()
    assert len(_runs(baseline_store)) == 2


def test_action_yml_passes_every_input_the_script_reads() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    (ci_step,) = [s for s in steps if "action.sh" in s.get("run", "")]
    assert "$GITHUB_ACTION_PATH/ci/action.sh" in ci_step["run"]
    script = SCRIPT.read_text()
    read = set(re.findall(r"\$\{?(WOPEVAL_[A-Z_]+)", script))
    for name, value in ci_step["env"].items():
        assert name in read, name
        (input_name,) = re.findall(r"inputs\.([a-z-]+)", value)
        assert input_name in action["inputs"], input_name
    assert action["inputs"]["suite"]["required"] is True
    gitlab = yaml.safe_load((ROOT / "examples" / "ci" / "gitlab-ci.yml").read_text())
    assert set(gitlab["wopeval"]["variables"]) <= read
