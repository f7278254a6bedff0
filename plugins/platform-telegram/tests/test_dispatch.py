"""A batch of updates from getUpdates: chats are handed to the gateway at once, each chat's
updates one after the other."""

from __future__ import annotations

import asyncio

from hermes_plugin_platform_telegram.adapter import TelegramAdapter
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
            await adapter._dispatch_all(host, batch)
        finally:
            await adapter.aclose()
        return host.log

    log = asyncio.run(main())
    assert log.index("start hello") < log.index("end do this")  # chat 2 did not wait
    assert log.index("end do this") < log.index("start /stop")  # chat 1 stayed in order
