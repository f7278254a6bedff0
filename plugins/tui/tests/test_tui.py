"""The TUI driven by Textual's own test pilot, on a real runtime (``open_runtime``) whose
model is the scripted server: start, send, watch a reply stream, open a tool call, answer an
approval in its dialog, switch sessions, both themes, 80x24. Each scene is saved as an SVG
screenshot (``HERMES_SCREENSHOTS``, else ``.cache/screenshots``): the docs show them."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from hermes_plugin_tui.app import HermesTui
from hermes_plugin_tui.dialogs import QuestionDialog
from hermes_plugin_tui.widgets import Reply as Streaming
from hermes_plugin_tui.widgets import ToolCall
from textual.pilot import Pilot
from textual.widgets import Input, ListView, Markdown, Static

from hermes_sdk.runtime import open_runtime
from hermes_testkit import Reply, ScriptedOpenAIServer

SCREENSHOTS = Path(
    os.environ.get("HERMES_SCREENSHOTS") or Path(__file__).parents[3] / ".cache/screenshots"
)
WIDE = (110, 32)


@pytest.fixture
def home(tmp_path: Path, openai_server: ScriptedOpenAIServer, monkeypatch) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    (path / "config.yaml").write_text(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
        "agent:\n  retries: 1\n"
    )
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return path


def run(home: Path, scene: Callable[[HermesTui, Pilot[int]], Awaitable[None]], size=WIDE) -> None:
    async def main() -> None:
        async with open_runtime(home) as runtime:
            app = HermesTui(runtime)
            async with app.run_test(size=size) as pilot:
                await until(pilot, lambda: "ready" in status(app))
                await scene(app, pilot)

    asyncio.run(main())


async def until(pilot: Pilot[int], condition: Callable[[], object], timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"never true: {condition}")


def status(app: HermesTui) -> str:
    return str(app.status_line.render())


def shot(app: HermesTui, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    saved = Path(app.save_screenshot(f"{name}.svg", str(SCREENSHOTS)))
    assert saved.stat().st_size > 1000
    return saved


def shown(app: HermesTui) -> str:
    return "\n".join(str(widget.render()) for widget in app.conversation.query(Static))


def replies(app: HermesTui) -> list[str]:
    return [widget.source for widget in app.query(Markdown)]


async def say(pilot: Pilot[int], text: str) -> None:
    await pilot.click("#prompt")
    await pilot.press(*text)
    await pilot.press("enter")


def test_a_reply_streams_while_the_input_stays_usable(home, openai_server):
    words = "Hermes streams this reply word by word " * 4
    openai_server.queue(Reply.say(words.strip(), chunk_delay_seconds=0.05), Reply.say("Next."))

    async def scene(app: HermesTui, pilot: Pilot[int]) -> None:
        assert "new session" in status(app) and "test-model" in status(app)
        await say(pilot, "hello")
        await until(pilot, lambda: any(w.text for w in app.query(Streaming)))
        partial = next(iter(app.query(Streaming))).text
        assert partial and len(partial) < len(words.strip())  # still streaming
        assert "working" in status(app)
        prompt = app.query_one("#prompt", Input)
        await pilot.press(*"and then")  # typing goes on meanwhile
        assert prompt.value == "and then"
        await pilot.press("enter")
        await until(pilot, lambda: "Next." in replies(app))
        assert words.strip() in replies(app)
        assert [m["content"] for m in openai_server.requests[1].json["messages"][1:]][-1] == (
            "and then"
        )
        await until(pilot, lambda: "ready" in status(app) and " in · " in status(app))
        assert "context " in status(app) and "% of " in status(app)
        shot(app, "tui-chat")

    run(home, scene)


def test_a_tool_call_is_folded_and_opens(home, openai_server):
    openai_server.queue(
        Reply.tool_call("terminal", {"command": "echo folded-output"}), Reply.say("It ran.")
    )

    async def scene(app: HermesTui, pilot: Pilot[int]) -> None:
        await say(pilot, "run echo")
        await until(pilot, lambda: "It ran." in replies(app))
        (call,) = app.query(ToolCall)
        assert call.collapsed and call.title.startswith("✓ terminal")
        assert "folded-output" in str(call.result.render())
        await pilot.click(ToolCall)  # the title line
        await until(pilot, lambda: not call.collapsed)
        assert call.result.region.height > 0  # shown now
        shot(app, "tui-tool-call")
        await pilot.press("ctrl+o")
        assert call.collapsed

    run(home, scene)


def test_an_approval_is_answered_in_a_dialog(home, openai_server, tmp_path):
    target = Path.cwd() / "shared"
    target.mkdir()
    openai_server.queue(
        Reply.tool_call("terminal", {"command": "chmod -R 777 ./shared"}),
        Reply.say("Done."),
        Reply.tool_call("terminal", {"command": "chmod -R 777 ./shared"}),
        Reply.say("Refused, as you said."),
    )

    async def scene(app: HermesTui, pilot: Pilot[int]) -> None:
        await say(pilot, "open it up")
        await until(pilot, lambda: isinstance(app.screen, QuestionDialog))
        dialog = app.screen
        assert isinstance(dialog, QuestionDialog)
        assert dialog.question.kind == "approval"
        assert dialog.question.command == "chmod -R 777 ./shared"
        labels = [str(button.label) for button in dialog.query("Button")]
        assert any("approvals.allow: [world-writable]" in label for label in labels), labels
        shot(app, "tui-approval")
        await pilot.click("#choice-0")  # the first choice: once
        await until(pilot, lambda: "Done." in replies(app))
        assert target.stat().st_mode & 0o777 == 0o777
        target.chmod(0o755)
        await say(pilot, "again")
        await until(pilot, lambda: isinstance(app.screen, QuestionDialog))
        await pilot.press("escape")  # no
        await until(pilot, lambda: "Refused, as you said." in replies(app))
        assert target.stat().st_mode & 0o777 == 0o755
        tool = [m for m in openai_server.requests[-1].json["messages"] if m["role"] == "tool"]
        assert "denied" in str(tool[-1]["content"]) or "refused" in str(tool[-1]["content"])

    run(home, scene)


def test_sessions_are_listed_and_switched(home, openai_server):
    openai_server.queue(Reply.say("About apples."), Reply.say("About pears."), Reply.say("More."))

    async def scene(app: HermesTui, pilot: Pilot[int]) -> None:
        await say(pilot, "tell me about apples")
        await until(pilot, lambda: "About apples." in replies(app))
        first = app.session.session_id if app.session else ""
        await pilot.press("ctrl+n")
        await say(pilot, "tell me about pears")
        await until(pilot, lambda: "About pears." in replies(app))
        assert "About apples." not in replies(app)
        listing = app.query_one("#sessions", ListView)
        await until(pilot, lambda: len(listing.children) == 2)
        await pilot.click(f"#s-{first}")
        await until(pilot, lambda: app.session is not None and app.session.session_id == first)
        await until(pilot, lambda: "About apples." in replies(app))
        assert "About pears." not in replies(app)
        shot(app, "tui-sessions")
        await say(pilot, "more")
        await until(pilot, lambda: "More." in replies(app))
        sent = [m["content"] for m in openai_server.requests[-1].json["messages"][1:]]
        assert sent == ["tell me about apples", "About apples.", "more"]

    run(home, scene)


def test_80x24_hides_the_sessions_and_both_themes_read(home, openai_server):
    openai_server.queue(Reply.say("Small **screen**, same chat."))

    async def scene(app: HermesTui, pilot: Pilot[int]) -> None:
        assert not app.query_one("#sidebar").display  # the conversation gets the width
        await say(pilot, "hi")
        await until(pilot, lambda: "Small **screen**, same chat." in replies(app))
        shot(app, "tui-80x24-dark")
        await pilot.press("ctrl+t")
        assert app.theme == "textual-light"
        shot(app, "tui-80x24-light")
        await pilot.press("ctrl+b")
        assert app.query_one("#sidebar").display
        footer = app.screen.query_one("Footer")
        shown = {str(key.description) for key in footer.query("FooterKey")}
        assert {"Quit", "New", "Sessions", "Stop", "Tool calls", "Theme"} <= shown, shown

    run(home, scene, size=(80, 24))


def test_runtime_commands_work_from_the_input(home, openai_server):
    openai_server.queue(Reply.say("First."), Reply.say("Second."), Reply.say("Branched."))

    async def scene(app: HermesTui, pilot: Pilot[int]) -> None:
        await say(pilot, "one")
        await until(pilot, lambda: "First." in replies(app))
        await say(pilot, "two")
        await until(pilot, lambda: "Second." in replies(app))
        original = app.session.session_id if app.session else ""
        await say(pilot, "/branch 1")
        await until(pilot, lambda: app.session is not None and app.session.session_id != original)
        assert "Second." not in replies(app)
        await say(pilot, "two again")
        await until(pilot, lambda: "Branched." in replies(app))
        sent = [m["content"] for m in openai_server.requests[-1].json["messages"][1:]]
        assert sent == ["one", "First.", "two again"]
        await say(pilot, "/nosuch")
        await until(pilot, lambda: "unknown command /nosuch" in shown(app))

    run(home, scene)
