"""``--agent-cmd``: a failed command's reason keeps the end of its stderr, where the exception
is (a Python traceback ends with it), however long the stderr is."""

from __future__ import annotations

import shlex
import sys

from tests.agents.helpers import AgentRan
from tests.engine.helpers import make_suite, run_suite
from wopeval.engine.cmd_agent import CommandAgent
from wopeval.engine.registry import Registry
from wopeval.events.store import EventStore

AGENT_ID = "core.test.agents.cmd-stderr"
LAST = "agents.exceptions.ModelBehaviorError: Tool definitely_not_a_tool not found in agent"
SCRIPT = (
    "import sys; "
    "sys.stderr.write(''.join(f'  File \"agent.py\", line {n}, in step\\n' for n in range(200))); "
    f"sys.stderr.write({LAST!r} + '\\n'); sys.exit(1)"
)


async def test_a_failed_commands_reason_ends_with_its_stderrs_last_line(
    store: EventStore,
) -> None:
    registry = Registry()
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(SCRIPT)}"
    registry.register_agent(AGENT_ID, CommandAgent(command))
    expected = {"kind": "golden", "match": {"strategy": "exact", "value": "x"}}
    task = {"taskId": "cmd", "input": {}, "expected": expected}
    ran = await run_suite(store, make_suite([task]), agent_id=AGENT_ID, registry=registry)
    (reason,) = AgentRan(ran.run_id, ran.summary, ran.events).reasons()
    assert reason["kind"] == "agent-error"
    assert reason["message"].startswith("agent-error: CommandFailed: the agent command exited")
    assert reason["message"].endswith(LAST)
    assert reason["details"]["message"].endswith(LAST)
