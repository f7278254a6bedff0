"""The Discord adapter passes the platform conformance suite: unmodified discord.py against
the SDK's Discord server on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hermes_plugin_platform_discord.adapter import DiscordAdapter
from hermes_plugin_platform_discord.testing import FakeDiscord

from hermes_sdk.platform import PlatformContext
from hermes_testkit import PlatformTests


class TestDiscordConformance(PlatformTests):
    user = "1200000000000000042"

    @pytest.fixture(autouse=True)
    def server(self) -> Iterator[None]:
        with FakeDiscord() as fake:
            self.discord = fake
            restore = fake.point_discord_py()
            try:
                yield
            finally:
                restore()

    def make_adapter(self, context: PlatformContext) -> DiscordAdapter:
        return DiscordAdapter(context)

    def platform_context(self, home: str, configured: bool = True) -> PlatformContext:
        return PlatformContext(
            name="discord",
            home=home,
            config={"api_url": self.discord.api_url, "gateway_url": self.discord.gateway_url},
            secrets={"DISCORD_BOT_TOKEN": self.discord.token} if configured else {},
        )

    def user_says(self, user_id: str, text: str) -> None:
        self.discord.user_says(user_id, text)

    def seen_by(self, user_id: str) -> list[str]:
        return [m.content for m in self.discord.sent(self.discord.dm_channel(user_id))]

    def deliver_again(self, user_id: str) -> None:
        self.discord.deliver_again()

    def user_sends_file(self, user_id: str, data: bytes, name: str, mime: str) -> None:
        self.discord.user_sends_file(user_id, data, name, mime)

    def press(self, user_id: str, request_id: str, choice: str) -> None:
        channel = self.discord.dm_channel(user_id)
        (asked,) = [
            m for m in self.discord.sent(channel) if f"{request_id}:{choice}" in str(m.buttons)
        ]
        self.discord.press(user_id, asked, f"{request_id}:{choice}")
