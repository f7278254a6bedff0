"""The WhatsApp bridge adapter passes the platform conformance suite against the loopback
bridge (hermes-agent's bridge.js HTTP API)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hermes_plugin_platform_whatsapp_bridge.adapter import BridgeAdapter
from hermes_plugin_platform_whatsapp_bridge.testing import FakeBridge

from hermes_sdk.platform import PlatformContext
from hermes_testkit import PlatformTests


class TestBridgeConformance(PlatformTests):
    user = "15551234567"

    @pytest.fixture(autouse=True)
    def server(self, tmp_path: Path) -> Iterator[None]:
        self.media_dir = tmp_path / "bridge-media"
        self.media_dir.mkdir()
        with FakeBridge(self.media_dir) as fake:
            self.bridge = fake
            yield

    def make_adapter(self, context: PlatformContext) -> BridgeAdapter:
        return BridgeAdapter(context)

    def platform_context(self, home: str, configured: bool = True) -> PlatformContext:
        config = {"bridge_url": self.bridge.url, "media_dirs": [str(self.media_dir)]}
        if not configured:
            config = {"bridge_url": "http://192.0.2.1:3000"}  # not this machine: refused
        return PlatformContext(name="whatsapp_bridge", home=home, config=config)

    def user_says(self, user_id: str, text: str) -> None:
        self.bridge.user_says(user_id, text)

    def seen_by(self, user_id: str) -> list[str]:
        return [s.text for s in self.bridge.sent_to(user_id) if s.text and s.file is None]

    def deliver_again(self, user_id: str) -> None:
        self.bridge.deliver_again()

    def user_sends_file(self, user_id: str, data: bytes, name: str, mime: str) -> None:
        kind = "image" if mime.startswith("image/") else "document"
        self.bridge.user_sends_file(user_id, data, name, mime, kind=kind)

    def files_seen_by(self, user_id: str) -> list[tuple[str, bytes]]:
        return [(s.file[0], s.file[1]) for s in self.bridge.sent_to(user_id) if s.file]

    def press(self, user_id: str, request_id: str, choice: str) -> None:
        self.bridge.user_says(user_id, choice)  # the choice's word, typed
