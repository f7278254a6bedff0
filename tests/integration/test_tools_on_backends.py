"""The tools through the kernel (approvals, write protection, degraded results) on all
three backends: this machine, a Docker container and an SSH host."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hermes_plugin_toolset_terminal.registry import REGISTRY

from hermes_kernel.engine.control import TurnControl
from hermes_kernel.engine.tools import ToolRunner
from hermes_kernel.store.messages import Disposition
from hermes_kernel.tooling.environment import ToolEnvironment
from hermes_sdk.models import ToolCallRequest
from hermes_sdk.terminal import TerminalBackend
from hermes_testkit import SSHServer


def _config(kind: str, request: pytest.FixtureRequest) -> str:
    if kind == "local":
        return "agent:\n  backend: local\n"
    if kind == "docker":
        url = request.getfixturevalue("docker_url")
        image = request.getfixturevalue("docker_test_image")
        return (
            f"agent:\n  backend: docker\ndocker:\n  host: {url}\n  image: {image}\n"
            "  network: none\n"
        )
    server: SSHServer = request.getfixturevalue("ssh_server")
    return (
        f"agent:\n  backend: ssh\nssh:\n  host: {server.host}\n  port: {server.port}\n"
        f"  user: {server.user}\n  key_file: {server.key_file}\n"
        f"  known_hosts: {server.known_hosts}\n  use_agent: false\n"
        "  workspace: /tmp\n"
    )


class Tools:
    def __init__(self, environment: ToolEnvironment, runner: ToolRunner) -> None:
        self.environment = environment
        self.runner = runner
        self.count = 0

    def call(self, name: str, **arguments: object) -> tuple[str, Disposition]:
        self.count += 1
        request = ToolCallRequest(f"c{self.count}", name, json.dumps(arguments))
        outcome = asyncio.run(self.runner.run_one(request, TurnControl()))
        return outcome.content, outcome.disposition


@pytest.fixture(params=["local", "docker", "ssh"])
def tools(request: pytest.FixtureRequest, hermes, tmp_path: Path) -> Iterator[Tools]:
    hermes.config(_config(request.param, request))
    app = hermes.app()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    environment = ToolEnvironment(app.host, app.settings, cwd=str(workspace))
    session_id = f"s-{request.param}-{tmp_path.name[-6:]}"
    control = TurnControl()
    specs = {spec.name: spec for spec in app.host.tools()}
    runner = ToolRunner(
        specs, tmp_path / "spill", context=lambda: environment.context_for(session_id, control)
    )
    yield Tools(environment, runner)
    environment.close()


def test_files_and_commands_work_the_same_everywhere(tools: Tools) -> None:
    text, status = tools.call("write_file", path="proj/app.py", content="x = 1\ny = 2\n")
    assert status is Disposition.OK, text
    text, _ = tools.call("patch", path="proj/app.py", old_string="y = 2", new_string="y = 3")
    assert text.startswith("patched"), text
    text, _ = tools.call("read_file", path="proj/app.py")
    assert text.splitlines() == ["1\tx = 1", "2\ty = 3"]
    text, _ = tools.call("terminal", command="cd proj && ls")
    assert text.startswith("exit code 0") and "app.py" in text
    text, _ = tools.call("terminal", command="pwd")  # the cd carried over
    assert text.splitlines()[1].endswith("/proj")
    text, _ = tools.call("search_files", pattern="y = ", path=".")
    assert "app.py:2:y = 3" in text, text


def test_background_processes_end_with_the_environment(tools: Tools) -> None:
    text, status = tools.call("terminal", command="echo up; sleep 60", background=True)
    assert status is Disposition.OK, text
    session_id = next(iter(tools.environment.pool._backends))
    backend = tools.environment.pool.get(session_id)
    (tracked,) = REGISTRY._by_session[session_id].values()
    assert backend.read_process(tracked.handle).running
    tools.environment.end_session(session_id)  # /new, or Hermes exiting (close)
    survivor = tools.environment.pool.get(session_id)  # a fresh backend, same environment
    deadline = time.monotonic() + 10  # killed at once; reaped (no longer seen) a bit later
    while _running(survivor, tracked.handle) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _running(survivor, tracked.handle)


def _running(backend: TerminalBackend, handle: str) -> bool:
    try:
        return backend.read_process(handle).running
    except KeyError:
        return False  # unknown to a fresh environment: it went with the old one (a container)


def test_dangerous_commands_are_refused_when_nobody_can_approve(tools: Tools) -> None:
    text, status = tools.call("terminal", command="git push --force origin main")
    assert status is Disposition.ERROR
    assert "nobody can approve" in text
    text, _ = tools.call("terminal", command="sudo rm -rf /")
    assert "hardline" in text


def test_protected_files_are_not_written(tools: Tools) -> None:
    text, status = tools.call("write_file", path="~/.ssh/authorized_keys", content="k")
    assert status is Disposition.ERROR and "credentials" in text
    text, _ = tools.call("write_file", path="deploy/.env", content="TOKEN=x")
    assert ".env file" in text


@pytest.mark.parametrize(
    ("config", "words"),
    [
        ("agent:\n  backend: docker\ndocker:\n  host: unix:///nonexistent/docker.sock\n", "docker"),
        ("agent:\n  backend: ssh\nssh:\n  host: 127.0.0.1\n  port: 1\n", "cannot reach"),
        ("agent:\n  backend: nosuch\n", "no terminal backend 'nosuch'"),
    ],
)
def test_a_broken_backend_is_a_degraded_result_not_a_crash(
    hermes, tmp_path: Path, config: str, words: str
) -> None:
    hermes.config(config)
    app = hermes.app()
    environment = ToolEnvironment(app.host, app.settings, cwd=str(tmp_path))
    runner = ToolRunner(
        {spec.name: spec for spec in app.host.tools()},
        tmp_path / "spill",
        context=lambda: environment.context_for("s-broken", TurnControl()),
    )
    request = ToolCallRequest("c1", "terminal", json.dumps({"command": "true"}))
    outcome = asyncio.run(runner.run_one(request, TurnControl()))
    report = json.loads(outcome.content)
    assert report["status"] == "degraded" and words in report["error"]
    assert report["retry_hint"]
    assert environment.pool._backends == {}  # nothing broken is cached
