"""The Feishu adapter passes the platform conformance suite against Feishu on loopback,
driven by lark-oapi unmodified: over the long connection, and as encrypted, signed HTTP
callbacks."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from hermes_plugin_platform_feishu.adapter import FeishuAdapter
from hermes_plugin_platform_feishu.testing import FakeFeishu

from hermes_sdk.platform import PlatformContext
from hermes_testkit import PlatformTests
from hermes_testkit.platform_tests import eventually
from hermes_testkit.services import free_port

_FEISHU = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fake-feishu")


def later(work: Callable[[], object]) -> None:
    """Feishu delivers from its own side, one event after another, and waits for each
    acknowledgement: the adapter's loop (where the test runs) gives it."""
    _FEISHU.submit(work)


class _FeishuConformance(PlatformTests):
    user = "ou_ann"
    mode = "websocket"
    encrypt_key = ""

    @pytest.fixture(autouse=True)
    def server(self) -> Iterator[None]:
        self.http_port = free_port()
        with FakeFeishu(mode=self.mode, encrypt_key=self.encrypt_key) as fake:
            fake.callback_url = f"http://127.0.0.1:{self.http_port}/feishu/webhook"
            self.fake = fake
            yield

    def make_adapter(self, context: PlatformContext) -> FeishuAdapter:
        return FeishuAdapter(context)

    def platform_context(self, home: str, configured: bool = True) -> PlatformContext:
        config = {"domain": self.fake.url, "connection_mode": self.mode}
        secrets = {
            "FEISHU_APP_ID": self.fake.app_id,
            "FEISHU_APP_SECRET": self.fake.app_secret,
            "FEISHU_VERIFICATION_TOKEN": self.fake.verification_token,
        }
        if self.encrypt_key:
            secrets["FEISHU_ENCRYPT_KEY"] = self.encrypt_key
        return PlatformContext(
            name="feishu", home=home, config=config, secrets=secrets if configured else {}
        )

    async def until_ready(self) -> None:
        # lark-oapi takes seconds to import (longer on a busy machine), before anything.
        if self.mode == "websocket":
            await eventually(lambda: self.fake.connections > 0, timeout=40)
        else:
            await eventually(lambda: self.fake.token_grants > 0)
            await eventually(self._listening, timeout=40)

    def _listening(self) -> bool:
        import socket

        with socket.socket() as probe:
            return probe.connect_ex(("127.0.0.1", self.http_port)) == 0

    def user_says(self, user_id: str, text: str) -> None:
        later(lambda: self.fake.user_says(user_id, text))

    def seen_by(self, user_id: str) -> list[str]:
        return [m.text for m in self.fake.sent_to(self.fake.dm(user_id)) if m.text]

    def deliver_again(self, user_id: str) -> None:
        later(self.fake.deliver_again)

    def user_sends_file(self, user_id: str, data: bytes, name: str, mime: str) -> None:
        later(lambda: self.fake.user_sends_file(user_id, data, name, mime))

    def files_seen_by(self, user_id: str) -> list[tuple[str, bytes]]:
        return self.fake.files_in(self.fake.dm(user_id))

    def press(self, user_id: str, request_id: str, choice: str) -> None:
        (card,) = [m for m in self.fake.sent_to(self.fake.dm(user_id)) if m.buttons]
        later(lambda: self.fake.press(user_id, card, choice))


class TestFeishuLongConnection(_FeishuConformance):
    mode = "websocket"


class TestFeishuCallbacks(_FeishuConformance):
    mode = "webhook"
    encrypt_key = "an-encrypt-key-from-the-console"
