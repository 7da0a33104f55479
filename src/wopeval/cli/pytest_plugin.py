"""A pytest plugin: ``pytest --wopeval-suite SUITE --wopeval-agent pkg:agent`` runs the suite
and reports one test per task — passed, or failed with the task's failure reasons — and one
test for the run's gate (``--wopeval-gate``, :mod:`wopeval.grading.gate`), which decides the
session's outcome: a task test that fails under a gate that passes does not fail the session.

Registered under ``pytest11`` (pyproject), so it is always loaded; without ``--wopeval-suite`` it
only adds its options and imports nothing of wopeval's engine. With it, the suite file joins the
collected paths; its first task to run executes the whole suite once (every task × trial, as
``wopeval run`` does, stored in ``--wopeval-store`` or a throwaway SQLite file), and each task's
test then passes or fails with the reasons :func:`wopeval.grading.detail.run_detail` gives
(the failure kind and message of every trial that did not pass). The last test,
``wopeval gate (NAME)``, passes or fails as the gate does; it is the same verdict as
``wopeval run --gate NAME``'s exit code and the JUnit export's gate case.
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
    group.addoption(
        "--wopeval-gate",
        metavar="GATE",
        help="What decides the session's outcome: suite (RFC 0244's suite gate, the default: "
        "tasks may fail) or every-task.",
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
    from wopeval.grading.gate import DEFAULT_GATE, UnknownGate, check_gate

    gate = config.getoption("wopeval_gate") or DEFAULT_GATE
    try:
        check_gate(gate, field="--wopeval-gate")
    except UnknownGate as exc:
        raise pytest.UsageError(str(exc)) from None
    config.pluginmanager.register(_Collector(path, agent, store, gate), "wopeval-suite")


class TaskFailed(WopevalError):
    """A task of the suite did not pass; the message gives its reasons (a result, reported as
    the task's test failure, not an error of wopeval or of its input)."""


class GateFailed(TaskFailed):
    """The run did not pass its gate; the message says why (a result, as :class:`TaskFailed`)."""


class _Collector:
    """Collects the suite file; after the session, lets the gate decide its outcome.

    It reads the tests' reports, which name each test's part (a ``wopeval`` user property:
    ``task`` or ``gate``), so it decides the same way where the tests ran in other processes
    (pytest-xdist): only the session's reports reach it there."""

    def __init__(self, path: Path, agent: str, store: str | None, gate: str) -> None:
        self.path, self.agent, self.store, self.gate = path, agent, store, gate
        self.gate_passed: bool | None = None  # once the gate's test ran
        self.headline = ""  # the gate's verdict, as its test reported it
        self.tasks_failed = False
        self.others_failed = False  # any failing report but a task test's

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> Any:
        if file_path.resolve() != self.path:
            return None
        node = SuiteFile.from_parent(parent, path=file_path)
        node.collector = self
        return node

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        properties = dict(report.user_properties)
        part = properties.get(_PART)
        if report.failed:
            if part == "task":
                self.tasks_failed = True
            else:
                self.others_failed = True
        if part == "gate" and report.when == "call":
            self.gate_passed = report.passed
            self.headline = str(properties.get(_VERDICT, ""))

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """Failing task tests alone do not fail a session whose gate passed."""
        only_tasks = self.gate_passed and not self.others_failed
        if exitstatus == pytest.ExitCode.TESTS_FAILED and only_tasks:
            session.exitstatus = pytest.ExitCode.OK

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.gate_passed is None:
            return
        line = f"wopeval {self.headline}"
        if self.gate_passed and self.tasks_failed:
            line += " (failing task tests do not fail the session)"
        terminalreporter.write_line(line, green=self.gate_passed, red=not self.gate_passed)


_PART = "wopeval"  # the user property naming a test's part of the suite: task or gate
_VERDICT = "wopeval-verdict"  # the gate test's verdict line


class SuiteFile(pytest.File):
    """The suite file: one :class:`TaskItem` per task, then the :class:`GateItem`; runs the
    suite on first need."""

    collector: _Collector
    _outcome: Any = None
    bounds: Any = None  # the suite's Bounds, for a lower-bound gate (set with the outcome)

    def collect(self) -> Iterator[pytest.Item]:
        from wopeval.exports.ci import gate_case_name
        from wopeval.suite import SuiteError, load_suite

        try:
            suite = load_suite(self.path)
        except SuiteError as exc:
            raise self.CollectError("\n".join(str(e) for e in exc.errors)) from exc
        for task in suite.tasks:
            yield TaskItem.from_parent(self, name=task.taskId)
        yield GateItem.from_parent(self, name=gate_case_name(self.collector.gate))

    def outcome(self) -> Any:
        """The run's (summary, detail), computed once for all the suite's tasks."""
        if self._outcome is None:
            import anyio

            self._outcome = anyio.run(self._run)
        return self._outcome

    async def _run(self) -> Any:
        from wopeval.engine.run import RunSettings
        from wopeval.events.store import EventStore
        from wopeval.grading.detail import run_detail
        from wopeval.service.api import evaluate
        from wopeval.service.runs import fold_log, grading_options
        from wopeval.suite import parse_suite

        collector = self.collector
        url = collector.store or str(Path(tempfile.mkdtemp(prefix="wopeval-pytest-")) / "run.db")
        store = await EventStore.open(url)
        try:
            settings = RunSettings(gate=collector.gate)
            result = await evaluate(self.path, collector.agent, store=store, settings=settings)
            record = await store.get_run(result.run_id)
            assert record is not None
            suite = parse_suite(record.suite_document)
            self.bounds = result.bounds
            options = grading_options(record.run_request)
            detail = await fold_log(
                store, result.run_id, lambda log: run_detail(suite, log, options)
            )
            return result.summary, detail
        finally:
            await store.close()


class TaskItem(pytest.Item):
    """One task of the suite: passes when the task passed."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.user_properties.append((_PART, "task"))

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


class GateItem(pytest.Item):
    """The run's gate: passes when the run passed it (the session's outcome follows it)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.user_properties.append((_PART, "gate"))

    def runtest(self) -> None:
        from wopeval.grading.gate import decide

        parent = self.parent
        assert isinstance(parent, SuiteFile)
        summary, _ = parent.outcome()
        verdict = decide(summary, parent.collector.gate, parent.bounds)
        self.user_properties.append((_VERDICT, verdict.headline()))
        if not verdict.passed:
            lines = [verdict.headline()]
            lines += [f"  {f.task_id or 'suite'}: {f.why}" for f in verdict.failures]
            raise GateFailed("\n".join(lines))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, GateFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.name


__all__ = [
    "GateFailed",
    "GateItem",
    "SuiteFile",
    "TaskFailed",
    "TaskItem",
    "pytest_addoption",
    "pytest_configure",
]
