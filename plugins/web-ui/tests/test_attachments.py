"""Files sent with a message: sniffed and kept in the media cache, given to the model (a
model that sees gets the image), shown in the transcript; a program named as a picture is
refused with one line and nothing is sent."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import aiohttp

from hermes_testkit import Reply, ScriptedOpenAIServer
from hermes_testkit.image_checks import images_in
from hermes_testkit.media_files import disguised_program, photo_bytes

CSRF = re.compile(r'<meta name="csrf-token" content="([^"]*)">')


def _vision(home: Path, server: ScriptedOpenAIServer) -> None:
    (home / "config.yaml").write_text(
        f"model:\n  base_url: {server.base_url}\n  default: gpt-4o\n"
        "agent:\n  retries: 1\nlearning:\n  review: false\n",
        encoding="utf-8",
    )


async def _send_files(
    http: aiohttp.ClientSession, base: str, csrf: str, text: str, files: list[tuple[str, bytes]]
) -> tuple[int, dict[str, Any]]:
    form = aiohttp.FormData()
    form.add_field("text", text)
    for name, data in files:
        form.add_field("files", data, filename=name, content_type="image/jpeg")
    async with http.post(base + "/api/turns", data=form, headers={"X-CSRF-Token": csrf}) as r:
        return r.status, await r.json()


def test_an_image_reaches_the_model_and_shows_in_the_transcript(
    home: Path, openai_server: ScriptedOpenAIServer, serve_web_ui: Any
) -> None:
    _vision(home, openai_server)

    async def scenario(base: str, login: str) -> None:
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            async with http.get(base + login) as response:
                csrf = CSRF.search(await response.text()).group(1)  # type: ignore[union-attr]
            openai_server.queue(Reply.say("A red square."))
            status, body = await _send_files(
                http, base, csrf, "What is this?", [("photo.jpg", photo_bytes((64, 48)))]
            )
            assert status == 200, body
            session = body["session_id"]
            url = f"{base}/api/sessions/{session}/events?after=-1"
            async with http.get(url) as response:
                stream = await response.text()
            assert '"attachments": [{"name": "photo.jpg", "kind": "image"' in stream
            ((mime, data),) = images_in(openai_server.requests[-1].json)
            assert mime == "image/jpeg" and data.startswith(b"\xff\xd8")
            async with http.get(f"{base}/chat/{session}") as response:
                page = await response.text()
            (source,) = re.findall(r'<img src="(/media/[0-9a-f]{32}\.jpg)"', page)
            async with http.get(base + source) as response:
                assert response.status == 200
                assert response.content_type == "image/jpeg"
                assert (await response.read()).startswith(b"\xff\xd8")
            for bad in ("/media/..%2Fconfig.yaml", "/media/" + "0" * 32 + ".jpg"):
                async with http.get(base + bad) as response:
                    assert response.status == 404

            requests = len(openai_server.requests)
            status, body = await _send_files(
                http, base, csrf, "and this?", [("cat.jpg", disguised_program())]
            )
            assert status == 400
            assert body["error"].startswith("cat.jpg is refused: it is")
            assert len(openai_server.requests) == requests  # nothing reached the model

    with serve_web_ui(home) as running:
        asyncio.run(scenario(running.base_url, running.login_path))
