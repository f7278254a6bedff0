"""The WhatsApp adapter passes the platform conformance suite: pywa, unmodified, against the
loopback Cloud API, whose webhooks reach the adapter signed, through a shared listener."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hermes_plugin_platform_whatsapp.adapter import WhatsAppAdapter
from hermes_plugin_platform_whatsapp.testing import (
    APP_SECRET,
    PHONE_ID,
    TOKEN,
    VERIFY_TOKEN,
    FakeWhatsApp,
)

from hermes_sdk.platform import PlatformContext
from hermes_testkit import PlatformTests
from hermes_testkit.services import free_port

SECRETS = {
    "WHATSAPP_CLOUD_ACCESS_TOKEN": TOKEN,
    "WHATSAPP_CLOUD_PHONE_NUMBER_ID": PHONE_ID,
    "WHATSAPP_CLOUD_APP_SECRET": APP_SECRET,
    "WHATSAPP_CLOUD_VERIFY_TOKEN": VERIFY_TOKEN,
}


class TestWhatsAppConformance(PlatformTests):
    user = "15551234567"

    @pytest.fixture(autouse=True)
    def server(self) -> Iterator[None]:
        self.http_port = free_port()
        with FakeWhatsApp() as fake:
            fake.webhook_url = f"http://127.0.0.1:{self.http_port}/whatsapp/webhook"
            self.meta = fake
            yield

    def make_adapter(self, context: PlatformContext) -> WhatsAppAdapter:
        return WhatsAppAdapter(context)

    def platform_context(self, home: str, configured: bool = True) -> PlatformContext:
        return PlatformContext(
            name="whatsapp",
            home=home,
            config={"api_url": self.meta.api_url},
            secrets=SECRETS if configured else {},
        )

    def user_says(self, user_id: str, text: str) -> None:
        self.meta.user_says(user_id, text)

    def seen_by(self, user_id: str) -> list[str]:
        return [m.text.removeprefix("\x00list") for m in self.meta.sent(user_id) if m.text]

    def deliver_again(self, user_id: str) -> None:
        self.meta.deliver_again()

    def user_sends_file(self, user_id: str, data: bytes, name: str, mime: str) -> None:
        self.meta.user_sends_file(user_id, data, name, mime, as_document=True)  # named

    def files_seen_by(self, user_id: str) -> list[tuple[str, bytes]]:
        return [(m.file[0], m.file[1]) for m in self.meta.sent(user_id) if m.file]

    def test_a_file_is_sent(self, tmp_path) -> None:  # type: ignore[no-untyped-def]
        pytest.skip(
            "WhatsApp takes no WAV files (the suite sends one); test_webhook.py::"
            "test_files_go_out_as_whatsapp_takes_them sends the kinds it takes"
        )

    def press(self, user_id: str, request_id: str, choice: str) -> None:
        for message in self.meta.sent(user_id):
            if f"{request_id}:{choice}" in dict(message.buttons):
                self.meta.press(user_id, message, f"{request_id}:{choice}")
                return
        raise AssertionError(f"no button {choice!r} for {request_id}")
