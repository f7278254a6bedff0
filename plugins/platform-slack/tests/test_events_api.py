"""Slack's Events API mode: events POSTed over HTTP, each checked against the signing secret
with slack_sdk's own verifier; a bad or stale signature is a 401 and reaches nobody."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from urllib.parse import urlencode

import aiohttp
import pytest
from hermes_plugin_platform_slack.adapter import SlackAdapter
from hermes_plugin_platform_slack.testing import BOT_TOKEN, FakeSlack
from slack_sdk.signature import SignatureVerifier

from hermes_sdk.platform import PlatformContext, PlatformNotConfigured
from hermes_testkit.platform_tests import RecordingHost
from hermes_testkit.services import free_port

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


def signed(body: bytes, *, secret: str = SECRET, age: int = 0) -> dict[str, str]:
    timestamp = str(int(time.time()) - age)
    signature = SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=body)
    return {"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": str(signature)}


def run_events(
    slack: FakeSlack,
    home: Path,
    scenario: Callable[[str, RecordingHost], Awaitable[None]],
) -> RecordingHost:
    port = free_port()
    adapter = SlackAdapter(
        PlatformContext(
            name="slack",
            home=str(home),
            config={"api_url": slack.api_url, "mode": "events"},
            secrets={"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SECRET},
        )
    )
    host = RecordingHost(http_port=port)

    async def main() -> None:
        task = asyncio.ensure_future(adapter.run(host))
        try:
            while adapter.events_url is None:
                assert not task.done(), task.result()
                await asyncio.sleep(0.02)
            assert adapter.events_url == f"http://127.0.0.1:{port}/slack/events"
            await scenario(adapter.events_url, host)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await adapter.aclose()
            await host.aclose()

    asyncio.run(main())
    return host


def dm(text: str, ts: str = "1800000000.000100") -> bytes:
    event = {
        "type": "message",
        "channel": "D0PERSON",
        "channel_type": "im",
        "user": "U0PERSON",
        "text": text,
        "ts": ts,
    }
    return json.dumps({"type": "event_callback", "event_id": "Ev1", "event": event}).encode()


def test_signed_events_arrive_and_bad_ones_are_refused(slack, tmp_path):
    async def scenario(url: str, host: RecordingHost) -> None:
        async with aiohttp.ClientSession() as http:
            challenge = json.dumps({"type": "url_verification", "challenge": "abc"}).encode()
            async with http.post(url, data=challenge, headers=signed(challenge)) as response:
                assert response.status == 200 and (await response.json()) == {"challenge": "abc"}
            body = dm("hello over HTTP")
            async with http.post(url, data=body, headers=signed(body)) as response:
                assert response.status == 200
            forged = dm("forged", ts="1800000000.000200")
            async with http.post(
                url, data=forged, headers=signed(forged, secret="x" * 32)
            ) as response:
                assert response.status == 401
            stale = dm("replayed later", ts="1800000000.000300")
            async with http.post(url, data=stale, headers=signed(stale, age=600)) as response:
                assert response.status == 401
            async with http.post(url, data=forged) as response:
                assert response.status == 401

    host = run_events(slack, tmp_path, scenario)
    assert [m.text for m in host.messages] == ["hello over HTTP"]


def test_a_button_press_arrives_as_a_form(slack, tmp_path):
    payload = {
        "type": "block_actions",
        "user": {"id": "U0PERSON"},
        "channel": {"id": "D0PERSON"},
        "container": {
            "type": "message",
            "message_ts": "1800000000.000500",
            "channel_id": "D0PERSON",
        },
        "message": {"text": "Proceed?", "ts": "1800000000.000500"},
        "actions": [{"type": "button", "action_id": "choice-0", "value": "req1:yes"}],
    }

    async def scenario(url: str, host: RecordingHost) -> None:
        body = urlencode({"payload": json.dumps(payload)}).encode()
        headers = {**signed(body), "Content-Type": "application/x-www-form-urlencoded"}
        async with (
            aiohttp.ClientSession() as http,
            http.post(url, data=body, headers=headers) as response,
        ):
            assert response.status == 200

    host = run_events(slack, tmp_path, scenario)
    (press,) = host.presses
    assert (press.user_id, press.request_id, press.choice) == ("U0PERSON", "req1", "yes")


def test_events_mode_needs_the_signing_secret(tmp_path):
    with pytest.raises(PlatformNotConfigured, match="SLACK_SIGNING_SECRET"):
        SlackAdapter(
            PlatformContext(
                name="slack",
                home=str(tmp_path),
                config={"mode": "events"},
                secrets={"SLACK_BOT_TOKEN": BOT_TOKEN},
            )
        )
