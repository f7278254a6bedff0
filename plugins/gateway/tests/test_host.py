"""What an adapter hands the gateway is judged as its own platform's: an adapter cannot pass
its messages off as another platform's (a webhook's, which is admitted by signature)."""

from __future__ import annotations

import asyncio
from typing import Any

from hermes_plugin_gateway.front_door import PlatformDoor

from hermes_sdk.platform import ChatRef, Inbound


class _Received:
    def __init__(self) -> None:
        self.messages: list[Inbound] = []

    async def receive(self, message: Inbound) -> None:
        self.messages.append(message)


def message(platform: str) -> Inbound:
    return Inbound(
        chat=ChatRef(platform, "c1", "private"), user_id="u1", text="hi", message_id="m1"
    )


def test_a_message_labelled_as_another_platform_is_dropped() -> None:
    gateway: Any = _Received()
    host = PlatformDoor(gateway, "discord")
    asyncio.run(host.receive(message("webhook")))
    asyncio.run(host.receive(message("discord")))
    assert [m.chat.platform for m in gateway.messages] == ["discord"]
