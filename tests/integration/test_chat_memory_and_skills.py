"""The chat with the real memory and skills plugins installed: their /memory and /skills
replace the built-in listings without a warning, and a memory write waiting for approval is
approved from the chat and from the command line."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_testkit import Reply

from .conftest import REPO, Terminal, Venv, build_venv, terminal_env

pytestmark = pytest.mark.venv


@pytest.fixture(scope="module")
def standard_venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    plugins = [
        "store-sqlite",
        "chat",
        "providers",
        "approvals",
        "provider-openai",
        "backend-local",
        "toolset-terminal",
        "memory-builtin",
        "skills",
    ]
    path = tmp_path_factory.mktemp("standard") / "venv"
    return Venv(build_venv(path, [REPO / "plugins" / name for name in plugins]))


@pytest.fixture
def home(tmp_path: Path, openai_server) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    (path / "config.yaml").write_text(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
        "agent:\n  retries: 1\nmemory:\n  write_approval: true\n"
    )
    return path


@pytest.fixture
def chat(standard_venv: Venv, home: Path) -> Iterator[Terminal]:
    term = Terminal([str(standard_venv.path / "bin" / "hermes"), "chat"], terminal_env(home))
    yield term
    term.close()


def _propose(openai_server, content: str) -> None:
    openai_server.queue(
        Reply.tool_call("memory", {"action": "add", "target": "user", "content": content}),
        Reply.say("I will remember that once you approve it."),
    )


def _pending_id(text: str) -> str:
    found = re.findall(r"\b(\w{6,}) \(from ", text)
    assert found, f"no pending proposal in:\n{text}"
    return found[-1]


def test_memory_writes_are_approved_from_the_chat_and_the_command_line(
    chat, standard_venv, home, openai_server
):
    chat.wait_for("/help for commands")
    assert "built-in command" not in chat.seen, "a plugin's /memory or /skills clashed"
    _propose(openai_server, "Prefers tea to coffee")
    chat.line("remember that I prefer tea")
    chat.wait_for("once you approve it")
    chat.line("/memory pending")
    chat.wait_for("Prefers tea to coffee")
    proposal = _pending_id(chat.text)
    chat.line(f"/memory approve {proposal}")
    chat.wait_for(f"approved {proposal}")
    chat.line("/skills pending")
    chat.wait_for("no skill changes are waiting for approval")
    chat.line("/help")
    chat.wait_for("(from memory-builtin)")
    assert "the installed skill sources" not in chat.text  # the built-in listing gave way
    chat.ctrl("d")
    assert chat.wait_exit() == 0
    assert "Prefers tea to coffee" in (home / "memories" / "USER.md").read_text()

    _propose(openai_server, "Lives in Lisbon")
    assert standard_venv.hermes("chat", "-q", "I live in Lisbon", home=home).code == 0
    listed = standard_venv.hermes("memory", "pending", home=home)
    assert listed.code == 0, listed.err
    assert "Lives in Lisbon" in listed.out and "hermes memory approve ID" in listed.out
    proposal = _pending_id(listed.out)
    approved = standard_venv.hermes("memory", "approve", proposal, home=home)
    assert approved.code == 0 and f"approved {proposal}" in approved.out, approved.err
    assert "Lives in Lisbon" in (home / "memories" / "USER.md").read_text()
    again = standard_venv.hermes("memory", "approve", proposal, home=home)
    assert again.code == 1 and again.err.startswith("Error: approve: "), again.err
    assert "\n" not in again.err.strip()
