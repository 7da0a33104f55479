"""A throwaway PostgreSQL cluster a test can stop and start (``initdb``/``pg_ctl``), on its own
port, so the machine's server is never touched. Run as the ``postgres`` user when the tests run
as root (``initdb`` refuses root)."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.host.helpers import free_port


def _bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}")) or [shutil.which(name) or ""]
    if not found[-1]:
        pytest.skip(f"PostgreSQL's {name} is not installed")
    return found[-1]


@dataclass(frozen=True)
class Cluster:
    root: Path
    port: int
    database: str = "postgres"

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{self.database}"

    def _run(self, *command: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        subprocess.run([*prefix, *command], check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        options = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
                   " -c full_page_writes=off")  # fmt: skip
        self._run(_bin("pg_ctl"), "-D", str(self.root / "data"), "-l", str(self.root / "log"),
                  "-o", options, "-w", "start")  # fmt: skip

    def stop(self) -> None:
        self._run(_bin("pg_ctl"), "-D", str(self.root / "data"), "-m", "fast", "-w", "stop")

    def running(self) -> bool:
        try:
            self._run(_bin("pg_ctl"), "-D", str(self.root / "data"), "status")
        except subprocess.CalledProcessError:  # 3: no server running
            return False
        return True


@contextmanager
def throwaway_cluster() -> Iterator[Cluster]:
    """A new cluster, started; stopped and removed on leaving."""
    root = Path(tempfile.mkdtemp(prefix="wopeval-pg-"))
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
    cluster = Cluster(root, free_port())
    try:
        cluster._run(_bin("initdb"), "-D", str(root / "data"), "-A", "trust", "-U", "postgres",
                     "-E", "UTF8", "--no-sync")  # fmt: skip
        cluster.start()
        try:
            yield cluster
        finally:
            with suppress(subprocess.CalledProcessError):  # stopped already
                cluster.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
