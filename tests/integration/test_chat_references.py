"""@-references, --worktree, completion scripts and the top-level short options, through a
real hermes (a pseudo-terminal, or a one-shot) against the scripted model server."""

from __future__ import annotations

import http.server
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_testkit import Reply

pytestmark = pytest.mark.venv

PAGE = (
    b"<html><head><title>Release notes</title><script>var tracking = 1;</script></head>"
    b"<body><nav>menu</nav><article><h1>Release 4.2</h1><p>The release adds a faster "
    b"importer and fixes the login loop that some users met on Mondays.</p><p>Upgrade "
    b"with the usual command; nothing else changes for existing homes.</p></article>"
    b"</body></html>"
)


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository with two commits, an unstaged and a staged change; the chat's
    working directory."""
    path = tmp_path / "project"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "t@example.com")
    git(path, "config", "user.name", "T")
    (path / "app.py").write_text("def total(xs):\n    return sum(xs)\n")
    (path / "src").mkdir()
    (path / "src" / "core.py").write_text("CORE = 1\n")
    git(path, "add", ".")
    git(path, "commit", "-qm", "first: the app")
    (path / "README.md").write_text("# Project\n")
    git(path, "add", "README.md")
    git(path, "commit", "-qm", "second: a readme")
    (path / "app.py").write_text("def total(xs):\n    return sum(xs) + 1  # unstaged\n")
    (path / "notes.txt").write_text("staged words\n")
    git(path, "add", "notes.txt")
    (path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64))
    monkeypatch.chdir(path)
    return path


@pytest.fixture
def page_url() -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # http.server's name
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(PAGE)))
            self.end_headers()
            self.wfile.write(PAGE)

        def log_message(self, *_args: object) -> None:
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/notes"
    server.shutdown()


def open_web(home: Path, openai_server) -> None:
    (home / "config.yaml").write_text(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
        "agent:\n  retries: 1\nweb:\n  allow_private_hosts: ['127.0.0.1']\n"
    )


def user_text(openai_server) -> str:
    return str(openai_server.requests[-1].json["messages"][-1]["content"])


def test_every_reference_kind_is_attached_and_shown(
    terminal, chat_home, openai_server, repo, page_url
):
    open_web(chat_home, openai_server)
    openai_server.queue(Reply.say("Read them all."))
    term = terminal("chat", home=chat_home)
    term.wait_for("/help for commands")
    term.line(f"look at @app.py, @src/ and @{page_url} with @diff @staged @git:HEAD~1")
    term.wait_for("Read them all.")
    for shown in (
        "attached @app.py (3 lines",
        "attached @src/ (a listing of 1 entries)",
        f"attached @{page_url} (",
        "attached @diff (unstaged changes",
        "attached @staged (staged changes",
        "attached @git:HEAD~1 (commit HEAD~1",
    ):
        assert shown in term.seen, shown
    sent = user_text(openai_server)
    assert sent.startswith(f"look at @app.py, @src/ and @{page_url} with @diff @staged")
    assert '<attached ref="@app.py" kind="file">\ndef total(xs):\n    return sum(xs) + 1' in sent
    assert '<attached ref="@src/" kind="folder">\ncore.py\n</attached>' in sent
    assert "fixes the login loop that some users met on Mondays" in sent
    assert "var tracking" not in sent and "menu" not in sent  # the page's main text only
    assert "+    return sum(xs) + 1  # unstaged" in sent  # @diff
    assert "+staged words" in sent  # @staged
    assert "first: the app" in sent and "+def total(xs):" in sent  # @git:HEAD~1
    term.line("/quit")
    assert term.wait_exit() == 0


def test_what_cannot_be_attached_is_said_and_the_rest_still_goes(
    terminal, chat_home, openai_server, repo
):
    written = repo / "git-wrote"
    openai_server.queue(Reply.say("Fine."))
    term = terminal("chat", home=chat_home)
    term.wait_for("/help for commands")
    term.line(
        "check @logo.png @missing.py @git:--output=git-wrote @http://127.0.0.1:9/x "
        "and @app.py; mail me@example.com or @alice"
    )
    term.wait_for("Fine.")
    seen = term.seen
    assert "not attached: @logo.png: a binary file" in seen
    assert "not attached: @missing.py: no such file or folder" in seen
    assert "not attached: @git:--output=git-wrote: name a commit" in seen
    assert "not attached: @http://127.0.0.1:9/x: refused" in seen  # the SSRF guard
    sent = user_text(openai_server)
    assert sent.count("<attached ") == 1 and 'ref="@app.py"' in sent
    assert "me@example.com" in sent and "@alice" in sent  # left as they were typed
    assert not written.exists()
    term.line("/quit")
    assert term.wait_exit() == 0


def test_references_complete_with_tab(terminal, chat_home, openai_server, repo):
    term = terminal("chat", home=chat_home)
    term.wait_for("/help for commands")
    term.type("explain @sr")
    term.type("\t")
    term.wait_for("explain @src")  # completed from @sr
    term.ctrl("c")
    term.type("see @sta")
    term.type("\t")
    term.wait_for("see @staged")
    term.ctrl("c")
    term.ctrl("d")
    assert term.wait_exit() == 0


def test_a_one_shot_attaches_references_too(chat_venv, chat_home, openai_server, repo):
    openai_server.queue(Reply.say("ok"))
    run = chat_venv.hermes("chat", "-q", "what does @app.py do?", home=chat_home)
    assert run.code == 0, run.err
    assert "attached @app.py (3 lines" in run.err
    assert "return sum(xs) + 1" in user_text(openai_server)


def test_worktree_keeps_the_checkout_untouched(chat_venv, chat_home, openai_server, repo):
    openai_server.queue(
        Reply.tool_call("terminal", {"command": "echo made > made.txt && pwd"}),
        Reply.say("Made it."),
        Reply.say("Nothing to do."),
    )
    run = chat_venv.hermes("chat", "-w", "-q", "make a file", home=chat_home)
    assert run.code == 0, run.err
    (made,) = list((repo / ".worktrees").glob("hermes-*/made.txt"))
    assert not (repo / "made.txt").exists()
    assert f"working in {made.parent}" in run.err and "has the session's work" in run.err
    assert "made.txt" not in git(repo, "status", "--porcelain")  # .worktrees/ is ignored
    branches = git(repo, "branch", "--list", "hermes/*")
    assert "hermes/" in branches  # the branch is kept with the work
    quiet = chat_venv.hermes("chat", "-w", "-q", "nothing", home=chat_home)
    assert quiet.code == 0 and "had no changes and was removed" in quiet.err
    assert len(list((repo / ".worktrees").glob("hermes-*"))) == 1


def test_worktree_outside_a_repository_is_one_line(chat_venv, chat_home, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = chat_venv.hermes("chat", "-w", "-q", "hi", home=chat_home)
    assert run.code == 1
    (line,) = run.err.strip().splitlines()
    assert line.startswith("hermes: error: --worktree needs a git repository")


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_complete_commands(chat_venv, chat_home, shell):
    run = chat_venv.hermes("completion", shell, home=chat_home)
    assert run.code == 0 and "_HERMES_COMPLETE" in run.out
    if shell != "bash":
        return
    words = chat_venv.hermes(
        home=chat_home,
        env={"_HERMES_COMPLETE": "bash_complete", "COMP_WORDS": "hermes ch", "COMP_CWORD": "1"},
    )
    assert "plain,chat" in words.out.splitlines()


def test_top_level_short_options_reach_the_chat(chat_venv, chat_home, openai_server):
    openai_server.queue(Reply.say("one"), Reply.say("two"))
    run = chat_venv.hermes("-m", "other-model", "-t", "demo", "-z", "hi", home=chat_home)
    assert run.code == 0, run.err
    request = openai_server.requests[-1].json
    assert request["model"] == "other-model"
    assert [tool["function"]["name"] for tool in request["tools"]] == ["shout"]
    wrong = chat_venv.hermes("-m", "x", "sessions", "list", home=chat_home)
    assert wrong.code != 0 and "go with `hermes` alone" in wrong.err
