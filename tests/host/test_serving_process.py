"""What ``wopeval serve`` does to its own process (``cli.startup.favour_the_loop``), checked in
a child process so that this one is left alone."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

from tests.host.helpers import running_host
from wopeval.cli.startup import AGENT_SWITCH_INTERVAL_S

PROBE = """
import gc, json, sys
from wopeval.cli.startup import favour_the_loop
before = {"interval": sys.getswitchinterval(), "frozen": gc.get_freeze_count()}
favour_the_loop()
after = {"interval": sys.getswitchinterval(), "frozen": gc.get_freeze_count()}
sys.setswitchinterval(0.0001)
favour_the_loop()
print(json.dumps({"before": before, "after": after, "shorter": sys.getswitchinterval()}))
"""


def test_serving_shortens_the_switch_interval_and_freezes_what_start_up_made() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=60
    )
    seen = json.loads(done.stdout)
    assert seen["before"] == {"interval": 0.005, "frozen": 0}
    # the interpreter keeps whole microseconds
    assert round(seen["after"]["interval"], 6) == AGENT_SWITCH_INTERVAL_S < 0.005
    assert seen["after"]["frozen"] > 1000  # wopeval's modules, out of every full collection
    assert seen["shorter"] < 0.00011  # a shorter interval already set is kept


async def test_the_embedded_host_app_leaves_its_process_alone(tmp_path: Path) -> None:
    """An app built by ``create_app`` and serving a run (an embedder's process, not ``wopeval
    serve``) keeps the caller's switch interval and collector: the tuning is the CLI's."""
    interval, threshold, frozen = sys.getswitchinterval(), gc.get_threshold(), gc.get_freeze_count()
    async with running_host(f"sqlite:///{tmp_path / 'host.db'}") as host:
        run_id = await host.run_id()
        assert (await host.wait_terminal(run_id))["isTerminal"]
        during = sys.getswitchinterval(), gc.get_threshold(), gc.get_freeze_count()
    after = sys.getswitchinterval(), gc.get_threshold(), gc.get_freeze_count()
    assert during == after == (interval, threshold, frozen)
