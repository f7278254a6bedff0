"""``hermes skills``: list, view, check and remove skills; bundles; the curator. (The
hub plugin adds search, install, update, audit and uninstall.)"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import click

from hermes_plugin_skills.curator import Curator
from hermes_plugin_skills.index import ordered
from hermes_plugin_skills.library import Library, user_root
from hermes_plugin_skills.manage import SkillRefused
from hermes_plugin_skills.plugin_sources import plugin_folders
from hermes_plugin_skills.tools import open_library
from hermes_sdk.events import COMMAND_CONTEXT, CommandContext


def _context() -> CommandContext:
    context = click.get_current_context().meta.get(COMMAND_CONTEXT)
    if not isinstance(context, CommandContext):
        raise click.ClickException("run this through the hermes command")
    return context


def _library() -> Library:
    context = _context()
    return open_library(
        context.home,
        str(Path.cwd()),
        context.config,
        plugin_folders(context.provided, context.home),
    )


@click.group("skills")
def skills() -> None:
    """Skills: SKILL.md methods the agent loads on demand."""


def _report(library: Library, check: bool) -> int:
    for skill in ordered(library):
        click.echo(f"{skill.name:32} {skill.source:12} {skill.description[:70]}")
        if check:
            for warning in skill.warnings:
                click.echo(f"    warning: {warning}")
    if check:
        for used, hidden in library.shadowed:
            click.echo(f"shadowed: {hidden.folder} is hidden by {used.folder} (same name)")
        for folder, error in library.errors:
            click.echo(f"error: {folder}: {error}; it is left out")
    total_warnings = sum(len(skill.warnings) for skill in library.skills.values())
    click.echo(
        f"{len(library.skills)} skills, {len(library.errors)} unusable"
        + (f", {total_warnings} warnings" if check else "")
    )
    return 1 if check and library.errors else 0


@skills.command("list")
@click.option("--check", is_flag=True, help="Show every rule a skill breaks.")
def list_command(check: bool) -> None:
    """The skills the agent can load, first source wins."""
    sys.exit(_report(_library(), check))


@skills.command("check")
def check_command() -> None:
    """Same as list --check: warnings, unusable skills, shadowed names (exit 1 if unusable)."""
    sys.exit(_report(_library(), True))


@skills.command("view")
@click.argument("name")
def view_command(name: str) -> None:
    """Show a skill's SKILL.md."""
    try:
        skill = _library().get(name)
    except KeyError as exc:
        raise click.ClickException(str(exc.args[0])) from None
    click.echo(f"# {skill.folder} ({skill.source})")
    click.echo(skill.path.read_text(encoding="utf-8"))


@skills.command("remove")
@click.argument("name")
@click.option("--yes", is_flag=True, help="Do not ask.")
def remove_command(name: str, yes: bool) -> None:
    """Remove one of your skills (from HERMES_HOME/skills)."""
    library = _library()
    try:
        skill = library.get(name)
    except KeyError as exc:
        raise click.ClickException(str(exc.args[0])) from None
    if not library.is_writable(skill):
        raise click.ClickException(f"{name} comes from {skill.folder}; remove it there")
    if not yes and not click.confirm(f"Remove {skill.folder}?", default=False):
        raise click.ClickException("not removed")
    shutil.rmtree(skill.folder)
    from hermes_plugin_skills.usage import Usage

    Usage(user_root(_context().home)).forget(name)  # a later skill of this name starts afresh
    click.echo(f"removed {name}")


def _review(action: str, proposal_id: str = "") -> None:
    from hermes_plugin_skills.manage import SkillRefused
    from hermes_plugin_skills.tools import review

    try:
        click.echo(review(_context().home, action, proposal_id, how="hermes skills"))
    except SkillRefused as exc:
        raise click.ClickException(f"{action}: {exc}") from None


@skills.command("pending")
def pending_command() -> None:
    """Skill changes the agent proposed that wait for approval (skills.write_approval)."""
    _review("pending")


@skills.command("diff")
@click.argument("proposal_id", metavar="ID")
def diff_command(proposal_id: str) -> None:
    """What a pending change would do, as a unified diff."""
    _review("diff", proposal_id)


@skills.command("approve")
@click.argument("proposal_id", metavar="ID")
def approve_command(proposal_id: str) -> None:
    """Apply a pending change (refused if its files were edited since it was proposed)."""
    _review("approve", proposal_id)


@skills.command("reject")
@click.argument("proposal_id", metavar="ID")
def reject_command(proposal_id: str) -> None:
    """Drop a pending change; nothing is written."""
    _review("reject", proposal_id)


# --- bundles ----------------------------------------------------------------------------


@skills.group("bundle")
def bundle_group() -> None:
    """Named sets of skills loaded together (/bundles NAME in a chat)."""


@bundle_group.command("list")
def bundle_list() -> None:
    """Every bundle and its skills."""
    from hermes_plugin_skills.bundles import load_bundles

    found, problems = load_bundles(_context().home)
    for bundle in found.values():
        click.echo(f"{bundle.name:24} {', '.join(bundle.skills)}")
    for problem in problems:
        click.echo(f"left out: {problem}", err=True)
    if not found:
        click.echo("no bundles yet: hermes skills bundle create NAME -s SKILL -s SKILL")


@bundle_group.command("show")
@click.argument("name")
def bundle_show(name: str) -> None:
    """A bundle's file, and which of its skills are installed."""
    from hermes_plugin_skills import bundles

    try:
        bundle = bundles.get(_context().home, name)
    except bundles.BundleError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"# {bundle.path}")
    click.echo(bundle.as_yaml().rstrip())
    library = _library()
    missing = [skill for skill in bundle.skills if skill not in library.skills]
    if missing:
        click.echo(f"not installed: {', '.join(missing)}")


@bundle_group.command("create")
@click.argument("name")
@click.option(
    "-s",
    "--skill",
    "skill_names",
    multiple=True,
    required=True,
    help="A skill of the bundle (repeat, or A,B).",
)
@click.option("-d", "--description", default="", help="What the bundle is for.")
@click.option("-i", "--instruction", default="", help="Said to the model with the skills.")
@click.option("-f", "--force", is_flag=True, help="Replace a bundle of the same name.")
def bundle_create(
    name: str, skill_names: tuple[str, ...], description: str, instruction: str, force: bool
) -> None:
    """Create a bundle from skills you have."""
    from hermes_plugin_skills import bundles

    wanted = tuple(
        dict.fromkeys(
            part.strip() for given in skill_names for part in given.split(",") if part.strip()
        )
    )
    library = _library()
    unknown = [skill for skill in wanted if skill not in library.skills]
    if unknown:
        raise click.ClickException(
            f"no skill named {', '.join(unknown)} (hermes skills list shows them); "
            "nothing was saved"
        )
    bundle = bundles.Bundle(bundles.slug(name), wanted, description, instruction)
    try:
        path = bundles.save(_context().home, bundle, force)
    except bundles.BundleError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"saved bundle {bundle.name} ({len(wanted)} skills) -> {path}")


@bundle_group.command("delete")
@click.argument("name")
def bundle_delete(name: str) -> None:
    """Delete a bundle (its skills stay)."""
    from hermes_plugin_skills import bundles

    try:
        bundle = bundles.get(_context().home, name)
    except bundles.BundleError as exc:
        raise click.ClickException(str(exc)) from None
    assert bundle.path is not None
    bundle.path.unlink()
    click.echo(f"deleted bundle {bundle.name}")


# --- the curator ------------------------------------------------------------------------


def _curator() -> Curator:
    from hermes_plugin_skills.settings import skills_settings

    context = _context()
    try:
        settings = skills_settings(context.config).curator
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    return Curator(user_root(context.home), settings)


@skills.group("curator")
def curator_group() -> None:
    """Archive the agent's stale skills, pin the good ones, restore what it archived."""


@curator_group.command("status")
def curator_status() -> None:
    """The agent-written skills with their use, and what is archived."""
    curator = _curator()
    library = _library()
    records = curator.usage.read()
    rows = curator.agent_written(library, records)
    click.echo(
        f"curator {'on' if curator.settings.enabled else 'off'}: archives agent-written "
        f"skills unused for {curator.settings.archive_after_days} days"
    )
    click.echo(f"{'skill':28} {'views':>5} {'uses':>5}  {'last used':16} state")
    for skill in sorted(rows, key=lambda s: s.name):
        record = records.get(skill.name, {})
        state = "pinned" if record.get("pinned") else "active"
        click.echo(
            f"{skill.name:28} {int(record.get('views', 0)):>5} "
            f"{int(record.get('uses', 0)):>5}  {_when(record.get('last_used_at')):16} {state}"
        )
    for name, record in sorted(curator.archived().items()):
        click.echo(
            f"{name:28} {int(record.get('views', 0)):>5} {int(record.get('uses', 0)):>5}  "
            f"{_when(record.get('last_used_at')):16} archived {_when(record.get('archived_at'))}"
        )


def _when(stamp: object) -> str:
    import time

    if not isinstance(stamp, (int, float)):
        return "never"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


@curator_group.command("run")
@click.option("--dry-run", is_flag=True, help="Say what would change; change nothing.")
def curator_run(dry_run: bool) -> None:
    """Archive stale agent-written skills now and propose merges of near-duplicates."""
    report = _curator().run(_library(), dry_run=dry_run)
    for line in report.lines():
        click.echo(("(dry run) " if dry_run else "") + line)


def _one(action: str, name: str) -> None:
    curator = _curator()
    try:
        if action == "restore":
            click.echo(curator.restore(name))
        elif action == "archive":
            click.echo(curator.archive(_library(), name))
        else:
            click.echo(curator.set_pinned(_library(), name, action == "pin"))
    except (SkillRefused, OSError) as exc:
        raise click.ClickException(f"{action}: {exc}") from None


@curator_group.command("pin")
@click.argument("name")
def curator_pin(name: str) -> None:
    """Never archive this skill."""
    _one("pin", name)


@curator_group.command("unpin")
@click.argument("name")
def curator_unpin(name: str) -> None:
    """Let the curator archive this skill again when it goes stale."""
    _one("unpin", name)


@curator_group.command("archive")
@click.argument("name")
def curator_archive(name: str) -> None:
    """Archive one of your skills now (restore brings it back)."""
    _one("archive", name)


@curator_group.command("restore")
@click.argument("name")
def curator_restore(name: str) -> None:
    """Bring an archived skill back where it was, byte for byte."""
    _one("restore", name)


@curator_group.command("prune")
@click.option("--days", default=90, show_default=True, help="Archived at least this long ago.")
@click.option("--dry-run", is_flag=True, help="List what would be deleted.")
@click.option("--yes", is_flag=True, help="Do not ask.")
def curator_prune(days: int, dry_run: bool, yes: bool) -> None:
    """Delete archived skills for good (they cannot be restored after this)."""
    curator = _curator()
    doomed = curator.prune(days, dry_run=True)
    if not doomed:
        click.echo(f"nothing was archived more than {days} days ago")
        return
    click.echo("\n".join(doomed))
    if dry_run:
        return
    if not yes and not click.confirm(f"Delete these {len(doomed)} archived skills for good?"):
        raise click.ClickException("nothing was deleted")
    click.echo(f"deleted {len(curator.prune(days))} archived skills")
