"""docs/user/getting-started.md done as written: every ``$`` command on the page runs, in the
page's order, for a new user whose home holds no Hermes and no API key, with ``hermes`` on
PATH the way the page says. A command without a question (``-q``, ``--yes``, a listing)
must succeed; an interactive one is opened in a pseudo-terminal and must show its banner.

Three things stand in for what a test cannot have: the workspace's own environment for the
``.venv`` that ``./scripts/hermes`` builds (``test_launcher.py`` builds that one), the test
kit's model server for the page's Ollama URL, and a made-up key for ``$KEY``. The page's
interactive ``hermes setup`` picks OpenAI, which needs the real service: the same wizard
is driven, Enter by Enter, against a server of the user's own in ``test_first_hour.py``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from hermes_testkit import Reply, ScriptedOpenAIServer
from tests.integration.conftest import REPO, Terminal

PAGE = REPO / "docs" / "user" / "getting-started.md"
OLLAMA = "http://localhost:11434/v1"
"""The page's example of a server of your own."""
SESSION_PREFIX = re.compile(r"\b\d{8}_\d{4}\b")
"""The page's example of a session id's start."""
INTERACTIVE = re.compile(r"hermes( setup| -c| -r \S+)?")
NEEDS_OPENAI = "hermes setup"


def page_commands() -> list[str]:
    """The commands the page tells the user to type, in order, without their comments."""
    commands = []
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        if line.startswith("    $ "):
            commands.append(re.sub(r"\s+#.*$", "", line[len("    $ ") :]).strip())
    return commands


def new_users_environment(user_home: Path) -> dict[str, str]:
    """This machine's environment as a new user has it: no Hermes home, no keys, and no
    Hermes on PATH until the page's export line puts it there."""
    ours = str(Path(sys.executable).parent)
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("HERMES_")
        and not key.endswith("_API_KEY")
        and key not in {"VIRTUAL_ENV", "COLUMNS", "LINES"}
    }
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != ours)
    env.update({"HOME": str(user_home), "KEY": "sk-test-made-up-key-0123456789", "TERM": "xterm"})
    env["PROMPT_TOOLKIT_NO_CPR"] = "1"  # the terminal emulator answers no cursor requests
    return env


def test_getting_started_runs_as_written(tmp_path: Path) -> None:
    commands = page_commands()
    assert commands and commands[0] == 'export PATH="$PWD/.venv/bin:$PATH"', commands
    export = commands[0]
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".venv").symlink_to(Path(sys.executable).parents[1])
    user = tmp_path / "user"
    user.mkdir()
    env = new_users_environment(user)
    ran: list[str] = []
    unset = subprocess.run(["bash", "-c", "command -v hermes"], env=env, check=False)
    assert unset.returncode != 0, "hermes is on PATH before the page's export line"

    def run(command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-o", "pipefail", "-c", f"{export} && {command}"],
            cwd=checkout,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    with ScriptedOpenAIServer() as server:
        for written in commands[1:]:
            if written == NEEDS_OPENAI:
                continue  # see the module's docstring
            command = written.replace(OLLAMA, server.base_url)
            if SESSION_PREFIX.search(command):  # the newest session's whole id: unique
                listed = run("hermes sessions list --json")
                newest = json.loads(listed.stdout.splitlines()[0])["id"]
                command = SESSION_PREFIX.sub(newest, command)
            if INTERACTIVE.fullmatch(command):
                term = Terminal(["bash", "-c", f"cd {checkout} && {export} && exec {command}"], env)
                try:
                    term.wait_for("/help for commands", timeout=60)
                    if command == "hermes":  # the first start, with no key anywhere
                        term.wait_for("Using the embedded offline model SmolLM2-135M")
                        term.wait_for("For a real model run `hermes setup`.")
                    term.ctrl("d")
                    assert term.wait_exit(30) == 0, term.text
                finally:
                    term.close()
            else:
                if "--test" in command:
                    server.queue(Reply.say("Hello, ready."))
                done = run(command)
                assert done.returncode == 0, f"$ {command}\n{done.stdout}\n{done.stderr}"
                if "hermes chat -q" in command:
                    assert done.stdout.strip(), f"$ {command} printed no reply"
                if "--test" in command:
                    assert "It works. Next: hermes chat" in done.stdout + done.stderr
            ran.append(command)

    assert (user / ".hermes" / "config.yaml").exists()  # ~/.hermes, as the page says
    config = (user / ".hermes" / "config.yaml").read_text()
    assert "gpt-4o-mini" in config  # the last setup on the page, its key from stdin
    assert "sk-test-made-up-key" in (user / ".hermes" / ".env").read_text()
    assert any(c.startswith("hermes -r ") for c in ran) and "hermes -c" in ran
