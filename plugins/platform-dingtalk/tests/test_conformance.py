"""The DingTalk adapter passes the platform conformance suite against DingTalk on loopback,
driven by dingtalk-stream unmodified (Stream mode)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from hermes_plugin_platform_dingtalk.adapter import DingTalkAdapter
from hermes_plugin_platform_dingtalk.testing import FakeDingTalk

from hermes_sdk.platform import PlatformContext
from hermes_testkit import PlatformTests
from hermes_testkit.platform_tests import eventually

_DINGTALK = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fake-dingtalk")


def later(work: Callable[[], object]) -> None:
    """DingTalk pushes from its own side and waits for each acknowledgement: the adapter's
    loop (where the test runs) gives it."""
    _DINGTALK.submit(work)


class TestDingTalkConformance(PlatformTests):
    user = "ann"

    @pytest.fixture(autouse=True)
    def server(self) -> Iterator[None]:
        with FakeDingTalk() as fake:
            self.fake = fake
            yield

    def make_adapter(self, context: PlatformContext) -> DingTalkAdapter:
        return DingTalkAdapter(context)

    def platform_context(self, home: str, configured: bool = True) -> PlatformContext:
        secrets = {
            "DINGTALK_CLIENT_ID": self.fake.client_id,
            "DINGTALK_CLIENT_SECRET": self.fake.client_secret,
        }
        return PlatformContext(
            name="dingtalk",
            home=home,
            config={"api_url": self.fake.url},
            secrets=secrets if configured else {},
        )

    async def until_ready(self) -> None:
        await eventually(lambda: self.fake.connections > 0, timeout=20)

    def user_says(self, user_id: str, text: str) -> None:
        later(lambda: self.fake.user_says(user_id, text))

    def seen_by(self, user_id: str) -> list[str]:
        return [m.text for m in self.fake.sent_to(self.fake.chat_of(user_id)) if m.text]

    def deliver_again(self, user_id: str) -> None:
        later(self.fake.deliver_again)

    def user_sends_file(self, user_id: str, data: bytes, name: str, mime: str) -> None:
        later(lambda: self.fake.user_sends_file(user_id, data, name, mime))

    def press(self, user_id: str, request_id: str, choice: str) -> None:
        later(lambda: self.fake.user_says(user_id, choice))  # no buttons: the choice typed
