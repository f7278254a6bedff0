"""The Google Chat adapter passes the platform conformance suite against Google Chat on
loopback: events signed as Google signs them, the Chat API and its token endpoint."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from hermes_plugin_platform_google_chat.adapter import GoogleChatAdapter
from hermes_plugin_platform_google_chat.testing import FakeGoogleChat

from hermes_sdk.platform import PlatformContext
from hermes_testkit import PlatformTests
from hermes_testkit.services import free_port

_CHAT = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fake-google-chat")


def later(work: Callable[[], object]) -> None:
    """Chat posts from its own side, one event after another: the adapter's loop (where
    the test runs) answers them."""
    _CHAT.submit(work)


ANN = "ann@example.org"


class TestGoogleChatConformance(PlatformTests):
    @pytest.fixture(autouse=True)
    def server(self) -> Iterator[None]:
        self.http_port = free_port()
        with FakeGoogleChat() as fake:
            fake.endpoint_url = f"http://127.0.0.1:{self.http_port}/google-chat/events"
            self.fake = fake
            self.user = fake.user_id(ANN)  # the stable users/ID
            yield

    def make_adapter(self, context: PlatformContext) -> GoogleChatAdapter:
        return GoogleChatAdapter(context)

    def platform_context(self, home: str, configured: bool = True) -> PlatformContext:
        config = {
            "endpoint_url": self.fake.endpoint_url,
            "api_url": self.fake.url,
            "certs_url": self.fake.certs_url,
        }
        secrets = {"GOOGLE_CHAT_SERVICE_ACCOUNT_JSON": json.dumps(self.fake.service_account())}
        return PlatformContext(
            name="google_chat", home=home, config=config, secrets=secrets if configured else {}
        )

    async def until_ready(self) -> None:
        from hermes_testkit.platform_tests import eventually

        await eventually(lambda: self.fake.token_grants > 0)

    def user_says(self, user_id: str, text: str) -> None:
        later(lambda: self.fake.user_says(self.fake.email_of(user_id), text))

    def seen_by(self, user_id: str) -> list[str]:
        return [
            m.text for m in self.fake.sent_to(self.fake.dm(self.fake.email_of(user_id))) if m.text
        ]

    def deliver_again(self, user_id: str) -> None:
        later(self.fake.deliver_again)

    def user_sends_file(self, user_id: str, data: bytes, name: str, mime: str) -> None:
        email = self.fake.email_of(user_id)
        later(lambda: self.fake.user_says(email, "", files=((name, data, mime),)))

    def press(self, user_id: str, request_id: str, choice: str) -> None:
        email = self.fake.email_of(user_id)
        (card,) = [m for m in self.fake.sent_to(self.fake.dm(email)) if m.buttons]
        later(lambda: self.fake.press(email, card, choice))
