"""The PostgreSQL test helper honours ``WOPEVAL_TEST_POSTGRES_URL`` (see ``tests/conftest.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PG_ENV, pg_url

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("server", "database", "url"),
    [
        ("postgresql://postgres@127.0.0.1:5432", None, "postgresql://postgres@127.0.0.1:5432/postgres"),
        ("postgresql://postgres@127.0.0.1:5432/", "w1", "postgresql://postgres@127.0.0.1:5432/w1"),
        ("postgresql://u:p@db:6543/test", None, "postgresql://u:p@db:6543/test"),
        ("postgresql://u:p@db:6543/test", "w1", "postgresql://u:p@db:6543/w1"),
        ("postgresql://u@db/test?sslmode=require", "w1", "postgresql://u@db/w1?sslmode=require"),
    ],
)  # fmt: skip
def test_pg_url_puts_the_database_in_the_server_url(
    server: str, database: str | None, url: str
) -> None:
    assert pg_url(database, server=server) == url


def test_postgres_tests_use_the_server_the_variable_names() -> None:
    """Pointed at a server where nothing listens, a PostgreSQL test fails and names it."""
    probe = "tests/events/test_store_runs.py"
    env_url = "postgresql://nobody@127.0.0.1:1"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-n", "0", "-m", "postgres",
         "-p", "no:cacheprovider", probe],
        cwd=ROOT,
        env={**os.environ, PG_ENV: env_url},
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert result.returncode == 1, result.stdout[-2000:]
    assert f"PostgreSQL at {env_url} is unreachable" in result.stdout
