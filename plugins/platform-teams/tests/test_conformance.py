"""The Teams adapter passes the platform conformance suite against the Bot Framework on
loopback: activities signed as the Bot Connector signs them, its token endpoint and API."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from hermes_plugin_platform_teams.adapter import TeamsAdapter
from hermes_plugin_platform_teams.testing import (
    APP_ID,
    APP_PASSWORD,
    TENANT_ID,
    FakeBotFramework,
)

from hermes_sdk.platform import PlatformContext
from hermes_testkit import PlatformTests
from hermes_testkit.services import free_port

_CONNECTOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fake-bot-connector")


def later(work: Callable[[], object]) -> None:
    """The connector posts from its own side, one activity after another: the adapter's
    loop (where the test runs) answers them."""
    _CONNECTOR.submit(work)


def context_for(fake: FakeBotFramework, home: str, configured: bool = True) -> PlatformContext:
    config = {
        "openid_url": fake.openid_url,
        "token_url": fake.token_url,
        "service_url": fake.service_url,
        "path": "/api/messages",
    }
    secrets = {
        "TEAMS_CLIENT_ID": APP_ID,
        "TEAMS_CLIENT_SECRET": APP_PASSWORD,
        "TEAMS_TENANT_ID": TENANT_ID,
    }
    return PlatformContext(
        name="teams", home=home, config=config, secrets=secrets if configured else {}
    )


class TestTeamsConformance(PlatformTests):
    user = "0b8e7f6a-1111-4c2d-9e3f-123456789abc"

    @pytest.fixture(autouse=True)
    def server(self) -> Iterator[None]:
        self.http_port = free_port()
        with FakeBotFramework() as fake:
            fake.endpoint_url = f"http://127.0.0.1:{self.http_port}/api/messages"
            self.fake = fake
            yield

    def make_adapter(self, context: PlatformContext) -> TeamsAdapter:
        return TeamsAdapter(context)

    def platform_context(self, home: str, configured: bool = True) -> PlatformContext:
        return context_for(self.fake, home, configured)

    async def until_ready(self) -> None:
        from hermes_testkit.platform_tests import eventually

        await eventually(lambda: self.fake.token_grants > 0)

    def user_says(self, user_id: str, text: str) -> None:
        later(lambda: self.fake.user_says(user_id, text))

    def seen_by(self, user_id: str) -> list[str]:
        conversation = self.fake.conversation(user_id)
        return [a.visible for a in self.fake.sent_to(conversation) if a.visible]

    def deliver_again(self, user_id: str) -> None:
        later(self.fake.deliver_again)

    def user_sends_file(self, user_id: str, data: bytes, name: str, mime: str) -> None:
        later(lambda: self.fake.user_sends_file(user_id, data, name, mime))

    def files_seen_by(self, user_id: str) -> list[tuple[str, bytes]]:
        return self.fake.files_to(self.fake.conversation(user_id))

    def press(self, user_id: str, request_id: str, choice: str) -> None:
        (card,) = [a for a in self.fake.sent_to(self.fake.conversation(user_id)) if a.buttons]
        later(lambda: self.fake.press(user_id, card, choice))
