"""``hermes skills search|browse|inspect|install|update|audit|uninstall|rollback|tap``:
the hub's commands, added to the skills plugin's ``hermes skills`` group."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import click

from hermes_plugin_skills_hub.hub import Hub, Outcome
from hermes_plugin_skills_hub.packages import HubError, Listing
from hermes_plugin_skills_hub.settings import hub_settings
from hermes_sdk.events import COMMAND_CONTEXT, CommandContext

T = TypeVar("T")


def _hub() -> Hub:
    context = click.get_current_context().meta.get(COMMAND_CONTEXT)
    if not isinstance(context, CommandContext):
        raise click.ClickException("run this through the hermes command")
    try:
        return Hub(context.home, hub_settings(context.config))
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None


def _run(work: Coroutine[Any, Any, T]) -> T:
    try:
        return asyncio.run(work)
    except (HubError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None


def _say(work: Callable[[], str]) -> None:
    """Print what ``work`` says, or its refusal as one line."""
    try:
        click.echo(work())
    except (HubError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None


def _finish(outcome: Outcome) -> None:
    for line in outcome.lines:
        click.echo(line)
    sys.exit(1 if outcome.failed else 0)


def _asker(yes: bool) -> Any:
    def confirm(question: str) -> bool:
        if yes:
            click.echo(question.split("\n", 1)[-1])
            return True
        return click.confirm(question, default=False)

    return confirm


def _table(listings: list[Listing], notes: list[str], as_json: bool) -> None:
    if as_json:
        click.echo(
            json.dumps({"results": [item.as_dict() for item in listings], "notes": notes}, indent=1)
        )
        return
    for listing in listings:
        extra = " ".join(f"{k}={v}" for k, v in listing.extra.items() if v and k != "repo")
        click.echo(
            f"{listing.identifier}\n    [{listing.trust}] {listing.description[:100]}"
            + (f" ({extra})" if extra else "")
        )
    for note in notes:
        click.echo(f"note: {note}", err=True)
    if not listings:
        click.echo("no skills found")


@click.command("search")
@click.argument("query", nargs=-1, required=True)
@click.option(
    "--source",
    help="One source: github, skills-sh, clawhub, claude-marketplace, well-known, official.",
)
@click.option("--limit", default=20, show_default=True, help="Results per source.")
@click.option("--refresh", is_flag=True, help="Ask the hubs again, not the cache.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def search(
    query: tuple[str, ...], source: str | None, limit: int, refresh: bool, as_json: bool
) -> None:
    """Search the hubs for skills (cached; offline, the last answers serve)."""
    listings, notes = _run(_hub().search(" ".join(query), source, limit, refresh))
    _table(listings, notes, as_json)


@click.command("browse")
@click.option("--source", help="Browse one source.")
@click.option("--limit", default=50, show_default=True, help="Results per source.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def browse(source: str | None, limit: int, as_json: bool) -> None:
    """Everything the taps, marketplaces, well-known sites and optional skills list."""
    listings, notes = _run(_hub().search("", source, limit))
    _table(listings, notes, as_json)


@click.command("inspect")
@click.argument("identifier")
def inspect(identifier: str) -> None:
    """Fetch a skill and show what installing it would bring (nothing is installed)."""
    hub = _hub()

    async def look() -> None:
        async with hub.fetcher() as fetcher:
            packages = await hub.resolve(fetcher, identifier)
        for package in packages:
            staged = hub.stage(package)
            try:
                click.echo(f"{staged.name}: {staged.description}")
                click.echo(
                    f"  from {package.identifier} [{package.source}, {package.trust}]"
                    + (f" revision {package.revision}" if package.revision else "")
                )
                click.echo(f"  {staged.hash}")
                for relative, content in sorted(package.files.items()):
                    click.echo(f"  {len(content):>8}  {relative}")
                click.echo(f"  scan: {staged.scan.verdict}")
                for finding in staged.scan.findings:
                    click.echo(f"    {finding}")
                click.echo(
                    "  "
                    + package.files["SKILL.md"]
                    .decode("utf-8", "replace")[:1500]
                    .replace("\n", "\n  ")
                )
            finally:
                import shutil

                shutil.rmtree(staged.folder, ignore_errors=True)

    _run(look())


@click.command("install")
@click.argument("identifier")
@click.option("--yes", "-y", is_flag=True, help="Do not ask (the scan's refusals still hold).")
@click.option(
    "--force",
    is_flag=True,
    help="Reinstall, or install despite caution findings (never blocked ones).",
)
def install(identifier: str, yes: bool, force: bool) -> None:
    """Install skills from a hub, a URL, a folder or a git repository: quarantined,
    scanned, pinned by content hash, recorded in the lock."""
    hub = _hub()
    _finish(_run(hub.install(identifier, force=force, confirm=_asker(yes))))


@click.command("update")
@click.argument("names", nargs=-1)
@click.option("--check", is_flag=True, help="Only say which have updates.")
@click.option("--yes", "-y", is_flag=True, help="Apply without asking (the diff is still shown).")
@click.option("--force", is_flag=True, help="Update despite caution findings (never blocked ones).")
def update(names: tuple[str, ...], check: bool, yes: bool, force: bool) -> None:
    """Update hub skills: each change is shown as a diff before it is applied."""
    _finish(_run(_hub().update(names, check_only=check, force=force, confirm=_asker(yes))))


@click.command("audit")
@click.argument("names", nargs=-1)
def audit(names: tuple[str, ...]) -> None:
    """Scan every hub skill again and check its files against the lock (exit 1 on findings)."""
    try:
        outcome = _hub().audit(names)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    _finish(outcome)


@click.command("uninstall")
@click.argument("name")
def uninstall(name: str) -> None:
    """Remove a hub skill (kept aside: rollback brings it back)."""
    _say(lambda: _hub().uninstall(name))


@click.command("rollback")
@click.argument("name")
def rollback(name: str) -> None:
    """Put back the version of a hub skill that the last update, uninstall or rollback replaced."""
    _say(lambda: _hub().rollback(name))


@click.group("tap")
def tap() -> None:
    """GitHub folders of skills to search."""


@tap.command("add")
@click.argument("repo")
@click.option("--path", default="skills", show_default=True, help="The folder of skills in it.")
def tap_add(repo: str, path: str) -> None:
    """Tap OWNER/REPO."""
    _say(lambda: _hub().taps.add(repo, path))


@tap.command("list")
def tap_list() -> None:
    """The taps: yours, then the configured ones (skills_hub.taps)."""
    hub = _hub()
    for identifier in hub.taps.identifiers():
        click.echo(identifier)
    for identifier in hub.settings.taps:
        click.echo(f"{identifier} (skills_hub.taps)")


@tap.command("remove")
@click.argument("repo")
def tap_remove(repo: str) -> None:
    """Remove a tap you added."""
    _say(lambda: _hub().taps.remove(repo))
