"""A pytest plugin: ``pytest --wopeval-suite SUITE --wopeval-agent pkg:agent`` runs the suite
and reports one test per task — passed, or failed with the task's failure reasons.

Registered under ``pytest11`` (pyproject), so it is always loaded; without ``--wopeval-suite`` it
only adds its options and imports nothing of wopeval's engine. With it, the suite file joins the
collected paths; its first task to run executes the whole suite once (every task × trial, as
``wopeval run`` does, stored in ``--wopeval-store`` or a throwaway SQLite file), and each task's
test then passes or fails with the reasons :func:`wopeval.grading.detail.run_detail` gives
(the failure kind and message of every trial that did not pass).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from wopeval.errors import WopevalError


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("wopeval", "wopeval eval suites")
    group.addoption(
        "--wopeval-suite", metavar="SUITE", help="Run this eval suite: a test per task."
    )
    group.addoption(
        "--wopeval-agent", metavar="AGENT", help="The agent: a registered id or pkg.module:name."
    )
    group.addoption(
        "--wopeval-store", metavar="URL", help="Store the run here (default: a throwaway SQLite)."
    )


def pytest_configure(config: pytest.Config) -> None:
    suite = config.getoption("wopeval_suite")
    if not suite:
        return
    agent = config.getoption("wopeval_agent")
    if not agent:
        raise pytest.UsageError("--wopeval-suite needs --wopeval-agent (an id or pkg:agent)")
    path = Path(suite).resolve()
    if not path.is_file():
        raise pytest.UsageError(f"--wopeval-suite: no such file {suite}")
    if str(path) not in (str(Path(arg).resolve()) for arg in config.args):
        config.args.append(str(path))
    store = config.getoption("wopeval_store")
    config.pluginmanager.register(_Collector(path, agent, store), "wopeval-suite")


class TaskFailed(WopevalError):
    """A task of the suite did not pass; the message gives its reasons (a result, reported as
    the task's test failure, not an error of wopeval or of its input)."""


class _Collector:
    def __init__(self, path: Path, agent: str, store: str | None) -> None:
        self.path, self.agent, self.store = path, agent, store

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> Any:
        if file_path.resolve() != self.path:
            return None
        node = SuiteFile.from_parent(parent, path=file_path)
        node.agent, node.store = self.agent, self.store
        return node


class SuiteFile(pytest.File):
    """The suite file: one :class:`TaskItem` per task; runs the suite on first need."""

    agent: str = ""
    store: str | None = None
    _outcome: Any = None

    def collect(self) -> Iterator[TaskItem]:
        from wopeval.suite import SuiteError, load_suite

        try:
            suite = load_suite(self.path)
        except SuiteError as exc:
            raise self.CollectError("\n".join(str(e) for e in exc.errors)) from exc
        for task in suite.tasks:
            yield TaskItem.from_parent(self, name=task.taskId)

    def outcome(self) -> Any:
        """The run's (summary, detail), computed once for all the suite's tasks."""
        if self._outcome is None:
            import anyio

            self._outcome = anyio.run(self._run)
        return self._outcome

    async def _run(self) -> Any:
        from wopeval.events.store import EventStore
        from wopeval.grading.detail import run_detail
        from wopeval.service.api import evaluate
        from wopeval.service.runs import fold_log, grading_options
        from wopeval.suite import parse_suite

        url = self.store or str(Path(tempfile.mkdtemp(prefix="wopeval-pytest-")) / "run.db")
        store = await EventStore.open(url)
        try:
            result = await evaluate(self.path, self.agent, store=store)
            record = await store.get_run(result.run_id)
            assert record is not None
            suite = parse_suite(record.suite_document)
            options = grading_options(record.run_request)
            detail = await fold_log(
                store, result.run_id, lambda log: run_detail(suite, log, options)
            )
            return result.summary, detail
        finally:
            await store.close()


class TaskItem(pytest.Item):
    """One task of the suite: passes when the task passed."""

    def runtest(self) -> None:
        parent = self.parent
        assert isinstance(parent, SuiteFile)
        summary, detail = parent.outcome()
        task = next(t for t in summary.tasks if t.taskId == self.name)
        if task.passed:
            return
        from wopeval.grading.reasons import reason_texts

        cells = next(t for t in detail.tasks if t.task_id == self.name).cells
        passed = sum(1 for cell in cells if cell.status == "pass")
        lines = [f"task {self.name} did not pass: {passed}/{len(cells)} trials passed"]
        for cell in cells:
            if cell.status != "pass":
                first, *more = reason_texts(cell.reason, cell.status)
                lines.append(f"  trial {cell.trial_index}: {first}")
                lines += [f"    · {why}" for why in more]
        raise TaskFailed("\n".join(lines))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, TaskFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"wopeval task {self.name}"


__all__ = ["SuiteFile", "TaskFailed", "TaskItem", "pytest_addoption", "pytest_configure"]
