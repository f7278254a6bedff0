"""``hermes backup`` and ``hermes restore``: one line for what was done, one line for what
went wrong (exit status 1)."""

from __future__ import annotations

import time
from pathlib import Path

import click

from hermes_plugin_backup.archive import BackupError, restore_backup, write_backup
from hermes_sdk.events import COMMAND_CONTEXT, CommandContext


def _context() -> CommandContext:
    context: CommandContext = click.get_current_context().meta[COMMAND_CONTEXT]
    return context


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hermes-kernel")
    except PackageNotFoundError:
        return "?"


def _stamp() -> str:
    return time.strftime("%Y%m%d-%H%M%S")


def _size(count: int) -> str:
    if count < 1024:
        return f"{count:,} bytes"
    size = float(count)
    for unit in ("KB", "MB", "GB"):
        size /= 1024
        if size < 1024 or unit == "GB":
            break
    return f"{size:,.1f} {unit}"


@click.command()
@click.argument("path", required=False, type=click.Path(dir_okay=True, path_type=Path))
@click.option(
    "--include-secrets",
    is_flag=True,
    help="Put .env (API keys) and auth.json (sign-ins) in the zip too; keep such a zip as "
    "safe as the keys.",
)
def backup(path: Path | None, include_secrets: bool) -> None:
    """Write HERMES_HOME to a zip: PATH (a .zip file, or a folder for it; default: the
    current folder). Safe while Hermes runs: its databases are copied with SQLite's online
    backup. Secrets (.env, auth.json) go in only with --include-secrets."""
    home = Path(_context().home)
    name = f"hermes-backup-{home.name.lstrip('.') or 'home'}-{_stamp()}.zip"
    target = (path / name if path.is_dir() else path) if path is not None else Path.cwd() / name
    if target.suffix != ".zip":
        raise click.ClickException(f"{target}: a backup is a .zip file; name it NAME.zip")
    if not target.parent.is_dir():
        raise click.ClickException(f"{target.parent}: no such folder")
    try:
        report = write_backup(home, target, include_secrets=include_secrets, version=_version())
    except (BackupError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(
        f"wrote {report.path} ({_size(report.bytes_written)}): {report.files} files from "
        f"{home}, {len(report.databases)} database(s) copied consistently"
    )
    if not report.secrets:
        hint = "; add --include-secrets to keep them" if not include_secrets else ""
        click.echo(f"secrets (.env) are not in it{hint}")
    for link in report.skipped_links:
        click.echo(f"left out {link}: a symbolic link (its target is not the home's)")
    for name in report.skipped_names:
        click.echo(f"left out {name}: its name is not UTF-8; rename it to keep it")


@click.command()
@click.argument("zip_path", metavar="ZIP", type=click.Path(path_type=Path))
@click.option(
    "--force",
    is_flag=True,
    help="Replace a home that is not empty (it is backed up first, beside itself).",
)
def restore(zip_path: Path, force: bool) -> None:
    """Restore a backup into HERMES_HOME, which must be empty (or --force). Every database
    in the zip is checked before anything is moved into the home."""
    home = Path(_context().home)
    try:
        report = restore_backup(zip_path, home, force=force, version=_version(), stamp=_stamp())
    except (BackupError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    if report.saved_first is not None:
        click.echo(f"the home as it was is saved in {report.saved_first}")
    click.echo(
        f"restored {report.files} files into {home} ({len(report.databases)} database(s) checked)"
    )
    if not report.secrets:
        click.echo("the backup holds no secrets (.env): set your keys again (hermes setup)")
