"""The issue's must-show, with the real ``hermes``: the scripted model calls write_file in a
git repository, the change is undone (``/rollback`` in a real chat, and ``hermes
checkpoints restore``), and the repository's .git is byte for byte what it was."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from hermes_testkit import Reply

from .conftest import ORIGINAL, fingerprint, git, hermes, hermes_environment

CLOBBERED = "notes the model wrote over\n"


def _checkpoint_ids(listing: str, what: str) -> list[str]:
    return [line.split()[1] for line in listing.splitlines() if line.endswith(what)]


def test_hermes_checkpoints_restore_undoes_write_file(workspace, home, openai_server):
    environment = hermes_environment(home, openai_server.base_url)
    repository = fingerprint(workspace / ".git")
    openai_server.queue(
        Reply.tool_call("write_file", {"path": "notes.txt", "content": CLOBBERED}),
        Reply.say("I rewrote the notes."),
    )
    run = hermes(environment, workspace, "chat", "-q", "rewrite my notes")
    assert run.returncode == 0, run.stderr
    assert "I rewrote the notes." in run.stdout
    assert (workspace / "notes.txt").read_text() == CLOBBERED

    listed = hermes(environment, workspace, "checkpoints", "list")
    assert listed.returncode == 0, listed.stderr
    (checkpoint,) = _checkpoint_ids(listed.stdout, "before write_file notes.txt")
    restored = hermes(environment, workspace, "checkpoints", "restore", checkpoint)
    assert restored.returncode == 0, restored.stderr
    assert f"as it was before write_file notes.txt (checkpoint {checkpoint}" in restored.stdout

    assert (workspace / "notes.txt").read_text() == ORIGINAL
    assert fingerprint(workspace / ".git") == repository
    assert git(workspace, "status", "--porcelain") == ""  # after the fingerprint: it may
    assert (workspace / "build.log").exists()  # refresh .git/index itself


def test_rollback_in_the_chat_undoes_write_file(workspace, home, openai_server):
    import pexpect

    environment = hermes_environment(home, openai_server.base_url)
    environment.update(TERM="xterm-256color", PROMPT_TOOLKIT_NO_CPR="1")
    repository = fingerprint(workspace / ".git")
    openai_server.queue(
        Reply.tool_call("write_file", {"path": "notes.txt", "content": CLOBBERED}),
        Reply.say("I rewrote the notes."),
    )
    chat = pexpect.spawn(
        sys.executable,
        ["-m", "hermes_kernel.cli.main", "chat"],
        cwd=str(workspace),
        env=environment,
        dimensions=(40, 120),
        timeout=30,
    )
    try:
        chat.expect("/help for commands")
        chat.send("rewrite my notes\r")
        chat.expect("rewrote")
        assert (workspace / "notes.txt").read_text() == CLOBBERED
        time.sleep(0.3)  # the prompt is back
        chat.send("/rollback\r")
        chat.expect("Restored")
        chat.expect("undo")
        time.sleep(0.3)
        chat.send("/quit\r")
        chat.expect(pexpect.EOF)
    finally:
        chat.close(force=True)
    assert (workspace / "notes.txt").read_text() == ORIGINAL
    assert fingerprint(workspace / ".git") == repository
    assert list(Path(home, "checkpoints").iterdir())  # kept in HERMES_HOME, nowhere else
