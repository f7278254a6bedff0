"""The Signal adapter passes the platform conformance suite against the loopback
signal-cli daemon (JSON-RPC over HTTP and its event stream)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hermes_plugin_platform_signal.adapter import SignalAdapter
from hermes_plugin_platform_signal.testing import ACCOUNT, FakeSignalCli

from hermes_sdk.platform import PlatformContext
from hermes_testkit import PlatformTests


class TestSignalConformance(PlatformTests):
    user = "+15551234567"

    @pytest.fixture(autouse=True)
    def server(self) -> Iterator[None]:
        with FakeSignalCli() as fake:
            self.daemon = fake
            yield

    def make_adapter(self, context: PlatformContext) -> SignalAdapter:
        return SignalAdapter(context)

    def platform_context(self, home: str, configured: bool = True) -> PlatformContext:
        config = {"daemon_url": self.daemon.url, "account": ACCOUNT} if configured else {}
        return PlatformContext(name="signal", home=home, config=config)

    def user_says(self, user_id: str, text: str) -> None:
        self.daemon.user_says(user_id, text)

    def seen_by(self, user_id: str) -> list[str]:
        return [s.text for s in self.daemon.sent_to(user_id) if s.text]

    def deliver_again(self, user_id: str) -> None:
        self.daemon.deliver_again()

    def user_sends_file(self, user_id: str, data: bytes, name: str, mime: str) -> None:
        self.daemon.user_sends_file(user_id, data, name, mime)

    def files_seen_by(self, user_id: str) -> list[tuple[str, bytes]]:
        return [(n, d) for s in self.daemon.sent_to(user_id) for n, d, _m in s.files]

    def press(self, user_id: str, request_id: str, choice: str) -> None:
        self.daemon.user_says(user_id, choice)  # the choice's word, typed
