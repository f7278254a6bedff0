"""``hermes checkpoints list`` and ``hermes checkpoints restore ID [PATH]``.

The folder is ``--dir``, else the current one; when the current folder has no checkpoints,
the nearest folder above it that has some (Hermes may have been started in the project's
top folder). A PATH is taken as the shell gives it: relative to the current folder. A bad
id or path is one line and exit status 1.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from hermes_plugin_checkpoints.rollback import describe_restored, listing
from hermes_plugin_checkpoints.settings import bounds_from
from hermes_plugin_checkpoints.shadow import Bounds, CheckpointError, ShadowRepo
from hermes_sdk.events import COMMAND_CONTEXT, CommandContext

__all__ = ["checkpoints"]

_DIR = click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The working folder (default: this one, or the nearest above with checkpoints).",
)


def _repo(directory: Path | None) -> ShadowRepo:
    context: CommandContext = click.get_current_context().meta[COMMAND_CONTEXT]
    try:
        bounds = bounds_from(context.config)
    except ValueError:
        bounds = Bounds()  # the kernel reports a wrong section; restoring needs none of it
    if directory is not None:
        return ShadowRepo(context.home, directory, bounds)
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        repo = ShadowRepo(context.home, folder, bounds)
        if repo.exists():
            return repo
    return ShadowRepo(context.home, here, bounds)


@click.group()
def checkpoints() -> None:
    """Snapshots of a working folder, taken before tools changed files in it."""


@checkpoints.command("list")
@_DIR
def list_checkpoints(directory: Path | None) -> None:
    """The folder's checkpoints, newest first: N (for /rollback N), id, time, and the tool
    and file (or command) that triggered each."""
    repo = _repo(directory)
    try:
        found = repo.checkpoints()
    except CheckpointError as exc:
        raise click.ClickException(str(exc)) from None
    for line in listing(repo, found):
        click.echo(line)


@checkpoints.command("restore")
@click.argument("checkpoint_id", metavar="ID")
@click.argument("path", required=False)
@_DIR
def restore(checkpoint_id: str, path: str | None, directory: Path | None) -> None:
    """Put the folder (or PATH in it) back as checkpoint ID has it. The folder as it is now
    is saved first, so this can be undone; files the checkpoint lacks are removed and
    named; files the folder's .gitignore ignores are never touched."""
    repo = _repo(directory)
    try:
        checkpoint = repo.find(checkpoint_id)
        where = os.path.abspath(os.path.expanduser(path)) if path else ""
        restored = repo.restore(checkpoint, where)
    except CheckpointError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(describe_restored(repo, restored))
