"""Holding a named lease from an event loop: told when it is won and lost, given up when the
holder stops, and taken over by a second holder only then."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

from hermes_commons.leases import LEASES, Leases, hold, holder_is_dead, new_holder
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

            # A lease of 2 s renewed every 0.5 s: a slow machine does not make it lapse.
            first = asyncio.ensure_future(hold(leases, "x", "h:1:a", 2.0, noted("first")))
            await _until(lambda: leases.holder("x") == "h:1:a")
            second = asyncio.ensure_future(hold(leases, "x", "h:2:b", 2.0, noted("second")))
            await asyncio.sleep(1.2)  # the first renews twice: the second keeps waiting
            assert leases.holder("x") == "h:1:a"
            first.cancel()
            await asyncio.gather(first, return_exceptions=True)
            # Released: the second takes it at its next try, long before the 2 s expiry.
            await _until(lambda: leases.holder("x") == "h:2:b")
            second.cancel()
            await asyncio.gather(second, return_exceptions=True)
            assert leases.holder("x") is None
        return changes

    assert asyncio.run(scenario()) == [("first", True), ("second", False), ("second", True)]


async def _until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "not within the time allowed"
        await asyncio.sleep(0.02)


def test_a_holder_of_this_host_that_is_gone_is_dead() -> None:
    mine = new_holder()
    assert not holder_is_dead(mine)
    host = mine.split(":")[0]
    assert holder_is_dead(f"{host}:999999999:x")
    assert not holder_is_dead("another-host:1:x")  # only expiry can tell
    assert not holder_is_dead("garbage")


def test_a_groups_members_are_its_own_whatever_its_name_holds(tmp_path: Path) -> None:
    # LIKE would take _ and % as wildcards: "a_b/..." must not match "axb/...".
    from hermes_commons.leases import Members, member_sql

    with open_store(tmp_path, LEASES) as store:
        for group, holder in [("a_b", "h:1:a"), ("axb", "h:2:b"), ("a%", "h:3:c")]:
            with store.write() as cursor:
                Members(group, holder, 30.0).beat_in(cursor)
        for group, expected in [("a_b", ["h:1:a"]), ("axb", ["h:2:b"]), ("a%", ["h:3:c"])]:
            sql, pattern = member_sql(group)
            assert [row[0] for row in store.query(sql, (pattern,))] == expected, group
        with store.write() as cursor:
            beat = Members("a_b", "h:4:d", 30.0).beat_in(cursor)
        assert beat.peers == 1  # h:1:a only, not the members of axb
