"""The Slack adapter passes the platform conformance suite: unmodified slack_sdk against the
SDK's Slack server on loopback (Web API and Socket Mode)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hermes_plugin_platform_slack.adapter import SlackAdapter
from hermes_plugin_platform_slack.testing import APP_TOKEN, BOT_TOKEN, FakeSlack

from hermes_sdk.platform import PlatformContext
from hermes_testkit import PlatformTests


class TestSlackConformance(PlatformTests):
    user = "U0PERSON"

    @pytest.fixture(autouse=True)
    def server(self) -> Iterator[None]:
        with FakeSlack() as fake:
            self.slack = fake
            yield

    def make_adapter(self, context: PlatformContext) -> SlackAdapter:
        return SlackAdapter(context)

    def platform_context(self, home: str, configured: bool = True) -> PlatformContext:
        secrets = {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": APP_TOKEN}
        return PlatformContext(
            name="slack",
            home=home,
            config={"api_url": self.slack.api_url},
            secrets=secrets if configured else {},
        )

    def user_says(self, user_id: str, text: str) -> None:
        self.slack.user_says(user_id, text)

    def seen_by(self, user_id: str) -> list[str]:
        return [m.visible for m in self.slack.sent(self.slack.dm_channel(user_id))]

    def deliver_again(self, user_id: str) -> None:
        self.slack.deliver_again()

    def user_sends_file(self, user_id: str, data: bytes, name: str, mime: str) -> None:
        self.slack.user_sends_file(user_id, data, name, mime)

    def press(self, user_id: str, request_id: str, choice: str) -> None:
        for message in self.slack.sent(self.slack.dm_channel(user_id)):
            for button in message.buttons():
                if button.get("value") == f"{request_id}:{choice}":
                    self.slack.press(user_id, message, str(button["action_id"]))
                    return
        raise AssertionError(f"no button {choice!r} for {request_id}")


def test_the_bot_token_goes_only_to_slacks_file_hosts(tmp_path) -> None:
    context = PlatformContext(
        name="slack",
        home=str(tmp_path),
        config={},
        secrets={"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": APP_TOKEN},
    )
    adapter = SlackAdapter(context)
    assert adapter._sends_token_to("https://files.slack.com/files-pri/T0-F0/download/a.pdf")
    assert not adapter._sends_token_to("https://files.slack.com.evil.example/a.pdf")
    assert not adapter._sends_token_to("http://127.0.0.1:9/a.pdf")  # no api_url set to it
