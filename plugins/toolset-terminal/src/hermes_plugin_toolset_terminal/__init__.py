"""Hermes toolset ``terminal``: the ``terminal`` and ``process`` tools."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_plugin_toolset_terminal.tools import (
    BACKGROUND_AFTER_SECONDS,
    DEFAULT_TIMEOUT_SECONDS,
    process,
    terminal,
)
from hermes_sdk import ToolsetSpec, ToolSpec, hookimpl


@hookimpl
def hermes_toolsets() -> Iterator[ToolsetSpec]:
    yield ToolsetSpec(name="terminal", description="run shell commands and background processes")


@hookimpl
def hermes_tools() -> Iterator[ToolSpec]:
    yield ToolSpec(
        name="terminal",
        toolset="terminal",
        takes_context=True,
        description=(
            "Run a shell command in the session's terminal (this machine, a container or a "
            "remote host). The working directory carries over between calls. Output over "
            "~50,000 characters is shortened to its start and end. Use background=true for "
            "servers and long jobs, then the process tool to watch them."
        ),
        parameters={
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The shell command to run."},
                "timeout": {
                    "type": "integer",
                    "minimum": 1,
                    "description": f"Seconds before it is killed (default "
                    f"{DEFAULT_TIMEOUT_SECONDS}); over {BACKGROUND_AFTER_SECONDS} it runs in "
                    "the background instead.",
                },
                "background": {
                    "type": "boolean",
                    "description": "Start it and return at once; watch it with process.",
                },
                "workdir": {
                    "type": "string",
                    "description": "Run in this directory (for this call only).",
                },
            },
            "required": ["command"],
        },
        handler=terminal,
        # A command has its own timeout (at most BACKGROUND_AFTER_SECONDS): that one rules.
        timeout_seconds=BACKGROUND_AFTER_SECONDS + 60,
    )
    yield ToolSpec(
        name="process",
        toolset="terminal",
        takes_context=True,
        description=(
            "Manage background processes started by terminal: list them, poll one for new "
            "output, read its log, wait for it to finish, or kill it."
        ),
        parameters={
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["list", "poll", "log", "wait", "kill"]},
                "id": {"type": "string", "description": "The process id terminal returned."},
                "timeout": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 600,
                    "description": "For wait: most seconds to wait (default 60).",
                },
            },
            "required": ["action"],
        },
        handler=process,
        timeout_seconds=BACKGROUND_AFTER_SECONDS + 60,  # wait: at most 600 s of its own
    )
