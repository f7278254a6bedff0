"""The API server passes the front-end conformance suite, driven by the official async
openai client: a stop is the client closing its request."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import openai
from hermes_plugin_api_server.server import SESSION_HEADER, ApiServer
from hermes_plugin_api_server.settings import ServerSettings

from hermes_sdk.runtime import open_runtime
from hermes_testkit import FrontendTests

KEY = "sk-conformance-key"


class OpenAIClientDriver:
    def __init__(self, base_url: str) -> None:
        self.client = openai.AsyncOpenAI(base_url=base_url, api_key=KEY, max_retries=0)
        self.session: str | None = None
        self.approve = False
        self.questions: list[str] = []  # nobody is asked over HTTP
        self._current: asyncio.Task[object] | None = None

    async def send(self, text: str) -> str:
        self._current = asyncio.current_task()
        headers = {SESSION_HEADER: self.session} if self.session else {}
        raw = await self.client.chat.completions.with_raw_response.create(
            model="hermes", messages=[{"role": "user", "content": text}], extra_headers=headers
        )
        self.session = raw.headers[SESSION_HEADER]
        return raw.parse().choices[0].message.content or ""

    async def stop(self) -> None:
        if self._current is not None:
            self._current.cancel()  # the request's connection closes


class TestApiServerFrontend(FrontendTests):
    answers_questions = False

    @contextlib.asynccontextmanager
    async def connect(self, home: Path) -> AsyncIterator[OpenAIClientDriver]:
        async with open_runtime(home) as runtime:
            server = ApiServer(ServerSettings(host="127.0.0.1", port=0, keys=(KEY,)))
            serving = asyncio.ensure_future(server.run(runtime))
            await asyncio.wait_for(server.ready.wait(), 30)
            driver = OpenAIClientDriver(f"http://127.0.0.1:{server.bound_port}/v1")
            try:
                yield driver
            finally:
                await driver.client.close()
                serving.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await serving
