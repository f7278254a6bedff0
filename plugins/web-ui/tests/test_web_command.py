"""``hermes web`` as a user runs it: refusals are one line saying what to set; a real run
serves the page and stops cleanly on SIGTERM; the gateway hosts it as a service."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

HERMES = str(Path(sys.executable).parent / "hermes")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def web(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [HERMES, "web", *args],
        env={**os.environ, "HERMES_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def start(home: Path, *args: str) -> subprocess.Popen[str]:
    """``hermes ARGS`` running on ``home``, its stderr readable."""
    return subprocess.Popen(
        [HERMES, *args],
        env={**os.environ, "HERMES_HOME": str(home)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(url: str) -> httpx.Response:
    deadline = time.monotonic() + 60
    while True:
        try:
            return httpx.get(url, timeout=1)
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_refusals_are_one_line_saying_what_to_set(home: Path) -> None:
    line = one_line_error(web(home, "--host", "0.0.0.0"))
    assert "WEB_UI_KEY" in line and "127.0.0.1" in line
    (home / ".env").write_text("WEB_UI_KEY=short\n")
    assert "at least 16" in one_line_error(web(home))
    config = home / "config.yaml"
    config.write_text(config.read_text() + "web_ui:\n  port: many\n")
    (home / ".env").write_text("")
    assert "web_ui.port" in one_line_error(web(home))


def test_a_port_in_use_is_one_line(home: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = one_line_error(web(home, "--port", str(port)))
    assert f"cannot listen on 127.0.0.1:{port}" in line


def test_a_real_run_serves_the_page_and_stops_on_sigterm(home: Path, web_ui_key: str) -> None:
    (home / ".env").write_text(f"WEB_UI_KEY={web_ui_key}\n")
    port = free_port()
    process = start(home, "web", "--port", str(port))
    try:
        assert wait_for(f"http://127.0.0.1:{port}/health").json() == {"status": "ok"}
        login = httpx.get(f"http://127.0.0.1:{port}/chat", follow_redirects=True)
        assert login.url.path == "/login" and 'name="key"' in login.text
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr
    assert f"hermes web: http://127.0.0.1:{port}/ (log in with WEB_UI_KEY)" in stderr
    assert "stopped" in stderr and web_ui_key not in stderr


def test_without_a_key_the_printed_url_is_the_login(home: Path) -> None:
    port = free_port()
    process = start(home, "web", "--port", str(port))
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        while line and not line.startswith("hermes web:"):
            line = process.stderr.readline()  # an INFO line of the service may come first
        assert line.startswith(f"hermes web: http://127.0.0.1:{port}/login?token="), line
        url = line.split()[2]
        with httpx.Client(follow_redirects=True) as browser:
            assert browser.get(f"http://127.0.0.1:{port}/chat").url.path == "/login"
            assert browser.get(url).url.path == "/chat"
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
    assert process.returncode == 0


def test_the_gateway_hosts_it_when_enabled(home: Path) -> None:
    port = free_port()
    config = home / "config.yaml"
    config.write_text(config.read_text() + f"web_ui:\n  enabled: true\n  port: {port}\n")
    process = start(home, "gateway", "run")
    try:
        assert wait_for(f"http://127.0.0.1:{port}/health").status_code == 200
        # No WEB_UI_KEY: the gateway leaves the URL with this run's token where only the
        # owner can read it.
        url_file = home / "web-ui" / "login-url"
        assert url_file.stat().st_mode & 0o777 == 0o600
        with httpx.Client(follow_redirects=True) as browser:
            assert browser.get(f"http://127.0.0.1:{port}/status").url.path == "/login"
            browser.get(url_file.read_text().strip())
            page = browser.get(f"http://127.0.0.1:{port}/status")
        assert page.status_code == 200 and "<dt>Gateway</dt>" in page.text
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert not url_file.exists()  # gone with the run
