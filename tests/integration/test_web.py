"""The web tools through the whole agent: ``hermes chat -q`` with the scripted model calling
web_extract and web_search, the SSRF guard refusing what config did not open, and a
search key read from .env."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hermes_testkit import Reply

PAGE = (
    "<html><head><title>Opening hours</title><script>var x='SCRIPT';</script></head><body>"
    "<nav>MENU</nav><article><h1>Opening hours</h1><p>The library opens at nine and closes "
    "at six on weekdays, and at one on Saturdays; it is closed on Sundays and holidays.</p>"
    "<p>Members may borrow up to twelve books for four weeks.</p></article></body></html>"
)


class _Site(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.path.startswith("/brave"):
            ok = self.headers.get("X-Subscription-Token") == "key-from-dotenv"
            body = json.dumps(
                {
                    "web": {
                        "results": [
                            {
                                "title": "Library",
                                "url": "https://l.example/",
                                "description": "hours",
                            }
                        ]
                    }
                }
                if ok
                else {"error": "bad key"}
            ).encode()
            self.send_response(200 if ok else 401)
            self.send_header("Content-Type", "application/json")
        else:
            body = PAGE.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def site() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()


def test_the_model_reads_a_page_and_searches_and_private_hosts_stay_shut(
    hermes, openai_server, site, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    hermes.config(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
        "agent:\n  retries: 1\nlearning:\n  review: false\n"
        f"web:\n  allow_private_hosts: ['127.0.0.1:{site}']\n"
        f"  search: {{backend: brave, brave_url: 'http://127.0.0.1:{site}/brave'}}\n"
    )
    hermes.dotenv("BRAVE_API_KEY=key-from-dotenv\n")
    openai_server.queue(
        Reply.calls(
            [
                ("web_extract", {"urls": [f"http://127.0.0.1:{site}/hours"]}),
                ("web_search", {"query": "library hours"}),
                ("web_extract", {"urls": ["http://localhost:22/", "http://169.254.169.254/"]}),
            ]
        ),
        Reply.say("It opens at nine."),
    )
    result = hermes("chat", "-q", "when does the library open?")
    assert result.code == 0, result.err
    page, found, refused = (
        m["content"] for m in openai_server.requests[-1].json["messages"] if m["role"] == "tool"
    )
    assert "opens at nine" in page and "SCRIPT" not in page and "MENU" not in page
    assert "Library" in found and "https://l.example/" in found
    assert "refused localhost" in refused and "refused 169.254.169.254" in refused
    assert "key-from-dotenv" not in json.dumps(openai_server.requests[-1].json)
