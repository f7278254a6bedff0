"""Slack saying no, as the fake workspace says it when a test turns the behaviour on: an
app-level token it refuses, at start or revoked while connected. slack_sdk retries such a
token every 5 s for ever; the platform must stop with one line instead of going silent
while the gateway shows it running."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from hermes_plugin_platform_slack.adapter import SlackAdapter
from hermes_plugin_platform_slack.testing import APP_TOKEN, BOT_TOKEN, FakeSlack

from hermes_sdk.platform import PlatformContext, PlatformNotConfigured


class Host:
    async def receive(self, message: Any) -> None:
        pass

    async def pressed(self, press: Any) -> str:
        return ""


def _adapter(slack: FakeSlack, app_token: str = APP_TOKEN) -> SlackAdapter:
    adapter = SlackAdapter(
        PlatformContext(
            name="slack",
            home=".",
            config={"api_url": slack.api_url},
            secrets={"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": app_token},
        )
    )
    adapter.app_token_check_seconds = 0.2
    return adapter


async def _run(adapter: SlackAdapter, timeout: float = 15.0) -> None:
    try:
        await asyncio.wait_for(adapter.run(Host()), timeout)  # type: ignore[arg-type]
    finally:
        with contextlib.suppress(Exception):
            await adapter.aclose()


def test_a_wrong_app_token_stops_the_platform_with_one_line():
    # The fake answers invalid_auth for any app token but its own.
    with FakeSlack() as slack, pytest.raises(PlatformNotConfigured) as raised:
        asyncio.run(_run(_adapter(slack, app_token="xapp-1-not-the-one")))
    message = str(raised.value)
    assert "invalid_auth" in message and "SLACK_APP_TOKEN" in message and "\n" not in message
    assert "not-the-one" not in message


def test_an_app_token_revoked_while_connected_stops_the_platform():
    # Knob: revoke_app_token (apps.connections.open answers token_revoked; sockets close).
    with FakeSlack() as slack:
        adapter = _adapter(slack)

        async def scenario() -> None:
            running = asyncio.ensure_future(_run(adapter))
            async with asyncio.timeout(10):
                while slack.connections == 0:
                    await asyncio.sleep(0.05)
            slack.revoke_app_token()
            await running

        with pytest.raises(PlatformNotConfigured) as raised:
            asyncio.run(scenario())
    assert "token_revoked" in str(raised.value)


def test_slack_busy_while_reconnecting_is_waited_out_not_a_stop():
    # Knob: revoke_app_token("ratelimited"): the sockets close and apps.connections.open is
    # refused for a while, as when Slack limits the calls: not the token's fault.
    with FakeSlack() as slack:
        adapter = _adapter(slack)

        async def scenario() -> None:
            running = asyncio.ensure_future(_run(adapter, timeout=30))
            try:
                async with asyncio.timeout(10):
                    while slack.connections == 0:
                        await asyncio.sleep(0.05)
                slack.revoke_app_token("ratelimited")
                await asyncio.sleep(1.0)  # the watchdog asks several times meanwhile
                assert not running.done(), "run() ended: the platform would restart"
                slack.app_token_refused = ""  # slack_sdk reconnects on its own schedule
            finally:
                running.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await running

        asyncio.run(scenario())
