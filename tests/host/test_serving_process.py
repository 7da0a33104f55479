"""What ``wopeval serve`` does to its own process (``host.manager.favour_the_loop``), checked in
a child process so that this one is left alone."""

from __future__ import annotations

import json
import subprocess
import sys

from wopeval.host.manager import AGENT_SWITCH_INTERVAL_S

PROBE = """
import gc, json, sys
from wopeval.host.manager import favour_the_loop
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
