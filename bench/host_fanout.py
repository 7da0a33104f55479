"""SSE fan-out of ``bench/host.py``: one run with ~1,500 events, N subscribers.

N SSE subscribers (``streamMode=debug``) attach as the run is created (``live``: bounded by the
run's own speed) and again after it completed (``replay``: pure delivery). Events delivered per
second = frames received by all subscribers / wall time. Every subscriber's sequence is
checked: no gap, no duplicate. Peer, same run: N long-polling clients (``/events/poll``)
replaying it, as a ratio (SSE / poll).
"""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

import anyio
import httpx

FANOUT_REF = "suite://core.bench.evals.fanout"


async def _subscribe(client: httpx.AsyncClient, path: str) -> list[int]:
    sequences: list[int] = []
    params = {"streamMode": "debug"}
    async with client.stream("GET", f"{path}/events", params=params) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                sequences.append(json.loads(line[6:])["sequence"])
    return sequences


async def _poll_replay(client: httpx.AsyncClient, path: str) -> list[int]:
    sequences: list[int] = []
    after = -1
    while True:
        params = {"afterSequence": after} if after >= 0 else {}
        response = await client.get(f"{path}/events/poll", params=params)
        response.raise_for_status()
        body = response.json()
        sequences += [e["sequence"] for e in body["events"]]
        after = body["lastSequence"]
        if body["isTerminal"] and not body["events"]:
            return sequences


async def _fan(
    client: httpx.AsyncClient, path: str, n: int, poll: bool
) -> tuple[float, list[list[int]]]:
    results: list[list[int]] = []

    async def one() -> None:
        results.append(await (_poll_replay(client, path) if poll else _subscribe(client, path)))

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(n):
            group.start_soon(one)
    return time.perf_counter() - started, results


def _check(results: list[list[int]]) -> dict[str, int]:
    gaps = duplicates = 0
    for sequences in results:
        duplicates += len(sequences) - len(set(sequences))
        gaps += sum(1 for a, b in itertools.pairwise(sequences) if b != a + 1)
        gaps += 0 if sequences and sequences[0] == 0 else 1
    return {"gaps": gaps, "duplicates": duplicates}


async def bench_fanout(
    client: httpx.AsyncClient, subscribers: int, body: dict[str, Any]
) -> dict[str, Any]:
    created = (await client.post("/runs", json=body)).json()
    path = "/runs/" + created["runId"].replace("/", "~2F")
    live_s, live = await _fan(client, path, subscribers, poll=False)
    replay_s, replay = await _fan(client, path, subscribers, poll=False)
    poll_s, polled = await _fan(client, path, subscribers, poll=True)
    events = len(replay[0])
    checks = {
        k: _check(live)[k] + _check(replay)[k] + _check(polled)[k] for k in ("gaps", "duplicates")
    }
    complete = all(len(s) == events for s in live + replay + polled)
    sse_rate = subscribers * events / replay_s
    poll_rate = subscribers * events / poll_s
    return {
        "subscribers": subscribers,
        "events_per_run": events,
        "live": {"seconds": round(live_s, 3), "events_per_s": round(subscribers * events / live_s)},
        "replay": {"seconds": round(replay_s, 3), "events_per_s": round(sse_rate)},
        "peer_poll_replay": {"seconds": round(poll_s, 3), "events_per_s": round(poll_rate)},
        "ratio_sse_vs_poll": round(sse_rate / poll_rate, 2),
        "every_subscriber_complete": complete,
        **checks,
    }
