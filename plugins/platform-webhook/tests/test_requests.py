"""Requests as a sender makes them: signed or not, JSON or not, sent once or retried; and
where the reply goes."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp
import pytest
from hermes_plugin_platform_webhook.adapter import WebhookAdapter

from hermes_sdk.platform import PlatformContext
from hermes_testkit.platform_tests import RecordingHost

SECRET = "a-long-test-signing-secret"


def signed(body: bytes, secret: str = SECRET, **headers: str) -> dict[str, str]:
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return {"X-Hub-Signature-256": f"sha256={digest}", **headers}


def run(
    home: Path, scenario: Callable[[str, RecordingHost, WebhookAdapter], Awaitable[None]]
) -> RecordingHost:
    route = {"secret_env": "S", "prompt": "PR {{ number }}", "deliver": "telegram:42"}
    adapter = WebhookAdapter(
        PlatformContext(
            name="webhook", home=str(home), config={"routes": {"ci": route}}, secrets={"S": SECRET}
        )
    )
    host = RecordingHost()

    async def main() -> None:
        task = asyncio.ensure_future(adapter.run(host))
        try:
            while adapter.url is None:
                assert not task.done(), task.result()
                await asyncio.sleep(0.02)
            await scenario(f"{adapter.url}/webhooks/ci", host, adapter)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await host.aclose()

    asyncio.run(main())
    return host


def test_only_signed_json_starts_a_turn(tmp_path):
    body = json.dumps({"number": 7}).encode()

    async def scenario(url: str, host: RecordingHost, adapter: WebhookAdapter) -> None:
        async with aiohttp.ClientSession() as http:
            for headers, status in [
                ({}, 401),
                (signed(body, secret="another-secret-entirely"), 401),
                ({"X-Hub-Signature-256": "sha256=" + "0" * 64}, 401),
                ({"X-Hub-Signature-256": "sha256=ünïcode"}, 401),
                (signed(body, **{"X-GitHub-Delivery": "d1"}), 202),
                (signed(body, **{"X-GitHub-Delivery": "d1"}), 202),  # a retry: same id
            ]:
                async with http.post(url, data=body, headers=headers) as response:
                    assert response.status == status, (headers, await response.text())
            async with http.post(url, data=b"not json", headers=signed(b"not json")) as response:
                assert response.status == 400
            async with http.post(url + "x", data=body, headers=signed(body)) as response:
                assert response.status == 404

    host = run(tmp_path, scenario)
    assert [m.text for m in host.messages] == ["PR 7", "PR 7"]
    assert {m.message_id for m in host.messages} == {"d1"}  # the gateway admits it once


def test_the_reply_goes_to_the_routes_chat(tmp_path):
    async def scenario(url: str, host: RecordingHost, adapter: WebhookAdapter) -> None:
        body = json.dumps({"number": 8}).encode()
        async with (
            aiohttp.ClientSession() as http,
            http.post(url, data=body, headers=signed(body)) as response,
        ):
            assert response.status == 202
        await adapter.send(host.messages[0].chat, "Looks good.")

    host = run(tmp_path, scenario)
    assert host.forwarded == [("telegram", "42", "Looks good.")]
    (message,) = host.messages
    assert message.user_id == "route:ci" and message.chat.thread_id == message.message_id


def test_a_reply_outside_a_turn_is_refused_in_one_line(tmp_path):
    from hermes_sdk.platform import ChatRef, NotSent

    route = {"secret_env": "S", "deliver": "telegram:42"}
    adapter = WebhookAdapter(
        PlatformContext(
            name="webhook",
            home=str(tmp_path),
            config={"routes": {"ci": route}},
            secrets={"S": SECRET},
        )
    )
    with pytest.raises(NotSent, match="not a chat"):  # hermes send --to webhook:ci
        asyncio.run(adapter.send(ChatRef("webhook", "ci", "private"), "hello"))
