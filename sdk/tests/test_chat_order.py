"""ChatOrder: one chat's hand-overs keep the order they began in; other chats do not wait."""

from __future__ import annotations

import asyncio

import pytest

from hermes_sdk.platform import ChatOrder, ChatRef

ONE = ChatRef("p", "1", "private")
TWO = ChatRef("p", "2", "private")


def test_a_chat_keeps_its_order_and_others_do_not_wait() -> None:
    done: list[str] = []

    async def store(name: str, seconds: float) -> None:
        await asyncio.sleep(seconds)
        done.append(name)

    async def main() -> None:
        order = ChatOrder()
        await asyncio.gather(
            order.run(ONE, lambda: store("one-first", 0.2)),
            order.run(ONE, lambda: store("one-second", 0.0)),
            order.run(TWO, lambda: store("two", 0.0)),
        )

    asyncio.run(main())
    assert done == ["two", "one-first", "one-second"]


def test_a_failed_hand_over_is_raised_to_its_caller_only() -> None:
    done: list[str] = []

    async def fail() -> None:
        raise OSError("disk full")

    async def store() -> None:
        done.append("second")

    async def main() -> None:
        order = ChatOrder()
        first = asyncio.ensure_future(order.run(ONE, fail))
        second = asyncio.ensure_future(order.run(ONE, store))
        with pytest.raises(OSError):
            await first
        await second

    asyncio.run(main())
    assert done == ["second"]
