"""The terminal and process tools against a real local backend."""

import threading
from pathlib import Path

import pytest
from hermes_plugin_backend_local.backend import LocalBackend
from hermes_plugin_toolset_terminal.tools import process, terminal

from hermes_sdk.testing import tool_context
from hermes_sdk.tooling import ToolContext


@pytest.fixture
def context(tmp_path: Path) -> ToolContext:
    return tool_context(LocalBackend(str(tmp_path), {"PATH": "/usr/bin:/bin"}))


def test_output_exit_code_and_stderr(context: ToolContext) -> None:
    shown = terminal("echo out; echo err >&2; exit 3", context)
    assert shown.startswith("exit code 3")
    assert "out\n[stderr]\nerr" in shown


def test_long_output_keeps_its_start_and_end(context: ToolContext) -> None:
    shown = terminal("seq 1 100000", context)
    assert "\n1\n2\n" in shown and shown.rstrip().endswith("100000")
    assert "characters omitted" in shown


def test_timeout_kills_and_says_so(context: ToolContext) -> None:
    assert terminal("sleep 20", context, timeout=1).startswith("timed out after 1 s")


def test_a_stop_kills_the_running_command(context: ToolContext) -> None:
    threading.Timer(0.3, context.cancel.set).start()
    assert terminal("sleep 20", context).startswith("interrupted by the user")


def test_background_processes_lifecycle(context: ToolContext) -> None:
    started = terminal("echo ready; sleep 30", context, background=True)
    assert "process p" in started
    pid = started.split("process ")[1].split()[0].rstrip(".")
    waited = process("wait", context, id=pid, timeout=1)
    assert "running" in waited and "ready" in waited
    assert "no new output" in process("poll", context, id=pid)
    assert "ready" in process("log", context, id=pid)
    assert "killed" in process("kill", context, id=pid)
    assert pid in process("list", context)


def test_a_long_timeout_runs_in_the_background(context: ToolContext) -> None:
    started = terminal("echo slow", context, timeout=3600)
    assert "runs in the background" in started
    pid = started.split("process ")[1].split()[0].rstrip(".")
    assert "exited with code 0" in process("wait", context, id=pid, timeout=10)


def test_unknown_process_ids_are_errors(context: ToolContext) -> None:
    with pytest.raises(KeyError, match="no background process"):
        process("poll", context, id="p999")
