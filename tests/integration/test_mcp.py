"""MCP servers through the whole agent (``hermes chat -q``, the MCP plugin, the scripted model):
a server of the tests' own that misbehaves on request, and the published reference servers
mcp-server-time and mcp-server-git (PyPI, in the test environment) over stdio."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_testkit import Reply

REPO = Path(__file__).resolve().parents[2]
FAULT_SERVER = REPO / "plugins" / "mcp" / "tests" / "fault_server.py"
BIN = Path(sys.executable).parent


def tool_names(request: dict) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools") or []]


def tool_results(request: dict) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m["role"] == "tool"]


@pytest.fixture
def home(hermes, openai_server, tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)

    def configure(servers: str) -> None:
        hermes.config(
            f"model:\n  base_url: {openai_server.base_url}\n  default: test-model\n"
            "agent:\n  retries: 1\nlearning:\n  review: false\n"
            f"mcp_servers:\n{servers}"
        )

    hermes.configure = configure
    hermes.work = work
    return hermes


def faults(*args: str, timeout: float = 10, connect_timeout: float = 20) -> str:
    listed = json.dumps([str(FAULT_SERVER), *args])
    return (
        f"  faults:\n    command: {sys.executable}\n    args: {listed}\n"
        f"    timeout: {timeout}\n    connect_timeout: {connect_timeout}\n"
    )


def ask(hermes, text: str = "go") -> tuple[dict, str]:
    result = hermes("chat", "-q", text, "--json")
    assert result.code == 0, result.err
    return json.loads(result.out), result.err


def test_a_slow_server_is_waited_for_and_its_tools_are_in_the_first_request(home, openai_server):
    home.configure(faults("--start-delay", "2"))
    openai_server.queue(Reply.say("ready"))
    payload, _ = ask(home)
    assert payload["reply"] == "ready"
    names = tool_names(openai_server.requests[0].json)
    assert {"mcp_faults_echo", "mcp_faults_write_line", "mcp_faults_hang"} <= set(names)


def test_tools_are_called_and_side_effects_persisted_first(home, openai_server):
    home.configure(faults())
    target = home.work / "lines.txt"
    openai_server.queue(
        Reply.tool_call("mcp_faults_write_line", {"path": str(target), "line": "one"}),
        Reply.tool_call("mcp_faults_echo", {"text": "hi"}),
        Reply.say("done"),
    )
    payload, _ = ask(home)
    assert payload["reply"] == "done"
    assert target.read_text() == "one\n"
    results = tool_results(openai_server.requests[-1].json)
    assert results == [f"wrote 'one' to {target}", "echo: hi"]


def test_a_hanging_tool_times_out_alone_and_the_next_call_works(home, openai_server):
    marks = home.work / "marks"
    marks.mkdir()
    home.configure(faults("--marks", str(marks), timeout=1))
    openai_server.queue(
        Reply.tool_call("mcp_faults_hang", {}),
        Reply.tool_call("mcp_faults_echo", {"text": "still here"}),
        Reply.say("recovered"),
    )
    payload, _ = ask(home)
    assert payload["reply"] == "recovered"
    hung, echoed = tool_results(openai_server.requests[-1].json)
    assert "timed out after 1 s" in hung and "effect is unknown" in hung
    assert echoed == "echo: still here"
    assert (marks / "hang-cancelled").read_text() == "cancelled"  # notifications/cancelled


def test_a_server_that_crashes_mid_session_is_reconnected(home, openai_server):
    home.configure(faults())
    openai_server.queue(
        Reply.tool_call("mcp_faults_crash", {}),
        Reply.tool_call("mcp_faults_echo", {"text": "back"}),
        Reply.say("fine"),
    )
    payload, _ = ask(home)
    assert payload["reply"] == "fine"
    crashed, echoed = tool_results(openai_server.requests[-1].json)
    assert "faults" in crashed and "effect is unknown" in crashed
    assert echoed == "echo: back"


def test_a_server_that_never_starts_is_named_and_the_turn_answers(home, openai_server):
    home.configure(faults("--fail-start"))
    openai_server.queue(Reply.say("answered anyway"))
    payload, err = ask(home)
    assert payload["reply"] == "answered anyway"
    line = next(x for x in err.splitlines() if "faults" in x)
    assert "MCP server 'faults' did not start" in line and "Traceback" not in err
    request = openai_server.requests[0].json
    status = next(t for t in request["tools"] if t["function"]["name"] == "mcp_servers")
    assert "faults" in status["function"]["description"]
    assert not [n for n in tool_names(request) if n.startswith("mcp_faults_")]


def test_error_text_is_redacted_and_the_server_gets_no_keys(home, openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-never-reach-the-server-000")
    home.configure(faults() + "    env:\n      GREETING: hello ${USER_NAME}\n")
    home.dotenv("USER_NAME=ada\n")
    openai_server.queue(
        Reply.tool_call("mcp_faults_secret_error", {}),
        Reply.tool_call("mcp_faults_environment", {}),
        Reply.say("ok"),
    )
    ask(home)
    failed, environment = tool_results(openai_server.requests[-1].json)
    assert "abc123secret" not in failed and "ghp_abcdef" not in failed
    assert "<redacted>" in failed  # by the kernel, as every result is
    names = set(environment.split(" | ")[0].split())
    assert "OPENAI_API_KEY" not in names and "HERMES_HOME" not in names
    assert "PATH" in names and environment.endswith("GREETING=hello ada")


def test_resources_and_prompts_are_offered_through_generic_tools(home, openai_server):
    home.configure(faults())
    openai_server.queue(
        Reply.tool_call("mcp_faults_list_resources", {}),
        Reply.tool_call("mcp_faults_read_resource", {"uri": "note://today"}),
        Reply.tool_call("mcp_faults_get_prompt", {"name": "greet", "arguments": {"name": "Ada"}}),
        Reply.say("read"),
    )
    ask(home)
    listed, read, prompt = tool_results(openai_server.requests[-1].json)
    assert "note://today" in listed and read == "buy milk"
    assert "Say hello to Ada." in prompt


def test_a_bad_entry_is_one_line_and_the_rest_still_work(home, openai_server):
    home.configure(faults() + "  broken:\n    args: [nothing to run]\n")
    openai_server.queue(Reply.say("ok"))
    payload, err = ask(home)
    assert payload["reply"] == "ok"
    assert "mcp_servers.broken" in err and "command" in err and "Traceback" not in err
    assert "mcp_faults_echo" in tool_names(openai_server.requests[0].json)


def test_the_reference_time_and_git_servers_over_stdio(home, openai_server, tmp_path):
    repository = tmp_path / "repo"
    repository.mkdir()
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    (repository / "a.txt").write_text("hello\n")
    home.configure(
        f"  time:\n    command: {BIN / 'mcp-server-time'}\n    args: [--local-timezone, UTC]\n"
        f"  git:\n    command: {BIN / 'mcp-server-git'}\n    args: [--repository, {repository}]\n"
        "    tools: {include: [git_status]}\n"
    )
    openai_server.queue(
        Reply.tool_call("mcp_time_get_current_time", {"timezone": "UTC"}),
        Reply.tool_call("mcp_git_git_status", {"repo_path": str(repository)}),
        Reply.say("it is now"),
    )
    payload, _ = ask(home)
    assert payload["reply"] == "it is now"
    names = tool_names(openai_server.requests[0].json)
    assert "mcp_time_convert_time" in names
    assert [n for n in names if n.startswith("mcp_git_")] == ["mcp_git_git_status"]  # include
    now, status = tool_results(openai_server.requests[-1].json)
    assert '"timezone": "UTC"' in now and "datetime" in now
    assert "a.txt" in status  # untracked


def test_mcp_list_and_test_commands(home):
    home.configure(faults())
    listed = home("mcp", "list")
    assert listed.code == 0 and "faults" in listed.out and str(FAULT_SERVER) in listed.out
    tested = home("mcp", "test", "faults")
    assert tested.code == 0, tested.err
    assert "faults: connected in" in tested.out and "echo" in tested.out
    missing = home("mcp", "test", "nope")
    assert missing.code == 1 and "no MCP server 'nope'" in missing.err
    added = home("mcp", "add", "clock", "--command", str(BIN / "mcp-server-time"))
    assert added.code == 0, added.err
    assert "clock" in home("mcp", "list").out
    assert home("mcp", "remove", "clock").code == 0
    assert "clock" not in home("mcp", "list").out


def test_status_names_each_configured_server_and_its_state(home):
    # Once the kernel read mcp_servers itself and printed "no MCP plugin installed" with the
    # plugin installed: the plugin now reports its servers (issue 38).
    home.configure(
        faults()
        + "  old:\n    command: python3\n    enabled: false\n"
        + "  gone:\n    command: no-such-mcp-server-program\n"
        + "  remote:\n    url: https://mcp.example/mcp\n"
        + "    headers:\n      Authorization: Bearer ${REMOTE_TOKEN}\n"
    )
    status = home("status")
    assert status.code == 0, status.err
    lines = status.out.splitlines()
    assert "MCP:         4 configured, 3 enabled" in lines
    assert "no MCP plugin installed" not in status.out
    details = {line.strip().split(":", 1)[0]: line.strip() for line in lines if line[:1] == " "}
    assert details["faults"].startswith("faults: enabled (")
    assert details["old"] == "old: disabled (python3)"
    assert details["gone"] == (
        "gone: cannot start: command 'no-such-mcp-server-program' is not found "
        "(no-such-mcp-server-program)"
    )
    assert details["remote"].startswith("remote: cannot start: ${REMOTE_TOKEN} not set (")
    home.dotenv("REMOTE_TOKEN=t0k3n\n")
    again = home("status").out
    assert "remote: enabled (https://mcp.example/mcp (streamable_http))" in again
    assert "t0k3n" not in again
    doctor = home("doctor")
    assert "[ok  ] MCP server 'faults'" in doctor.out
    assert (
        "[warn] MCP server 'gone': command 'no-such-mcp-server-program' is not found, "
        "so its tools are missing"
    ) in doctor.out
    assert "MCP server 'old'" not in doctor.out, "a disabled server is not checked"


def test_status_without_servers_says_how_to_add_one(home):
    home.configure("")
    assert "MCP:         none configured (hermes mcp add NAME ...)" in home("status").out


def test_a_killed_hermes_leaves_no_server_behind(home, openai_server):
    import os
    import signal
    import time

    marks = home.work / "marks"
    marks.mkdir()
    home.configure(faults("--marks", str(marks), timeout=60))
    openai_server.queue(Reply.tool_call("mcp_faults_hang", {}))
    process = subprocess.Popen(
        [sys.executable, "-m", "hermes_kernel.cli.main", "chat", "-q", "go"],
        env={**os.environ, "HERMES_HOME": str(home.home)},
        cwd=home.work,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while len(openai_server.requests) < 1 or not list(marks.glob("pid-*")):
        assert time.monotonic() < deadline, "the one-shot never called the model"
        time.sleep(0.1)
    time.sleep(0.5)  # the hanging call is in flight
    (marker,) = marks.glob("pid-*")
    server_pid = int(marker.name.removeprefix("pid-"))
    process.send_signal(signal.SIGKILL)
    process.wait(10)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{server_pid}").exists():
        state = Path(f"/proc/{server_pid}/stat").read_text().split()[2]
        if state == "Z":  # exited; only its (killed) parent could have reaped it
            break
        assert time.monotonic() < deadline, "the MCP server outlived the Hermes that ran it"
        time.sleep(0.1)


def test_a_stop_cancels_a_running_mcp_call(home, openai_server):
    import asyncio
    import time

    from hermes_sdk.runtime import SessionOptions, ToolStarted, open_runtime

    marks = home.work / "marks"
    marks.mkdir()
    home.configure(faults("--marks", str(marks), timeout=60))
    openai_server.queue(Reply.tool_call("mcp_faults_hang", {}))

    async def scenario() -> str:
        async with open_runtime(home.home) as runtime:
            session = await runtime.open_session(SessionOptions(source="test"))
            turn = runtime.start_turn(session.session_id, "hang")
            async for event in turn:
                if isinstance(event, ToolStarted):
                    await asyncio.sleep(0.5)
                    turn.stop()
            ended = await turn.result()
            return f"{ended.status}: {ended.error}"

    outcome = asyncio.run(scenario())  # a stop not heard would run into the 60 s timeout,
    assert outcome.startswith("stopped"), outcome  # then ask a model with nothing queued
    deadline = time.monotonic() + 10
    while not (marks / "hang-cancelled").exists():
        assert time.monotonic() < deadline, "the server never heard the call was cancelled"
        time.sleep(0.1)


def started(marks: Path) -> int:
    return len(list(marks.glob("pid-*")))


def test_a_remembered_server_starts_only_when_a_call_needs_it(home, openai_server):
    marks = home.work / "marks"
    marks.mkdir()
    home.configure(faults("--marks", str(marks)))
    openai_server.queue(Reply.say("first"))
    assert ask(home)[0]["reply"] == "first"
    assert started(marks) == 1  # nothing remembered yet: connected at start
    openai_server.queue(Reply.say("second"))
    assert ask(home)[0]["reply"] == "second"
    assert started(marks) == 1, "a chat that calls none of its tools started the server"
    names = tool_names(openai_server.requests[-1].json)
    assert {"mcp_faults_echo", "mcp_faults_list_resources", "mcp_faults_get_prompt"} <= set(names)
    echo = next(t for t in openai_server.requests[-1].json["tools"] if "echo" in str(t))
    assert echo["function"]["parameters"]["properties"]["text"]["type"] == "string"
    openai_server.queue(Reply.tool_call("mcp_faults_echo", {"text": "hi"}), Reply.say("called"))
    assert ask(home)[0]["reply"] == "called"
    assert tool_results(openai_server.requests[-1].json) == ["echo: hi"]
    assert started(marks) == 2  # started by the call


def test_changed_settings_or_a_damaged_memory_mean_a_connect_at_start(home, openai_server):
    marks = home.work / "marks"
    marks.mkdir()
    home.configure(faults("--marks", str(marks)))
    openai_server.queue(Reply.say("one"))
    ask(home)
    home.configure(faults("--marks", str(marks), timeout=30))  # another entry: not remembered
    openai_server.queue(Reply.say("two"))
    ask(home)
    assert started(marks) == 2
    memory = home.home / "cache" / "mcp-offers.json"
    memory.write_text('{"faults": {"key": ')
    openai_server.queue(Reply.say("three"))
    payload, err = ask(home)
    assert payload["reply"] == "three" and "Traceback" not in err
    assert started(marks) == 3
    assert "mcp_faults_echo" in tool_names(openai_server.requests[-1].json)
    assert "echo" in memory.read_text(), "the memory is written again after a connect"


def test_a_remembered_server_that_no_longer_starts_is_said_and_forgotten(home, openai_server):
    broken = home.work / "broken"
    home.configure(faults("--fail-if", str(broken)))
    openai_server.queue(Reply.say("remembered"))
    ask(home)
    broken.write_text("now it fails")
    openai_server.queue(Reply.tool_call("mcp_faults_echo", {"text": "hi"}), Reply.say("told"))
    payload, _ = ask(home)
    assert payload["reply"] == "told"
    (result,) = tool_results(openai_server.requests[-1].json)
    assert "MCP server 'faults' could not be reached" in result
    openai_server.queue(Reply.say("answered anyway"))
    payload, err = ask(home)  # forgotten: started at start, and its failure said there
    assert payload["reply"] == "answered anyway"
    assert "MCP server 'faults' did not start" in err
    assert not [n for n in tool_names(openai_server.requests[-1].json) if "faults_echo" in n]
