"""Shared fixtures: an event store on each backend (SQLite file, the machine's PostgreSQL).

PostgreSQL tests use a fresh database created for the test session on the server named by
``WOPEVAL_TEST_POSTGRES_URL`` (default ``postgresql://postgres@127.0.0.1:5432``) and dropped
afterwards. The URL's database, if it names one, is where ``CREATE DATABASE`` runs (default
``postgres``); the role needs CREATEDB. The tests are never skipped: an unreachable server fails
them loudly. Test databases commit without waiting for the WAL flush (:func:`pg_create`).
"""

from __future__ import annotations

import asyncio
import compileall
import functools
import gc
import itertools
import os
import re
import secrets
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from hypothesis import settings

if TYPE_CHECKING:
    from wopeval.events.store import EventStore

# The test processes keep what they compile: pytest's rewritten test modules and the helpers
# they import are cached in __pycache__ (git ignores it), where this machine's
# ``PYTHONDONTWRITEBYTECODE`` would have each xdist worker of each run parse, rewrite and compile
# all of tests/ again (a third of a worker's collection CPU). The test processes only: the
# ``python -m wopeval`` children keep the environment's setting.
sys.dont_write_bytecode = False

# Timing-independent property tests: a loaded CI machine must not turn slowness into failures.
# The full run keeps hypothesis's default of 100 examples a test; the inner loop (``-m "not
# slow"``, see pytest_configure) runs a quarter, and tests that set their own count scale it
# by the same factor (tests/hypothesis_counts.py).
settings.register_profile("wopeval", deadline=None, print_blob=True)
settings.register_profile("wopeval-inner-loop", settings.get_profile("wopeval"), max_examples=25)
settings.load_profile("wopeval")

EEE_TEST = Path(__file__).resolve().parent / "exports" / "test_eee.py"
TESTS = Path(__file__).resolve().parent
SRC = TESTS.parent / "src" / "wopeval"
# Modules pytest imports through its own rewriting cache, not the interpreter's.
REWRITTEN = re.compile(r"(^|/)(test_[^/]*|conftest)\.py$")
EEE_BUILD = pytest.StashKey[subprocess.Popen[bytes]]()


def _selects_eee_test(config: pytest.Config) -> bool:
    """Whether the command line names the EEE test's file or a folder above it."""
    base = config.invocation_params.dir
    for arg in config.args:
        path = (base / arg.split("::")[0]).resolve()
        if path == EEE_TEST or path in EEE_TEST.parents:
            return True
    return False


def pytest_configure(config: pytest.Config) -> None:
    """In the controller, as the session begins: byte-compile wopeval's source, as installing a
    package does (this machine sets ``PYTHONDONTWRITEBYTECODE``, so otherwise each of the
    suite's ``python -m wopeval`` processes compiles every module it imports: about 0.25 s of
    its 1.4 s start-up here) and the tests' helper modules (the workers and those processes
    import them: compiled once here rather than in each worker); and start making the EEE
    validator's venv (a minute) in the background, so the test that needs it
    (tests/exports/test_eee.py) waits least. In every process, the controller and each worker,
    before any test module is imported: the inner loop's hypothesis profile when the mark
    expression leaves out the slow tests and no ``--hypothesis-profile`` is given."""
    if _leaves_out_slow(config.getoption("markexpr")) and not config.getoption(
        "hypothesis_profile", None
    ):
        settings.load_profile("wopeval-inner-loop")
    if hasattr(config, "workerinput") or config.option.collectonly:
        return
    compileall.compile_dir(str(SRC), quiet=1)
    compileall.compile_dir(str(TESTS), quiet=1, rx=REWRITTEN)
    if not _selects_eee_test(config):
        return
    from tests.exports import eee_venv

    if (child := eee_venv.start_background()) is not None:
        config.stash[EEE_BUILD] = child


def pytest_unconfigure(config: pytest.Config) -> None:
    if (child := config.stash.get(EEE_BUILD, None)) is not None:
        from tests.exports import eee_venv

        eee_venv.stop_background(child)


# The order in which xdist hands the files out (``--dist loadfile --no-loadscope-reorder`` gives
# them in collection order, one file at a time to the worker that runs out of work): the
# longest-running first (wall time, measured: processes, sleeps and timeouts waited on in real
# time), so the workers finish together; the EEE test last, by when the venv that the session
# makes in the background is ready. Order only: every test runs, and a file not listed keeps its
# place between the two lists. A stale list only costs balance.
SLOW_FIRST = (
    # the longest files of the last full run (5 Dec 2026, load 1-3: each over 7 s of its tests'
    # time), longest first, so that no long file starts last on a worker
    "tests/bench/test_host_bench_shape.py",
    "tests/robust/test_processes.py",
    "tests/outage/test_outage_exits.py",
    "tests/engine/test_distributed.py",
    "tests/engine/test_ray_batches.py",  # with the file above: they share a Ray cluster
    "tests/service/test_resume_crash.py",
    "tests/host/test_agent_isolation.py",
    "tests/test_readme.py",
    "tests/service/test_shard_crash.py",
    "tests/cli/test_gate_agreement.py",
    "tests/outage/test_outage_labels.py",
    "tests/viewer/test_viewer_pages.py",
    "tests/viewer/test_viewer_layout.py",
    "tests/viewer/test_plan_page.py",
    "tests/cli/test_pytest_plugin.py",
    "tests/conformance/test_kit_core_against_serve.py",
    "tests/suite/test_json_schemas.py",
    "tests/host/test_store_restart.py",
    "tests/host/test_create_refusals.py",
    "tests/service/test_shards.py",
    "tests/host/test_workflows.py",
)
LAST = ("tests/exports/test_eee.py",)


# The ``slow`` mark (``pytest -m "not slow"``, the inner loop): every PostgreSQL test, and these
# files' tests, which start processes, servers, Ray or a browser, or wait in real time. The
# SQLite twin of each store test stays in the fast run.
SLOW_FILES = frozenset(
    {
        *SLOW_FIRST,
        *LAST,
        # once among the longest files, every test slow
        "tests/conformance/test_kit_core.py",
        "tests/conformance/test_kit_against_serve.py",
        "tests/service/test_run_service.py",
        "tests/robust/test_run_end.py",
        "tests/host/test_serve_cmd.py",
        "tests/agents/test_cmd_agent.py",
        "tests/grading/test_trajectory_fast_path.py",
        "tests/agents/test_openai_compat.py",
        # loopback model servers and whole hosts: the fast loop stays under a minute
        "tests/agents/test_run_clients.py",
        "tests/host/test_strict_body.py",
        "tests/robust/test_notify.py",
        "tests/cli/test_fork_cassette.py",
        "tests/host/test_conformance_findings.py",
        "tests/agents/test_judge_llm.py",
        "tests/engine/test_commit_structure.py",
        "tests/host/test_resume_restart.py",
        "tests/agents/test_openai_conversation.py",
        "tests/host/test_lifecycle.py",
        "tests/cli/test_ci_cmd.py",
        "tests/agents/test_adapter_cost.py",
        "tests/host/test_workflow_create.py",
        "tests/host/test_events.py",
        "tests/host/test_runs.py",
        "tests/bench/test_flat_memory_shape.py",
        "tests/bench/test_llm_workload_shape.py",
        "tests/bench/test_scale_shape.py",
        "tests/cli/test_agent_import.py",
        "tests/cli/test_agent_output.py",
        "tests/cli/test_ci_action.py",
        "tests/cli/test_cli_errors.py",
        "tests/cli/test_world_grade.py",
        "tests/cli/test_exiting.py",
        "tests/cli/test_grade_bytes.py",
        "tests/cli/test_user_cli.py",
        "tests/cli/test_failure_output.py",
        "tests/cli/test_import_progress.py",
        "tests/cli/test_lazy.py",
        "tests/cli/test_narrow_output.py",
        "tests/cli/test_plan_cmd.py",
        "tests/viewer/test_plan_page.py",
        "tests/cli/test_read_imports.py",
        "tests/cli/test_resume_claims.py",
        "tests/cli/test_run_imports.py",
        "tests/cli/test_serve_cli.py",
        "tests/cli/test_serve_socket_and_imports.py",
        "tests/cli/test_shard_retry.py",
        "tests/conformance/test_independence.py",
        "tests/engine/test_agent_process.py",
        "tests/engine/test_mcp_tools.py",
        "tests/events/test_crash.py",
        "tests/events/test_run_claims.py",
        "tests/exports/test_html_report.py",
        "tests/exports/test_promote_cassette.py",
        "tests/host/test_discovery.py",
        "tests/host/test_event_cursors.py",
        "tests/host/test_fixture_runs.py",
        "tests/host/test_serving_process.py",
        "tests/host/test_interop.py",
        "tests/host/test_tenancy.py",
        "tests/host/test_workflows.py",
        "tests/robust/test_suite_bounds.py",
        "tests/test_errors.py",
        "tests/test_layering.py",
        "tests/test_pg_helper.py",
        "tests/test_public_api.py",
        "tests/viewer/test_report_page.py",
        "tests/viewer/test_view_command.py",
        "tests/robust/test_openapi_fuzz.py",
        "tests/cli/test_resume_terminal.py",
        "tests/cli/test_resume_cmd.py",
        "tests/agents/test_cassettes.py",
        "tests/agents/test_cassette_adapters.py",
        "tests/agents/test_cli_agents.py",
        "tests/agents/test_toolspec.py",
        "tests/robust/test_limits.py",
        "tests/events/test_tables.py",
        "tests/outage/test_outage_exits.py",
        "tests/cli/test_gate_agreement.py",
        "tests/viewer/test_viewer_layout.py",
        "tests/viewer/test_pareto_page.py",
        "tests/viewer/test_fork_page.py",
        "tests/viewer/test_viewer_signout.py",
        "tests/cli/test_reason_outputs.py",
        "tests/compare/test_readme_gate.py",
        "tests/agents/test_judge_cli.py",
        "tests/engine/test_mcp_docs.py",
        "tests/agents/test_cmd_agent_processes.py",
        "tests/agents/test_cmd_usage.py",
        "tests/cli/test_init_cmd.py",
        "tests/host/test_signin.py",
        "tests/cli/test_full_disk.py",
        "tests/host/test_agent_isolation.py",
        "tests/host/test_store_restart.py",
        "tests/cli/test_merge_cmd.py",
        "tests/conformance/test_kit_extended.py",
        "tests/exports/test_otlp_thirdparty.py",
        "tests/outage/test_outage_labels.py",
        "tests/outage/test_outage_retries.py",
    }
)
# Single tests that take seconds (real servers, large generated inputs) or start processes: by
# node id prefix.
SLOW_TESTS = (
    "tests/engine/test_world_trials.py::test_0244_B_33_3_200_concurrent_trials_never_see_each",
    "tests/cli/test_ci_cmd.py::test_ci_an_outage_exits_3_and_says_so_in_the_report",
    "tests/cli/test_run_cmds.py::test_run_with_mcp_live_tools_from_a_real_server",
    "tests/grading/test_trajectory_index.py::test_0244_A_subset_edges_are_exactly_the_matching",
    "tests/service/test_otlp_plan.py::test_the_plan_finds_the_trials_holding_every_span",
    "tests/grading/test_fold.py::test_grading_a_long_log_holds_only_the_open_trials",
    "tests/grading/test_live.py::test_the_generated_logs_give_live_summaries",
    "tests/suite/test_suite_boundaries.py::test_yaml_aliases_expand_to_at_most_max_nodes",
    "tests/exports/test_otlp_forbidden_property.py::",
    "tests/host/test_events.py::test_poll_long_polls_a_running_run",
    # processes: an MCP server (mcp_server_demo.py), an agent command
    "tests/exports/test_record.py::test_0244_D_record_then_replay_makes_zero_live_calls",
    "tests/agents/test_cmd_agent_stderr.py::",
)


def _marked(marks: frozenset[str], name: str, /, **kwargs: str | int | bool | None) -> bool:
    return name in marks


@functools.cache
def _leaves_out_slow(markexpr: str) -> bool:
    """Whether the ``-m`` expression is false for every test marked ``slow``, whatever its other
    marks: false with ``slow`` true and each other name the expression uses true or false."""
    if not markexpr:
        return False
    from _pytest.mark.expression import Expression

    names = sorted(set(re.findall(r"[\w.:-]+", markexpr)) - {"and", "or", "not", "slow"})
    if len(names) > 8:
        return False
    expression = Expression.compile(markexpr)
    for values in itertools.product((False, True), repeat=len(names)):
        marks = {"slow", *(name for name, value in zip(names, values, strict=True) if value)}
        if expression.evaluate(functools.partial(_marked, frozenset(marks))):
            return False
    return True


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under ``-m "not slow"`` (the inner loop), the files whose every test is ``slow`` are not
    imported at all: they would only be deselected, and importing them (servers, browsers,
    model SDKs) is much of each xdist worker's collection."""
    try:
        path = collection_path.relative_to(config.rootpath).as_posix()
    except ValueError:
        return None
    if path in SLOW_FILES and _leaves_out_slow(config.getoption("markexpr")):
        return True
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files in the order above (a stable sort: tests keep their order within a file); the
    ``slow`` mark on what the inner loop leaves out."""
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        slow = path in SLOW_FILES or item.nodeid.startswith(SLOW_TESTS)
        if slow or item.get_closest_marker("postgres"):
            item.add_marker(pytest.mark.slow)

    def rank(item: pytest.Item) -> int:
        path = item.nodeid.split("::", 1)[0]
        if path in SLOW_FIRST:
            return SLOW_FIRST.index(path)
        return len(SLOW_FIRST) + 1 + LAST.index(path) if path in LAST else len(SLOW_FIRST)

    items.sort(key=rank)


# Files that go to one xdist worker as one unit (file → the file whose unit it joins; the tests
# keep the collection order): they share a costly package-scoped fixture (the Ray cluster of
# tests/engine/conftest.py), which is made once that way.
SAME_WORKER = {"tests/engine/test_ray_batches.py": "tests/engine/test_distributed.py"}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile``, with the files of :data:`SAME_WORKER` as one unit; other modes as
    xdist makes them."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling  # type: ignore[import-untyped]

    class Scheduling(LoadFileScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            path = str(super()._split_scope(nodeid))
            return SAME_WORKER.get(path, path)

    return Scheduling(config, log)


PG_ENV = "WOPEVAL_TEST_POSTGRES_URL"
# The pytest-xdist worker ("gw0", "gw1", ...), in every database name a test creates.
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")
PG_SERVER = os.environ.get(PG_ENV) or "postgresql://postgres@127.0.0.1:5432"


def pg_url(database: str | None = None, server: str = PG_SERVER) -> str:
    """``server`` with its database replaced by ``database``; with none, the admin database
    (the one ``server`` names, else ``postgres``). Credentials, host and query are kept."""
    parts = urlsplit(server)
    if database is None:
        database = parts.path.strip("/") or "postgres"
    return urlunsplit(parts._replace(path=f"/{database}"))


async def pg_admin(*statements: str) -> None:
    """Run statements, one by one, on the server's admin database; unreachable fails loudly."""
    import asyncpg

    try:
        conn = await asyncpg.connect(pg_url())
    except (OSError, asyncpg.PostgresError) as exc:
        pytest.fail(
            f"PostgreSQL at {PG_SERVER} is unreachable ({exc}); these tests need it "
            f"(set {PG_ENV} to another server)"
        )
    try:
        for sql in statements:
            await conn.execute(sql)
    finally:
        await conn.close()


async def pg_create(name: str) -> None:
    """A new database, its connections committing without waiting for the WAL flush
    (``synchronous_commit = off``): ~1.5 ms a commit instead of 6-12 ms on this machine's disk.
    What a connection sees is unchanged (each commit is visible to every other connection at
    once, in the same order, and ``NOTIFY`` is sent at commit); only a crash of the PostgreSQL
    server itself could lose the last commits, which no test does (crash tests kill clients)."""
    await pg_admin(
        f'CREATE DATABASE "{name}"', f'ALTER DATABASE "{name}" SET synchronous_commit = off'
    )


@pytest.fixture
def own_heap() -> Iterator[None]:
    """For a test that checks, with ``gc.collect()``, that what it made is freed (or that
    nothing it made leaks): the objects that exist as it starts are frozen (``gc.freeze``)
    until it ends, so a collection walks the test's own objects only, not the whole heap of a
    worker that imported the suite (a second or more). A frozen object is treated as alive:
    it existed before the test, so nothing the test made is kept or freed differently."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@pytest.fixture(scope="session")
def pg_database() -> Iterator[str]:
    """A throwaway PostgreSQL database for this test session; yields its URL."""
    name = f"wopeval_test_{WORKER}_{secrets.token_hex(4)}"
    asyncio.run(pg_create(name))
    try:
        yield pg_url(name)
    finally:
        asyncio.run(pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store URL on each backend: a fresh SQLite file, or the session's PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    url: str = request.getfixturevalue("pg_database")
    return url


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def module_store_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> str:
    """:func:`store_url` for a module's shared setup (a host, runs that many tests read): a
    SQLite file of the module's own, or the session's PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path_factory.mktemp("store") / "store.db")
    url: str = request.getfixturevalue("pg_database")
    return url


@pytest.fixture
async def store(store_url: str) -> AsyncIterator[EventStore]:
    from wopeval.events.store import EventStore

    opened = await EventStore.open(store_url)
    try:
        yield opened
    finally:
        await opened.close()
