"""No Chromium outlives Hermes: real ``hermes chat -q`` processes drive the browser (the
scripted model calls ``browser_navigate``), exit or are killed with kill -9, and the next
start ends what a killed one left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
from hermes_plugin_toolset_browser.processes import MARKER, OwnerRecord

from hermes_testkit import Reply

from .site import Site


def write_home(home: Path, site: Site, model_url: str) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(
        f"model:\n  base_url: {model_url}\n  default: test-model\n"
        "learning:\n  review: false\n  nudge_every_turns: 0\n"
        f"web:\n  allow_private_hosts: ['127.0.0.1:{site.port}']\n"
    )
    environment = {**os.environ, "HERMES_HOME": str(home), "OPENAI_API_KEY": "sk-test"}
    for name in ("HERMES_LOAD_PLUGINS", "HERMES_DISABLE_PLUGINS"):
        environment.pop(name, None)
    return environment


def hermes(environment: dict[str, str], text: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "hermes_kernel.cli.main", "chat", "-q", text],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def browser_tree(owner: subprocess.Popen[bytes], timeout: float = 30) -> list[psutil.Process]:
    """The browser ``owner`` started and all its helpers, once it runs."""
    tag = OwnerRecord(owner.pid, psutil.Process(owner.pid).create_time()).tag
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for process in psutil.process_iter(["cmdline"]):
            if f"{MARKER}{tag}" in (process.info.get("cmdline") or []):
                try:
                    return [process, *process.children(recursive=True)]
                except psutil.Error:
                    continue
        assert owner.poll() is None, owner.stdout.read().decode() if owner.stdout else ""
        time.sleep(0.05)
    raise AssertionError("the browser never started")


def alive(processes: list[psutil.Process]) -> list[psutil.Process]:
    living = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                living.append(process)
        except psutil.Error:
            continue
    return living


def wait_gone(processes: list[psutil.Process], timeout: float = 10) -> list[psutil.Process]:
    deadline = time.monotonic() + timeout
    while alive(processes) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive(processes)


def test_no_chromium_is_left_after_hermes_exits(site, openai_server, tmp_path):
    environment = write_home(tmp_path / "home", site, openai_server.base_url)
    openai_server.queue(
        Reply.tool_call("browser_navigate", {"url": site.url("/app")}),
        Reply.say("It shows the tide tables.", delay_seconds=1),
    )
    environment["OPENAI_API_KEY"] = "sk-canary-never-in-chromium"
    run = hermes(environment, "what does the page say?")
    tree = browser_tree(run)
    for process in alive(tree):  # pages run in Chromium: it holds no key of Hermes's
        assert "sk-canary-never-in-chromium" not in process.environ().values()
    output, _ = run.communicate(timeout=60)
    assert run.returncode == 0, output.decode()
    assert "It shows the tide tables." in output.decode()
    tool_result = openai_server.requests[1].json["messages"][-1]["content"]
    assert "High water at Hamburg" in tool_result
    assert wait_gone(tree, timeout=5) == []
    assert not list((tmp_path / "home" / "browser" / "owners").glob("*.json"))


def test_after_a_kill_9_the_next_start_ends_the_orphans(site, openai_server, tmp_path):
    environment = write_home(tmp_path / "home", site, openai_server.base_url)
    openai_server.queue(
        Reply.tool_call("browser_navigate", {"url": site.url("/app")}),
        Reply.say("never sent", delay_seconds=60),
        Reply.say("Hello again."),
    )
    run = hermes(environment, "open the page")
    browser_tree(run)
    deadline = time.monotonic() + 30
    while len(openai_server.requests) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)  # the page was opened; the model is "thinking"
    tree = alive(browser_tree(run))
    # Chromium ends itself when its driver's pipe closes. Stopped, it cannot: what is left
    # then is what a browser stuck in a hung renderer or a full disk leaves after kill -9.
    for process in tree:
        process.send_signal(signal.SIGSTOP)
    run.kill()
    run.wait(10)
    time.sleep(0.5)
    assert len(alive(tree)) == len(tree), "the stopped browser outlived its owner"

    again = hermes(environment, "hello")
    output, _ = again.communicate(timeout=60)
    assert again.returncode == 0, output.decode()
    assert "Hello again." in output.decode()
    assert wait_gone(tree) == []
    assert not list((tmp_path / "home" / "browser" / "owners").glob("*.json"))
