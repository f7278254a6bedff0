"""The Telegram adapter passes the platform conformance suite against the fake Bot API."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hermes_plugin_platform_telegram.adapter import TelegramAdapter
from hermes_plugin_platform_telegram.testing.telegram_server import DEFAULT_TOKEN, FakeTelegram

from hermes_sdk.platform import PlatformContext
from hermes_testkit import PlatformTests


class TestTelegramConformance(PlatformTests):
    @pytest.fixture(autouse=True)
    def fake(self) -> Iterator[FakeTelegram]:
        with FakeTelegram() as server:
            self.telegram = server
            yield server

    def make_adapter(self, context: PlatformContext) -> TelegramAdapter:
        return TelegramAdapter(context)

    def platform_context(self, home: str, configured: bool = True) -> PlatformContext:
        return PlatformContext(
            name="telegram",
            home=home,
            config={"api_url": self.telegram.api_url, "poll_timeout_seconds": 1},
            secrets={"TELEGRAM_BOT_TOKEN": DEFAULT_TOKEN} if configured else {},
        )

    def user_says(self, user_id: str, text: str) -> None:
        self.telegram.user_says(int(user_id), text)

    def seen_by(self, user_id: str) -> list[str]:
        return [message.visible for message in self.telegram.sent(int(user_id))]

    def deliver_again(self, user_id: str) -> None:
        self.telegram.deliver_again(int(user_id))

    def user_sends_file(self, user_id: str, data: bytes, name: str, mime: str) -> None:
        self.telegram.user_sends_document(int(user_id), data, file_name=name, mime_type=mime)

    def files_seen_by(self, user_id: str) -> list[tuple[str, bytes]]:
        sent = [f for f in self.telegram.files_sent if f.chat_id == int(user_id)]
        return [(f.upload.filename, f.upload.data) for f in sent]

    def press(self, user_id: str, request_id: str, choice: str) -> None:
        (question,) = [
            m
            for m in self.telegram.sent(int(user_id))
            if f"{request_id}:{choice}" in m.button_data()
        ]
        self.telegram.press(int(user_id), question, f"{request_id}:{choice}")
