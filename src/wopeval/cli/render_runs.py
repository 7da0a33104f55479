"""``wopeval runs``'s lines: one per stored run, from its record alone.

Apart from :mod:`wopeval.cli.render` so that listing runs imports no table renderer and none of
a run's detail (rich, the folded detail, the intervals' tables)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from wopeval.cli.gate_opts import run_passed

if TYPE_CHECKING:
    from wopeval.events.records import RunRecord


def runs_lines(runs: Sequence[RunRecord], width: int = 80) -> list[str]:
    """One line per run, run id first and whole (it is what users copy); no table to squeeze.
    The agent (a model's run is named by the model) and the suite (and a shard's or merged
    run's group) end the line, or, when the line would be wider than ``width``, go on the next
    one, indented (each on its own when both do not fit)."""
    widest = max((len(run.run_id) for run in runs), default=3)
    agents = max((len(run.agent_id) for run in runs), default=5)
    header = f"{'run':<{widest}}  result  score  {'status':<10} created"
    tail_header = f"{'':11}{'agent':<{max(agents, 5)}}  suite"
    lines = [header + tail_header if len(header) + len(tail_header) <= width else header]
    for run in runs:
        summary = run.summary or {}
        passed = run_passed(run)
        result = "-" if passed is None else ("pass" if passed else "FAIL")
        score = f"{summary['aggregateScore']:.3f}" if "aggregateScore" in summary else "-"
        created = run.created_at.replace("T", " ")[:16]
        head = f"{run.run_id:<{widest}}  {result:<6}  {score:>5}  {run.status:<10} {created}"
        agent = f"{run.agent_id:<{max(agents, 5)}}"
        suite = f"{run.suite_id}@{run.suite_version}{_group_of(run)}"
        if len(head) + 2 + len(agent) + 2 + len(suite) <= width:
            lines.append(f"{head}  {agent}  {suite}")
        elif 2 + len(agent) + 2 + len(suite) <= width:
            lines += [head, f"  {agent}  {suite}"]
        else:
            lines += [head, f"  {agent.rstrip()}", f"  {suite}"]
    return lines


def _group_of(run: RunRecord) -> str:
    """`` shard i/N of G`` or `` merged G`` (from the stored request), else nothing."""
    request = run.request if isinstance(run.request, dict) else {}
    shard, merged = request.get("shard"), request.get("merged")
    if isinstance(shard, dict):
        return f"  shard {shard.get('index')}/{shard.get('count')} of {shard.get('group')}"
    if isinstance(merged, dict):
        return f"  merged {merged.get('group')}"
    return ""


__all__ = ["runs_lines"]
