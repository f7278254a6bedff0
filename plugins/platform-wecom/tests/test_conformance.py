"""The WeCom adapter passes the platform conformance suite against WeCom on loopback:
callbacks encrypted and signed as WeCom does, decrypted by wechatpy in the adapter."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from hermes_plugin_platform_wecom.adapter import WeComAdapter
from hermes_plugin_platform_wecom.testing import FakeWeCom

from hermes_sdk.platform import PlatformContext
from hermes_testkit import PlatformTests
from hermes_testkit.platform_tests import eventually
from hermes_testkit.services import free_port

_WECOM = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fake-wecom")


def later(work: Callable[[], object]) -> None:
    """WeCom posts from its own side, one callback after another: the adapter's loop
    (where the test runs) answers them."""
    _WECOM.submit(work)


class TestWeComConformance(PlatformTests):
    user = "ZhangSan"

    @pytest.fixture(autouse=True)
    def server(self) -> Iterator[None]:
        self.http_port = free_port()
        with FakeWeCom() as fake:
            fake.callback_url = f"http://127.0.0.1:{self.http_port}/wecom/callback"
            self.fake = fake
            yield

    def make_adapter(self, context: PlatformContext) -> WeComAdapter:
        return WeComAdapter(context)

    def platform_context(self, home: str, configured: bool = True) -> PlatformContext:
        return self.fake.context(home, configured=configured)

    async def until_ready(self) -> None:
        await eventually(lambda: self.fake.token_grants > 0)
        await eventually(self._listening)

    def _listening(self) -> bool:
        import socket

        with socket.socket() as probe:
            return probe.connect_ex(("127.0.0.1", self.http_port)) == 0

    def user_says(self, user_id: str, text: str) -> None:
        later(lambda: self.fake.user_says(user_id, text))

    def seen_by(self, user_id: str) -> list[str]:
        return [m.text for m in self.fake.sent_to(user_id) if m.text]

    def deliver_again(self, user_id: str) -> None:
        later(self.fake.deliver_again)

    def user_sends_file(self, user_id: str, data: bytes, name: str, mime: str) -> None:
        later(lambda: self.fake.user_sends_file(user_id, data, name, mime))

    def files_seen_by(self, user_id: str) -> list[tuple[str, bytes]]:
        return self.fake.files_to(user_id)

    def press(self, user_id: str, request_id: str, choice: str) -> None:
        later(lambda: self.fake.user_says(user_id, choice))  # no buttons: the choice typed
