"""The pages as a user reads them: sessions listed, searched and exported, a compaction
marked, replies rendered safely, a turn replayed to a page opened while it runs, the
slash commands, and the first page's weight."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import aiohttp

from hermes_testkit import Reply, ScriptedOpenAIServer

CSRF = re.compile(r'<meta name="csrf-token" content="([^"]*)">')


class Browser:
    """What the page's script does, with aiohttp: enough to drive the pages in tests."""

    def __init__(self, ui: Any) -> None:
        self.base = ui.base_url
        self.login_path = ui.login_path
        self.http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
        self.csrf = ""
        self.logged_in = False

    async def get(self, path: str) -> tuple[int, str]:
        if not self.logged_in:
            self.logged_in = True
            await self.get(self.login_path)  # the URL hermes web prints
        async with self.http.get(self.base + path) as response:
            text = await response.text()
        found = CSRF.search(text)
        self.csrf = found.group(1) if found else self.csrf
        return response.status, text

    async def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        headers = {"X-CSRF-Token": self.csrf}
        async with self.http.post(self.base + path, json=body, headers=headers) as response:
            text = await response.text()
            try:
                return response.status, json.loads(text)
            except ValueError:
                return response.status, {"text": text}

    async def events(self, session_id: str, after: int = -1) -> list[dict[str, Any]]:
        found = []
        url = f"{self.base}/api/sessions/{session_id}/events?after={after}"
        async with self.http.get(url) as response:
            async for raw in response.content:
                line = raw.decode()
                if line.startswith("data: ") and line.strip() != "data: {}":
                    found.append(json.loads(line[6:]))
        return found

    async def turn(self, text: str, session_id: str | None = None) -> tuple[str, list[Any]]:
        if not self.csrf:
            await self.get("/chat")
        status, body = await self.post("/api/turns", {"text": text, "session_id": session_id})
        assert status == 200, body
        return body["session_id"], await self.events(body["session_id"])


def run(scenario: Any) -> None:
    asyncio.run(scenario)


def test_sessions_are_listed_searched_with_marks_and_exported(
    ui: Any, openai_server: ScriptedOpenAIServer
) -> None:
    async def scenario() -> None:
        browser = Browser(ui)
        try:
            openai_server.queue(Reply.say("Use `tar -czf` for that."))
            first, _ = await browser.turn("How do I archive [logs] with tar?")
            openai_server.queue(Reply.say("Tea, then."))
            await browser.turn("Coffee or tea?")
            status, page = await browser.get("/sessions")
            assert status == 200
            assert page.count('class="resume"') == 2
            assert "How do I archive [logs] with tar?" in page  # the opening, untitled
            _, page = await browser.get("/sessions?q=tar")
            assert "<mark>tar</mark>" in page
            assert "[logs]" in page  # brackets of the text are not taken for marks
            assert f'href="/chat/{first}"' in page
            _, page = await browser.get("/sessions?q=%3Cscript%3Ealert(1)%3C/script%3E")
            assert "<script>alert" not in page
            status, markdown = await browser.get(f"/sessions/{first}/export.md")
            assert status == 200 and "## assistant" in markdown and "`tar -czf`" in markdown
            status, lines = await browser.get(f"/sessions/{first}/export.jsonl")
            rows = [json.loads(line) for line in lines.splitlines()]
            assert [row["role"] for row in rows] == ["user", "assistant"]
            status, _ = await browser.get(f"/sessions/{first}/export.exe")
            assert status == 404
            status, page = await browser.get("/sessions/nosuchsession")
            assert status == 404 and "nosuchsession" in page
        finally:
            await browser.http.close()

    run(scenario())


def test_a_reply_is_rendered_as_markdown_and_never_as_markup(
    ui: Any, openai_server: ScriptedOpenAIServer
) -> None:
    reply = (
        "**bold** and code:\n\n```python\nprint('hi')\n```\n\n"
        "<script>alert(1)</script> [click](javascript:alert(2)) "
        '<img src=x onerror="alert(3)">'
    )

    async def scenario() -> None:
        browser = Browser(ui)
        try:
            openai_server.queue(Reply.say(reply))
            session, events = await browser.turn("Show me")
            html = events[-1]["html"]
            assert "<strong>bold</strong>" in html
            assert '<pre class="hl"><code>' in html and "print" in html
            assert "<script>" not in html and "&lt;script&gt;" in html
            assert 'href="javascript' not in html
            assert "<img" not in html
            _, page = await browser.get(f"/chat/{session}")
            assert "<strong>bold</strong>" in page and "<script>alert" not in page
        finally:
            await browser.http.close()

    run(scenario())


def test_a_page_opened_while_a_turn_runs_replays_it_and_can_stop_it(
    ui: Any, openai_server: ScriptedOpenAIServer
) -> None:
    async def scenario() -> None:
        browser = Browser(ui)
        try:
            openai_server.queue(Reply.say("word " * 300, chunk_delay_seconds=0.05))
            await browser.get("/chat")
            status, body = await browser.post("/api/turns", {"text": "Talk slowly"})
            assert status == 200
            session = body["session_id"]
            await asyncio.sleep(0.5)
            _, page = await browser.get(f"/chat/{session}")
            assert f'data-live="{body["turn"]}"' in page  # the page replays that turn
            status, busy = await browser.post(
                "/api/turns", {"text": "again", "session_id": session}
            )
            assert status == 409 and "running" in busy["error"]
            status, stopped = await browser.post(f"/api/sessions/{session}/stop", {})
            assert stopped == {"stopped": True}
            events = await browser.events(session)
            assert events[0] == {"type": "user", "text": "Talk slowly", "attachments": []}
            assert events[-1]["type"] == "ended" and events[-1]["status"] == "stopped"
            later = await browser.events(session, after=len(events) - 2)
            assert later == events[-1:]  # Last-Event-ID: only what the page has not seen
        finally:
            await browser.http.close()

    run(scenario())


def test_slash_commands_undo_title_compact_and_unknown(
    ui: Any, openai_server: ScriptedOpenAIServer
) -> None:
    async def scenario() -> None:
        browser = Browser(ui)
        try:
            session: str | None = None
            for number in range(3):
                openai_server.queue(Reply.say(f"answer {number} " + "detail " * 50))
                session, _ = await browser.turn(f"question {number}", session)
            _, body = await browser.post(
                "/api/turns", {"text": "/title Three questions", "session_id": session}
            )
            assert body["output"] == "title set: Three questions"
            openai_server.queue(Reply.say("A summary of the first questions."))
            _, body = await browser.post("/api/turns", {"text": "/compact", "session_id": session})
            assert "compacted" in body["output"], body
            _, page = await browser.get(f"/sessions/{session}")
            assert "Three questions" in page
            assert 'class="compaction"' in page and "compacted here" in page
            _, body = await browser.post("/api/turns", {"text": "/undo", "session_id": session})
            assert body["output"] == "removed the last exchange (2 messages): question 2"
            assert body["reload"] is True
            _, body = await browser.post("/api/turns", {"text": "/nonsense", "session_id": session})
            assert body["output"] == "unknown command /nonsense; /help lists them"
            _, body = await browser.post("/api/turns", {"text": "/undo"})
            assert body["output"] == "nothing to undo"
            _, body = await browser.post("/api/turns", {"text": "/new"})
            assert body["new"] is True
        finally:
            await browser.http.close()

    run(scenario())


def test_bad_requests_get_one_line_errors(ui: Any) -> None:
    async def scenario() -> None:
        browser = Browser(ui)
        try:
            await browser.get("/chat")
            assert (await browser.post("/api/turns", {"text": "  "}))[0] == 400
            status, body = await browser.post(
                "/api/turns", {"text": "hi", "session_id": "nosuchsession"}
            )
            assert status == 404 and "nosuchsession" in body["error"]
            status, body = await browser.post("/api/questions/nope", {"value": "once"})
            assert status == 409 and body["error"] == "that question is no longer open"
            headers = {"X-CSRF-Token": browser.csrf, "Content-Type": "application/json"}
            async with browser.http.post(
                ui.base_url + "/api/turns", data=b"{not json", headers=headers
            ) as response:
                assert response.status == 400 and "not JSON" in await response.text()
            async with browser.http.get(ui.base_url + "/api/sessions/none/events") as response:
                assert response.status == 204  # nothing running: the page stops asking
        finally:
            await browser.http.close()

    run(scenario())


def test_the_first_page_with_everything_it_loads_is_under_100_kb(ui: Any) -> None:
    async def scenario() -> None:
        browser = Browser(ui)
        try:
            total = 0
            for path in ("/chat", "/static/app.js", "/static/app.css"):
                async with browser.http.get(ui.base_url + path) as response:
                    assert response.status == 200
                    total += len(await response.read())
                    policy = response.headers["Content-Security-Policy"]
                    assert "script-src 'self'" in policy and "unsafe" not in policy
            assert total < 100_000, total
            _, page = await browser.get("/chat")
            assert "http://" not in page and "https://" not in page  # nothing from elsewhere
        finally:
            await browser.http.close()

    run(scenario())


def test_status_pending_and_plugins_pages_render(ui: Any) -> None:
    async def scenario() -> None:
        browser = Browser(ui)
        try:
            status, page = await browser.get("/status")
            assert status == 200 and "<dt>Model</dt>" in page and 'class="chart"' in page
            status, page = await browser.get("/pending")
            assert status == 200 and "Nothing is waiting" in page
            status, page = await browser.get("/plugins")
            assert status == 200 and "web-ui" in page
            status, body = await browser.post("/pending/memory/abcdef", {})
            assert status == 400 and "approve or reject" in body["text"]
        finally:
            await browser.http.close()

    run(scenario())


def test_a_question_answered_after_it_timed_out_says_so(
    home: Any, openai_server: ScriptedOpenAIServer, serve_web_ui: Any, tmp_path: Any
) -> None:
    (home / "config.yaml").write_text(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
        "agent:\n  backend: local\n  retries: 1\nlearning:\n  review: false\n"
        "approvals:\n  mode: manual\n  timeout_seconds: 1\n",
        encoding="utf-8",
    )
    (tmp_path / "work" / "scratch").mkdir()

    async def scenario(ui: Any) -> None:
        browser = Browser(ui)
        try:
            openai_server.queue(
                Reply.tool_call("terminal", {"command": "chmod -R 777 ./scratch"}),
                Reply.say("It was not allowed."),
            )
            _, events = await browser.turn("open it up")
            (question,) = [e for e in events if e["type"] == "question"]
            status, body = await browser.post(f"/api/questions/{question['id']}", {"value": "once"})
            assert status == 409 and "no longer open" in body["error"]
            assert events[-1]["type"] == "ended"
            assert (tmp_path / "work" / "scratch").stat().st_mode & 0o777 != 0o777
        finally:
            await browser.http.close()

    with serve_web_ui(home) as ui:
        run(scenario(ui))


def test_a_path_is_a_message_and_new_ends_the_session(
    ui: Any, openai_server: ScriptedOpenAIServer
) -> None:
    async def scenario() -> None:
        browser = Browser(ui)
        try:
            openai_server.queue(Reply.say("That file maps names to addresses."))
            session, events = await browser.turn("/etc/hosts: what is this file?")
            assert events[-1]["html"].startswith("<p>That file maps")
            _, body = await browser.post("/api/turns", {"text": "/new", "session_id": session})
            assert body == {"new": True, "output": "new session: your next message starts it"}
            _, page = await browser.get(f"/sessions/{session}")
            assert "(new_session)" in page  # ended: what its tools held is let go
        finally:
            await browser.http.close()

    run(scenario())


def test_model_and_yolo_chosen_before_the_first_message_hold_for_it(
    ui: Any, openai_server: ScriptedOpenAIServer
) -> None:
    async def scenario() -> None:
        browser = Browser(ui)
        try:
            await browser.get("/chat")
            _, body = await browser.post("/api/turns", {"text": "/model other-model"})
            assert body["output"].startswith("now using local-endpoint / other-model")
            _, body = await browser.post("/api/turns", {"text": "/model"})
            assert body["output"].startswith("model: local-endpoint / other-model")
            _, body = await browser.post("/api/turns", {"text": "/yolo on"})
            assert body["output"].startswith("YOLO on")
            openai_server.queue(Reply.say("Hi."))
            session, _ = await browser.turn("hello")
            assert openai_server.requests[-1].json["model"] == "other-model"
            # The session runs unasked: a bare /yolo turns asking back on.
            _, body = await browser.post("/api/turns", {"text": "/yolo", "session_id": session})
            assert body["output"] == "YOLO off: tools ask before dangerous commands"
            # A later new chat asks again: /yolo before a first message was for that one.
            openai_server.queue(Reply.say("Hi again."))
            second, _ = await browser.turn("another chat")
            _, body = await browser.post("/api/turns", {"text": "/yolo", "session_id": second})
            assert body["output"].startswith("YOLO on")  # it was off: the toggle turns it on
        finally:
            await browser.http.close()

    run(scenario())


def test_queue_goal_and_branch_tell_the_page_what_to_do(
    ui: Any, openai_server: ScriptedOpenAIServer
) -> None:
    """/queue and /goal answer with the message the page sends next; /branch with the
    session the page goes on in; a goal's steps arrive as whole interim replies."""

    async def scenario() -> None:
        browser = Browser(ui)
        try:
            openai_server.queue(Reply.say("First."))
            session, _ = await browser.turn("one")
            _, queued = await browser.post(
                "/api/turns", {"text": "/queue and then two", "session_id": session}
            )
            assert queued["send"] == "and then two" and "sending it now" in queued["output"]
            openai_server.queue(
                Reply.say("Step one."),
                Reply.say("CONTINUE: more"),
                Reply.say("Step two."),
                Reply.say("DONE: all of it"),
            )
            _, goal = await browser.post(
                "/api/turns", {"text": "/goal finish it", "session_id": session}
            )
            assert goal["send"] == "finish it"
            _, events = await browser.turn(goal["send"], session)
            kinds = [event["type"] for event in events]
            assert "interim" in kinds and kinds[-1] == "ended"
            (interim,) = [event for event in events if event["type"] == "interim"]
            assert "Step one." in interim["html"]
            assert any("goal achieved: all of it" in e.get("text", "") for e in events)
            _, branched = await browser.post(
                "/api/turns", {"text": "/branch 1", "session_id": session}
            )
            assert branched["switch"] != session and "branched into" in branched["output"]
            openai_server.queue(Reply.say("Tidied in the background."))
            _, started = await browser.post(
                "/api/turns", {"text": "/bg tidy up", "session_id": branched["switch"]}
            )
            assert "started in the background" in started["output"]
            news: list[str] = []
            for _ in range(100):  # the page hears it with its next answer
                await asyncio.sleep(0.1)
                _, answer = await browser.post("/api/turns", {"text": "/help"})
                news += answer.get("news", [])
                if news:
                    break
            assert news and "done: Tidied in the background." in news[0]
        finally:
            await browser.http.close()

    run(scenario())
