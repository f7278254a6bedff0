"""The browser in a long-lived gateway: fifty people's sessions call the browser at once,
some pages hang past the timeout and a renderer is killed among them, and at the end the
gateway holds at most one browser process tree (hermes-agent's gateways piled them up)."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import psutil
import pytest
from hermes_plugin_toolset_browser.browser import browsers
from hermes_plugin_toolset_browser.processes import browser_trees, owner_tag, renderer_processes

from hermes_testkit import Reply

from .conftest import OWNER

PEOPLE = [OWNER, *range(2001, 2050)]
MAX_SESSIONS = 8


class _Pages(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        if self.path.startswith("/hang"):
            self.server.released.wait(60)  # type: ignore[attr-defined]
            return
        body = (
            f"<html><head><title>Page {self.path}</title></head><body><p>PAGE{self.path}</p>"
            "<script>document.body.insertAdjacentHTML('beforeend', '<p>BUILT</p>')</script>"
            "</body></html>"
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def pages():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    server.daemon_threads = True
    server.released = threading.Event()  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.released.set()  # type: ignore[attr-defined]
    server.shutdown()
    server.server_close()


def renderers() -> list[psutil.Process]:
    """The renderer processes of this test process's browser."""
    return renderer_processes(owner_tag())


def test_fifty_sessions_browsing_leave_at_most_one_browser(
    running_gateway, telegram, openai_server, pages
):
    port = pages.server_address[1]

    def respond(body: Any) -> Reply:
        last = body["messages"][-1]
        if last["role"] == "tool":
            result = str(last["content"])
            return Reply.say("Seen: " + ("BUILT" if "BUILT" in result else result[:80]))
        number = int(str(last["content"]).split()[-1])
        path = f"/hang/{number}" if number % 10 == 3 else f"/page/{number}"
        return Reply.tool_call("browser_navigate", {"url": f"http://127.0.0.1:{port}{path}"})

    openai_server.respond = respond
    running_gateway(
        extra="    allow_all: true\n",
        top=(
            f"web:\n  allow_private_hosts: ['127.0.0.1:{port}']\n"
            f"browser:\n  timeout_seconds: 5\n  max_sessions: {MAX_SESSIONS}\n"
        ),
    )
    for number, person in enumerate(PEOPLE):
        telegram.user_says(person, f"open page {number}")
        if number == 20:  # a renderer dies among the calls
            deadline = time.monotonic() + 20
            while not renderers() and time.monotonic() < deadline:
                time.sleep(0.05)
            renderers()[0].kill()
    for number, person in enumerate(PEOPLE):
        reply = telegram.wait_for_message(person, "Seen:", timeout=120)
        if number % 10 == 3:
            assert "timed out" in reply.visible, reply.visible
    replies = {p: telegram.wait_for_message(p, "Seen:").visible for p in PEOPLE}
    unserved = {p: text for p, text in replies.items() if "BUILT" not in text}
    # All but the five that hung, and the killed renderer's page.
    assert len(unserved) <= 6, unserved
    assert len(browser_trees(owner_tag())) <= 1
    assert browsers().session_count() <= MAX_SESSIONS
    # Closed contexts' renderers exit (Chromium keeps a spare, and one per site a page used).
    deadline = time.monotonic() + 10
    while len(renderers()) > 2 * MAX_SESSIONS and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(renderers()) <= 2 * MAX_SESSIONS
