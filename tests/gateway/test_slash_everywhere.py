"""One implementation of each built-in slash command, shown by every front-end: the same
commands typed in the terminal chat (a real ``hermes chat`` in a pseudo-terminal), on
Telegram (the gateway with the real Telegram plugin against the fake Bot API) and in the web
UI (its HTTP API, as the page's script calls it) give the runtime's same words, and ``/help``
lists a plugin's command (the built-in memory's ``/memory``) in all three.

The three run once for the module, on one home and one scripted model, each in a
conversation of its own; each test below checks one command in all three.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hermes_plugin_platform_telegram.testing.telegram_server import DEFAULT_TOKEN, FakeTelegram

from hermes_testkit import Reply, ScriptedOpenAIServer, service_in_thread
from tests.gateway.conftest import OWNER, RunningGateway, gateway_config, polling
from tests.integration.conftest import Terminal, terminal_env

CSRF = re.compile(r'<meta name="csrf-token" content="([^"]*)">')
STEPS: tuple[str, ...] = (
    "/help",
    "/usage",
    "hello",
    "/title my topic",
    "/usage",
    "/tools",
    "/stop",
    "/undo",
    "/compact",
    "/model",
    "/yolo on",
    "/yolo off",
    "/reasoning high",
    "/reasoning",
    "/new",
    "/reset",
)
Said = dict[tuple[str, int], str]
"""(front-end, step) -> what the front-end showed for that step."""


class WebChat:
    """The chat page's script, over HTTP: log in, send, follow the turn to its end."""

    def __init__(self, base_url: str, login_path: str) -> None:
        self.http = httpx.Client(base_url=base_url, timeout=30)
        self.http.get(login_path)
        found = CSRF.search(self.http.get("/chat").text)
        assert found, "the chat page carries its CSRF token"
        self.headers = {"X-CSRF-Token": found.group(1)}
        self.session_id: str | None = None

    def say(self, text: str) -> str:
        body = {"text": text, "session_id": self.session_id}
        answer = self.http.post("/api/turns", json=body, headers=self.headers).json()
        if "output" in answer:  # a command
            if answer.get("new"):
                self.session_id = None
            return str(answer["output"])
        self.session_id = answer["session_id"]
        url = f"/api/sessions/{self.session_id}/events?turn={answer['turn']}"
        ended = ""
        with self.http.stream("GET", url) as events:
            for line in events.iter_lines():
                if line.startswith("data: ") and '"ended"' in line:
                    ended = line
        return ended


def _telegram_says(telegram: FakeTelegram, text: str) -> str:
    before = len(telegram.sent(OWNER))
    telegram.user_says(OWNER, text)

    def answered(_messages: object) -> str | None:
        sent = telegram.sent(OWNER)
        if len(sent) > before and not sent[-1].visible.startswith("…"):
            return sent[-1].visible
        return None

    reply = telegram.wait_for(answered, timeout=30)
    time.sleep(0.3)  # a streamed reply's last edit
    return str(telegram.sent(OWNER)[-1].visible if text == "hello" else reply)


def _terminal_says(term: Terminal, text: str, expect: str) -> str:
    before = len(term.seen)
    term.line(text)
    term.wait_for(expect, timeout=30, in_log=True)
    term.pump(0.3)
    return term.seen[before:]


# What the runtime says for each step (the chat's terminal is read for these words).
EXPECTED: dict[str, str] = {
    "/help": "/title [TEXT]",
    "/usage#0": "no usage yet: this conversation starts with your next message",
    "hello": "hi there",
    "/title my topic": "title set: my topic",
    "/usage#1": "2 messages, 0 tool calls",
    "/tools": "terminal",
    "/stop": "nothing is running",
    "/undo": "removed the last exchange (2 messages): hello",
    "/compact": "not compacted: ",
    "/model": "model: local-endpoint / test-model",
    "/yolo on": "YOLO on for this conversation",
    "/yolo off": "YOLO off: tools ask before dangerous commands",
    "/reasoning high": "reasoning effort high for this conversation, from the next message",
    "/reasoning": "reasoning effort: high (this conversation)",
    "/new": "new session: your next message starts it",
    "/reset": "new session: your next message starts it",
}


def _key(index: int) -> str:
    step = STEPS[index]
    if step == "/usage":
        return f"/usage#{STEPS[:index].count('/usage')}"
    return step


@pytest.fixture(scope="module")
def said(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Said]:
    from hermes_plugin_web_ui.server import WebUi
    from hermes_plugin_web_ui.settings import WebSettings

    home = tmp_path_factory.mktemp("slash") / "home"
    home.mkdir()
    shown: Said = {}
    with FakeTelegram() as telegram, ScriptedOpenAIServer() as model:
        model.respond = lambda _body: Reply.say("hi there")
        (home / "config.yaml").write_text(gateway_config(telegram, model.base_url))
        (home / ".env").write_text(f"TELEGRAM_BOT_TOKEN={DEFAULT_TOKEN}\n")
        gateway = RunningGateway(home).start()
        try:
            polling(telegram)
            for index, step in enumerate(STEPS):
                shown["telegram", index] = _telegram_says(telegram, step)
        finally:
            gateway.stop()
        settings = WebSettings(host="127.0.0.1", port=0, key=None, home=str(home))
        with service_in_thread(home, WebUi(settings)) as server:
            web = WebChat(
                f"http://127.0.0.1:{server.bound_port}", "/" + server.login_url.split("/", 3)[3]
            )
            for index, step in enumerate(STEPS):
                shown["web", index] = web.say(step)
        hermes = str(Path(sys.executable).parent / "hermes")
        term = Terminal([hermes, "chat"], terminal_env(home))
        try:
            term.wait_for("/help for commands", timeout=30)
            for index, step in enumerate(STEPS):
                shown["chat", index] = _terminal_says(term, step, EXPECTED[_key(index)])
            term.line("/quit")
            assert term.wait_exit() == 0
        finally:
            term.close()
    yield shown


def _each(said: Said, step: str) -> Iterator[tuple[str, str]]:
    for (front_end, index), text in said.items():
        if _key(index) == step:
            yield front_end, text


OWNERS_ONLY = {"/model", "/yolo", "/tools", "/reasoning"}
"""Commands a chat platform does not offer: what they change is the owner's."""


@pytest.mark.parametrize("step", [key for key in EXPECTED if key not in {"/help", "hello"}])
def test_each_built_in_command_says_the_runtimes_words_in_every_front_end(
    said: Said, step: str
) -> None:
    answers = dict(_each(said, step))
    assert set(answers) == {"chat", "telegram", "web"}
    for front_end, text in answers.items():
        name = step.split(maxsplit=1)[0]
        if front_end == "telegram" and name in OWNERS_ONLY:
            assert f"{name} is for the terminal" in text, text
        else:
            assert EXPECTED[step] in text, (front_end, text)


def test_help_lists_the_built_in_and_a_plugins_commands_in_every_front_end(said: Said) -> None:
    answers = dict(_each(said, "/help"))
    for front_end, text in answers.items():
        assert "/title [TEXT]" in text and "/compact [FOCUS]" in text, (front_end, text)
        assert "/memory" in text, (front_end, text)  # the memory plugin's own command
    assert "/model" in answers["chat"] and "/model" in answers["web"]
    assert "/model" not in answers["telegram"]  # a platform lists what it may run
    assert "/quit" in answers["chat"]  # the terminal's own, beside the runtime's


def test_the_turns_between_the_commands_were_answered_everywhere(said: Said) -> None:
    for front_end, text in _each(said, "hello"):
        assert "hi there" in text, (front_end, text)
