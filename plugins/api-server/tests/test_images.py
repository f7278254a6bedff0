"""``image_url`` parts through the official ``openai`` client: a data: URL and an http(s)
URL (fetched through the web tools' SSRF guard) reach a model that sees as image parts; a
private address, a disguised file and a broken data: URL are each a 400 in one line."""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import openai
import pytest
from hermes_plugin_api_server.settings import ServerSettings

from hermes_testkit import Reply, ScriptedOpenAIServer
from hermes_testkit.image_checks import images_in
from hermes_testkit.media_files import disguised_program, photo_bytes

from .conftest import KEY, serving

PHOTO = photo_bytes((800, 600))


@pytest.fixture
def picture_site() -> Iterator[str]:
    """A site on loopback serving /cat.jpg, and /moved redirecting to it."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_args: object) -> None:
            pass

        def do_GET(self) -> None:
            if self.path == "/moved":
                self.send_response(302)
                self.send_header("Location", "/cat.jpg")
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "image/jpeg")
            self.send_header("Content-Length", str(len(PHOTO)))
            self.end_headers()
            self.wfile.write(PHOTO)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def _vision_home(home: Path, server: ScriptedOpenAIServer, extra: str = "") -> Path:
    (home / "config.yaml").write_text(
        f"model:\n  base_url: {server.base_url}\n  default: gpt-4o\nagent:\n  retries: 1\n{extra}"
    )
    return home


def _ask(base_url: str, url: str) -> str | None:
    client = openai.OpenAI(base_url=base_url, api_key=KEY, max_retries=0, timeout=60)
    reply = client.chat.completions.create(
        model="hermes",
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is this?"},
                    {"type": "image_url", "image_url": {"url": url}},
                ],
            }
        ],
    )
    return reply.choices[0].message.content


def test_a_data_url_reaches_the_model_as_an_image(home, openai_server) -> None:
    _vision_home(home, openai_server)
    openai_server.queue(Reply.say("A red rectangle."))
    data_url = f"data:image/jpeg;base64,{base64.b64encode(PHOTO).decode()}"
    with serving(home, ServerSettings(host="127.0.0.1", port=0, keys=(KEY,))) as api:
        assert _ask(api.base_url, data_url) == "A red rectangle."
    body = openai_server.requests[0].json
    assert body["messages"][-1]["content"][0] == {"type": "text", "text": "What is this?"}
    ((mime, data),) = images_in(body)
    assert mime == "image/jpeg" and data.startswith(b"\xff\xd8")


def test_an_http_url_is_fetched_through_the_guard_when_its_host_is_allowed(
    home, openai_server, picture_site
) -> None:
    _vision_home(home, openai_server, "web:\n  allow_private_hosts: [127.0.0.1]\n")
    openai_server.queue(Reply.say("A cat, in red."))
    with serving(home, ServerSettings(host="127.0.0.1", port=0, keys=(KEY,))) as api:
        assert _ask(api.base_url, f"{picture_site}/moved") == "A cat, in red."
    assert len(images_in(openai_server.requests[0].json)) == 1


def _refusal(home: Path, url: str) -> str:
    settings = ServerSettings(host="127.0.0.1", port=0, keys=(KEY,))
    with serving(home, settings) as api, pytest.raises(openai.BadRequestError) as caught:
        _ask(api.base_url, url)
    error = caught.value.body
    assert isinstance(error, dict) and error["code"] == "invalid_image"
    message = str(error["message"])
    assert "\n" not in message
    return message


def test_a_private_address_is_refused(home, openai_server, picture_site) -> None:
    _vision_home(home, openai_server)
    message = _refusal(home, f"{picture_site}/cat.jpg")
    assert message.startswith(f"{picture_site}/cat.jpg is refused: 127.0.0.1: it resolves to")
    assert "web.allow_private_hosts" in message
    assert openai_server.requests == []


def test_a_disguised_file_and_a_broken_data_url_are_refused(home, openai_server) -> None:
    _vision_home(home, openai_server)
    program = base64.b64encode(disguised_program()).decode()
    message = _refusal(home, f"data:image/png;base64,{program}")
    assert message == (
        "image.png is refused: it is an executable program (application/x-executable) "
        "sent as an image"
    )
    assert _refusal(home, "data:image/png;base64,@@@") == (
        "a data: URL is refused: its base64 data is not valid"
    )
    assert _refusal(home, "file:///etc/passwd").startswith("file:///etc/passwd is refused: only")
    assert openai_server.requests == []
