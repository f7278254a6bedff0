"""An app's access token: fetched once however many wait, kept until its margin, fetched
again once forgotten (and not when another was fetched meanwhile)."""

from __future__ import annotations

import asyncio

from hermes_commons.app_api import CachedToken


def test_one_fetch_for_many_callers_and_again_once_forgotten() -> None:
    fetched: list[str] = []

    async def fetch() -> tuple[str, float]:
        await asyncio.sleep(0.01)
        fetched.append(f"t{len(fetched) + 1}")
        return fetched[-1], 7200.0

    async def scenario() -> None:
        tokens = CachedToken(fetch)
        assert await asyncio.gather(*(tokens.get() for _ in range(10))) == ["t1"] * 10
        tokens.forget("t0")  # an older token: the one in hand stays
        assert await tokens.get() == "t1"
        tokens.forget("t1")
        assert await tokens.get() == "t2"

    asyncio.run(scenario())
    assert fetched == ["t1", "t2"]


def test_a_short_lived_token_is_fetched_again_when_its_time_is_up() -> None:
    calls = 0

    async def fetch() -> tuple[str, float]:
        nonlocal calls
        calls += 1
        return f"t{calls}", 1.0  # less than the margin: kept the shortest time

    async def scenario() -> None:
        tokens = CachedToken(fetch, margin=300.0, shortest=0.05)
        assert await tokens.get() == "t1"
        await asyncio.sleep(0.1)
        assert await tokens.get() == "t2"

    asyncio.run(scenario())
