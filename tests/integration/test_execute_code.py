"""execute_code through the whole agent: a script's tool calls in one model round, each
recorded as a child of the call; the model's own rules for every call; scripts that loop,
crash, flood or outgrow their memory; a clean environment; a user's stop; Docker."""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import sqlite3
import subprocess
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from hermes_sdk.runtime import Question, SessionOptions, open_runtime
from hermes_testkit import Reply, SSHServer

LIST_AND_READ = textwrap.dedent(
    """
    listing = terminal(command="ls -1 *.txt")
    names = [line for line in listing.splitlines()[1:] if line.endswith(".txt")]
    print("found", len(names), "files")
    for name in names[:3]:
        print(name, "=>", read_file(path=name).splitlines()[-1])
    """
)


def configure(hermes, openai_server, extra: str = "", agent: str = "") -> None:
    hermes.config(
        f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
        f"agent:\n  retries: 1\n{agent}learning:\n  review: false\n" + extra
    )


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    for number in range(1, 6):
        (folder / f"note{number}.txt").write_text(f"title {number}\nbody of note {number}\n")
    monkeypatch.chdir(folder)
    return folder


def run_script(hermes, openai_server, code: str) -> tuple[dict, str]:
    """One one-shot whose model runs ``code``: the --json payload and the tool result."""
    openai_server.queue(Reply.tool_call("execute_code", {"code": code}), Reply.say("done"))
    result = hermes("chat", "-q", "go", "--json")
    assert result.code == 0, result.err
    messages = openai_server.requests[-1].json["messages"]
    (content,) = [m["content"] for m in messages if m["role"] == "tool"]
    return json.loads(result.out), content


def nested_rows(home: Path) -> list[sqlite3.Row]:
    with sqlite3.connect(home / "state.db") as db:
        db.row_factory = sqlite3.Row
        return db.execute("SELECT * FROM nested_calls ORDER BY id").fetchall()


def test_one_round_lists_and_reads_three_files_with_every_call_recorded(
    hermes, openai_server, workspace
):
    configure(hermes, openai_server)
    payload, content = run_script(hermes, openai_server, LIST_AND_READ)
    assert len(openai_server.requests) == 2  # the call, then the answer: one tool round
    assert "found 5 files" in content
    for number in (1, 2, 3):
        line = next(line for line in content.splitlines() if line.startswith(f"note{number}"))
        assert line.endswith(f"body of note {number}"), line
    assert "note4.txt =>" not in content
    assert "[execute_code: 4 tool calls" in content
    rows = nested_rows(hermes.home)
    assert [(row["position"], row["tool_name"]) for row in rows] == [
        (1, "terminal"),
        (2, "read_file"),
        (3, "read_file"),
        (4, "read_file"),
    ]
    assert all(row["disposition"] == "ok" for row in rows)
    assert json.loads(rows[1]["arguments"]) == {"path": "note1.txt"}
    # Children of the very execute_code call, on the assistant message that holds it.
    (call,) = [c for c in payload["tool_calls"] if c["name"] == "execute_code"]
    assert {row["parent_call_id"] for row in rows} == {call["id"]}
    nested = [c for c in payload["tool_calls"] if c["name"] != "execute_code"]
    assert [c.get("parent") for c in nested] == [call["id"]] * 4 and "parent" not in call
    with sqlite3.connect(hermes.home / "state.db") as db:
        (calls_json,) = db.execute(
            "SELECT tool_calls FROM messages WHERE id = ?", (rows[0]["message_id"],)
        ).fetchone()
    assert [c["id"] for c in json.loads(calls_json)] == [call["id"]]


def test_the_description_lists_the_functions_with_their_arguments(hermes, openai_server, workspace):
    configure(hermes, openai_server, "code:\n  tools: [read_file, terminal]\n")
    run_script(hermes, openai_server, "print(1)")
    (tool,) = [
        t["function"]
        for t in openai_server.requests[0].json["tools"]
        if t["function"]["name"] == "execute_code"
    ]
    assert "- read_file(path, offset=..., limit=...):" in tool["description"]
    assert "- terminal(command, " in tool["description"]
    assert "write_file(" not in tool["description"]  # not configured


def test_a_dangerous_command_in_a_script_is_refused_as_the_models_own(
    hermes, openai_server, workspace, tmp_path
):
    configure(hermes, openai_server)
    precious = tmp_path / "precious"
    precious.mkdir()
    command = f"rm -rf {precious}"
    openai_server.queue(Reply.tool_call("terminal", {"command": command}), Reply.say("no"))
    assert hermes("chat", "-q", "delete it").code == 0
    model_sees = next(
        m["content"] for m in openai_server.requests[-1].json["messages"] if m["role"] == "tool"
    )
    _, content = run_script(hermes, openai_server, f"print(terminal(command={command!r}))")
    assert precious.exists()
    assert model_sees.startswith("refused") or "denied" in model_sees, model_sees
    assert model_sees in content  # word for word what the model was told
    assert nested_rows(hermes.home)[-1]["disposition"] == "error"


@pytest.mark.parametrize("answer", ["once", "deny"])
def test_a_scripts_dangerous_command_asks_the_user_as_the_models_own(
    hermes, openai_server, workspace, answer
):
    configure(hermes, openai_server)
    (workspace / "scratch").mkdir()
    code = "print(terminal(command='chmod -R 777 ./scratch'))\n"
    openai_server.queue(Reply.tool_call("execute_code", {"code": code}), Reply.say("ok"))

    async def scenario() -> list[Question]:
        async with open_runtime(hermes.home) as runtime:
            session = await runtime.open_session(SessionOptions(source="test"))
            turn = runtime.start_turn(session.session_id, "go", answers_questions=True)
            asked = []
            async for event in turn:
                if isinstance(event, Question):
                    asked.append(event)
                    assert event.answer(answer)
            return asked

    asked = asyncio.run(scenario())
    assert [(q.kind, q.command) for q in asked] == [("approval", "chmod -R 777 ./scratch")]
    (result,) = [
        m["content"] for m in openai_server.requests[1].json["messages"] if m["role"] == "tool"
    ]
    if answer == "once":
        assert result.startswith("exit code 0")
        assert (workspace / "scratch").stat().st_mode & 0o777 == 0o777
    else:
        assert "the user denied this command" in result
        assert (workspace / "scratch").stat().st_mode & 0o777 != 0o777


def test_an_endless_loop_is_stopped_at_its_time_limit(hermes, openai_server, workspace):
    configure(hermes, openai_server, "code:\n  timeout_seconds: 2\n")
    payload, content = run_script(hermes, openai_server, "while True:\n    pass\n")
    assert content.startswith("error: the script ran past code.timeout_seconds (2 s)")
    (call,) = payload["tool_calls"]
    assert call["ok"] is False
    found = subprocess.run(
        ["pgrep", "-f", "hermes-code-.*/run.py"], check=False, capture_output=True, text=True
    )
    assert not [pid for pid in found.stdout.split() if _runs_in(pid, workspace)]


def _runs_in(pid: str, folder: Path) -> bool:
    try:
        return os.readlink(f"/proc/{pid}/cwd") == str(folder)
    except OSError:
        return False


def test_a_script_killed_at_its_limit_stops_the_call_it_was_waiting_for(
    hermes, openai_server, workspace
):
    configure(hermes, openai_server, "code:\n  timeout_seconds: 1\n")
    code = "terminal(command='sleep 2.5 && touch after-the-limit')\n"
    _, content = run_script(hermes, openai_server, code)
    assert "code.timeout_seconds (1 s)" in content
    time.sleep(3)
    assert not (workspace / "after-the-limit").exists()  # the command was killed too
    (row,) = nested_rows(hermes.home)
    assert row["disposition"] == "unknown" and "effect is UNKNOWN" in row["content"]


def test_a_tool_call_loop_is_stopped_at_its_call_limit(hermes, openai_server, workspace):
    configure(hermes, openai_server, "code:\n  max_tool_calls: 3\n")
    code = "for n in range(100):\n    read_file(path='note1.txt')\nprint('never')\n"
    _, content = run_script(hermes, openai_server, code)
    assert "code.max_tool_calls = 3" in content
    assert "ToolCallRefused" in content
    assert len(nested_rows(hermes.home)) == 3


def test_a_crashing_script_is_one_error_result_with_its_traceback(hermes, openai_server, workspace):
    configure(hermes, openai_server)
    code = "print('before')\ndef half(n):\n    return n / 0\nhalf(4)\n"
    payload, content = run_script(hermes, openai_server, code)
    assert content.startswith("error: the script failed (exit status 1)")
    assert "before" in content
    assert "return n / 0" in content  # the script's own line, from its traceback
    assert content.rstrip().endswith("ZeroDivisionError: division by zero")
    assert len(payload["tool_calls"]) == 1


def test_a_flood_of_output_is_cut_at_the_cap_and_says_so(hermes, openai_server, workspace):
    configure(hermes, openai_server, "code:\n  max_output_chars: 5000\n")
    _, content = run_script(hermes, openai_server, "print('x' * 300_000)\nprint('end')\n")
    assert content.count("x") >= 5000 and len(content) < 6000
    assert "more characters of output cut" in content and "code.max_output_chars" in content
    # One that never stops printing is stopped, long before its time limit.
    _, content = run_script(hermes, openai_server, "while True:\n    print('y' * 1000)\n")
    assert "the script did not finish: it printed over 5,000,000 characters" in content


def test_memory_is_bounded(hermes, openai_server, workspace):
    configure(hermes, openai_server, "code:\n  memory_mb: 200\n")
    _, content = run_script(hermes, openai_server, "block = bytearray(1024 * 1024 * 1024)\n")
    assert "MemoryError" in content


def test_the_script_gets_no_secrets(hermes, openai_server, workspace, monkeypatch):
    configure(hermes, openai_server)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-from-the-environment")
    (hermes.home / ".env").write_text("BRAVE_API_KEY=canary-from-dotenv\n")
    code = "import os\nprint(sorted(os.environ))\nprint(open('/proc/self/environ').read())\n"
    _, content = run_script(hermes, openai_server, code)
    assert "canary" not in content
    assert "OPENAI_API_KEY" not in content and "HERMES_HOME" not in content
    assert "'PATH'" in content


def test_a_bad_call_from_the_script_is_an_error_it_can_read(hermes, openai_server, workspace):
    configure(hermes, openai_server)
    code = textwrap.dedent(
        """
        print(read_file(path="missing.txt")[:60])
        try:
            call_tool("memory", action="add", content="x")
        except ToolCallRefused as refused:
            print("refused:", refused)
        print(read_file(nonsense=1)[:80] if False else "skip")
        """
    )
    _, content = run_script(hermes, openai_server, code)
    assert "error: FileNotFoundError" in content or "No such file" in content
    assert "refused: 'memory' is not a tool a script may call here" in content


def test_a_stop_ends_the_script_and_its_running_call(hermes, openai_server, workspace):
    configure(hermes, openai_server)
    code = "terminal(command='sleep 41.5')\nprint('never')\n"
    openai_server.queue(
        Reply.tool_call("execute_code", {"code": code}), Reply.say("too late", delay_seconds=5)
    )

    async def main() -> tuple[float, str]:
        async with open_runtime(hermes.home) as runtime:
            session = await runtime.open_session(SessionOptions(source="test"))
            turn = runtime.start_turn(session.session_id, "go")
            deadline = time.monotonic() + 20
            while not _sleeping() and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert _sleeping(), "the script's call never started"
            stopped_at = time.monotonic()
            turn.stop()
            ended = await turn.result()
            return time.monotonic() - stopped_at, ended.status

    took, status = asyncio.run(main())
    assert status == "stopped"
    assert took < 4
    deadline = time.monotonic() + 5
    while _sleeping() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _sleeping()
    (row,) = nested_rows(hermes.home)
    assert row["tool_name"] == "terminal"
    assert "interrupted" in row["content"] or row["disposition"] == "unknown", row["content"]


def _sleeping() -> bool:
    found = subprocess.run(
        ["pgrep", "-f", "sleep 41.5"], check=False, capture_output=True, text=True
    )
    return bool(found.stdout.strip())


@pytest.fixture(params=["docker", "ssh"])
def remote_backend(request: pytest.FixtureRequest) -> tuple[str, str]:
    """(the agent: lines, the backend's own section) for a backend that is not this shell."""
    if request.param == "docker":
        url = request.getfixturevalue("docker_url")
        image = request.getfixturevalue("docker_python_image")
        section = f"docker:\n  host: {url}\n  image: {image}\n  network: none\n"
        return "  backend: docker\n", section
    server: SSHServer = request.getfixturevalue("ssh_server")
    workspace = Path(server.home) / f"code-test-{uuid.uuid4().hex[:8]}"
    workspace.mkdir()
    account = pwd.getpwnam(server.user)
    os.chown(workspace, account.pw_uid, account.pw_gid)
    section = (
        f"ssh:\n  host: {server.host}\n  port: {server.port}\n  user: {server.user}\n"
        f"  key_file: {server.key_file}\n  known_hosts: {server.known_hosts}\n"
        f"  use_agent: false\n  workspace: {workspace}\n"
    )
    return "  backend: ssh\n", section


def test_the_same_script_runs_in_docker_and_over_ssh(
    hermes, openai_server, workspace, remote_backend
):
    agent, section = remote_backend
    configure(hermes, openai_server, section, agent=agent)
    setup = "\n".join(
        f"write_file(path='note{n}.txt', content='title {n}\\nbody of note {n}\\n')"
        for n in range(1, 6)
    )
    _, content = run_script(hermes, openai_server, setup + "\n" + LIST_AND_READ)
    assert "found 5 files" in content, content
    assert "body of note 3" in content
    assert "[execute_code: 9 tool calls" in content
    rows = nested_rows(hermes.home)
    assert len(rows) == 9 and all(row["disposition"] == "ok" for row in rows)
    # The script ran there, not here: this machine's workspace holds only its own notes.
    assert sorted(path.name for path in workspace.iterdir())[:1] == ["note1.txt"]
