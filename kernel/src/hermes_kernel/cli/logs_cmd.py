"""``hermes logs``: read a log in HERMES_HOME/logs (agent.log, errors.log, and whatever a
front-end writes there under its own name), the last lines or as they come, filtered by
level."""

from __future__ import annotations

import contextlib
import re
import time
from pathlib import Path

import click

from hermes_kernel.cli.main import app_of
from hermes_kernel.log import LOG_NAMES
from hermes_kernel.runtime.log_reading import LEVELS as _LEVELS
from hermes_kernel.runtime.log_reading import AtLeast as _AtLeast
from hermes_kernel.runtime.log_reading import read_after

_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")


FOLLOWED_AT_ONCE = 1000
"""The most lines one look prints while following (the next look goes on from there)."""


def _follow(path: Path, wanted: _AtLeast, cursor: str) -> None:
    """Print what is added to ``path``; a rotation (a new file in its place) is followed."""
    while True:
        time.sleep(0.5)
        records, cursor = (
            read_after(path, cursor, wanted, FOLLOWED_AT_ONCE)
            if cursor
            else (
                [],
                _start_of(path),
            )
        )
        for record in records:
            click.echo(record.text)


def _start_of(path: Path) -> str:
    """A cursor at the start of a log that has just appeared (nothing until then)."""
    try:
        return f"{path.stat().st_ino}:0"
    except FileNotFoundError:
        return ""


@click.command()
@click.argument("name", default="agent")
@click.option("-f", "--follow", is_flag=True, help="Keep printing what is added (Ctrl+C stops).")
@click.option(
    "--level",
    type=click.Choice([level.lower() for level in _LEVELS]),
    default="debug",
    help="Only records at this level and above.",
)
@click.option("-n", "--lines", "count", type=click.IntRange(min=0), default=50, show_default=True)
@click.pass_context
def logs(ctx: click.Context, name: str, follow: bool, level: str, count: int) -> None:
    """Show a log from HERMES_HOME/logs: agent (default), errors, or one a front-end writes
    under its own name (NAME.log; the folder's logs are listed when NAME has none)."""
    if not _NAME.fullmatch(name):
        raise click.BadParameter("a log's name, as in HERMES_HOME/logs/NAME.log", param_hint="NAME")
    folder = app_of(ctx).settings.home / "logs"
    path = folder / f"{name}.log"
    wanted = _AtLeast(_LEVELS.index(level.upper()))
    if not path.exists() and not follow:
        known = sorted({*LOG_NAMES, *(found.stem for found in folder.glob("*.log"))})
        click.echo(
            f"{path} does not exist yet: nothing was logged there (logs: {', '.join(known)})"
        )
        if name not in LOG_NAMES:  # a typo, or a front-end that has not run: not a success
            ctx.exit(1)
        return
    records, cursor = read_after(path, "", wanted, count) if count else ([], "")
    if not count and path.exists():
        cursor = f"{path.stat().st_ino}:{path.stat().st_size}"
    for record in records:
        click.echo(record.text)
    if follow:
        with contextlib.suppress(KeyboardInterrupt):
            _follow(path, wanted, cursor or _start_of(path))
