"""The web UI in Debian's headless Chromium, driven by Playwright against a real
``hermes web`` process: a turn whose command asks approval (a button), a search that
finds an earlier session which is then resumed, a pending memory write approved from the
page, and the access rules (no cookie, a forged CSRF token, a wrong key). Screenshots of
the chat, sessions and status pages are saved (HERMES_SCREENSHOTS, else .cache/screenshots
in the repository)."""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_testkit import Reply, ScriptedOpenAIServer

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
KEY = "web-ui-browser-key-4f9a2c7e"
WRONG_KEY = "not-the-key-0d1e2f3a4b5c"
SCREENSHOTS = Path(
    os.environ.get("HERMES_SCREENSHOTS") or Path(__file__).parents[2] / ".cache/screenshots"
)
RISKY = "chmod -R 777 ./scratch"

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="needs Debian's chromium (apt-get install chromium)"
)


class HermesWeb:
    """``hermes web`` in a process of its own, on a port the OS chose."""

    def __init__(self, home: Path, work: Path) -> None:
        env = {**os.environ, "HERMES_HOME": str(home), "PYTHONUNBUFFERED": "1"}
        self.log = home / "web-output.log"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "hermes_kernel.cli.main", "web", "--port", "0"],
            env=env,
            cwd=work,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self.url = self._wait_for_url()

    def _wait_for_url(self) -> str:
        assert self.process.stderr is not None
        seen = b""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.process.stderr], [], [], 0.5)
            if ready:
                chunk = os.read(self.process.stderr.fileno(), 4096)
                if not chunk:
                    break
                seen += chunk
                found = re.search(rb"hermes web: (http://[^ ]+/) ", seen)
                if found:
                    return found.group(1).decode().rstrip("/")
        self.process.kill()
        raise AssertionError(f"hermes web did not start: {seen.decode(errors='replace')}")

    def stop(self) -> str:
        self.process.terminate()
        try:
            _, err = self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, err = self.process.communicate()
        return err.decode(errors="replace")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox"]
        )
        yield chromium
        chromium.close()


@pytest.fixture
def web(tmp_path: Path, openai_server: ScriptedOpenAIServer) -> Iterator[HermesWeb]:
    home = tmp_path / "home"
    work = tmp_path / "work"
    (work / "scratch").mkdir(parents=True)
    home.mkdir()
    (home / "config.yaml").write_text(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
        "agent:\n  backend: local\n  retries: 1\n"
        "approvals:\n  mode: manual\n  timeout_seconds: 60\n"
        "learning:\n  review: false\nmemory:\n  write_approval: true\n",
        encoding="utf-8",
    )
    (home / ".env").write_text(f"WEB_UI_KEY={KEY}\n", encoding="utf-8")
    (home / ".env").chmod(0o600)
    server = HermesWeb(home, work)
    server.home, server.work = home, work  # type: ignore[attr-defined]  # for the test's checks
    yield server
    if server.process.poll() is None:
        server.stop()


def log_in(page: Any, url: str, key: str = KEY) -> None:
    page.goto(url + "/chat")
    assert "/login" in page.url  # nothing but the login form without the cookie
    page.fill('input[name="key"]', key)
    page.click("form.login button")


def send(page: Any, text: str) -> None:
    page.fill("#composer textarea", text)
    page.press("#composer textarea", "Enter")


def user_texts(request: Any) -> list[str]:
    return [m["content"] for m in request.json["messages"] if m["role"] == "user"]


def test_a_user_chats_approves_searches_resumes_and_approves_a_memory_write(
    browser: Any, web: HermesWeb, openai_server: ScriptedOpenAIServer
) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    page = context.new_page()
    log_in(page, web.url)
    page.wait_for_url(re.compile(r"/chat$"))

    # A turn: the command asks approval, the button allows it, the reply streams in.
    reply = "Done: the folder **scratch** is open to everyone now. " + "It took one command. " * 8
    openai_server.queue(
        Reply.tool_call("terminal", {"command": RISKY}),
        Reply.say(reply, chunk_delay_seconds=0.03),
    )
    send(page, "Open up the scratch folder for the zebra team")
    question = page.wait_for_selector(".question.approval")
    assert RISKY in question.inner_text()
    scratch = web.work / "scratch"  # type: ignore[attr-defined]
    assert scratch.stat().st_mode & 0o777 != 0o777  # not before the click
    page.click('.question button[data-value="once"]')
    page.wait_for_selector(".md.streaming")  # the reply arrives piece by piece ...
    page.wait_for_selector(".msg.assistant .md strong:has-text('scratch')")  # ... then rendered
    assert scratch.stat().st_mode & 0o777 == 0o777  # the command ran
    tool = page.locator("details.tool.ok")
    assert tool.count() == 1 and "terminal" in tool.inner_text()
    assert "answered: once" in page.inner_text(".question")
    first_session = page.url.rsplit("/", 1)[1]
    page.screenshot(path=str(SCREENSHOTS / "web-ui-chat.png"), full_page=True)

    # Another session, then the search finds the first one and it is resumed.
    openai_server.queue(Reply.say("Hello again."))
    page.click("a.new")
    page.wait_for_url(re.compile(r"/chat$"))
    send(page, "Something else entirely")
    page.wait_for_selector(".msg.assistant .md:has-text('Hello again.')")
    assert page.url.rsplit("/", 1)[1] != first_session
    page.goto(web.url + "/sessions")
    page.fill('input[name="q"]', "zebra")
    page.press('input[name="q"]', "Enter")
    hit = page.wait_for_selector(".hits li")
    assert hit.inner_text().count("\n") >= 1
    assert page.inner_text(".hits mark").lower() == "zebra"
    assert page.locator(".hits li").count() == 1
    page.screenshot(path=str(SCREENSHOTS / "web-ui-sessions.png"), full_page=True)
    page.click(".hits a.resume")
    page.wait_for_url(re.compile(f"/chat/{first_session}$"))
    assert "zebra team" in page.inner_text("#log")  # the earlier transcript is shown
    openai_server.queue(Reply.say("We are back in the zebra session."))
    send(page, "Are we still in the same conversation?")
    page.wait_for_selector(".md:has-text('We are back in the zebra session.')")
    assert user_texts(openai_server.requests[-1]) == [
        "Open up the scratch folder for the zebra team",
        "Are we still in the same conversation?",
    ]

    # A memory write waits for approval; it is approved from the page.
    openai_server.queue(
        Reply.tool_call(
            "memory", {"action": "add", "target": "user", "content": "Keeps a zebra named Zed."}
        ),
        Reply.say("I will remember that once you approve it."),
    )
    send(page, "Remember that I keep a zebra named Zed")
    page.wait_for_selector(".md:has-text('once you approve it')")
    home: Path = web.home  # type: ignore[attr-defined]
    user_file = home / "memories" / "USER.md"
    assert "Zed" not in (user_file.read_text() if user_file.exists() else "")
    page.click("nav a[href='/pending']")
    write = page.wait_for_selector("article.pending")
    assert "Keeps a zebra named Zed." in write.inner_text()
    assert "+" in page.inner_text("pre.diff .add")
    write.query_selector("button.approve").click()  # type: ignore[union-attr]
    page.wait_for_selector(".flash")
    assert "approved" in page.inner_text(".flash").lower()
    assert page.locator("article.pending").count() == 0
    assert "Keeps a zebra named Zed." in user_file.read_text()

    # A file attached to a message reaches the model and shows in the transcript.
    notes = web.work / "zebras.txt"  # type: ignore[attr-defined]
    notes.write_text("zebra count: 12\n", encoding="utf-8")
    page.goto(web.url + f"/chat/{first_session}")
    page.set_input_files("#files", str(notes))
    assert "zebras.txt" in page.inner_text("#chosen")
    openai_server.queue(Reply.say("Twelve zebras."))
    send(page, "How many are there?")
    page.wait_for_selector(".md:has-text('Twelve zebras.')")
    assert "zebra count: 12" in json.dumps(openai_server.requests[-1].json["messages"][-1])
    assert page.inner_text(".msg.user a.file") == "zebras.txt"

    # Status: the same facts as `hermes status`, and usage as charts.
    page.goto(web.url + "/status")
    labels = page.locator("dl.status dt").all_inner_texts()
    assert labels[:4] == ["Home", "Model", "Backend", "Plugins"]
    assert labels[-2:] == ["Sessions", "Disk"]
    assert page.locator("svg.chart rect").count() == 30
    assert "test-model" in page.text_content("ul.rows")
    page.screenshot(path=str(SCREENSHOTS / "web-ui-status.png"), full_page=True)

    page.goto(web.url + "/plugins")
    assert "web-ui" in page.inner_text("table.plugins")
    context.close()


def test_requests_without_the_cookie_or_with_a_forged_token_are_refused(
    browser: Any, web: HermesWeb
) -> None:
    stranger = browser.new_context()
    refused = stranger.request.post(
        web.url + "/api/turns", data={"text": "rm -rf ~"}, fail_on_status_code=False
    )
    assert refused.status in {401, 403}
    page = stranger.new_page()
    page.goto(web.url + "/sessions")
    assert "/login" in page.url

    # A wrong key is refused, and the refusal is logged without the key.
    log_in(page, web.url, WRONG_KEY)
    assert "wrong key" in page.inner_text(".error")
    log_in(page, web.url)
    page.wait_for_url(re.compile(r"/chat$"))
    forged = stranger.request.post(
        web.url + "/api/turns",
        data={"text": "hello"},
        headers={"X-CSRF-Token": "0" * 64},
        fail_on_status_code=False,
    )
    assert forged.status == 403
    assert "CSRF" in forged.json()["error"]
    forged_form = stranger.request.post(
        web.url + "/pending/memory/abcdef",
        form={"csrf": "f" * 64, "action": "approve"},
        fail_on_status_code=False,
    )
    assert forged_form.status == 403
    cookies = {c["name"]: c for c in stranger.cookies()}
    assert cookies["hermes_web"]["httpOnly"] and cookies["hermes_web"]["sameSite"] == "Lax"
    stranger.close()
    output = web.stop()
    logs = output + "".join(
        p.read_text(errors="replace")
        for p in (web.home / "logs").glob("*.log")  # type: ignore[attr-defined]
    )
    assert "refused a login" in logs
    assert WRONG_KEY not in logs and KEY not in logs


def fits(page: Any) -> None:
    """Nothing sticks out sideways: the page scrolls only up and down."""
    wide, screen = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert wide <= screen, f"{page.url} is {wide} px wide on a {screen} px screen"


def on_screen(page: Any, selector: str) -> None:
    """Shown, and within the screen's width (not cut off at its right edge)."""
    box = page.locator(selector).bounding_box()
    screen = page.evaluate("window.innerWidth")
    assert box is not None, f"{selector} is not shown"
    assert box["x"] >= 0 and box["x"] + box["width"] <= screen, f"{selector} at {box}"


@pytest.mark.parametrize("width", [390, 1280], ids=["phone", "desktop"])
def test_every_page_fits_the_screen_and_the_chat_says_what_it_is_doing(
    browser: Any, web: HermesWeb, openai_server: ScriptedOpenAIServer, width: int
) -> None:
    from playwright.sync_api import expect

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    device = "phone" if width < 500 else "desktop"
    context = browser.new_context(viewport={"width": width, "height": 844 if width < 500 else 800})
    page = context.new_page()
    log_in(page, web.url)
    page.wait_for_url(re.compile(r"/chat$"))
    fits(page)
    on_screen(page, "#send")

    # While the model works and nothing shows yet, a row says so and counts the seconds.
    openai_server.queue(Reply.say("A considered answer. " * 40, delay_seconds=4))
    send(page, "Why is https://example.org/" + "a-very-long-path-segment-" * 12 + " slow?")
    page.wait_for_selector(".thinking")
    on_screen(page, "#stop")
    on_screen(page, "#send")
    expect(page.locator(".thinking")).to_have_text(re.compile(r"Thinking… [1-9] s"))
    # A command goes while the turn runs; the turn goes on.
    send(page, "/help")
    page.wait_for_selector(".msg.user.command:has-text('/help')")
    page.wait_for_selector("pre.notice:has-text('/compact')")
    on_screen(page, "#stop")
    page.wait_for_selector(".msg.assistant .md:has-text('A considered answer.')")
    assert page.locator(".thinking").count() == 0
    # The turn has ended when the send button is back (a command sent while the answer
    # streams would be refused: /model waits for the turn).
    expect(page.locator("#send")).to_be_enabled()
    fits(page)

    # A slash command is echoed with its answer, and /model changes the header.
    send(page, "/model second-model")
    page.wait_for_selector(".msg.user.command:has-text('/model second-model')")
    expect(page.locator(".chat-head .model")).to_have_text(re.compile(r"/ second-model$"))
    assert (
        "now using local-endpoint / second-model"
        in page.locator("#log pre.notice").last.inner_text()
    )
    page.reload()  # the header stays with the model chosen, as /model alone does
    expect(page.locator(".chat-head .model")).to_have_text(re.compile(r"/ second-model$"))
    send(page, "/model")
    page.wait_for_selector("pre.notice:has-text('/ second-model')")
    # A command that changes the transcript redraws the page, and its answer follows it.
    send(page, "/undo")
    page.wait_for_selector("pre.notice:has-text('removed the last exchange')")
    page.wait_for_selector(".msg.user.command:has-text('/undo')")

    # A failure is a card in words that ends with the fix, not red monospace.
    openai_server.queue(Reply.error(404, "model 'second-model' does not exist"))
    send(page, "And now?")
    card = page.wait_for_selector(".problem.error[role=alert]")
    assert "The turn failed" in card.inner_text()
    assert "model.default" in card.inner_text()  # the setting that picks the model
    assert openai_server.requests[-1].json["model"] == "second-model"
    fits(page)
    # What the screen shows (a whole-page picture would draw the sticky bars mid-page).
    page.screenshot(path=str(SCREENSHOTS / f"web-ui-{device}-chat.png"))
    session = page.url.rsplit("/", 1)[1]

    for path in ("/sessions", f"/sessions/{session}", "/sessions?q=considered", "/pending"):
        page.goto(web.url + path)
        fits(page)
    page.goto(web.url + "/plugins")
    fits(page)
    page.goto(web.url + "/status")
    fits(page)
    assert "test-model" in page.inner_text("ul.rows")
    page.screenshot(path=str(SCREENSHOTS / f"web-ui-{device}-status.png"), full_page=True)

    # On a phone the links fold behind "Menu"; opened, Log out is on the screen.
    if device == "phone":
        assert not page.locator("nav .logout button").is_visible()
        page.click("label.menu-button")
        on_screen(page, "nav .logout button")
        fits(page)
        page.click("nav a[href='/sessions']")
        page.wait_for_url(re.compile(r"/sessions$"))
    else:
        assert not page.locator("label.menu-button").is_visible()
        on_screen(page, "nav .logout button")
    context.close()
