"""Plugins that misbehave while the agent runs: the fault matrix.

A real ``hermes`` from a throwaway environment with the fixture plugin ``faulty`` installed
(tests/fixtures/faulty), whose hooks and tools hang, raise, exit or crash as ``FAULTY`` says,
talking to the scripted model server. In process, every hook has a deadline and runs off the
event loop, and every tool has one too; listed in ``plugins.isolated``, the plugin runs in a
host process of its own, so even ``os._exit`` and a segfault cost one call. Every time, the
agent answers and exits 0.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from hermes_plugin_platform_telegram.testing.telegram_server import DEFAULT_TOKEN, FakeTelegram

from hermes_testkit import Reply

FAST_DEADLINE = "plugins:\n  hook_timeout_seconds: 1\n"


def tool_results(request: dict) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m["role"] == "tool"]


class Faults:
    """A HERMES_HOME for the fault venv's ``hermes``, and what the plugin logged."""

    def __init__(self, venv, home: Path, openai_server) -> None:
        self.venv = venv
        self.home = home
        self.server = openai_server
        self.log = home / "faulty.log"

    def configure(self, extra: str = "") -> None:
        (self.home / "config.yaml").write_text(
            f"model:\n  base_url: {self.server.base_url}\n  default: test-model\n"
            "agent:\n  retries: 1\nlearning:\n  review: false\n" + extra
        )

    def env(self, plan: str) -> dict[str, str]:
        return {"FAULTY": plan, "FAULTY_LOG": str(self.log)}

    def ask(self, plan: str = "", timeout: float = 60) -> tuple[dict, str]:
        run = self.venv.hermes(
            "chat", "-q", "go", "--json", home=self.home, env=self.env(plan), timeout=timeout
        )
        assert run.code == 0, run.err
        return json.loads(run.out), run.err

    def logged(self) -> list[tuple[str, int]]:
        if not self.log.exists():
            return []
        pairs = (line.rsplit(" ", 1) for line in self.log.read_text().splitlines())
        return [(hook, int(pid)) for hook, pid in pairs]

    def calls_of(self, hook: str) -> int:
        return sum(1 for name, _ in self.logged() if name == hook)


@pytest.fixture
def faults(fault_venv, tmp_path, openai_server, monkeypatch) -> Faults:
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return Faults(fault_venv, home, openai_server)


# --- in process -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "plan",
    [
        "pre_llm_call=hang",
        "post_llm_call=raise,pre_tool_call=raise,prompt_sections=raise",
        "on_session_start=exit,pre_llm_call=exit,post_tool_call=interrupt",
        "on_session_end=hang,prompt_sections=hang",
    ],
)
def test_hooks_that_hang_raise_or_exit_never_stop_the_answer(faults, openai_server, plan):
    faults.configure(FAST_DEADLINE)
    openai_server.queue(Reply.tool_call("faulty_echo", {"text": "hi"}), Reply.say("answered"))
    payload, err = faults.ask(plan)
    assert payload["reply"] == "answered"
    assert tool_results(openai_server.requests[-1].json) == ["echo: hi"]
    for hook, how in (item.split("=") for item in plan.split(",")):
        assert faults.calls_of(hook) >= 1, hook  # it did run, and misbehave
        if how == "hang":
            assert f"hermes_{hook} did not return within 1 s" in err
        elif how in ("raise", "exit", "interrupt"):
            assert f"plugin 'faulty' raised in hermes_{hook}" in err


def test_a_plugin_that_keeps_missing_the_deadline_is_disabled_in_one_line(faults, openai_server):
    faults.configure(FAST_DEADLINE)
    openai_server.queue(
        *(Reply.tool_call("faulty_echo", {"text": str(n)}) for n in range(3)),
        Reply.say("answered"),
    )
    payload, err = faults.ask("pre_llm_call=hang")
    assert payload["reply"] == "answered"
    assert faults.calls_of("pre_llm_call") == 3  # the fourth model call skipped it
    assert err.count("did not return within 1 s") == 3
    assert err.count("plugin 'faulty' is disabled for the rest of this process") == 1
    assert faults.calls_of("pre_tool_call") == 2  # disabled means every hook of it


def test_a_tool_that_hangs_or_exits_is_one_failed_call(faults, openai_server):
    faults.configure("tools:\n  timeout_seconds: 1\n")
    openai_server.queue(
        Reply.tool_call("misbehave", {"how": "hang"}),
        Reply.tool_call("misbehave", {"how": "exit"}),
        Reply.tool_call("faulty_echo", {"text": "still here"}),
        Reply.say("answered"),
    )
    started = time.monotonic()
    payload, _ = faults.ask()
    assert payload["reply"] == "answered"
    hung, exited, echoed = tool_results(openai_server.requests[-1].json)
    assert hung.startswith("timed out after 1 s and was abandoned: its effect is UNKNOWN")
    assert exited == "error: SystemExit: 3"
    assert echoed == "echo: still here"
    assert time.monotonic() - started < 30  # it left at once, without the hung thread


def test_sigterm_ends_a_one_shot_stuck_in_a_hung_hook(faults, openai_server):
    faults.configure("plugins:\n  hook_timeout_seconds: 120\n")
    openai_server.queue(Reply.say("never asked"))
    process = subprocess.Popen(
        [str(faults.venv.path / "bin" / "hermes"), "chat", "-q", "go"],
        env={**os.environ, "HERMES_HOME": str(faults.home), **faults.env("pre_llm_call=hang")},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while faults.calls_of("pre_llm_call") == 0:
            assert time.monotonic() < deadline, "the hook never ran"
            assert process.poll() is None, process.communicate()
            time.sleep(0.05)
        signalled = time.monotonic()
        process.send_signal(signal.SIGTERM)
        _out, err = process.communicate(timeout=5)  # the Must-show figure: within 5 s
        took = time.monotonic() - signalled
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 143, err
    assert "hermes: interrupted" in err
    assert not openai_server.requests  # it stopped before the model call
    print(f"SIGTERM to exit: {took:.2f} s")
    sessions = faults.venv.hermes("sessions", "list", "--json", home=faults.home)
    assert sessions.code == 0, sessions.err
    assert len(sessions.out.splitlines()) == 1  # the turn was saved before it left


# --- isolated ---------------------------------------------------------------------------------

ISOLATED = "plugins:\n  hook_timeout_seconds: 5\n  isolated: [faulty]\n"


def host_pids(faults: Faults) -> set[int]:
    return {pid for _, pid in faults.logged()}


def test_an_isolated_plugin_runs_in_its_own_process_with_its_tools_hooks_and_context(
    faults, openai_server
):
    faults.configure(ISOLATED)
    openai_server.queue(
        Reply.tool_call("faulty_shell", {"command": "echo through-the-context"}),
        Reply.tool_call("terminal", {"command": "echo forbidden-by-faulty"}),
        Reply.tool_call("faulty_async", {"text": "from a coroutine"}),
        Reply.say("answered"),
    )
    payload, err = faults.ask()
    assert payload["reply"] == "answered", err
    (pid,) = host_pids(faults)  # every hook ran in the one host process
    system = openai_server.requests[0].json["messages"][0]["content"]
    assert f"The faulty plugin runs in process {pid}." in system
    shell, refused, coroutine = tool_results(openai_server.requests[-1].json)
    assert coroutine == "async echo: from a coroutine"
    # The tool ran in the host; the command ran in the agent's backend, through callbacks.
    assert shell == f"exit 0 in process {pid}: through-the-context"
    assert "the faulty plugin forbids it" in refused  # check_command, answered by the host
    for hook in ("on_session_start", "pre_llm_call", "post_tool_call", "on_session_end"):
        assert faults.calls_of(hook) >= 1, hook
    with pytest.raises(ProcessLookupError):  # the host left with the agent
        os.kill(pid, 0)


def test_an_isolated_tool_that_calls_os_exit_costs_one_call(faults, openai_server):
    faults.configure(ISOLATED)
    openai_server.queue(
        Reply.tool_call("misbehave", {"how": "osexit"}),
        Reply.tool_call("faulty_echo", {"text": "back again"}),
        Reply.say("answered"),
    )
    payload, _ = faults.ask()
    assert payload["reply"] == "answered"
    crashed, echoed = tool_results(openai_server.requests[-1].json)
    assert crashed == (
        "error: PluginCrashed: the plugin's process crashed (exited with status 7); it "
        "restarts for the next call"
    )
    assert echoed == "echo: back again"  # a new host answered


def test_an_isolated_hook_that_segfaults_costs_one_hook_call(faults, openai_server):
    faults.configure(ISOLATED)
    openai_server.queue(Reply.tool_call("faulty_echo", {"text": "hi"}), Reply.say("answered"))
    payload, err = faults.ask("pre_tool_call=segfault")
    assert payload["reply"] == "answered"
    assert tool_results(openai_server.requests[-1].json) == ["echo: hi"]
    assert "plugin 'faulty' raised in hermes_pre_tool_call: PluginCrashed" in err
    assert "killed by SIGSEGV" in err
    assert len(host_pids(faults)) == 2  # the first host died; the second served the rest


def test_an_isolated_plugin_that_keeps_crashing_is_disabled_in_one_line(faults, openai_server):
    faults.configure(ISOLATED)
    openai_server.queue(
        *(Reply.tool_call("misbehave", {"how": "osexit"}) for _ in range(4)),
        Reply.say("answered"),
    )
    payload, err = faults.ask()
    assert payload["reply"] == "answered"
    results = tool_results(openai_server.requests[-1].json)
    assert all("the plugin's process crashed" in r for r in results[:3])
    assert (
        "plugin 'faulty' is disabled for this process: its process crashed 3 times" in (results[3])
    )
    assert err.count("plugin 'faulty' is disabled for the rest of this process") == 1


def test_plugins_list_shows_the_isolated_plugin_and_its_host(faults, openai_server):
    faults.configure(ISOLATED)

    def row_of(*options: str) -> dict:
        listed = faults.venv.hermes("plugins", "list", "--json", *options, home=faults.home)
        assert listed.code == 0, listed.err
        (row,) = [row for row in json.loads(listed.out) if row["name"] == "faulty"]
        return row

    assert row_of()["isolated"] is True
    assert row_of()["host"] == "starts on first use"
    assert row_of("--verify")["host"].startswith("host running (pid ")
    openai_server.queue(Reply.tool_call("misbehave", {"how": "osexit"}), Reply.say("answered"))
    faults.ask()
    # The last run's story, without starting anything.
    assert row_of()["run_time"] == (
        "isolated; its host crashed 1 time (last: exited with status 7)"
    )


def test_what_cannot_run_isolated_is_refused_with_the_reason(faults):
    faults.configure("plugins:\n  isolated: [provider-openai]\n")
    listed = faults.venv.hermes("plugins", "list", "--json", "--verify", home=faults.home)
    (row,) = [row for row in json.loads(listed.out) if row["name"] == "provider-openai"]
    assert row["state"] == "failed"
    assert "which cannot run in a plugin host of its own" in row["error"]
    assert "remove 'provider-openai' from plugins.isolated" in row["error"]
    chat = faults.venv.hermes("chat", "-q", "hi", home=faults.home)
    assert chat.code == 1
    assert "Traceback" not in chat.err
    assert "cannot run in a plugin host of its own" in chat.err


def test_an_isolated_name_that_is_not_installed_is_named(faults, openai_server):
    faults.configure("plugins:\n  isolated: [fualty]\n")
    openai_server.queue(Reply.say("answered"))
    payload, err = faults.ask()
    assert payload["reply"] == "answered"
    assert "plugins.isolated names 'fualty', which is not installed; did you mean 'faulty'?" in err


# --- the gateway ------------------------------------------------------------------------------


def test_a_slow_hook_in_one_conversation_never_delays_another(faults, openai_server):
    slow_user, quick_user = 42, 43
    with FakeTelegram() as telegram:
        faults.configure(
            "plugins:\n  hook_timeout_seconds: 20\n"
            "gateway:\n  drain_seconds: 1\n"
            "platforms:\n  telegram:\n"
            f"    api_url: {telegram.api_url}\n    poll_timeout_seconds: 1\n"
            f"    allowed_users: [{slow_user}, {quick_user}]\n"
        )
        (faults.home / ".env").write_text(f"TELEGRAM_BOT_TOKEN={DEFAULT_TOKEN}\n")
        openai_server.queue(Reply.say("first answer"), Reply.say("second answer"))
        env = {
            **os.environ,
            "HERMES_HOME": str(faults.home),
            **faults.env("pre_llm_call=slow"),
            "FAULTY_SLOW_SECONDS": "4",
            "FAULTY_SCOPE": f"telegram:{slow_user}",
        }
        gateway = subprocess.Popen(
            [str(faults.venv.path / "bin" / "hermes"), "gateway", "run"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            telegram.wait_for(
                lambda _: any(method == "getUpdates" for method, _ in list(telegram.calls)), 30
            )
            telegram.user_says(slow_user, "I am slow")
            deadline = time.monotonic() + 30
            while faults.calls_of("pre_llm_call") == 0:  # the slow hook is running
                assert time.monotonic() < deadline
                time.sleep(0.05)
            telegram.user_says(quick_user, "I am quick")
            quick = telegram.wait_for_message(quick_user, "first answer", timeout=20)
            # The quick conversation was answered while the slow hook still ran.
            assert faults.calls_of("pre_llm_call-done") <= 1
            assert not telegram.sent(slow_user)
            slow = telegram.wait_for_message(slow_user, "second answer", timeout=30)
            assert quick.message_id < slow.message_id
        finally:
            gateway.send_signal(signal.SIGTERM)
            try:
                code = gateway.wait(30)
            except subprocess.TimeoutExpired:
                gateway.kill()
                raise
            err = gateway.stderr.read() if gateway.stderr else ""
        assert code == 0, err


# --- hermes status and hermes doctor ------------------------------------------------------


@pytest.mark.parametrize("isolated", [False, True], ids=["in-process", "isolated"])
def test_a_raising_status_contribution_is_one_line_naming_its_plugin(faults, isolated):
    faults.configure(FAST_DEADLINE + ("  isolated: [faulty]\n" if isolated else ""))
    fine = faults.venv.hermes("status", home=faults.home, env=faults.env(""))
    assert fine.code == 0, fine.err
    assert "Faulty:      answered in process" in fine.out
    run = faults.venv.hermes("status", home=faults.home, env=faults.env("status_lines=raise"))
    assert run.code == 0, run.err
    [line] = [line for line in run.out.splitlines() if "faulty" in line.lower()]
    assert line.startswith("faulty:") and "its status failed: " in line
    assert "faulty was asked to raise" in line
    assert run.out.splitlines()[-2].startswith("Sessions:"), "the rest of the screen is there"
    assert "Traceback" not in run.err


def test_a_hanging_status_contribution_costs_its_deadline_only(faults):
    faults.configure(FAST_DEADLINE)
    started = time.monotonic()
    run = faults.venv.hermes("status", home=faults.home, env=faults.env("status_lines=hang"))
    assert run.code == 0, run.err
    assert "faulty:      its status failed: no answer within 1 s" in run.out.splitlines()
    assert time.monotonic() - started < 20


def test_a_raising_doctor_check_is_an_error_naming_its_plugin(faults):
    faults.configure(FAST_DEADLINE)
    fine = faults.venv.hermes("doctor", home=faults.home, env=faults.env(""))
    assert "[ok  ] the faulty plugin answered its doctor check" in fine.out
    run = faults.venv.hermes("doctor", home=faults.home, env=faults.env("doctor_checks=raise"))
    assert run.code == 1
    assert (
        "[FAIL] plugin 'faulty': its doctor checks failed: RuntimeError: faulty was asked to "
        "raise" in run.out
    )


WEB_KEY = "faulty-dashboard-key-0123456789"


def _web(faults: Faults, plan: str) -> tuple[subprocess.Popen[bytes], str]:
    """``hermes web`` from the fault venv, with ``FAULTY`` as ``plan``; its URL."""
    import re
    import select

    (faults.home / ".env").write_text(f"WEB_UI_KEY={WEB_KEY}\n")
    (faults.home / ".env").chmod(0o600)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    environ.update({"HERMES_HOME": str(faults.home), **faults.env(plan)})
    process = subprocess.Popen(
        [str(faults.venv.path / "bin" / "hermes"), "web", "--port", "0"],
        env=environ,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert process.stderr is not None
    seen = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stderr], [], [], 0.5)
        if ready:
            seen += os.read(process.stderr.fileno(), 4096)
            found = re.search(rb"hermes web: (http://[^ ]+/) ", seen)
            if found:
                return process, found.group(1).decode().rstrip("/")
    process.kill()
    raise AssertionError(f"hermes web did not start: {seen.decode(errors='replace')}")


def _logged_in(url: str) -> tuple[Any, str]:
    import re

    import httpx

    client = httpx.Client(base_url=url, timeout=30)
    token = re.compile(r'name="csrf-token" content="([^"]+)"')
    found = token.search(client.get("/login").text)
    assert found is not None
    client.post("/login", data={"key": WEB_KEY, "next": "/chat", "csrf": found.group(1)})
    found = token.search(client.get("/chat").text)
    assert found is not None  # logged in: the chat, with its token
    return client, found.group(1)


@pytest.mark.parametrize("how", ["raise", "hang"])
def test_a_dashboard_page_that_raises_or_hangs_is_one_line_on_its_page(faults, how):
    """The faulty plugin's dashboard page raises, or never answers, in its view and in its
    action: its page says so in one line, the server answers the next request at once, and
    the other pages work."""
    faults.configure("web_ui:\n  panel_seconds: 3\n  action_seconds: 3\n")
    process, url = _web(faults, f"panel_view={how},panel_act={how}")
    try:
        client, csrf = _logged_in(url)
        assert client.get("/panels/settings").status_code == 200  # the plugins' models loaded
        started = time.monotonic()
        page = client.get("/panels/faulty")
        assert page.status_code == 200
        said = (
            "the Faulty page failed: faulty was asked to raise in panel_view"
            if how == "raise"
            else "the Faulty page did not answer within 3 s"
        )
        assert said in page.text
        assert time.monotonic() - started < 10
        done = client.post(
            "/panels/faulty/act", data={"_action": "poke", "csrf": csrf}, follow_redirects=True
        )
        said = (
            "poke failed: faulty was asked to raise in panel_act"
            if how == "raise"
            else "no answer within 3 s: it may or may not have been done"
        )
        assert said in done.text
        settings = client.get("/panels/settings")
        assert settings.status_code == 200 and "agent.retries" in settings.text
        assert client.get("/health").json() == {"status": "ok"}
    finally:
        process.terminate()
        process.wait(30)
