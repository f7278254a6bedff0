"""The terminal and process tools against a real local backend."""

import threading
from dataclasses import replace
from pathlib import Path

import pytest
from hermes_plugin_backend_local.backend import LocalBackend
from hermes_plugin_toolset_terminal.tools import process, terminal

from hermes_sdk.tooling import ToolContext
from hermes_testkit import tool_context


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


def test_the_plugins_transforms_see_the_whole_output_before_it_is_shortened(
    context: ToolContext,
) -> None:
    seen: list[tuple[str, int]] = []

    def keep_ends(command: str, output: str) -> str:
        seen.append((command, len(output.splitlines())))
        lines = output.splitlines()
        if len(lines) <= 40:
            return output
        omitted = f"[filter: omitted {len(lines) - 40} lines]"
        return "\n".join([*lines[:24], omitted, *lines[-16:]])

    filtered = replace(context, transform_output=keep_ends)
    shown = terminal("seq 1 3000; echo oops >&2", filtered)
    assert seen == [("seq 1 3000; echo oops >&2", 3000), ("seq 1 3000; echo oops >&2", 1)]
    assert "[filter: omitted 2960 lines]" in shown
    assert "\n24\n[filter" in shown and shown.split("[stderr]")[0].rstrip().endswith("3000")
    assert "2984" not in shown and "2985" in shown
    assert shown.endswith("[stderr]\noops")
