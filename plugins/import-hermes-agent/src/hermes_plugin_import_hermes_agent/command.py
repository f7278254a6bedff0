"""``hermes import hermes-agent [PATH] [--yes] [--dry-run]``."""

from __future__ import annotations

import json
import sys
from importlib.metadata import entry_points
from pathlib import Path

import click

from hermes_plugin_import_hermes_agent.importer import (
    ImportRefused,
    Options,
    check_source,
    import_all,
)
from hermes_plugin_import_hermes_agent.report import HomeReport, render
from hermes_sdk.events import COMMAND_CONTEXT, CommandContext

__all__ = ["import_group"]

SCHEDULER_PLUGIN = "cron"
"""The plugin that runs cron jobs; without it, imported jobs wait, paused."""


@click.group(name="import")
def import_group() -> None:
    """Bring a home over from another agent (it is only read)."""


@import_group.command(name="hermes-agent")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--yes", "-y", is_flag=True, help="Import without asking first.")
@click.option("--dry-run", is_flag=True, help="Show what would come over; change nothing.")
@click.option("--details", is_flag=True, help="List every item, not only the counts.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def hermes_agent(path: Path | None, yes: bool, dry_run: bool, details: bool, as_json: bool) -> None:
    """Bring a hermes-agent home (PATH, default ~/.hermes) into this one: settings, secrets,
    persona, memory, skills, cron jobs, approved chat users, sessions and profiles.

    The hermes-agent home is only read. Run it again later and only what is new comes over.
    """
    context: CommandContext = click.get_current_context().meta[COMMAND_CONTEXT]
    opener = context.open_archive
    if opener is None:
        raise click.ClickException(
            "this Hermes is too old to import sessions: upgrade hermes-kernel"
        )
    source = (path or Path("~/.hermes")).expanduser()
    target = Path(context.home)
    scheduler = SCHEDULER_PLUGIN in {point.name for point in entry_points(group="hermes.plugins")}

    def run(trial: bool) -> list[HomeReport]:
        try:
            return import_all(source, target, Options(opener, scheduler, trial))
        except (ImportRefused, OSError, ValueError) as exc:
            raise click.ClickException(str(exc)) from None

    try:
        check_source(source, target)
    except ImportRefused as exc:
        raise click.ClickException(str(exc)) from None
    if not dry_run and not yes and as_json:
        raise click.ClickException("nothing was imported: --json needs --yes (or --dry-run)")
    if not dry_run and not yes:
        preview = run(trial=True)
        for line in render(preview, dry_run=True, details=details):
            click.echo(line)
        if not sys.stdin.isatty():
            raise click.ClickException("nothing was imported: add --yes to import without asking")
        click.confirm(f"Bring this into {target}?", abort=True)
    reports = run(trial=dry_run)
    if as_json:
        click.echo(
            json.dumps({"dry_run": dry_run, "homes": [r.as_json() for r in reports]}, indent=2)
        )
        return
    for line in render(reports, dry_run=dry_run, details=details):
        click.echo(line)
    if dry_run:
        click.echo("Nothing was changed (--dry-run). Run it without --dry-run to import.")
    else:
        click.echo(f"Done. {source} is as it was. Try: hermes sessions list")
