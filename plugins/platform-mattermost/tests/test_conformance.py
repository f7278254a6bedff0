"""The Mattermost adapter passes the platform conformance suite against the loopback
Mattermost server (REST API v4 and the websocket)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hermes_plugin_platform_mattermost.adapter import MattermostAdapter
from hermes_plugin_platform_mattermost.testing import TOKEN, FakeMattermost

from hermes_sdk.platform import PlatformContext
from hermes_testkit import PlatformTests
from hermes_testkit.services import free_port


class TestMattermostConformance(PlatformTests):
    user = "u1234567890abcdefghijklmno"

    @pytest.fixture(autouse=True)
    def server(self) -> Iterator[None]:
        self.http_port = free_port()
        with FakeMattermost() as fake:
            self.fake = fake
            yield

    def make_adapter(self, context: PlatformContext) -> MattermostAdapter:
        return MattermostAdapter(context)

    def platform_context(self, home: str, configured: bool = True) -> PlatformContext:
        config = {
            "url": self.fake.url,
            "actions_url": f"http://127.0.0.1:{self.http_port}/mattermost/actions",
        }
        secrets = {"MATTERMOST_TOKEN": TOKEN} if configured else {}
        return PlatformContext(name="mattermost", home=home, config=config, secrets=secrets)

    async def until_ready(self) -> None:
        import asyncio

        from hermes_testkit.platform_tests import eventually

        await eventually(lambda: self.fake.connections > 0)
        await asyncio.sleep(0.2)  # the read-back, before events are read

    def user_says(self, user_id: str, text: str) -> None:
        self.fake.user_says(user_id, text)

    def seen_by(self, user_id: str) -> list[str]:
        return [p.message for p in self.fake.sent_to(user_id) if p.message]

    def deliver_again(self, user_id: str) -> None:
        self.fake.deliver_again()

    def user_sends_file(self, user_id: str, data: bytes, name: str, mime: str) -> None:
        self.fake.user_sends_file(user_id, data, name, mime)

    def files_seen_by(self, user_id: str) -> list[tuple[str, bytes]]:
        return [self.fake.file_data(f) for p in self.fake.sent_to(user_id) for f in p.file_ids]

    def press(self, user_id: str, request_id: str, choice: str) -> None:
        (post,) = [p for p in self.fake.sent_to(user_id) if p.buttons]
        (action,) = [a for a in post.buttons if a["integration"]["context"]["choice"] == choice]
        self.fake.press_later(user_id, post, action["id"])  # the adapter's loop answers it
