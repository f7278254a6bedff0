"""``hermes serve`` as a user runs it: refusals are one line saying what to set, a real run
answers the official client and stops cleanly on SIGTERM."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import openai
import pytest

from hermes_testkit import Reply

HERMES = str(Path(sys.executable).parent / "hermes")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def serve(home: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [HERMES, "serve", *args],
        env={**os.environ, "HERMES_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def test_without_a_key_it_refuses_to_start(home: Path) -> None:
    line = one_line_error(serve(home))
    assert "API_SERVER_KEY" in line and "--no-auth" in line


def test_no_auth_is_refused_off_loopback(home: Path) -> None:
    line = one_line_error(serve(home, "--no-auth", "--host", "0.0.0.0"))
    assert "127.0.0.1 only" in line


def test_a_malformed_section_is_one_line_naming_the_key(home: Path) -> None:
    config = home / "config.yaml"
    config.write_text(config.read_text() + "api_server:\n  port: many\n")
    (home / ".env").write_text("API_SERVER_KEY=k-0123456789\n")
    line = one_line_error(serve(home))
    assert "api_server.port" in line


def test_a_port_in_use_is_one_line(home: Path) -> None:
    (home / ".env").write_text("API_SERVER_KEY=k-0123456789\n")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = one_line_error(serve(home, "--port", str(port)))
    assert f"cannot listen on 127.0.0.1:{port}" in line


@pytest.mark.parametrize("key_in", ["dotenv", "environment"])
def test_a_real_run_answers_and_stops_on_sigterm(home: Path, openai_server, key_in: str) -> None:
    key = "k-real-run-0123456789"
    env = {**os.environ, "HERMES_HOME": str(home)}
    if key_in == "dotenv":
        (home / ".env").write_text(f"API_SERVER_KEYS=other-key-000000,{key}\n")
    else:
        env["API_SERVER_KEY"] = key
    port = free_port()
    openai_server.queue(Reply.say("Served."))
    process = subprocess.Popen(
        [HERMES, "serve", "--port", str(port)], env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=key, max_retries=0)
        reply = client.chat.completions.create(
            model="hermes", messages=[{"role": "user", "content": "hi"}]
        )
        assert reply.choices[0].message.content == "Served."
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr
    assert "bearer key required" in stderr and "stopped" in stderr
    assert key not in stderr
    logs = "".join(p.read_text() for p in (home / "logs").glob("*.log"))
    assert key not in logs
