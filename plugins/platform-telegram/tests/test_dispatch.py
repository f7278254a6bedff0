"""A batch of updates from getUpdates: chats are handed to the gateway at once, each chat's
updates one after the other, and a batch still being stored holds up neither newer messages
nor anything but its own confirmation."""

from __future__ import annotations

import asyncio
import contextlib

from hermes_plugin_platform_telegram.adapter import TelegramAdapter
from hermes_plugin_platform_telegram.testing.telegram_server import DEFAULT_TOKEN, FakeTelegram
from hermes_plugin_platform_telegram.updates import Bot

from hermes_sdk.platform import PlatformContext


def update(update_id: int, chat_id: int, text: str) -> dict:
    return {
        "update_id": update_id,
        "message": {
            "message_id": update_id,
            "from": {"id": chat_id, "is_bot": False, "username": f"user{chat_id}"},
            "chat": {"id": chat_id, "type": "private"},
            "text": text,
        },
    }


class SlowHost:
    """Chat 1's first message is held until chat 2's message has arrived: that can only
    happen if chats are dispatched concurrently."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.chat_two_arrived = asyncio.Event()

    async def receive(self, message) -> None:
        self.log.append(f"start {message.text}")
        if message.text == "do this":
            await asyncio.wait_for(self.chat_two_arrived.wait(), timeout=5)
        if message.chat.chat_id == "2":
            self.chat_two_arrived.set()
        self.log.append(f"end {message.text}")

    async def pressed(self, press) -> str:
        return ""


def test_chats_go_at_once_and_one_chats_updates_keep_their_order():
    adapter = TelegramAdapter(
        PlatformContext(
            name="telegram",
            home=".",
            config={},
            secrets={"TELEGRAM_BOT_TOKEN": "1:not-the-token"},
        )
    )
    adapter.bot = Bot(99, "hermes_bot")
    batch = [update(1, 1, "do this"), update(2, 1, "/stop"), update(3, 2, "hello")]

    async def main() -> list[str]:
        host = SlowHost()
        try:
            await adapter._hand_over(host, batch)
        finally:
            await adapter.aclose()
        return host.log

    log = asyncio.run(main())
    assert log.index("start hello") < log.index("end do this")  # chat 2 did not wait
    assert log.index("end do this") < log.index("start /stop")  # chat 1 stayed in order


class HeldHost:
    """Holds the message "slow" until released, as a gateway whose disk stalls would."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.stored: list[str] = []
        self.release = asyncio.Event()

    async def receive(self, message) -> None:
        self.started.append(message.text)
        if message.text == "slow":
            await asyncio.wait_for(self.release.wait(), timeout=10)
        self.stored.append(message.text)

    async def pressed(self, press) -> str:
        return ""


async def until(condition, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


def test_newer_messages_are_fetched_while_a_batch_is_stored_and_confirmed_only_after():
    with FakeTelegram() as telegram:
        adapter = TelegramAdapter(
            PlatformContext(
                name="telegram",
                home=".",
                config={"api_url": telegram.api_url, "poll_timeout_seconds": 1},
                secrets={"TELEGRAM_BOT_TOKEN": DEFAULT_TOKEN},
            )
        )
        host = HeldHost()

        async def main() -> None:
            polling = asyncio.ensure_future(adapter.run(host))
            try:
                telegram.user_says(1, "slow")
                await until(lambda: host.started == ["slow"])
                held_at = telegram.confirmed_offset
                telegram.user_says(2, "fast")
                await until(lambda: host.stored == ["fast"])  # not stuck behind "slow"
                telegram.user_says(1, "second")
                await asyncio.sleep(0.3)
                assert host.started == ["slow", "fast"]  # chat 1 keeps its order
                assert telegram.confirmed_offset == held_at  # "slow" is not stored yet
                host.release.set()
                await until(lambda: host.stored == ["fast", "slow", "second"])
                await until(lambda: telegram.confirmed_offset >= held_at + 3)
            finally:
                polling.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await polling
                await adapter.aclose()

        asyncio.run(main())
