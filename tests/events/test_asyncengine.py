"""Issue 13 §3: the store's asyncio engine comes without ``sqlalchemy.orm``; the package it
lives in is still whole for anyone who asks it for more (``wopeval.events.asyncengine``)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap


def _in_a_fresh_process(code: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_the_store_opens_without_importing_the_orm(tmp_path: object) -> None:
    seen = _in_a_fresh_process(f"""
        import json, sys, anyio
        from wopeval.events.store import EventStore

        async def main():
            store = await EventStore.open({str(tmp_path)!r} + "/s.db")
            await store.close()

        anyio.run(main)
        print(json.dumps({{"orm": "sqlalchemy.orm" in sys.modules}}))
    """)
    assert seen == {"orm": False}


def test_the_package_is_whole_when_asked_for_more() -> None:
    seen = _in_a_fresh_process("""
        import json, sys
        from wopeval.events.asyncengine import create_async_engine

        engine = create_async_engine("sqlite+aiosqlite://")
        before = "sqlalchemy.orm" in sys.modules
        from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
        import sqlalchemy.ext
        import sqlalchemy.ext.asyncio as package
        print(json.dumps({
            "before": before,
            "engine": isinstance(engine, AsyncEngine),
            "session": AsyncSession.__module__,
            "bound": sqlalchemy.ext.asyncio is package,
            "maker": callable(async_sessionmaker),
        }))
    """)
    assert seen == {
        "before": False,
        "engine": True,
        "session": "sqlalchemy.ext.asyncio.session",
        "bound": True,
        "maker": True,
    }


def test_an_earlier_full_import_is_used_as_it_is() -> None:
    seen = _in_a_fresh_process("""
        import json
        import sqlalchemy.ext.asyncio as package
        from wopeval.events.asyncengine import create_async_engine

        engine = create_async_engine("sqlite+aiosqlite://")
        print(json.dumps({"engine": isinstance(engine, package.AsyncEngine),
                          "session": hasattr(package, "AsyncSession")}))
    """)
    assert seen == {"engine": True, "session": True}
