"""The web UI passes the front-end conformance suite, driven the way its page does: a
cookie and CSRF token from the page, posts, and the server-sent events of the turn, with
approvals answered as the buttons answer them."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
from hermes_plugin_web_ui.server import WebUi
from hermes_plugin_web_ui.settings import WebSettings

from hermes_sdk.runtime import open_runtime
from hermes_testkit import FrontendTests

CSRF = re.compile(r'<meta name="csrf-token" content="([^"]*)">')


class WebClient:
    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
        self.csrf = ""
        self.session_id: str | None = None
        self.approve = False
        self.questions: list[str] = []
        self.events: list[dict[str, Any]] = []

    async def close(self) -> None:
        await self.http.close()

    async def open(self, path: str = "/chat") -> str:
        async with self.http.get(self.base_url + path) as response:
            page = await response.text()
            assert response.status == 200, (response.status, page[:300])
        found = CSRF.search(page)
        self.csrf = found.group(1) if found else ""
        return page

    async def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        headers = {"X-CSRF-Token": self.csrf}
        async with self.http.post(self.base_url + path, json=body, headers=headers) as response:
            return response.status, await response.json(content_type=None)

    async def send(self, text: str) -> str:
        if not self.csrf:
            await self.open()
        status, body = await self.post("/api/turns", {"text": text, "session_id": self.session_id})
        assert status == 200, body
        if "output" in body:
            return str(body["output"])
        self.session_id = body["session_id"]
        return await self.follow()

    async def follow(self) -> str:
        """Read the turn's events to its end; answer approvals; the reply's text."""
        url = f"{self.base_url}/api/sessions/{self.session_id}/events?after=-1"
        reply: list[str] = []
        async with self.http.get(url) as response:
            async for raw in response.content:
                line = raw.decode().rstrip("\n")
                if not line.startswith("data: "):
                    continue
                event = json.loads(line[6:])
                if not event:
                    continue
                self.events.append(event)
                if event["type"] == "text":
                    reply = [] if event["restarted"] else reply
                    reply.append(event["text"])
                elif event["type"] == "question":
                    self.questions.append(event.get("command") or event["text"])
                    value = "once" if self.approve else "deny"
                    status, body = await self.post(
                        f"/api/questions/{event['id']}", {"value": value}
                    )
                    assert status == 200, body
                elif event["type"] == "ended":
                    return "".join(reply)
        raise AssertionError("the event stream ended before the turn did")

    async def stop(self) -> None:
        if self.session_id is not None:
            await self.post(f"/api/sessions/{self.session_id}/stop", {})


class TestWebUiFrontend(FrontendTests):
    answers_questions = True

    @contextlib.asynccontextmanager
    async def connect(self, home: Path) -> AsyncIterator[WebClient]:
        async with open_runtime(home) as runtime:
            server = WebUi(WebSettings(host="127.0.0.1", port=0, key=None, home=str(home)))
            serving = asyncio.ensure_future(server.run(runtime))
            await asyncio.wait_for(server.ready.wait(), 30)
            client = WebClient(f"http://127.0.0.1:{server.bound_port}")
            await client.open(server.login_url.split(str(server.bound_port), 1)[1])
            try:
                yield client
            finally:
                await client.close()
                serving.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await serving
