"""Telegram saying no, as the fake Bot API says it when a test turns the behaviour on (the
knob is named in each test): per-chat flood limits, a second copy polling, its own 5xx
trouble, a token not of a token's form, a user who refuses voice messages, a 429 on an
upload. Each of these broke the plugin before it handled them."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Any

import pytest
from hermes_plugin_platform_telegram.adapter import TelegramAdapter
from hermes_plugin_platform_telegram.client import BotApi
from hermes_plugin_platform_telegram.testing.telegram_server import DEFAULT_TOKEN, FakeTelegram

from hermes_sdk.media import Attachment
from hermes_sdk.platform import ChatRef, PlatformContext, PlatformNotConfigured

GROUP = -1001
PERSON = 42


async def _until(condition, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


def _adapter(telegram: FakeTelegram, token: str = DEFAULT_TOKEN) -> TelegramAdapter:
    return TelegramAdapter(
        PlatformContext(
            name="telegram",
            home=".",
            config={"api_url": telegram.api_url, "poll_timeout_seconds": 1},
            secrets={"TELEGRAM_BOT_TOKEN": token},
        )
    )


class Host:
    """The gateway as the adapter sees it: records what arrives."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    async def receive(self, message: Any) -> None:
        self.texts.append(message.text)

    async def pressed(self, press: Any) -> str:
        return ""


def test_a_group_at_its_flood_limit_holds_up_no_other_chat_nor_polling():
    # Knob: limit_chats (a group taking 2 posts a minute here, so the third gets 429).
    with FakeTelegram() as telegram:
        telegram.limit_chats(group_per_minute=2)

        async def scenario() -> None:
            api = BotApi(DEFAULT_TOKEN, telegram.api_url)
            group = [
                asyncio.ensure_future(api.call("sendMessage", {"chat_id": GROUP, "text": f"g{n}"}))
                for n in range(3)
            ]
            try:
                await _until(lambda: any(code == 429 for _, code, _ in telegram.rejected))
                # The group waits out its minute; this chat and polling do not wait with it.
                await asyncio.wait_for(
                    api.call("sendMessage", {"chat_id": PERSON, "text": "hello"}), 5
                )
                await asyncio.wait_for(api.call("getUpdates", {"timeout": 0}), 5)
                assert len(telegram.sent(GROUP)) == 2  # the third waits its minute
                assert [m.visible for m in telegram.sent(PERSON)] == ["hello"]
            finally:
                for task in group:
                    task.cancel()
                await asyncio.gather(*group, return_exceptions=True)
                await api.aclose()

        asyncio.run(scenario())


def test_posts_to_a_group_are_paced_under_its_limit_before_telegram_says_429():
    # Knob: limit_chats with a minute of 2 s (20 posts in any 2 s); the client's minute alike.
    with FakeTelegram() as telegram:
        telegram.limit_chats(group_per_minute=20, minute=2.0)

        async def scenario() -> None:
            api = BotApi(DEFAULT_TOKEN, telegram.api_url, minute=2.0)
            try:
                # A streamed preview's edits and the reply: 30 posts where 20 fit a minute.
                await asyncio.gather(
                    *(
                        api.call("sendMessage", {"chat_id": GROUP, "text": f"edit {n}"})
                        for n in range(30)
                    )
                )
            finally:
                await api.aclose()

        asyncio.run(scenario())
        assert len(telegram.sent(GROUP)) == 30
        assert [r for r in telegram.rejected if r[1] == 429] == []  # paced, never refused


def test_a_second_copy_polling_is_said_once_and_waited_out_not_a_restart(caplog):
    # Knob: conflicts (a getUpdates waiting when another comes ends with 409).
    caplog.set_level(logging.INFO, logger="hermes.telegram")
    with FakeTelegram() as telegram:
        telegram.conflicts()
        adapter = _adapter(telegram)
        host = Host()

        async def scenario() -> None:
            polling = asyncio.ensure_future(adapter.run(host))  # type: ignore[arg-type]
            other = BotApi(DEFAULT_TOKEN, telegram.api_url)
            try:
                await _until(lambda: any(m == "getUpdates" for m, _ in telegram.calls))
                await asyncio.sleep(0.2)  # its poll waits at the fake
                await other.call("getUpdates", {"timeout": 0})  # the other copy polls
                await _until(lambda: any(code == 409 for _, code, _ in telegram.rejected))
                await asyncio.sleep(0.3)
                assert not polling.done(), "run() ended: the gateway would restart it"
            finally:
                polling.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await polling
                await other.aclose()
                await adapter.aclose()

        asyncio.run(scenario())
    said = [r.getMessage() for r in caplog.records if "another copy" in r.getMessage()]
    assert len(said) == 1 and "same token" in said[0]


@pytest.mark.parametrize("html", [False, True], ids=["json-body", "html-page"])
def test_telegrams_own_trouble_while_polling_is_waited_out(html):
    # Knob: fail (getUpdates answered 502, with the Bot API's JSON or a proxy's page).
    with FakeTelegram() as telegram:
        telegram.fail("getUpdates", 2, status=502, html=html)
        adapter = _adapter(telegram)
        host = Host()

        async def scenario() -> None:
            polling = asyncio.ensure_future(adapter.run(host))  # type: ignore[arg-type]
            try:
                await _until(lambda: sum(1 for r in telegram.rejected if r[1] == 502) == 2)
                telegram.user_says(PERSON, "still there?")
                await _until(lambda: host.texts == ["still there?"], timeout=15)
                assert not polling.done()
            finally:
                polling.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await polling
                await adapter.aclose()

        asyncio.run(scenario())


def test_a_token_not_of_a_tokens_form_says_how_to_fix_it():
    # Always on, as Telegram: a token it cannot route is 404, not 401.
    with FakeTelegram() as telegram:
        adapter = _adapter(telegram, token="bot-token-pasted-without-its-number")

        async def run() -> None:
            try:
                await adapter.run(Host())  # type: ignore[arg-type]
            finally:
                await adapter.aclose()

        with pytest.raises(PlatformNotConfigured) as raised:
            asyncio.run(run())
    message = str(raised.value)
    assert "404" in message and "@BotFather" in message and "TELEGRAM_BOT_TOKEN" in message
    assert "pasted-without" not in message  # the token is never shown


def _voice(tmp_path: Path) -> Attachment:
    path = tmp_path / "reply.ogg"
    path.write_bytes(b"OggS" + b"\0" * 60)
    return Attachment(kind="audio", mime="audio/ogg", size=64, path=str(path), name="reply.ogg")


def _send_voice(telegram: FakeTelegram, tmp_path: Path) -> list[str]:
    """A voice note to PERSON through the adapter, as the gateway sends a spoken reply."""
    adapter = _adapter(telegram)

    async def send() -> list[str]:
        try:
            chat = ChatRef("telegram", str(PERSON), "private")
            return await adapter.send_file(chat, _voice(tmp_path))
        finally:
            await adapter.aclose()

    return asyncio.run(send())


def test_a_user_who_refuses_voice_messages_gets_the_reply_as_audio(tmp_path):
    # Knob: refuse_voice (VOICE_MESSAGES_FORBIDDEN for sendVoice to this user).
    with FakeTelegram() as telegram:
        telegram.refuse_voice(PERSON)
        ids = _send_voice(telegram, tmp_path)
        assert [(f.method, str(f.message_id)) for f in telegram.files_sent] == [
            ("sendAudio", ids[0])
        ]
        assert [r[2] for r in telegram.rejected] == ["Bad Request: VOICE_MESSAGES_FORBIDDEN"]


def test_a_429_on_an_upload_is_waited_out_not_final(tmp_path):
    # Knob: flood on sendVoice.
    with FakeTelegram() as telegram:
        telegram.flood("sendVoice", 1, retry_after=1)
        _send_voice(telegram, tmp_path)
        assert [f.method for f in telegram.files_sent] == ["sendVoice"]


def test_a_webhook_another_tool_set_is_taken_off_and_polling_goes_on():
    # Knob: set_webhook (getUpdates answers 409 "can't use getUpdates ... webhook is active").
    with FakeTelegram() as telegram:
        adapter = _adapter(telegram)
        host = Host()

        async def scenario() -> None:
            polling = asyncio.ensure_future(adapter.run(host))  # type: ignore[arg-type]
            try:
                await _until(lambda: any(m == "getUpdates" for m, _ in telegram.calls))
                telegram.set_webhook()
                await _until(lambda: any(code == 409 for _, code, _ in telegram.rejected))
                await _until(lambda: not telegram.webhook)  # taken off again
                telegram.user_says(PERSON, "still polling?")
                await _until(lambda: host.texts == ["still polling?"], timeout=15)
            finally:
                polling.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await polling
                await adapter.aclose()

        asyncio.run(scenario())
