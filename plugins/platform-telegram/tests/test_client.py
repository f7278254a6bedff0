"""The Bot API client: flood control honoured, the token never shown, a refused token
reported in one line."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
from hermes_plugin_platform_telegram.adapter import TelegramAdapter
from hermes_plugin_platform_telegram.client import BotApi, TelegramError, TelegramUnreachable
from hermes_plugin_platform_telegram.testing.telegram_server import DEFAULT_TOKEN, FakeTelegram

from hermes_sdk.platform import PlatformContext


def test_429_waits_retry_after_then_succeeds():
    with FakeTelegram() as telegram:
        telegram.flood("getMe", 2, retry_after=1)

        async def call():
            api = BotApi(DEFAULT_TOKEN, telegram.api_url)
            started = time.monotonic()
            try:
                return await api.call("getMe", {}), time.monotonic() - started
            finally:
                await api.aclose()

        me, waited = asyncio.run(call())
        assert me["username"] == "hermes_test_bot"
        assert waited >= 2.0  # two 429s of one second each were waited out
        assert [m for m, _ in telegram.calls] == ["getMe"] * 3


def test_flood_control_beyond_the_cap_is_an_error():
    with FakeTelegram() as telegram:
        telegram.flood("getMe", 5, retry_after=30)

        async def call():
            api = BotApi(DEFAULT_TOKEN, telegram.api_url, max_flood_wait=1)
            try:
                await api.call("getMe", {})
            finally:
                await api.aclose()

        with pytest.raises(TelegramError) as raised:
            asyncio.run(call())
        assert raised.value.code == 429


def test_the_token_never_appears_in_errors_or_logs(caplog):
    caplog.set_level(logging.DEBUG)

    async def unreachable():
        api = BotApi(DEFAULT_TOKEN, "http://127.0.0.1:9")  # nothing listens there
        try:
            await api.call("getMe", {})
        finally:
            await api.aclose()

    with pytest.raises(TelegramUnreachable) as raised:
        asyncio.run(unreachable())
    assert DEFAULT_TOKEN not in str(raised.value) and "getMe" in str(raised.value)

    with FakeTelegram() as telegram:

        async def reachable():
            api = BotApi(DEFAULT_TOKEN, telegram.api_url)
            try:
                await api.call("getMe", {})
            finally:
                await api.aclose()

        asyncio.run(reachable())
    assert "HTTP Request: POST" in caplog.text and "/bot<token>/getMe" in caplog.text
    assert DEFAULT_TOKEN.split(":")[1] not in caplog.text


def test_a_refused_token_fails_run_with_one_line():
    with FakeTelegram() as telegram:
        adapter = TelegramAdapter(
            PlatformContext(
                name="telegram",
                home=".",
                config={"api_url": telegram.api_url},
                secrets={"TELEGRAM_BOT_TOKEN": "1:not-the-token"},
            )
        )

        async def run():
            try:
                await adapter.run(None)  # type: ignore[arg-type] # fails before using the host
            finally:
                await adapter.aclose()

        with pytest.raises(RuntimeError) as raised:
            asyncio.run(run())
        assert "refused the bot token" in str(raised.value)
        assert "not-the-token" not in str(raised.value)
