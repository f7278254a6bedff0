"""The BlueBubbles adapter passes the platform conformance suite against the loopback
BlueBubbles server (its REST API and webhooks)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from hermes_plugin_platform_bluebubbles.adapter import BlueBubblesAdapter
from hermes_plugin_platform_bluebubbles.testing import PASSWORD, FakeBlueBubbles

from hermes_sdk.platform import PlatformContext
from hermes_testkit import PlatformTests


class TestBlueBubblesConformance(PlatformTests):
    user = "+15551234567"

    @pytest.fixture(autouse=True)
    def server(self) -> Iterator[None]:
        with FakeBlueBubbles() as fake:
            self.bluebubbles = fake
            yield

    def make_adapter(self, context: PlatformContext) -> BlueBubblesAdapter:
        return BlueBubblesAdapter(context)

    def platform_context(self, home: str, configured: bool = True) -> PlatformContext:
        if not configured:
            return PlatformContext(name="bluebubbles", home=home, config={})
        return PlatformContext(
            name="bluebubbles",
            home=home,
            config={"server_url": self.bluebubbles.url},
            secrets={"BLUEBUBBLES_PASSWORD": PASSWORD},
        )

    async def until_ready(self) -> None:
        """Until the adapter has read where the server stands: on its first start, what
        came before is history, not for it."""
        for _ in range(500):  # where it stands (two queries), then a first read
            if self.bluebubbles.queries >= 3:
                return
            await asyncio.sleep(0.02)
        raise AssertionError("the adapter did not start reading the server")

    def user_says(self, user_id: str, text: str) -> None:
        self.bluebubbles.user_says(user_id, text)

    def seen_by(self, user_id: str) -> list[str]:
        return [s.text for s in self.bluebubbles.sent_to(user_id) if s.text]

    def deliver_again(self, user_id: str) -> None:
        self.bluebubbles.deliver_again()

    def user_sends_file(self, user_id: str, data: bytes, name: str, mime: str) -> None:
        self.bluebubbles.user_sends_file(user_id, data, name, mime)

    def files_seen_by(self, user_id: str) -> list[tuple[str, bytes]]:
        return [(n, d) for s in self.bluebubbles.sent_to(user_id) for n, d, _m in s.files]

    def press(self, user_id: str, request_id: str, choice: str) -> None:
        self.bluebubbles.user_says(user_id, choice)  # the choice's word, typed
