"""The QQ adapter passes the platform conformance suite against QQ on loopback, driven by
qq-botpy unmodified (QQ's gateway)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from hermes_plugin_platform_qqbot.adapter import QQAdapter
from hermes_plugin_platform_qqbot.testing import FakeQQ

from hermes_sdk.platform import PlatformContext
from hermes_testkit import PlatformTests
from hermes_testkit.platform_tests import eventually

_QQ = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fake-qq")


def later(work: Callable[[], object]) -> None:
    _QQ.submit(work)


class TestQQConformance(PlatformTests):
    user = "OPENIDANN0001"

    @pytest.fixture(autouse=True)
    def server(self) -> Iterator[None]:
        with FakeQQ() as fake:
            self.fake = fake
            yield

    def make_adapter(self, context: PlatformContext) -> QQAdapter:
        self.adapter = QQAdapter(context)
        return self.adapter

    def platform_context(self, home: str, configured: bool = True) -> PlatformContext:
        config = {"api_url": self.fake.url, "token_url": self.fake.token_url}
        secrets = {"QQ_APP_ID": self.fake.app_id, "QQ_CLIENT_SECRET": self.fake.client_secret}
        return PlatformContext(
            name="qqbot", home=home, config=config, secrets=secrets if configured else {}
        )

    async def until_ready(self) -> None:
        await eventually(self.adapter.ready.is_set, timeout=20)

    def user_says(self, user_id: str, text: str) -> None:
        later(lambda: self.fake.user_says(user_id, text))

    def seen_by(self, user_id: str) -> list[str]:
        return [m.text for m in self.fake.sent_to(f"users/{user_id}") if m.text]

    def deliver_again(self, user_id: str) -> None:
        later(self.fake.deliver_again)

    def user_sends_file(self, user_id: str, data: bytes, name: str, mime: str) -> None:
        later(lambda: self.fake.user_sends_file(user_id, data, name, mime))

    def press(self, user_id: str, request_id: str, choice: str) -> None:
        later(lambda: self.fake.user_says(user_id, choice))  # no buttons: the choice typed
