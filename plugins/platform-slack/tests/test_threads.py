"""A thread the bot answered in stays its thread after a restart: a follow-up there needs no
mention."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from hermes_plugin_platform_slack.adapter import SlackAdapter
from hermes_plugin_platform_slack.testing import APP_TOKEN, BOT_TOKEN, FakeSlack

from hermes_sdk.platform import PlatformContext
from hermes_testkit.platform_tests import RecordingHost


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


def adapter(slack: FakeSlack, home: Path) -> SlackAdapter:
    return SlackAdapter(
        PlatformContext(
            name="slack",
            home=str(home),
            config={"api_url": slack.api_url},
            secrets={"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": APP_TOKEN},
        )
    )


async def running(slack_adapter: SlackAdapter, host: RecordingHost, count: int) -> None:
    task = asyncio.ensure_future(slack_adapter.run(host))
    try:
        for _ in range(300):
            if len(host.messages) >= count:
                break
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.3)  # and whatever else comes
        if len(host.messages) >= 1 and host.messages[0].chat.thread_id:
            await slack_adapter.send(host.messages[0].chat, "answered in the thread")
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await slack_adapter.aclose()


def test_a_follow_up_needs_no_mention_after_a_restart(slack, tmp_path):
    asked = slack.user_says("U0PERSON", "plan it", channel=slack.channel, mention=True)
    first = RecordingHost()
    asyncio.run(running(adapter(slack, tmp_path), first, 1))
    assert first.messages[0].chat.thread_id == asked

    slack.user_says("U0PERSON", "and the next step?", channel=slack.channel, thread_ts=asked)
    slack.user_says("U0PERSON", "elsewhere, no mention", channel=slack.channel, thread_ts="1.0")
    again = RecordingHost()
    asyncio.run(running(adapter(slack, tmp_path), again, 1))
    texts = [m.text for m in again.messages]
    assert "and the next step?" in texts and "elsewhere, no mention" not in texts


class _FailsOnce(RecordingHost):
    """A gateway whose first store fails (a full disk, a locked database)."""

    def __init__(self) -> None:
        super().__init__()
        self.failed = 0

    async def receive(self, message):  # type: ignore[no-untyped-def]
        if not self.failed:
            self.failed += 1
            raise OSError("disk full")
        await super().receive(message)


def test_an_event_not_stored_is_not_acknowledged_and_comes_again(tmp_path):
    with FakeSlack(ack_seconds=0.5) as slack:
        slack.user_says("U0PERSON", "keep this")
        host = _FailsOnce()
        asyncio.run(running(adapter(slack, tmp_path), host, 1))
        assert host.failed == 1 and [m.text for m in host.messages] == ["keep this"]
        attempts = [d["retry_attempt"] for d in slack.deliveries if d["type"] == "events_api"]
        assert attempts[0] == 0 and max(attempts) >= 1  # Slack delivered it again
        assert slack.unacknowledged() == 0
