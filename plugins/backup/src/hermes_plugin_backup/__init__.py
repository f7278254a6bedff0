"""``backup``: ``hermes backup`` writes HERMES_HOME to one zip and ``hermes restore`` brings
it back. Every SQLite database in the home (state.db, a plugin's own) is copied with
SQLite's online backup, so a gateway may keep answering meanwhile.

Importing this is cheap: click and the archive code load when a command runs.
"""

from __future__ import annotations

from collections.abc import Iterator

from hermes_sdk import CommandSpec, hookimpl


@hookimpl
def hermes_cli_commands() -> Iterator[CommandSpec]:
    yield CommandSpec(
        name="backup",
        description="Write HERMES_HOME to one zip, consistent while Hermes runs.",
        factory="hermes_plugin_backup.command:backup",
    )
    yield CommandSpec(
        name="restore",
        description="Restore a backup zip into an empty HERMES_HOME.",
        factory="hermes_plugin_backup.command:restore",
    )
