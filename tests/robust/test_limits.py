"""Per-tenant limits on one host (issue 14, point 3): 429 rate_limited with Retry-After."""

from __future__ import annotations

import gc

import anyio
import httpx

from tests.host.helpers import (
    KEY_A,
    KEY_B,
    SLOW_AGENT,
    SLOW_REF,
    auth,
    eval_body,
    host_config,
    running_host,
    segment,
    serving,
)


async def test_active_runs_per_tenant_are_capped(store_url: str) -> None:
    config = host_config(limits={"activeRunsPerTenant": 2})
    async with running_host(store_url, config) as host:
        before = len(await host.state.store.list_runs(tenant="acme", limit=100_000))
        slow = eval_body(SLOW_REF, agent=SLOW_AGENT)
        first = [await host.create(slow) for _ in range(2)]
        refused = await host.create(slow)
        other_tenant = await host.create(slow, key=KEY_B)
        count = len(await host.state.store.list_runs(tenant="acme", limit=100_000))
    assert [r.status_code for r in first] == [201, 201]
    assert refused.status_code == 429, refused.text
    assert refused.json()["error"] == "rate_limited"
    assert refused.json()["details"]["limit"] == "limits.activeRunsPerTenant"
    assert int(refused.headers["Retry-After"]) >= 1
    assert other_tenant.status_code == 201
    assert count == before + 2  # the refused one was never recorded


async def test_a_run_that_ends_frees_its_tenants_slot(store_url: str) -> None:
    config = host_config(limits={"activeRunsPerTenant": 1})
    slow = eval_body(SLOW_REF, agent=SLOW_AGENT)
    async with running_host(store_url, config) as host:
        manager = host.state.manager
        done = await host.run_id()  # the plainest: one scripted run to its end
        await manager.wait(done, 30)
        after_done = manager.active_of("acme")
        held = await host.run_id(slow)
        refused = await host.create(slow)
        other_tenant = await host.create(slow, key=KEY_B)
        counts = (manager.active_of("acme"), manager.active_of("other"))
        cancel = await host.client.post(f"/runs/{segment(held)}/cancel", headers=auth(), json={})
        await manager.wait(held, 30)
        freed = await host.create(slow)
    assert after_done == 0
    assert refused.status_code == 429
    assert other_tenant.status_code == 201
    assert counts == (1, 1)
    assert cancel.status_code == 200
    assert freed.status_code == 201, freed.text


async def test_open_streams_per_tenant_are_capped_and_freed(store_url: str) -> None:
    config = host_config(limits={"streamsPerTenant": 2})
    with serving(store_url, config) as server:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
            body = eval_body(SLOW_REF, agent=SLOW_AGENT)
            created = await client.post("/runs", json=body, headers=auth())
            path = f"/runs/{segment(created.json()['runId'])}/events"
            async with (
                client.stream("GET", path, headers=auth()) as one,
                client.stream("GET", path, headers=auth()) as two,
            ):
                assert (one.status_code, two.status_code) == (200, 200)
                third = await client.get(path, headers=auth())
                other = await client.get(path, headers=auth(KEY_B))  # another tenant's run
            assert third.status_code == 429, third.text
            assert third.json()["details"]["limit"] == "limits.streamsPerTenant"
            assert other.status_code == 404
            with anyio.fail_after(10):  # both closed: the slots are free again
                while True:
                    gc.collect()
                    async with client.stream("GET", path, headers=auth(KEY_A)) as again:
                        if again.status_code == 200:
                            break
                    await anyio.sleep(0.05)
