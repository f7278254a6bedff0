"""Holding a named lease from an event loop: told when it is won and lost, given up when the
holder stops, and taken over by a second holder only then."""

from __future__ import annotations

import asyncio
from pathlib import Path

from hermes_sdk.leases import LEASES, Leases, hold, holder_is_dead, new_holder
from hermes_sdk.storage import open_store


def test_a_holder_is_told_and_the_lease_moves_when_it_stops(tmp_path: Path) -> None:
    async def scenario() -> list[tuple[str, bool]]:
        changes: list[tuple[str, bool]] = []
        with open_store(tmp_path, LEASES) as store:
            leases = Leases(store)

            def noted(who: str):  # type: ignore[no-untyped-def]
                async def change(leading: bool) -> None:
                    changes.append((who, leading))

                return change

            first = asyncio.ensure_future(hold(leases, "x", "h:1:a", 0.3, noted("first")))
            await asyncio.sleep(0.05)
            second = asyncio.ensure_future(hold(leases, "x", "h:2:b", 0.3, noted("second")))
            await asyncio.sleep(0.35)  # the first renews: the second keeps waiting
            assert leases.holder("x") == "h:1:a"
            first.cancel()
            await asyncio.gather(first, return_exceptions=True)
            await asyncio.sleep(0.25)  # released: the second takes it at its next try
            assert leases.holder("x") == "h:2:b"
            second.cancel()
            await asyncio.gather(second, return_exceptions=True)
            assert leases.holder("x") is None
        return changes

    assert asyncio.run(scenario()) == [("first", True), ("second", False), ("second", True)]


def test_a_holder_of_this_host_that_is_gone_is_dead() -> None:
    mine = new_holder()
    assert not holder_is_dead(mine)
    host = mine.split(":")[0]
    assert holder_is_dead(f"{host}:999999999:x")
    assert not holder_is_dead("another-host:1:x")  # only expiry can tell
    assert not holder_is_dead("garbage")
