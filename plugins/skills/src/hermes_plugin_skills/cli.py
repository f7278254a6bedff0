"""``hermes skills``: list, view, check, install and remove skills."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import click

from hermes_plugin_skills.index import ordered
from hermes_plugin_skills.install import InstallError, fetch, inspect
from hermes_plugin_skills.library import Library, user_root
from hermes_plugin_skills.plugin_sources import plugin_folders
from hermes_plugin_skills.skillfile import NAME_RULE
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
        context.home, str(Path.cwd()), context.config, plugin_folders(context.provided)
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


@skills.command("install")
@click.argument("source")
@click.option("--yes", is_flag=True, help="Install without asking, if the scan finds nothing.")
@click.option("--force", is_flag=True, help="Replace a skill of the same name.")
def install_command(source: str, yes: bool, force: bool) -> None:
    """Install skills from a folder or a git URL (URL@REF): copied into a quarantine,
    checked and scanned there, and moved in only when you say yes."""
    root = user_root(_context().home)
    try:
        copy = fetch(source, root)
    except InstallError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        try:
            candidates = inspect(copy)
        except InstallError as exc:
            raise click.ClickException(f"{exc}; nothing was installed") from None
        flagged = False
        for candidate in candidates:
            label = candidate.skill.name if candidate.skill else candidate.folder.name
            about = candidate.skill.description[:80] if candidate.skill else ""
            click.echo(f"{label}: {candidate.error or about}")
            for relative, finding in candidate.findings:
                flagged = True
                click.echo(f"    {relative}: {finding}")
            for warning in candidate.skill.warnings if candidate.skill else ():
                click.echo(f"    warning: {warning}")
        usable = [c for c in candidates if c.skill is not None]
        if not usable:
            raise click.ClickException("none of these skills can be used; nothing was installed")
        for candidate in usable:
            assert candidate.skill is not None
            if not NAME_RULE.match(candidate.skill.name):
                raise click.ClickException(
                    f"{candidate.skill.name!r} cannot be a folder name here; nothing was installed"
                )
            target = root / candidate.skill.name
            if target.exists() and not force:
                raise click.ClickException(
                    f"a skill {candidate.skill.name!r} is installed ({target}); --force "
                    "replaces it. Nothing was installed"
                )
        if flagged:
            click.echo("The scan flagged the content above: read it before you go on.")
        if (flagged or not yes) and not click.confirm(
            f"Install {len(usable)} skill(s) into {root}?", default=False
        ):
            raise click.ClickException("not installed")
        for candidate in usable:
            assert candidate.skill is not None
            target = root / candidate.skill.name
            if target.exists():
                shutil.rmtree(target)
            shutil.move(str(candidate.folder), target)
            click.echo(f"installed {candidate.skill.name} -> {target}")
    finally:
        shutil.rmtree(copy.parent, ignore_errors=True)


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
