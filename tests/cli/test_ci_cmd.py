"""``wopeval ci``: a run of the suite compared with a stored baseline, one Markdown report, and
an exit code by the verdict (RFC 0244 §F for the regression verdict), end to end on a real
SQLite store through the CLI runner."""

from __future__ import annotations

import json
import re
import secrets
import socket
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import pytest
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from tests.cli.ci_fixtures import write_agents, write_suite
from wopeval.cli.app import app
from wopeval.cli.ci_cmd import verdict_code
from wopeval.compare.report import CompareReport, RunSide


@pytest.fixture
def agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return write_agents(tmp_path)


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def _baseline(store: str, suite: Path, agent: str) -> str:
    code, out = _invoke("run", str(suite), "--store", store, "--agent", agent, "--json")
    assert code == 0, out
    run_id: str = json.loads(out)["runId"]
    return run_id


def _runs(store: str) -> list[tuple[str, str]]:
    with sqlite3.connect(store) as db:
        return sorted(db.execute("select run_id, status from runs").fetchall())


def _ci(tmp_path: Path, suite: Path, store: str, *extra: str) -> tuple[int, str, str]:
    report = tmp_path / "report.md"
    report.unlink(missing_ok=True)
    code, out = _invoke("ci", str(suite), "--store", store, "--report", str(report), *extra)
    return code, out, report.read_text() if report.exists() else ""


def test_0244_F_ci_same_agent_passes_with_exit_0(tmp_path: Path, agents: str) -> None:
    suite, store = write_suite(tmp_path / "suite.yaml"), str(tmp_path / "s.db")
    base = _baseline(store, suite, f"{agents}:good")
    code, out, report = _ci(tmp_path, suite, store, "--baseline", base, "--agent", f"{agents}:good")
    assert code == 0, out
    assert report.startswith("## wopeval ci: ✅ pass\n")
    assert f"### Changes vs baseline `{base}`: inconclusive" in report
    assert "| `t7` | 1/1 [0.03, 1.00] | 1/1 [0.03, 1.00] | +0.000 | - |" in report
    assert "Whole suite: all 8 task(s)." in report


def test_0244_F_ci_a_real_regression_exits_1_though_the_gate_passes(
    tmp_path: Path, agents: str
) -> None:
    suite, store = write_suite(tmp_path / "suite.yaml"), str(tmp_path / "s.db")
    base = _baseline(store, suite, f"{agents}:good")
    code, out, report = _ci(tmp_path, suite, store, "--baseline", base, "--agent", f"{agents}:bad")
    assert code == 1, out
    # 1 of 8 tasks passes: aggregate 0.125 meets passScore 0.1, so only the comparison fails it
    assert "✅ passed (gate `suite`)" in report
    assert report.startswith("## wopeval ci: ❌ fail\n")
    assert "regressed" in report
    assert "| `t0` | 1/1 [0.03, 1.00] | 1/1 [0.03, 1.00] | +0.000 | - |" in report
    assert "| `t1` | 1/1 [0.03, 1.00] | 0/1 [0.00, 0.97] | -1.000 | **broke** |" in report
    assert "vs baseline regressed; exit 1" in out


def test_0244_F_ci_cannot_decide_exits_4_unless_accepted(tmp_path: Path, agents: str) -> None:
    suite, store = write_suite(tmp_path / "suite.yaml"), str(tmp_path / "s.db")
    base = _baseline(store, suite, f"{agents}:good")
    same = ("--baseline", base, "--agent", f"{agents}:good", "--subset", "2")
    code, out, report = _ci(tmp_path, suite, store, *same)
    assert code == 4, out  # mcnemar on 2 pairs: its smallest p is 0.5
    assert report.startswith("## wopeval ci: ⚠️ cannot decide")
    assert "cannot decide" in report
    code, out, _ = _ci(tmp_path, suite, store, *same, "--accept-undecidable")
    assert code == 0, out


def test_ci_quick_subset_first_n_and_seeded_sample(tmp_path: Path, agents: str) -> None:
    suite, store = write_suite(tmp_path / "suite.yaml"), str(tmp_path / "s.db")
    good = ("--agent", f"{agents}:good", "--accept-undecidable")
    code, out, report = _ci(tmp_path, suite, store, *good, "--subset", "3")
    assert code == 0, out
    assert "**Quick subset**: the first 3 of 8 tasks" in report
    assert re.findall(r"^\| `(t\d)` \| pass", report, re.M) == ["t0", "t1", "t2"]
    picked = []
    for _ in range(2):
        code, out, report = _ci(tmp_path, suite, store, *good, "--sample", "3", "--seed", "7")
        assert code == 0, out
        assert "a sample of 3 (seed 7) of 8 tasks" in report
        picked.append(re.findall(r"^\| `(t\d)` \| pass", report, re.M))
    assert picked[0] == picked[1]
    assert len(set(picked[0])) == 3
    code, out, report = _ci(tmp_path, suite, store, *good, "--subset", "8")
    assert "Whole suite: all 8 task(s)." in report


def test_ci_plainest_suite_no_baseline_appends_to_the_step_summary(
    tmp_path: Path, agents: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite, store = write_suite(tmp_path / "one.yaml", tasks=1), str(tmp_path / "s.db")
    summary = tmp_path / "step-summary.md"
    summary.write_text("an earlier step's summary\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, out = _invoke("ci", str(suite), "--store", store, "--agent", f"{agents}:good")
    assert code == 0, out
    text = summary.read_text()
    assert text.startswith("an earlier step's summary\n## wopeval ci: ✅ pass\n")
    assert "No baseline: the gate alone decides." in text
    assert f"report: {summary}" in out


def _gfm() -> MarkdownIt:
    """GitHub-flavoured Markdown as markdown-it-py parses it (tables, strikethrough, raw HTML);
    bare-URL linkify needs linkify-it-py, which is not installed, so it is off."""
    return MarkdownIt("gfm-like", {"linkify": False})


def _tokens(markdown: str) -> list[str]:
    kinds = []
    for token in _gfm().parse(markdown):
        kinds.append(token.type)
        kinds += [child.type for child in token.children or ()]
    return kinds


@pytest.mark.parametrize("kind", ["hostile", "crashing"])
def test_ci_report_parses_as_gfm_and_shows_agent_text_as_text(
    tmp_path: Path, agents: str, kind: str
) -> None:
    suite, store = write_suite(tmp_path / "suite.yaml"), str(tmp_path / "s.db")
    base = _baseline(store, suite, f"{agents}:good")
    code, out, report = _ci(
        tmp_path, suite, store, "--baseline", base, "--agent", f"{agents}:{kind}"
    )
    assert code == 1, out
    assert "onerror" in report  # the agent's text is there, as text
    kinds = _tokens(report)
    assert "html_inline" not in kinds
    assert "html_block" not in kinds
    assert "image" not in kinds
    assert "link" not in kinds
    md = _gfm()
    html = md.render(report)
    assert "<img" not in html
    assert "<script" not in html
    headings = [
        md.parse(report)[i + 1].content
        for i, t in enumerate(md.parse(report))
        if t.type == "heading_open"
    ]
    assert not any("Pwned" in h for h in headings)
    assert headings[0] == "wopeval ci: ❌ fail"
    assert "table_open" in kinds  # the tables are still tables (a pipe in a reason is escaped)
    rows = [t for t in md.parse(report) if t.type == "tr_open"]
    assert len(rows) >= 8


def test_ci_baseline_of_another_suite_exits_2_naming_both_and_keeps_the_store(
    tmp_path: Path, agents: str
) -> None:
    store = str(tmp_path / "s.db")
    other = write_suite(tmp_path / "other.yaml", suite_id="core.test.evals.other")
    base = _baseline(store, other, f"{agents}:good")
    before = _runs(store)
    suite = write_suite(tmp_path / "suite.yaml")
    code, out, report = _ci(tmp_path, suite, store, "--baseline", base, "--agent", f"{agents}:good")
    assert code == 2, out
    flat = " ".join(out.split())
    assert base in flat
    assert "core.test.evals.other" in flat
    assert "core.test.evals.ci" in flat
    assert report == ""  # refused before any trial ran
    assert _runs(store) == before


def test_ci_bad_input_exits_2_naming_it(tmp_path: Path, agents: str) -> None:
    suite, store = write_suite(tmp_path / "suite.yaml"), str(tmp_path / "s.db")
    good = ("--agent", f"{agents}:good")
    base = _baseline(store, suite, f"{agents}:good")
    cases = [
        (("--baseline", "local/r-nope"), "'local/r-nope' is not in"),
        (("--baseline", base, "--baseline-from", store), "cannot be combined"),
        (("--subset", "2", "--sample", "2"), "--subset and --sample cannot be combined"),
        (("--baseline-from", str(tmp_path / "absent.db")), "absent.db"),
        (("--method", "coin-flip"), "'coin-flip' is not one of"),
    ]
    empty = str(tmp_path / "empty.db")
    _baseline(empty, write_suite(tmp_path / "x.yaml", suite_id="core.test.evals.x"), good[1])
    cases.append((("--baseline-from", empty), "holds no completed run of suite"))
    for extra, expected in cases:
        before = _runs(store)
        code, out, _ = _ci(tmp_path, suite, store, *good, *extra)
        assert code == 2, (extra, out)
        assert expected in " ".join(out.split()), (extra, out)
        assert _runs(store) == before
    code, out, _ = _ci(tmp_path, tmp_path / "missing.yaml", store, *good)
    assert code == 2
    assert "missing.yaml" in out.replace("\n", "")  # a long path wraps at 80 columns


def test_ci_baseline_from_takes_the_newest_completed_run_of_the_suite(
    tmp_path: Path, agents: str
) -> None:
    suite, main = write_suite(tmp_path / "suite.yaml"), str(tmp_path / "main.db")
    _baseline(main, suite, f"{agents}:good")
    newest = _baseline(main, suite, f"{agents}:bad")
    _baseline(
        main, write_suite(tmp_path / "o.yaml", suite_id="core.test.evals.o"), f"{agents}:good"
    )
    pr = str(tmp_path / "pr.db")
    code, out, report = _ci(
        tmp_path, suite, pr, "--baseline-from", main, "--agent", f"{agents}:good"
    )
    assert f"### Changes vs baseline `{newest}`: improved" in report, report
    assert code == 0, out


def test_ci_an_outage_exits_3_and_says_so_in_the_report(
    tmp_path: Path, agents: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as closed:  # a loopback port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    suite, store = write_suite(tmp_path / "suite.yaml", tasks=1), str(tmp_path / "s.db")
    base = _baseline(store, suite, f"{agents}:good")
    model = ("--model", "m", "--base-url", f"http://127.0.0.1:{port}/v1")
    code, out, report = _ci(tmp_path, suite, store, "--baseline", base, *model)
    assert code == 3, out
    assert report.startswith("## wopeval ci: 🔌 outage")
    assert "failed for infrastructure" in out


@pytest.mark.parametrize(
    ("run_code", "verdict", "decidable", "accept", "expected"),
    [
        (0, None, True, False, 0),
        (1, None, True, False, 1),
        (3, None, True, False, 3),
        (0, "inconclusive", True, False, 0),
        (0, "improved", True, False, 0),
        (0, "regressed", True, False, 1),
        (0, "inconclusive", False, False, 4),
        (0, "inconclusive", False, True, 0),
        (1, "inconclusive", False, False, 1),  # a failed gate outranks an undecidable verdict
        (3, "regressed", True, False, 3),  # an outage outranks a regression
        (3, "inconclusive", False, False, 3),
        (0, "regressed", False, True, 1),
    ],
)
def test_ci_exit_code_worst_first(
    run_code: int, verdict: str | None, decidable: bool, accept: bool, expected: int
) -> None:
    report = None
    if verdict is not None:
        reach = SimpleNamespace(decidable=decidable)
        comparison = SimpleNamespace(regression=SimpleNamespace(verdict=verdict), reach=reach)
        report = CompareReport(RunSide("b", None), RunSide("c", None), comparison)  # type: ignore[arg-type]
    assert verdict_code(run_code, report, accept) == expected


def test_ci_a_report_that_cannot_be_written_is_refused_before_any_trial(
    tmp_path: Path, agents: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite, store = write_suite(tmp_path / "suite.yaml"), str(tmp_path / "s.db")
    good = ("--agent", f"{agents}:good")
    absent = tmp_path / "no-such-dir" / "r.md"
    code, out = _invoke("ci", str(suite), "--store", store, *good, "--report", str(absent))
    assert code == 2, out
    assert "--report" in out
    assert "no-such-dir" in out
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path))
    code, out = _invoke("ci", str(suite), "--store", store, *good)
    assert code == 2, out
    assert "$GITHUB_STEP_SUMMARY" in out
    assert not Path(store).exists()  # no run was recorded: none was started


def test_ci_one_code_path_on_each_backend(tmp_path: Path, agents: str, store_url: str) -> None:
    """The baseline in a store of either backend, by id and as the newest run of the suite (a
    suite id of this test's own: a PostgreSQL database is shared by the session's tests)."""
    suite_id = f"core.test.evals.ci{secrets.token_hex(4)}"
    suite = write_suite(tmp_path / "suite.yaml", suite_id=suite_id)
    base = _baseline(store_url, suite, f"{agents}:good")
    bad = ("--agent", f"{agents}:bad")
    pr = str(tmp_path / "pr.db")
    code, out, report = _ci(tmp_path, suite, pr, "--baseline-from", store_url, *bad)
    assert code == 1, out
    assert f"### Changes vs baseline `{base}`: regressed" in report
    code, out, report = _ci(tmp_path, suite, store_url, "--baseline", base, *bad)
    assert code == 1, out
    assert f"### Changes vs baseline `{base}`: regressed" in report
    newest = re.findall(r"run `(local/[^`]+)`", report)[0]  # recorded in the baseline's store
    code, out, report = _ci(tmp_path, suite, pr, "--baseline-from", store_url, *bad)
    assert f"### Changes vs baseline `{newest}`: inconclusive" in report
    other = write_suite(tmp_path / "other.yaml", suite_id=f"{suite_id}x")
    code, out, _ = _ci(tmp_path, other, store_url, "--baseline", base, *bad)
    assert code == 2, out
    assert suite_id in out
