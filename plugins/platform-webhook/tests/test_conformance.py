"""The webhook adapter passes the platform conformance suite: a person "says" something by
sending a signed request, and "sees" what the route's callback URL receives."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hermes_plugin_platform_webhook.adapter import WebhookAdapter

from hermes_sdk.platform import Choice, NotSent, PlatformAdapter, PlatformContext
from hermes_testkit import PlatformTests
from hermes_testkit.platform_tests import RecordingHost
from hermes_testkit.services import free_port

SECRET = "a-long-test-signing-secret"


class _Callback(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.received.append(json.loads(body))  # type: ignore[attr-defined]
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        return None


def sign(body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class TestWebhookConformance(PlatformTests):
    user = "route:ci"

    @pytest.fixture(autouse=True)
    def callback(self) -> Iterator[None]:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Callback)
        server.received = []  # type: ignore[attr-defined]
        thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
        thread.start()
        self.callback_server = server
        self.port = self.http_port = free_port()
        self.poster = ThreadPoolExecutor(1)  # in order, and off the adapter's event loop
        yield
        self.poster.shutdown(wait=True)
        server.shutdown()

    def make_adapter(self, context: PlatformContext) -> WebhookAdapter:
        return WebhookAdapter(context)

    def platform_context(self, home: str, configured: bool = True) -> PlatformContext:
        callback = f"http://127.0.0.1:{self.callback_server.server_address[1]}/hook"
        route = {"secret_env": "CI_SECRET", "prompt": "{{ text }}", "deliver": callback}
        return PlatformContext(
            name="webhook",
            home=home,
            config={
                "routes": {"ci": route},
                "allow_private_hosts": ["127.0.0.1"],
            },
            secrets={"CI_SECRET": SECRET} if configured else {},
        )

    def _post(self, body: bytes, delivery: str | None = None) -> int:
        headers = {"Content-Type": "application/json", "X-Hub-Signature-256": sign(body)}
        if delivery is not None:
            headers["X-GitHub-Delivery"] = delivery
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/webhooks/ci", data=body, headers=headers
        )
        for _ in range(200):  # until the adapter listens
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    return int(response.status)
            except ConnectionRefusedError:
                pass
            except urllib.error.URLError as exc:
                if not isinstance(exc.reason, ConnectionRefusedError):
                    raise
            time.sleep(0.05)
        raise AssertionError("the webhook listener never came up")

    def user_says(self, user_id: str, text: str) -> None:
        self.last = (json.dumps({"text": text}).encode(), f"delivery-{len(text)}-{text[:20]}")
        self.poster.submit(self._post, *self.last)

    def deliver_again(self, user_id: str) -> None:
        self.poster.submit(self._post, *self.last)  # a sender's retry: the same delivery id

    def seen_by(self, user_id: str) -> list[str]:
        return [str(item["text"]) for item in self.callback_server.received]  # type: ignore[attr-defined]

    def press(self, user_id: str, request_id: str, choice: str) -> None:
        raise NotImplementedError("a webhook has no buttons")

    def test_a_button_press_comes_back(self, tmp_path: Path) -> None:
        """Replaces the suite's test: nobody can answer on a webhook, so a question is
        refused (NotSent), which the gateway takes as a no at once."""

        async def scenario(adapter: PlatformAdapter, host: RecordingHost) -> None:
            chat = (await self._dm(host, "hi")).chat
            choices = [Choice("once", "Once"), Choice("deny", "Deny")]
            with pytest.raises(NotSent):
                await adapter.ask(chat, "Run it?", choices, "req1")
            assert host.presses == [] and self.seen_by(self.user) == []

        self.run_with(tmp_path, scenario)

    def test_a_long_reply_is_numbered_for_the_callback(self, tmp_path: Path) -> None:
        async def scenario(adapter: PlatformAdapter, host: RecordingHost) -> None:
            chat = (await self._dm(host, "hi")).chat
            await adapter.send(chat, "\n\n".join(["word " * 600] * 4))
            received = self.callback_server.received  # type: ignore[attr-defined]
            assert [(r["part"], r["parts"]) for r in received] == [(n, 4) for n in range(1, 5)]
            assert {r["delivery"] for r in received} == {chat.thread_id}

        self.run_with(tmp_path, scenario)


def test_bad_settings_say_what_to_fix(tmp_path: Path) -> None:
    route = {"secret_env": "S", "deliver": "telegram:1"}
    cases = [
        ({"routes": {"r": {**route, "events": 5}}}, "a list of event names"),
        ({"routes": {"r": route}, "port": 8000}, "gateway.http_port"),
        ({"routes": {"r": route}, "allow_private_hosts": ["10.0.0.0/33"]}, "allow_private_hosts"),
        ({"routes": {"r": {**route, "prompt": "{{ oops"}}}, "not a valid template"),
        ({"routes": {"r": {**route, "deliver": "somewhere"}}}, "PLATFORM:CHAT"),
        ({"routes": {}}, "add a route"),
    ]
    from hermes_sdk.platform import PlatformNotConfigured

    for config, wanted in cases:
        context = PlatformContext(
            name="webhook", home=str(tmp_path), config=config, secrets={"S": SECRET}
        )
        with pytest.raises(PlatformNotConfigured, match=wanted) as raised:
            WebhookAdapter(context)
        assert "\n" not in str(raised.value) and SECRET not in repr(raised.value)
    adapter = WebhookAdapter(
        PlatformContext(
            name="webhook",
            home=str(tmp_path),
            config={"routes": {"r": route}},
            secrets={"S": SECRET},
        )
    )
    assert SECRET not in repr(adapter.settings)
