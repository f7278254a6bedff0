"""``checkpoints``: undo for file edits.

Before a tool changes files in the session's working folder (``write_file``, ``patch``, a
``terminal`` command that visibly writes there, ``execute_code``), the folder is
snapshotted into a shadow git repository under ``HERMES_HOME/checkpoints``; the folder's
own ``.git`` is never read or written. ``/rollback [N]``, ``hermes checkpoints list`` and
``hermes checkpoints restore ID [PATH]`` put files back.

Importing this is cheap: the modules doing the work load on the first call that may write
(the chat imports every plugin with a lifecycle hook when it starts).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

from hermes_sdk import (
    CommandSpec,
    ConfigSectionSpec,
    Finding,
    HealthContext,
    SessionInfo,
    SlashCommandSpec,
    SlashContext,
    ToolCall,
    hookimpl,
)

__all__ = ["rollback"]

MAY_WRITE = frozenset({"write_file", "patch", "terminal", "execute_code"})
"""The tools a snapshot may be taken before (see :mod:`.writes` for which calls count)."""


def rollback(args: str, context: SlashContext) -> str:
    from hermes_plugin_checkpoints.rollback import rollback as run

    return run(args, context)


@hookimpl
def hermes_config_sections() -> Iterator[ConfigSectionSpec]:
    yield ConfigSectionSpec(
        name="checkpoints",
        description="Undo for file edits",
        model="hermes_plugin_checkpoints.settings:CheckpointSettings",
    )


@hookimpl
def hermes_cli_commands() -> Iterator[CommandSpec]:
    yield CommandSpec(
        name="checkpoints",
        description="List and restore the snapshots taken before tools changed files.",
        factory="hermes_plugin_checkpoints.command:checkpoints",
    )


@hookimpl
def hermes_slash_commands() -> Iterator[SlashCommandSpec]:
    yield SlashCommandSpec(
        name="rollback",
        description="undo file changes: /rollback [N], /rollback list, /rollback ID [PATH]",
        handler=rollback,
    )


_sessions: dict[str, SessionInfo] = {}
"""The sessions started, kept here so that a session that never writes never imports the
snapshot machinery (the one-shot's start-up)."""


@hookimpl
def hermes_on_session_start(session: SessionInfo) -> None:
    _sessions[session.session_id] = session


@hookimpl
def hermes_on_session_end(session: SessionInfo, reason: str) -> None:
    import sys

    _sessions.pop(session.session_id, None)
    observer = sys.modules.get("hermes_plugin_checkpoints.observer")
    if observer is not None:
        observer.session_ended(session)


@hookimpl
def hermes_pre_tool_call(call: ToolCall) -> None:
    if call.tool not in MAY_WRITE:
        return
    session = _sessions.get(call.session_id)
    if session is None:
        return
    from hermes_plugin_checkpoints.observer import before_tool, session_started

    session_started(session)  # idempotent: the observer learns the session on its first write
    before_tool(call)


@hookimpl
def hermes_doctor_checks(context: HealthContext) -> Iterator[Finding]:
    if shutil.which("git") is None:
        yield Finding(
            level="warning",
            message="checkpoints: git is not on PATH, so no snapshots are taken before "
            "tools change files (nothing to /rollback)",
            fix="install git (Debian/Ubuntu: apt install git)",
        )
    else:
        yield Finding(level="ok", message="checkpoints: git found; file edits can be undone")
