"""The local Ray cluster of the Ray executor's tests (test_distributed.py, test_ray_batches.py).

Starting one takes seconds of CPU, so the two files share it: it is package-scoped, and
``tests/conftest.py`` sends both files to the same xdist worker, one after the other.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="package")
def ray_cluster() -> Iterator[None]:
    """A 2-CPU local cluster; its workers import the tests' helpers by reference, so they get
    the repository on their path wherever pytest was started from. Ray is imported here, not
    at the top: every xdist worker loads this conftest to collect, one of them uses Ray."""
    import ray

    ray.init(
        num_cpus=2,
        include_dashboard=False,
        runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}},
    )
    yield
    ray.shutdown()
