"""Slack saying no, as the fake workspace says it when a test turns the behaviour on: an
app-level token it refuses, at start or revoked while connected (slack_sdk retries such a
token every 5 s for ever; the platform must stop with one line instead of going silent
while the gateway shows it running); events it stops redelivering after its three retries
(read back from history); a Web API call it limits (429 with Retry-After)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import pytest
from hermes_plugin_platform_slack.adapter import SlackAdapter
from hermes_plugin_platform_slack.testing import APP_TOKEN, BOT_TOKEN, FakeSlack

from hermes_sdk.platform import ChatRef, PlatformContext, PlatformNotConfigured


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


class Recording(Host):
    def __init__(self) -> None:
        self.messages: list[Any] = []

    async def receive(self, message: Any) -> None:
        self.messages.append(message)

    def texts(self) -> list[str]:
        return [m.text for m in self.messages]


async def _until(condition: Any, timeout: float = 30.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.05)


def _at(slack: FakeSlack, home: str) -> SlackAdapter:
    adapter = SlackAdapter(
        PlatformContext(
            name="slack",
            home=home,
            config={"api_url": slack.api_url},
            secrets={"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": APP_TOKEN},
        )
    )
    adapter.app_token_check_seconds = 0.2
    return adapter


def test_an_outage_longer_than_slack_redelivers_is_read_back_from_history(tmp_path):
    # Knobs: limit_redelivery (three retries on Slack's schedule, scaled down, then
    # dropped) and go_down/come_back (no Socket Mode connection meanwhile).
    with FakeSlack(ack_seconds=0.3) as slack:
        slack.limit_redelivery((0.0, 0.2, 0.4))
        adapter, host = _at(slack, str(tmp_path)), Recording()
        adapter.read_back_after_seconds = 0  # the outage is seconds here, not minutes

        async def scenario() -> None:
            running = asyncio.ensure_future(adapter.run(host))  # type: ignore[arg-type]
            try:
                await _until(slack.connected)
                slack.user_says("U0BOB", "chatter in the channel", channel=slack.channel)
                slack.user_says("U0ANN", "before the outage")
                await _until(lambda: host.texts() == ["before the outage"])
                await _until(lambda: slack.unacknowledged() == 0)
                slack.go_down()
                slack.user_says("U0ANN", "written during the outage")
                slack.user_says("U0BOB", "and in the channel", channel=slack.channel, mention=True)
                await _until(lambda: len(slack.dropped) == 3)  # Slack gave up on all three
                assert host.texts() == ["before the outage"]
                slack.come_back()
                await _until(lambda: len(host.messages) == 3)
                await asyncio.sleep(0.5)  # nothing more comes
            finally:
                running.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await running
                await adapter.aclose()

        asyncio.run(scenario())
    first, *read_back = host.messages  # each conversation in its order; the two in any
    assert first.text == "before the outage"
    assert {(m.text, m.message_id) for m in read_back} == {
        ("written during the outage", slack.history[slack.dm_channel("U0ANN")][1]["ts"]),
        ("and in the channel", slack.history[slack.channel][1]["ts"]),
    }


def test_a_restart_reads_back_what_was_written_while_hermes_was_down(tmp_path):
    # Knob: limit_redelivery: what no connection took is dropped, as Slack does.
    with FakeSlack(ack_seconds=0.3) as slack:
        slack.limit_redelivery((0.0, 0.1, 0.1))
        first, host = _at(slack, str(tmp_path)), Recording()

        async def run_until(adapter: SlackAdapter, count: int) -> None:
            running = asyncio.ensure_future(adapter.run(host))  # type: ignore[arg-type]
            try:
                await _until(lambda: len(host.messages) >= count)
            finally:
                running.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await running
                await adapter.aclose()

        async def before() -> None:
            running = asyncio.ensure_future(first.run(host))  # type: ignore[arg-type]
            await _until(slack.connected)
            slack.user_says("U0ANN", "first")
            await _until(lambda: len(host.messages) == 1)
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running
            await first.aclose()

        asyncio.run(before())
        slack.user_says("U0ANN", "while Hermes was down")
        deadline = time.monotonic() + 10
        while not slack.dropped:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        asyncio.run(run_until(_at(slack, str(tmp_path)), 2))
    assert host.texts() == ["first", "while Hermes was down"]


def test_a_ratelimited_web_api_call_waits_out_retry_after():
    # Knob: rate_limit (HTTP 429 ratelimited, Retry-After: 1).
    with FakeSlack() as slack:
        slack.rate_limit("chat.postMessage", calls=1, retry_after=1)
        adapter = _at(slack, ".")
        channel = slack.dm_channel("U0ANN")

        async def send() -> float:
            started = time.monotonic()
            try:
                await adapter.send(ChatRef("slack", channel, "private"), "after the limit")
            finally:
                await adapter.aclose()
            return time.monotonic() - started

        waited = asyncio.run(send())
    assert [m.visible for m in slack.sent(channel)] == ["after the limit"]
    assert waited >= 1.0


class FailsAWhile(Recording):
    """A gateway whose store refuses one message more times than Slack redelivers it (a
    full disk for minutes), then takes it."""

    def __init__(self, text: str, times: int) -> None:
        super().__init__()
        self.failing, self.times = text, times

    async def receive(self, message: Any) -> None:
        if message.text == self.failing and self.times:
            self.times -= 1
            raise OSError("the store refused it")
        await super().receive(message)


def test_a_message_that_could_not_be_stored_is_read_back_later(tmp_path):
    # Knob: limit_redelivery: Slack gives up on the unacknowledged event; the read-back
    # must not have moved past it meanwhile.
    with FakeSlack(ack_seconds=0.3) as slack:
        slack.limit_redelivery((0.0, 0.1, 0.1))
        host = FailsAWhile("this one fails a while", times=4)  # Slack tries it 4 times
        adapter = _at(slack, str(tmp_path))

        async def scenario() -> None:
            running = asyncio.ensure_future(adapter.run(host))  # type: ignore[arg-type]
            try:
                await _until(slack.connected)
                slack.user_says("U0ANN", "first")
                await _until(lambda: host.texts() == ["first"])
                slack.user_says("U0ANN", "and a later one")  # stored before it
                slack.user_says("U0ANN", "this one fails a while")
                slack.user_says("U0ANN", "and one more")  # stored while it is refused
                # Here no ledger admits each ts once, so a message may come twice.
                await _until(lambda: len(set(host.texts())) == 4)
                await _until(lambda: not adapter.positions.held())
            finally:
                running.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await running
                await adapter.aclose()

        asyncio.run(scenario())
    assert set(host.texts()) == {
        "first",
        "and a later one",
        "this one fails a while",
        "and one more",
    }
